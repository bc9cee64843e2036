import { request as httpRequest } from "node:http"
import { join } from "node:path"
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { waitFor } from "../../test/fixtures/waitFor.ts"
import { call, type Connected, connectHttp, factorialAcc, type HttpProcess, omega, square, startHttpProcess, tempDir, textOf, valueOf } from "./test-support.ts"

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body
  })

const initializeBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "raw", version: "0" } }
})

describe("the lambda server over Streamable HTTP", () => {
  let server: HttpProcess
  let dir: Awaited<ReturnType<typeof tempDir>>
  const clients: Array<Connected> = []
  const client = async () => {
    const c = await connectHttp(server.url)
    clients.push(c)
    return c
  }

  beforeAll(async () => {
    dir = await tempDir()
    server = await startHttpProcess(["--store", join(dir.path, "tools.json"), "--max-message-bytes", "200000"])
  })

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()))
    const code = await server?.stop()
    expect(code).toBe(0)
    await dir?.remove()
  })

  it("listens on 127.0.0.1 at /mcp and runs the seed examples", async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const c = await client()
    expect((await call(c.client, "evolve", { name: "square", description: "Squares a number", code: square })).isError).toBeUndefined()
    expect(valueOf(await call(c.client, "run", { code: "square", input: 7 }))).toBe(49)
    await call(c.client, "evolve", { name: "factorial", description: "acc", code: factorialAcc })
    let result = await call(c.client, "factorial", { input: { pair: [4, 1] } })
    const steps: Array<number> = []
    while ((result.structuredContent as { type?: string }).type === "continuation") {
      const k = result.structuredContent as { next_input: unknown; step: number }
      steps.push(k.step)
      result = await call(c.client, "factorial", { input: k.next_input, step: k.step })
    }
    expect(steps).toEqual([1, 2, 3])
    expect(valueOf(result)).toBe(24)
  })

  it("sends tools/list_changed to every open session when a tool is evolved", async () => {
    const a = await client()
    const b = await client()
    await Promise.all([a.notificationStream, b.notificationStream])
    const before = b.toolListChanges()
    await call(a.client, "evolve", { name: "inc", description: "adds one", code: { lam: "x", body: { add: [{ var: "x" }, 1] } } })
    await waitFor(() => b.toolListChanges() > before, "notifications/tools/list_changed")
    expect((await b.client.listTools()).tools.map((t) => t.name)).toContain("inc")
    expect(valueOf(await call(b.client, "inc", { input: 41 }))).toBe(42)
  })

  it("serves several clients at once, a failing request affecting no other", async () => {
    const many = await Promise.all(Array.from({ length: 6 }, () => client()))
    const results = await Promise.all(
      many.map(async (c, i) => {
        const name = `times_${i}`
        await call(c.client, "evolve", { name, description: `multiplies by ${i}`, code: { lam: "x", body: { mul: [{ var: "x" }, i] } } })
        const [value, failure] = await Promise.all([
          call(c.client, "run", { code: name, input: 10 }),
          call(c.client, "run", { code: omega, input: null, fuel: 200_000 })
        ])
        return { value: valueOf(value), failure: failure.structuredContent }
      })
    )
    results.forEach((r, i) => {
      expect(r.value).toBe(10 * i)
      expect(r.failure).toMatchObject({ kind: "BudgetExceeded" })
    })
    const listed = (await call(many[0]!.client, "list")).structuredContent as { tools: Array<{ name: string }> }
    for (let i = 0; i < 6; i++) expect(listed.tools.map((t) => t.name)).toContain(`times_${i}`)
  })

  it("ends a session on DELETE; its id is then unknown", async () => {
    const c = await client()
    const transport = c.transport as StreamableHTTPClientTransport
    const sessionId = transport.sessionId!
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/)
    await transport.terminateSession()
    const response = await post(server.url, JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list" }), {
      "mcp-session-id": sessionId,
      "mcp-protocol-version": LATEST_PROTOCOL_VERSION
    })
    expect(response.status).toBe(404)
    expect(await response.json()).toMatchObject({ error: { code: -32001 } })
  })

  it("answers wrong jsonrpc versions, unknown methods, deeply nested params and huge bodies in a session, and keeps serving it", async () => {
    const init = await post(server.url, initializeBody)
    const session = init.headers.get("mcp-session-id")!
    await init.body?.cancel()
    const headers = { "mcp-session-id": session, "mcp-protocol-version": LATEST_PROTOCOL_VERSION }
    expect((await post(server.url, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), headers)).status).toBe(202)
    /** The JSON-RPC message of a response: JSON, or the data of its one server-sent event. */
    const messageOf = async (response: Response) => {
      const text = await response.text()
      const data = text.split("\n").find((l) => l.startsWith("data: "))
      return JSON.parse(data !== undefined ? data.slice("data: ".length) : text)
    }
    const depth = 90_000 // 180 kB, under this server's 200 kB limit
    const deep = "[".repeat(depth) + "]".repeat(depth)
    const bad: Array<[string, number, Record<string, unknown>]> = [
      [JSON.stringify({ jsonrpc: "1.0", id: 1, method: "ping" }), 400, { id: 1, error: { code: -32600 } }],
      [JSON.stringify({ jsonrpc: "2.0", id: 11, method: 42 }), 400, { id: 11, error: { code: -32600 } }],
      ['"just a string"', 400, { id: null, error: { code: -32600 } }],
      [JSON.stringify({ jsonrpc: "2.0", id: 2, method: "no/such/method" }), 200, { id: 2, error: { code: -32601 } }],
      [`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":${deep}}}`, 200, { id: 3, error: { code: -32602 } }],
      [
        `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run","arguments":{"code":1,"input":null},"_meta":{"x":${deep}}}}`,
        200,
        { id: 4, result: { content: [{ text: "1" }] } }
      ],
      [
        `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run","arguments":{"code":{"lam":"x","body":{"var":"x"}},"input":"${"x".repeat(300_000)}"}}}`,
        413,
        { error: { code: -32600 } }
      ],
      ['{"jsonrpc":', 400, { error: { code: -32700 } }],
      ["[]", 400, { id: null, error: { code: -32600, message: "Invalid Request: an empty batch" } }],
      [" [ ] ", 400, { id: null, error: { code: -32600 } }]
    ]
    for (const [body, status, expected] of bad) {
      const response = await post(server.url, body, headers)
      expect(response.status, body.slice(0, 60)).toBe(status)
      expect(await messageOf(response), body.slice(0, 60)).toMatchObject({ jsonrpc: "2.0", ...expected })
      const ping = await post(server.url, JSON.stringify({ jsonrpc: "2.0", id: 100, method: "ping" }), headers)
      expect(await messageOf(ping), `ping after ${body.slice(0, 60)}`).toEqual({ jsonrpc: "2.0", id: 100, result: {} })
    }
  })

  it("answers bad HTTP requests with JSON-RPC errors and keeps serving", async () => {
    const notJson = await post(server.url, "{ nope")
    expect(notJson.status).toBe(400)
    expect(await notJson.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 } })

    const noSession = await post(server.url, JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }))
    expect(noSession.status).toBe(400)
    expect(await noSession.json()).toMatchObject({ id: 7, error: { code: -32000, message: expect.stringContaining("initialize") } })

    const unknownSession = await post(server.url, JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/list" }), { "mcp-session-id": "no-such-session" })
    expect(unknownSession.status).toBe(404)

    const tooLarge = await post(server.url, JSON.stringify({ padding: "x".repeat(300_000) }))
    expect(tooLarge.status).toBe(413)
    expect(await tooLarge.json()).toMatchObject({ error: { code: -32600 } })

    expect((await fetch(server.url, { method: "PUT" })).status).toBe(405)
    expect((await fetch(server.url, { method: "GET" })).status).toBe(400)
    expect((await fetch(server.url.replace("/mcp", "/elsewhere"))).status).toBe(404)

    // DNS-rebinding protection: a foreign Host header is refused.
    const port = Number(new URL(server.url).port)
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        { host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { host: "evil.example:80", "content-type": "application/json" } },
        (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        }
      )
      req.on("error", reject)
      req.end(initializeBody)
    })
    expect(status).toBe(403)

    // A raw initialize still works, and so does a client.
    const raw = await post(server.url, initializeBody)
    expect(raw.status).toBe(200)
    expect(raw.headers.get("mcp-session-id")).toBeTruthy()
    await raw.body?.cancel()
    const c = await client()
    expect(textOf(await call(c.client, "run", { code: { add: [1, 2] }, input: null }))).toBe("3")
  })
})
