import { readFile } from "node:fs/promises"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { Tools } from "lambdagent"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { discover, McpClientError, type McpToolset, mcpTools, toArguments } from "./index.ts"
import { waitFor } from "../../test/fixtures/waitFor.ts"
import { call, connectStdio, type HttpProcess, omega, serverCommand, square, startHttpProcess, tempDir } from "./test-support.ts"

const run = (tools: ReadonlyArray<Tools.ToolDefinition>, name: string, input: unknown) => {
  const tool = tools.find((t) => t.name === name)
  if (tool === undefined) throw new Error(`no tool ${name} among ${tools.map((t) => t.name).join(", ")}`)
  return Effect.runPromise(Tools.call(tool, input))
}

describe("mcpTools against the lambda server over stdio", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let tools: McpToolset

  beforeAll(async () => {
    dir = await tempDir()
    const store = join(dir.path, "tools.json")
    // Evolve a tool first, so that it is among the discovered tools.
    const setup = await connectStdio(["--store", store])
    await call(setup.client, "evolve", { name: "square", description: "Squares a number", code: square })
    await setup.close()
    tools = await mcpTools({ lambda: { ...serverCommand(["--store", store]), timeout: 10 } })
  })

  afterAll(async () => {
    await tools?.close()
    await dir?.remove()
  })

  it("turns every server tool into an agent tool named server/tool, with its schema in the description", () => {
    expect(tools.map((t) => t.name)).toEqual(["lambda/evolve", "lambda/run", "lambda/list", "lambda/help", "lambda/square"])
    for (const t of tools) {
      expect(t.kind).toBe("mcp")
      expect(t.source).toContain("MCP server lambda")
      expect(t.description).toContain("Input (JSON Schema): {")
    }
    expect(tools.find((t) => t.name === "lambda/square")!.description).toMatch(/^Squares a number/)
  })

  it("calls tools: objects are the arguments, other values go to the input", async () => {
    expect(await run(tools, "lambda/run", { code: { add: [40, 2] }, input: null })).toBe("42")
    expect(await run(tools, "lambda/square", 9)).toBe("81")
    expect(await run(tools, "lambda/square", "9")).toBe("81")
    expect(await run(tools, "lambda/run", '{"code": "square", "input": 5}')).toBe("25")
    expect(await run(tools, "lambda/help", { category: "pairs" })).toMatch(/^## Pairs/)
  })

  it("returns tool errors as [MCP_ERROR: …] text, never throwing", async () => {
    const output = await run(tools, "lambda/run", { code: { div: [1, 0] }, input: null })
    expect(output).toMatch(/^\[MCP_ERROR: lambda\/run: \{"kind":"DivisionByZero"/)
    expect(await run(tools, "lambda/run", { code: "nothing_here", input: 1 })).toMatch(/^\[MCP_ERROR: lambda\/run: .*UnknownTool/)
  })

  it("times out a slow call as [MCP_TIMEOUT: server/tool], and the tool works again once the server is free", async () => {
    const fast = await mcpTools({ lambda: { ...serverCommand(["--store", ":memory:"]), timeout: 0.3, tools: ["run"] } })
    try {
      // 100 million steps take well over a second (20 million took about 0.33 s: too close to the 0.3 s timeout)
      expect(await run(fast, "lambda/run", { code: omega, input: null, fuel: 100_000_000 })).toBe("[MCP_TIMEOUT: lambda/run]")
      let output: unknown = ""
      for (let attempt = 0; attempt < 150 && output !== "2"; attempt++) output = await run(fast, "lambda/run", { code: { add: [1, 1] }, input: null })
      expect(output).toBe("2")
    } finally {
      await fast.close()
    }
  })

  it("filters tools by name or predicate", async () => {
    const byName = await mcpTools({ l: { ...serverCommand(["--store", ":memory:"]), tools: ["run", "help", "absent"] } })
    const byPredicate = await mcpTools({ l: { ...serverCommand(["--store", ":memory:"]), tools: (n) => n.startsWith("l") } }, { separator: "." })
    try {
      expect(byName.map((t) => t.name)).toEqual(["l/run", "l/help"])
      expect(byPredicate.map((t) => t.name)).toEqual(["l.list"])
      expect(await run(byPredicate, "l.list", {})).toBe('{"tools":[]}')
    } finally {
      await byName.close()
      await byPredicate.close()
    }
  })

  it("discover lists a server's tools", async () => {
    const found = await discover(serverCommand(["--store", ":memory:"]))
    expect(found.map((t) => t.name)).toEqual(["evolve", "run", "list", "help"])
    // run takes its code inline or a tool by name, so only the input is always required
    expect(found[1]!.inputSchema.required).toEqual(["input"])
    expect(Object.keys(found[1]!.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["code", "tool", "input"]))
  })
})

describe("mcpTools against a server that fails", () => {
  const faulty = (extra: ReadonlyArray<string> = []) => serverCommand(["--store", ":memory:", "--fault-tools", ...extra])
  const stats = async (tools: ReadonlyArray<Tools.ToolDefinition>, name: string) =>
    JSON.parse(String(await run(tools, name, {}))) as { sleeps: number; cancelled: number; slowFirst: number }

  it("a server that dies during a call gives [MCP_ERROR: …]; the next call starts a new server", async () => {
    const tools = await mcpTools({ fx: { ...faulty(), timeout: 10, tools: ["pid", "exit"] } })
    try {
      const first = Number(await run(tools, "fx/pid", {}))
      expect(first).toBeGreaterThan(0)
      // "Connection closed", not [MCP_TIMEOUT: …] after the 10 s timeout: the exit is noticed at once
      expect(await run(tools, "fx/exit", {})).toMatch(/^\[MCP_ERROR: fx\/exit: .*Connection closed/)
      const second = Number(await run(tools, "fx/pid", {}))
      expect(second).toBeGreaterThan(0)
      expect(second).not.toBe(first)
    } finally {
      await tools.close()
    }
  })

  it("with retryOnFail, a call that kills its server is retried on a new one, then reported", async () => {
    const dir = await tempDir()
    const starts = join(dir.path, "starts")
    const startCount = async () => (await readFile(starts, "utf8")).split("\n").filter((l) => l !== "").length
    const tools = await mcpTools({ fx: { ...faulty(["--starts", starts]), timeout: 10, retryOnFail: 1, tools: ["exit", "pid"] } }, { backoffMs: 50 })
    try {
      expect(await startCount()).toBe(1)
      expect(await run(tools, "fx/exit", {})).toMatch(/^\[MCP_ERROR: fx\/exit: .*Connection closed/)
      expect(await startCount()).toBe(2) // the retry ran on a second server, which died too
      expect(Number(await run(tools, "fx/pid", {}))).toBeGreaterThan(0)
      expect(await startCount()).toBe(3)
    } finally {
      await tools.close()
      await dir.remove()
    }
  })

  it("a server that cannot be restarted fails the next call clearly, with the end of its standard error", async () => {
    const dir = await tempDir()
    const tools = await mcpTools({ fx: { ...faulty(["--starts", join(dir.path, "starts"), "--max-starts", "1"]), timeout: 10, tools: ["pid", "exit"] } })
    try {
      expect(Number(await run(tools, "fx/pid", {}))).toBeGreaterThan(0)
      expect(await run(tools, "fx/exit", {})).toMatch(/^\[MCP_ERROR: fx\/exit: /)
      const output = String(await run(tools, "fx/pid", {}))
      expect(output).toMatch(
        /^\[MCP_ERROR: fx\/pid: MCP error -32000: Connection closed \(server stderr: \[bin-for-tests\] refusing to start again \(started 1 times\)\)\]$/
      )
    } finally {
      await tools.close()
      await dir.remove()
    }
  })

  it("a slow server gives [MCP_TIMEOUT: server/tool] after retryOnFail attempts with backoff, each attempt cancelled", async () => {
    const tools = await mcpTools({ fx: { ...faulty(), timeout: 0.3, retryOnFail: 2, tools: ["sleep", "stats"] } }, { backoffMs: 100 })
    try {
      const started = Date.now()
      expect(await run(tools, "fx/sleep", { ms: 5000 })).toBe("[MCP_TIMEOUT: fx/sleep]")
      // the waits are the thing tested here: a lower bound, which load cannot break (three timeouts,
      // 100 ms and 200 ms of backoff); that the 5 s sleeps were not waited for shows in the server's
      // cancellations below
      expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 300 + 100 + 200)
      // the server saw three calls and a cancellation for each (notifications/cancelled)
      let seen = await stats(tools, "fx/stats")
      await waitFor(async () => (seen = await stats(tools, "fx/stats")).cancelled >= 3, "three cancellations")
      expect(seen).toMatchObject({ sleeps: 3, cancelled: 3 })
      // the connection is intact: a quick call answers
      expect(await run(tools, "fx/sleep", { ms: 1 })).toBe("slept 1 ms")
    } finally {
      await tools.close()
    }
  })

  it("a server slow only at first answers on a retry", async () => {
    const tools = await mcpTools({ fx: { ...faulty(), timeout: 0.3, retryOnFail: 2, tools: ["slow_first"] } }, { backoffMs: 100 })
    try {
      const started = Date.now()
      expect(await run(tools, "fx/slow_first", { ms: 5000, times: 1 })).toBe("answered call 2")
      // a lower bound (one timeout, 100 ms of backoff): the wait is what is tested, and load cannot break it
      expect(Date.now() - started).toBeGreaterThanOrEqual(300 + 100)
      // without retries the same slowness is a timeout
      const once = await mcpTools({ fx: { ...faulty(), timeout: 0.3, tools: ["slow_first"] } })
      try {
        expect(await run(once, "fx/slow_first", { ms: 5000, times: 1 })).toBe("[MCP_TIMEOUT: fx/slow_first]")
        expect(await run(once, "fx/slow_first", { ms: 5000, times: 1 })).toBe("answered call 2")
      } finally {
        await once.close()
      }
    } finally {
      await tools.close()
    }
  })
})

describe("mcpTools over Streamable HTTP", () => {
  let server: HttpProcess | undefined
  afterAll(async () => {
    await server?.stop()
  })

  it("uses an HTTP server, reconnects after a restart with retryOnFail, and reports failure after the retries", async () => {
    server = await startHttpProcess(["--store", ":memory:"])
    const url = server.url
    const port = new URL(url).port
    const tools = await mcpTools({ remote: { url, tools: ["run"], retryOnFail: 2, timeout: 5 } }, { backoffMs: 100 })
    try {
      expect(tools.map((t) => t.name)).toEqual(["remote/run"])
      expect(await run(tools, "remote/run", { code: { mul: [6, 7] }, input: null })).toBe("42")

      // The server restarts on the same port: the old session is gone; a retry opens a new one.
      expect(await server.stop()).toBe(0)
      server = await startHttpProcess(["--store", ":memory:"], port)
      expect(await run(tools, "remote/run", { code: { add: [1, 1] }, input: null })).toBe("2")

      // Gone for good: every attempt fails, with backoff between them, and the failure is the output.
      await server.stop()
      server = undefined
      const started = Date.now()
      const output = await run(tools, "remote/run", { code: 1, input: null })
      expect(output).toMatch(/^\[MCP_ERROR: remote\/run: /)
      // a lower bound (100 ms + 200 ms of backoff): the wait is what is tested, and load cannot break it
      expect(Date.now() - started).toBeGreaterThanOrEqual(300)
    } finally {
      await tools.close()
    }
  })

  it("fails setup with McpClientError when a server cannot be reached", async () => {
    const error = await mcpTools({ nowhere: { url: "http://127.0.0.1:9/mcp", timeout: 2 } }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(McpClientError)
    expect((error as McpClientError).server).toBe("nowhere")
    await expect(discover({ command: process.execPath, args: ["-e", "process.exit(3)"], timeout: 5 })).rejects.toBeInstanceOf(McpClientError)
  })
})

describe("toArguments", () => {
  it("maps an agent's input onto a tool's arguments", () => {
    expect(toArguments({ a: 1 }, { type: "object" })).toEqual({ a: 1 })
    expect(toArguments("q", { type: "object", properties: { query: { type: "string" } } })).toEqual({ query: "q" })
    expect(toArguments([1], { type: "object", properties: { input: {}, step: {} } })).toEqual({ input: [1] })
    expect(toArguments(null, { type: "object" })).toEqual({ input: null })
  })
})
