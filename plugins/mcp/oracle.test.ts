import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Value } from "lambdagent"
import { afterAll, describe, expect, it } from "vitest"
import * as z from "zod"
import { type AnswerOracle, createLambdaServer, defineTool, type LambdaServer, type LambdaServerOptions } from "./index.ts"
import { call, connectStdio, textOf, valueOf } from "./test-support.ts"

/** An in-process server and an official SDK client connected to it through linked in-memory transports. */
const inProcess = async (options: LambdaServerOptions) => {
  const server = await createLambdaServer({ log: () => undefined, ...options })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: "tests", version: "0" })
  await client.connect(clientSide)
  return { server, client }
}

const opened: Array<{ server: LambdaServer; client: Client }> = []
afterAll(async () => {
  for (const { client, server } of opened) {
    await client.close()
    await server.close()
  }
})
const open = async (options: LambdaServerOptions) => {
  const pair = await inProcess(options)
  opened.push(pair)
  return pair
}

const useTool = (name: string) => ({ lam: "x", body: { app: { func: { tool: name }, arg: { var: "x" } } } })

describe("capability gating and the oracle loop", () => {
  it("pure by default: agent forms are refused at evolve and when they arrive inside an input", async () => {
    const { client } = await open({})
    const refused = await call(client, "evolve", { name: "t", description: "", code: useTool("double") })
    expect(refused.structuredContent).toMatchObject({ kind: "CapabilityDenied" })
    await call(client, "evolve", { name: "apply3", description: "", code: { lam: "f", body: { app: { func: { var: "f" }, arg: 3 } } } })
    const sneaked = await call(client, "apply3", { input: { tool: "double" } })
    expect(sneaked.isError).toBe(true)
    expect(sneaked.structuredContent).toMatchObject({ kind: "OracleError" })
    expect(textOf(sneaked)).toContain("capability denied")
    const llm = await call(client, "run", { code: { llm: { system: "be brief" } }, input: "hi" })
    expect(llm.structuredContent).toMatchObject({ kind: "CapabilityDenied" })
  })

  it("with a host tool allowed, tool requests are answered by answerOracle", async () => {
    const seen: Array<unknown> = []
    const oracle: AnswerOracle = (request, context) => {
      seen.push({ kind: request.kind, tool: context.tool })
      if (request.kind !== "tool") throw new Error("unexpected")
      return Number(request.input) * 2
    }
    const { client } = await open({ allow: { tools: ["double"] }, answerOracle: oracle })
    const evolved = await call(client, "evolve", {
      name: "quadruple",
      description: "",
      code: { lam: "x", body: { app: { func: { tool: "double" }, arg: { app: { func: { tool: "double" }, arg: { var: "x" } } } } } }
    })
    expect(evolved.structuredContent).toMatchObject({ capabilities: { tools: ["double"] } })
    expect(valueOf(await call(client, "quadruple", { input: 5 }))).toBe(20)
    expect(seen).toEqual([
      { kind: "tool", tool: "quadruple" },
      { kind: "tool", tool: "quadruple" }
    ])
    // Only the named tool: another host tool is still refused.
    expect((await call(client, "evolve", { name: "x", description: "", code: useTool("shell") })).structuredContent).toMatchObject({ kind: "CapabilityDenied" })
    expect(
      (await call(client, "run", { code: { lam: "f", body: { app: { func: { var: "f" }, arg: 1 } } }, input: { tool: "shell" } })).structuredContent
    ).toMatchObject({ kind: "OracleError" })
  })

  it("without an oracle, an allowed agent form fails with a clear OracleError", async () => {
    const { client } = await open({ allow: { tools: "*" } })
    const result = await call(client, "run", { code: useTool("anything"), input: 1 })
    expect(result.structuredContent).toMatchObject({ kind: "OracleError" })
    expect(textOf(result)).toContain("no oracle")
  })

  it("runs par branches itself and sends their requests to the oracle; oracle failures and hangs become errors", async () => {
    const oracle: AnswerOracle = async (request) => {
      if (request.kind === "llm") return `model says ${Value.toText(request.input)}`
      if (request.kind === "tool" && request.name === "slow") return new Promise(() => undefined)
      if (request.kind === "tool" && request.name === "broken") throw new Error("disk on fire")
      return request.kind === "tool" ? `${request.name}(${Value.toText(request.input)})` : null
    }
    const { client } = await open({ allow: { llm: true, tools: "*", par: true }, answerOracle: oracle, timeoutMs: 500 })
    const par = { par: { branches: [{ llm: { system: "s" } }, { tool: "search" }, { lam: "x", body: { concat: [{ var: "x" }, "!"] } }] } }
    expect(valueOf(await call(client, "run", { code: par, input: "q" }))).toEqual(["model says q", "search(q)", "q!"])
    const broken = await call(client, "run", { code: useTool("broken"), input: 1 })
    expect(broken.structuredContent).toMatchObject({ kind: "OracleError", message: expect.stringContaining("disk on fire") })
    const slow = await call(client, "run", { code: useTool("slow"), input: 1 })
    expect(slow.structuredContent).toMatchObject({ kind: "BudgetExceeded", budget: "time" })
  })

  it("over stdio with --allow-double, evolved tools call the host tool end to end", async () => {
    const s = await connectStdio(["--store", ":memory:", "--allow-double"])
    try {
      await call(s.client, "evolve", { name: "dbl", description: "doubles via the host", code: useTool("double") })
      expect(valueOf(await call(s.client, "dbl", { input: 21 }))).toBe(42)
      expect((await call(s.client, "evolve", { name: "t", description: "", code: { llm: { system: "x" } } })).structuredContent).toMatchObject({
        kind: "CapabilityDenied"
      })
    } finally {
      await s.close()
    }
  })
})

describe("limits", () => {
  it("bounds a call's wall time as well as its steps", async () => {
    const { client } = await open({ timeoutMs: 300, maxFuel: 1_000_000_000 })
    const spin = {
      app: {
        func: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } },
        arg: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } }
      }
    }
    const result = await call(client, "run", { code: spin, input: null, fuel: 1_000_000_000 })
    expect(result.structuredContent).toMatchObject({ kind: "BudgetExceeded", budget: "time", limit: 300 })
  })

  it("rejects invalid limits when the server is created", async () => {
    await expect(createLambdaServer({ maxFuel: 0 })).rejects.toThrow("maxFuel must be a positive integer")
    const server = await createLambdaServer({ defaultFuel: 50, maxFuel: 10, log: () => undefined })
    expect(server.limits).toMatchObject({ defaultFuel: 10, maxFuel: 10 })
  })
})

describe("composable modules", () => {
  it("extra modules add tools beside the lambda ones, and evolved tools cannot take their names", async () => {
    const clock = defineTool({
      name: "echo",
      description: "Echo a message",
      input: z.object({ message: z.string() }),
      run: ({ message }) => ({ content: [{ type: "text", text: message }] })
    })
    const { client } = await open({ modules: [{ name: "echo", tools: () => [clock] }] })
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(["evolve", "run", "list", "help", "echo"])
    expect(tools[4]!.inputSchema).toMatchObject({ type: "object", properties: { message: { type: "string" } }, required: ["message"] })
    expect(textOf(await call(client, "echo", { message: "hi" }))).toBe("hi")
    expect((await call(client, "echo", { message: 5 })).structuredContent).toMatchObject({ kind: "InvalidArguments", path: ["message"] })
    expect((await call(client, "evolve", { name: "echo", description: "", code: 1 })).structuredContent).toMatchObject({ kind: "InvalidToolName" })
  })

  it("a stored tool whose name a module now uses is not published under it, but run still reaches it", async () => {
    const { ToolRegistry, memoryRegistryStore } = await import("./index.ts")
    const registry = await ToolRegistry.open(
      memoryRegistryStore([
        { name: "echo", versions: [{ version: 1, description: "old", code: { lam: "x", body: { var: "x" } }, createdAt: "2025-01-01T00:00:00.000Z" }] }
      ])
    )
    const echo = defineTool({ name: "echo", description: "host echo", input: z.object({}), run: () => ({ content: [{ type: "text", text: "host" }] }) })
    const { client } = await open({ registry, modules: [{ name: "echo", tools: () => [echo] }] })
    const { tools } = await client.listTools()
    expect(tools.filter((t) => t.name === "echo").map((t) => t.description)).toEqual(["host echo"])
    expect(textOf(await call(client, "echo", {}))).toBe("host")
    expect(valueOf(await call(client, "run", { code: "echo", input: 5 }))).toBe(5)
  })
})
