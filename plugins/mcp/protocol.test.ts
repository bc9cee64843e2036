import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js"
import { afterEach, describe, expect, it } from "vitest"
import { waitFor } from "../../test/fixtures/waitFor.ts"
import { RawServer, REQUEST_TIMEOUT_MS } from "./test-support.ts"

const servers: Array<RawServer> = []
const start = (extra: ReadonlyArray<string> = []) => {
  const server = new RawServer(extra)
  servers.push(server)
  return server
}
afterEach(() => {
  for (const server of servers.splice(0)) server.kill()
})

const callTool = (id: number, name: string, args: object) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } })

describe("stdio protocol handling", () => {
  it("negotiates the protocol version: supported versions are echoed, others get the latest", async () => {
    const server = start()
    const old = await server.initialize("2024-11-05")
    expect(old.result.protocolVersion).toBe("2024-11-05")
    expect(old.result.serverInfo).toEqual({ name: "lambdagent", version: "0.1.0" })
    for (const version of ["2025-11-25", "2025-06-18", "2025-03-26", "2099-01-01", "draft"]) {
      const other = start()
      const answer = await other.initialize(version)
      expect(answer.result.protocolVersion, version).toBe(["2099-01-01", "draft"].includes(version) ? LATEST_PROTOCOL_VERSION : version)
      other.kill()
    }
    expect(LATEST_PROTOCOL_VERSION).toBe("2025-11-25")
  })

  it("answers ping before and after initialisation", async () => {
    const server = start()
    server.send({ jsonrpc: "2.0", id: "early", method: "ping" })
    expect(await server.next()).toEqual({ jsonrpc: "2.0", id: "early", result: {} })
    await server.initialize()
    server.send({ jsonrpc: "2.0", id: 1, method: "ping" })
    expect(await server.response(1)).toEqual({ jsonrpc: "2.0", id: 1, result: {} })
  })

  it("sends notifications/message at the level the client set, before the response they belong to", async () => {
    const server = start()
    const init = await server.initialize()
    expect(init.result.capabilities.logging).toEqual({})
    server.send({ jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "debug" } })
    expect(await server.response(1)).toEqual({ jsonrpc: "2.0", id: 1, result: {} })
    server.send(callTool(2, "run", { code: { add: [1, 2] }, input: null }))
    expect(await server.next()).toMatchObject({ method: "notifications/message", params: { level: "debug", logger: "lambdagent", data: { tool: "run" } } })
    expect(await server.next()).toMatchObject({ id: 2, result: { content: [{ text: "3" }] } })
    server.send({ jsonrpc: "2.0", id: 3, method: "logging/setLevel", params: { level: "warning" } })
    await server.response(3)
    server.send(callTool(4, "run", { code: { add: [1, 2] }, input: null }))
    expect(await server.next()).toMatchObject({ id: 4 }) // no debug message any more
    server.send(callTool(5, "run", { code: "no_such_tool", input: 1 }))
    expect(await server.next()).toMatchObject({ method: "notifications/message", params: { level: "warning", data: { kind: "UnknownTool" } } })
    expect(await server.next()).toMatchObject({ id: 5, result: { isError: true } })
    server.send({ jsonrpc: "2.0", id: 6, method: "logging/setLevel", params: { level: "verbose" } })
    expect(await server.next()).toMatchObject({ id: 6, error: { code: -32602 } })
  })

  it("answers malformed lines with JSON-RPC errors and keeps serving", async () => {
    const server = start()
    await server.initialize()
    server.send("this is not json")
    expect(await server.next()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } })
    server.send("[1, 2]")
    expect(await server.next()).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining("batch") } })
    server.send({ jsonrpc: "2.0", id: 9, method: 5 })
    expect(await server.next()).toMatchObject({ id: 9, error: { code: -32600 } })
    server.send("   ")
    server.send({ jsonrpc: "2.0", method: "notifications/whatever" })
    server.send({ jsonrpc: "2.0", id: 10, method: "no/such" })
    // Blank lines and unknown notifications get no answer: the next line is the method error.
    expect(await server.next()).toMatchObject({ id: 10, error: { code: -32601, message: "Method not found" } })
    server.send({ jsonrpc: "2.0", id: 11, method: "tools/call", params: { arguments: {} } })
    expect(await server.next()).toMatchObject({ id: 11, error: { code: -32602 } })
    server.send(callTool(12, "unknown_tool", {}))
    expect(await server.next()).toMatchObject({ id: 12, error: { code: -32602, message: "Unknown tool: unknown_tool" } })
    server.send(callTool(13, "run", { code: { add: [40, 2] }, input: null }))
    expect(await server.next()).toMatchObject({ id: 13, result: { content: [{ type: "text", text: "42" }] } })
  })

  it("survives wrong jsonrpc versions, wrong shapes, unknown methods and deeply nested params, answering each", async () => {
    const server = start()
    await server.initialize()
    const depth = 200_000
    const deep = "[".repeat(depth) + "]".repeat(depth)
    const deepObject = '{"a":'.repeat(depth) + "1" + "}".repeat(depth)
    const bad: Array<[string, Record<string, unknown>]> = [
      [JSON.stringify({ jsonrpc: "1.0", id: 1, method: "ping" }), { id: 1, error: { code: -32600 } }],
      [JSON.stringify({ id: 2, method: "ping" }), { id: 2, error: { code: -32600 } }],
      [JSON.stringify({ jsonrpc: "2.0", id: { nested: true }, method: "ping" }), { id: null, error: { code: -32600 } }],
      [JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list", params: "not an object" }), { id: 3, error: { code: -32600 } }],
      [JSON.stringify({ jsonrpc: "2.0", id: 4, method: "resources/nonexistent" }), { id: 4, error: { code: -32601 } }],
      [`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":${deep}}}`, { id: 5, error: { code: -32602 } }],
      [`{"jsonrpc":"2.0","id":6,"method":"no/such/method","params":{"x":${deepObject}}}`, { id: 6, error: { code: -32601 } }],
      [
        `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run","arguments":{"code":1,"input":null},"_meta":{"x":${deep}}}}`,
        { id: 7, result: { content: [{ text: "1" }] } }
      ],
      [`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":${deep},"arguments":{}}}`, { id: 8, error: { code: -32602 } }],
      ['{"jsonrpc":"2.0","id":9,', { id: null, error: { code: -32700 } }],
      [deep, { id: null, error: { code: -32600 } }]
    ]
    for (const [line, expected] of bad) {
      server.send(line)
      expect(await server.next(), line.slice(0, 80)).toMatchObject({ jsonrpc: "2.0", ...expected })
      server.send({ jsonrpc: "2.0", id: 100, method: "ping" })
      expect(await server.next(), `ping after ${line.slice(0, 80)}`).toEqual({ jsonrpc: "2.0", id: 100, result: {} })
    }
    server.send(callTool(101, "run", { code: { mul: [6, 7] }, input: null }))
    expect(await server.next()).toMatchObject({ id: 101, result: { content: [{ text: "42" }] } })
  })

  it("rejects an oversized line without reading it into a request", async () => {
    const server = start(["--max-message-bytes", "100000"])
    await server.initialize()
    server.send(callTool(1, "run", { code: { lam: "x", body: { var: "x" } }, input: "x".repeat(200_000) }))
    expect(await server.next()).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining("more than 100000 bytes") } })
    server.send(callTool(2, "run", { code: { lam: "x", body: { var: "x" } }, input: "x".repeat(1000) }))
    const ok = await server.response(2)
    expect(ok.result.content[0].text).toBe(JSON.stringify("x".repeat(1000)))
  })

  it("runs a 100,000-deep input and a 100,000-deep term (sent as JSON text) without a stack overflow", async () => {
    const server = start()
    await server.initialize()
    const depth = 100_000
    const deep = "[".repeat(depth) + "1" + "]".repeat(depth)
    server.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run","arguments":{"code":{"lam":"x","body":{"var":"x"}},"input":${deep}}}}`)
    const result = (await server.response(1)).result
    expect(result.content[0].text).toBe(deep)
    expect(result.structuredContent).toBeUndefined()
    const term = '{"add":['.repeat(depth) + "0" + ",1]}".repeat(depth)
    server.send(callTool(2, "run", { code: term, input: null }))
    expect((await server.response(2)).result.content[0].text).toBe(String(depth))
  })

  it("keeps standard output for protocol messages only (console.log goes to standard error)", async () => {
    const server = start(["--print-stdout"])
    await server.initialize()
    await waitFor(() => server.stderr.includes("a stray console.log"), "the stray console.log on standard error")
    server.send({ jsonrpc: "2.0", id: 1, method: "ping" })
    expect(await server.response(1)).toMatchObject({ id: 1, result: {} })
    for (const line of server.lines) expect(JSON.parse(line)).toHaveProperty("jsonrpc", "2.0")
  })

  it("at end of input answers what is in flight (a last line without newline included) and exits with code 0", async () => {
    const server = start()
    await server.initialize()
    server.send(callTool(1, "evolve", { name: "square", description: "sq", code: { lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } } }))
    // A slow request, then a last request without a trailing newline, then end of input.
    server.send(
      callTool(2, "run", {
        code: {
          app: {
            func: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } },
            arg: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } }
          }
        },
        input: null,
        fuel: 2_000_000
      })
    )
    server.child.stdin.end(JSON.stringify(callTool(3, "square", { input: 9 })))
    const code = await Promise.race([server.exited, new Promise((r) => setTimeout(() => r("timeout"), REQUEST_TIMEOUT_MS))])
    expect(code).toBe(0)
    const byId = new Map(
      server.lines
        .map((l) => JSON.parse(l))
        .filter((m) => m.id !== undefined)
        .map((m) => [m.id, m])
    )
    expect(byId.get(1).result.structuredContent.version).toBe(1)
    expect(byId.get(2).result).toMatchObject({ isError: true, structuredContent: { kind: "BudgetExceeded" } })
    expect(byId.get(3).result.content[0].text).toBe("81")
    expect(server.stderr).toContain("server closed")
  })

  it("exits with code 0 and no error when the client stops reading its answers (EPIPE)", async () => {
    const server = start()
    await server.initialize()
    server.child.stdout.destroy() // the client's end of standard output is closed
    for (let id = 1; id <= 20; id++) server.send(callTool(id, "run", { code: { add: [id, 1] }, input: null }))
    const code = await Promise.race([server.exited, new Promise((r) => setTimeout(() => r("timeout"), REQUEST_TIMEOUT_MS))])
    expect(code).toBe(0)
    expect(server.stderr).not.toMatch(/Error|\n\s+at /)
  })
})
