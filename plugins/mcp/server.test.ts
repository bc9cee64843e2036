import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import { jsonFileStore } from "./store.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, type Connected, connectStdio, factorialAcc, factorialSelf, isEven, isOdd, map, omega, square, tempDir, textOf, valueOf } from "./test-support.ts"
import { waitFor } from "../../test/fixtures/waitFor.ts"

const identity = { lam: "x", body: { var: "x" } }

describe("the lambda server over stdio, driven by the official MCP client", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let s: Connected
  let storePath: string

  beforeAll(async () => {
    dir = await tempDir()
    storePath = join(dir.path, "tools.json")
    s = await connectStdio(["--store", storePath, "--max-fuel", "20000000", "--timeout-ms", "10000"])
  })

  afterAll(async () => {
    await s?.close()
    await dir?.remove()
  })

  const run = (code: unknown, input: unknown, extra: Record<string, unknown> = {}) => call(s.client, "run", { code, input, ...extra })
  const evolve = (name: string, code: unknown, description = `the ${name} tool`) => call(s.client, "evolve", { name, description, code })

  it("initialises with tools, resources and prompts capabilities and list_changed", () => {
    expect(s.client.getServerVersion()).toMatchObject({ name: "lambdagent", version: "0.1.0" })
    const caps = s.client.getServerCapabilities()
    expect(caps?.tools?.listChanged).toBe(true)
    expect(caps?.resources?.listChanged).toBe(true)
    expect(caps?.prompts).toBeDefined()
    expect(s.client.getInstructions()).toContain("evolve")
  })

  it("lists the four system tools with JSON Schemas for their arguments", async () => {
    const { tools } = await s.client.listTools()
    expect(tools.slice(0, 4).map((t) => t.name)).toEqual(["evolve", "run", "list", "help"])
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]))
    expect(byName.evolve!.inputSchema.required).toEqual(["name", "description", "code"])
    expect(byName.run!.inputSchema.required).toEqual(["input"])
    expect(Object.keys(byName.run!.inputSchema.properties ?? {})).toEqual(["code", "tool", "input", "step", "fuel", "version"])
    expect(byName.run!.inputSchema.properties!.fuel).toMatchObject({ type: "integer", minimum: 1, maximum: 20_000_000 })
    expect(byName.run!.annotations?.readOnlyHint).toBe(true)
    expect(byName.help!.inputSchema.properties).toHaveProperty("category")
  })

  it("help gives the overview, or one category (case-insensitive)", async () => {
    const overview = textOf(await call(s.client, "help"))
    expect(overview).toContain("# The JSON lambda calculus")
    expect(overview).toContain("lists, pairs")
    expect(textOf(await call(s.client, "help", { category: "lists" }))).toMatch(/^## Lists/)
    expect(textOf(await call(s.client, "help", { category: "META" }))).toMatch(/^## Code as data/)
    expect(textOf(await call(s.client, "help", { category: "metaprogramming" }))).toBe(overview)
  })

  it("evolve registers a tool, reports what it uses, and announces the new tool list", async () => {
    const before = s.toolListChanges()
    const result = await evolve("square", square, "Squares a number")
    expect(result.isError).toBeUndefined()
    expect(result.structuredContent).toEqual({
      name: "square",
      version: 1,
      description: "Squares a number",
      forms: ["lam", "mul"],
      capabilities: { self: false, eval: false, quote: false, continue: false, codeOf: [] },
      size: 4,
      isFunction: true,
      recursive: false,
      recursion: [],
      warnings: []
    })
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent)
    await waitFor(() => s.toolListChanges() > before, "notifications/tools/list_changed")
    const { tools } = await s.client.listTools()
    const tool = tools.find((t) => t.name === "square")!
    expect(tool.description).toContain("Squares a number")
    expect(tool.inputSchema.required).toEqual(["input"])
    expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual(["input", "step", "fuel"])
  })

  it("run and a direct call give the value as JSON text and structured content", async () => {
    const viaRun = await run("square", 7)
    expect(textOf(viaRun)).toBe("49")
    expect(viaRun.structuredContent).toMatchObject({ value: 49 })
    expect((viaRun.structuredContent as { steps: number }).steps).toBeGreaterThan(0)
    expect(valueOf(await call(s.client, "square", { input: 7 }))).toBe(49)
    expect(valueOf(await call(s.client, "square", { input: "12" }))).toBe(144)
  })

  it("factorial by continue: each round trip returns a continuation whose step counts 1, 2, 3, …", async () => {
    expect((await evolve("factorial", factorialAcc, "Computes factorial using continuation with accumulator")).isError).toBeUndefined()
    const steps: Array<number> = []
    let input: unknown = { pair: [5, 1] }
    let step = 0
    let result = await run("factorial", input)
    while ((result.structuredContent as { type?: string }).type === "continuation") {
      const k = result.structuredContent as { type: string; tool: string; next_input: unknown; step: number; message: string }
      expect(k.tool).toBe("factorial")
      expect(k.message).toBe("Recursive step needed. Call run again with:")
      expect((result.structuredContent as { next_call: unknown }).next_call).toEqual({
        tool: "run",
        arguments: { tool: "factorial", input: k.next_input, step: k.step }
      })
      expect(JSON.parse(textOf(result))).toEqual(k)
      steps.push(k.step)
      expect(k.step).toBe(step + 1)
      input = k.next_input
      step = k.step
      result = await run("factorial", input, { step })
    }
    expect(steps).toEqual([1, 2, 3, 4])
    expect(valueOf(result)).toBe(120)

    // The same protocol through the tool's own MCP tool.
    const direct = await call(s.client, "factorial", { input: { pair: [3, 1] } })
    expect(direct.structuredContent).toMatchObject({ type: "continuation", tool: "factorial", next_input: { pair: [2, 3] }, step: 1 })
    expect((direct.structuredContent as { message: string }).message).toBe("Recursive step needed. Call factorial again with:")
    const next = await call(s.client, "factorial", { input: { pair: [2, 3] }, step: 1 })
    expect(next.structuredContent).toMatchObject({ next_input: { pair: [1, 6] }, step: 2 })
    expect(valueOf(await call(s.client, "factorial", { input: { pair: [1, 6] }, step: 2 }))).toBe(6)
  })

  it("factorial by self-recursion is exact beyond 2^53", async () => {
    await evolve("factorial_self", factorialSelf)
    const result = await run("factorial_self", 20)
    expect(textOf(result)).toBe("2432902008176640000")
    const twentyFive = await run("factorial_self", 25)
    expect(twentyFive.isError).toBe(true)
    expect(twentyFive.structuredContent).toMatchObject({ kind: "Overflow" })
  })

  it("map via fold, applied through eval + code_of (a left fold reverses)", async () => {
    await evolve("map", map, "Maps a function over a list")
    const doubled = { app: { func: { app: { func: { eval: { code_of: "map" } }, arg: { lam: "x", body: { mul: [{ var: "x" }, 2] } } } }, arg: [1, 2, 3] } }
    expect(valueOf(await run(doubled, null))).toEqual([6, 4, 2])
    // Run by name, map receives the function and returns a closure, encoded as such.
    const partial = valueOf(await run("map", { lam: "x", body: { var: "x" } })) as Record<string, unknown>
    expect(Object.keys(partial)).toEqual(["closure"])
  })

  it("mutual recursion via eval + code_of, with a warning for the not-yet-evolved partner", async () => {
    const first = await evolve("is_even", isEven)
    expect((first.structuredContent as { warnings: Array<string> }).warnings).toEqual([
      'code_of "is_odd": no tool of that name yet; evolve it before this tool reaches it'
    ])
    const second = await evolve("is_odd", isOdd)
    expect(second.structuredContent).toMatchObject({
      warnings: [],
      recursive: true,
      recursion: ["mutual: is_odd → is_even → is_odd"],
      capabilities: { eval: true, codeOf: ["is_even"] }
    })
    expect(valueOf(await run("is_even", 10))).toBe(true)
    expect(valueOf(await run("is_even", 7))).toBe(false)
    expect(valueOf(await call(s.client, "is_odd", { input: 7 }))).toBe(true)
    expect(valueOf(await run("is_even", 100))).toBe(true)
    const tooDeep = await run("is_even", 101)
    expect(tooDeep.structuredContent).toMatchObject({ kind: "BudgetExceeded", budget: "evalDepth" })
  })

  it("normalises inputs as the reference does", async () => {
    expect(valueOf(await run(identity, '[1,"2"]'))).toEqual([1, 2])
    expect(valueOf(await run(identity, '{"add":[1,2]}'))).toBe(3)
    expect(valueOf(await run(identity, '"42"'))).toBe(42)
    expect(valueOf(await run(identity, "TRUE"))).toBe(true)
    expect(valueOf(await run(identity, 2.5))).toBe(2)
    expect(valueOf(await run(identity, { pair: ["1", "null"] }))).toEqual({ pair: [1, null] })
    expect(valueOf(await run(identity, "hello"))).toBe("hello")
  })

  it("accepts code as JSON text, runs non-functions to their value, and ignores the input then", async () => {
    expect(valueOf(await run('{"add":[40,2]}', null))).toBe(42)
    expect(valueOf(await run("42", "ignored"))).toBe(42)
    expect(valueOf(await run({ quote: { add: [1, 2] } }, null))).toEqual({ quote: { add: [1, 2] } })
    expect(valueOf(await run({ code_of: "square" }, null))).toEqual({ quote: square })
  })

  it("a non-function tool returns its value through run but refuses a direct call", async () => {
    await evolve("answer", 42)
    expect(valueOf(await run("answer", null))).toBe(42)
    const direct = await call(s.client, "answer", { input: null })
    expect(direct.isError).toBe(true)
    expect(direct.structuredContent).toMatchObject({ kind: "TypeError" })
    expect(textOf(direct)).toContain("not a function")
  })

  it("re-evolving keeps versions: list shows them, run can name one", async () => {
    const cube = { lam: "x", body: { mul: [{ var: "x" }, { mul: [{ var: "x" }, { var: "x" }] }] } }
    const second = await evolve("square", cube, "Now cubes")
    expect(second.structuredContent).toMatchObject({ version: 2 })
    expect(valueOf(await run("square", 3))).toBe(27)
    expect(valueOf(await run("square", 3, { version: 1 }))).toBe(9)
    expect(valueOf(await call(s.client, "square", { input: 3 }))).toBe(27)
    const missing = await run("square", 3, { version: 3 })
    expect(missing.structuredContent).toMatchObject({ kind: "UnknownVersion", path: ["version"] })
    const listed = (await call(s.client, "list")).structuredContent as {
      tools: Array<{ name: string; version: number; versions: Array<{ version: number; description: string }> }>
    }
    const entry = listed.tools.find((t) => t.name === "square")!
    expect(entry.version).toBe(2)
    expect(entry.versions.map((v) => [v.version, v.description])).toEqual([
      [1, "Squares a number"],
      [2, "Now cubes"]
    ])
    expect(listed.tools.map((t) => t.name)).toEqual([...listed.tools.map((t) => t.name)].sort())
  })

  it("serves each tool's source and the language reference as resources", async () => {
    const { resources } = await s.client.listResources()
    expect(resources.map((r) => r.uri)).toContain("lambda://reference")
    expect(resources.map((r) => r.uri)).toContain("lambda://tools/square")
    const { resourceTemplates } = await s.client.listResourceTemplates()
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["lambda://tools/{name}", "lambda://tools/{name}/versions/{version}"])
    const current = await s.client.readResource({ uri: "lambda://tools/square" })
    const doc = JSON.parse((current.contents[0] as { text: string }).text)
    expect(doc).toMatchObject({ name: "square", version: 2, current: true, description: "Now cubes", versions: [1, 2] })
    const v1 = await s.client.readResource({ uri: "lambda://tools/square/versions/1" })
    expect(JSON.parse((v1.contents[0] as { text: string }).text)).toMatchObject({ version: 1, current: false, code: square })
    const reference = await s.client.readResource({ uri: "lambda://reference" })
    expect(reference.contents[0]).toMatchObject({ mimeType: "text/markdown" })
    expect((reference.contents[0] as { text: string }).text).toContain("## Pairs")
    await expect(s.client.readResource({ uri: "lambda://tools/nothing" })).rejects.toMatchObject({ code: -32002 })
  })

  it("offers the lambda-tutor prompt", async () => {
    const { prompts } = await s.client.listPrompts()
    expect(prompts.map((p) => p.name)).toEqual(["lambda-tutor"])
    const prompt = await s.client.getPrompt({ name: "lambda-tutor", arguments: { goal: "a tool that sums a list" } })
    const text = (prompt.messages[0]!.content as { text: string }).text
    expect(text).toContain("Your goal: a tool that sums a list")
    expect(text).toContain('{"fold": [f, init, list]}')
    await expect(s.client.getPrompt({ name: "nope" })).rejects.toMatchObject({ code: ErrorCode.InvalidParams })
  })

  it("fuel bounds a call: a looping term stops with a BudgetExceeded result, promptly", async () => {
    const small = await run(omega, null, { fuel: 1000 })
    expect(small.isError).toBe(true)
    expect(small.structuredContent).toMatchObject({ kind: "BudgetExceeded", budget: "steps", limit: 1000 })
    await evolve("spin", { lam: "x", body: { app: { func: { self: true }, arg: { var: "x" } } } })
    const spin = await call(s.client, "spin", { input: 1, fuel: 50_000 })
    expect(spin.structuredContent).toMatchObject({ kind: "BudgetExceeded", limit: 50_000 })
    const byDefault = await run(omega, null)
    expect(byDefault.structuredContent).toMatchObject({ kind: "BudgetExceeded" })
    const tooMuch = await run("square", 2, { fuel: 20_000_001 })
    expect(tooMuch.structuredContent).toMatchObject({ kind: "InvalidArguments", path: ["fuel"] })
  })

  it("reports bad terms and arguments as structured isError results", async () => {
    const parse = await evolve("bad", { lam: "x", body: { add: [1] } })
    expect(parse.isError).toBe(true)
    expect(parse.structuredContent).toMatchObject({ kind: "TermParseError", path: ["body", "add"], argument: "code" })
    const free = await evolve("bad", { lam: "x", body: { add: [{ var: "x" }, { var: "y" }] } })
    expect(free.structuredContent).toMatchObject({ kind: "FreeVariable", path: ["body", "add", 1], variables: ["y"] })
    expect((await evolve("run", square)).structuredContent).toMatchObject({ kind: "InvalidToolName" })
    expect((await evolve("has space", square)).structuredContent).toMatchObject({ kind: "InvalidToolName", path: ["name"] })
    const agent = await evolve("searcher", { lam: "q", body: { app: { func: { tool: "search" }, arg: { var: "q" } } } })
    expect(agent.structuredContent).toMatchObject({ kind: "CapabilityDenied" })
    expect(textOf(agent)).toContain("search")
    const notJson = await evolve("bad", '{"lam": ')
    expect(notJson.structuredContent).toMatchObject({ kind: "TermParseError", argument: "code" })
    const missing = await call(s.client, "evolve", { name: "bad", description: "no code" })
    expect(missing.structuredContent).toMatchObject({ kind: "InvalidArguments", path: ["code"] })
    const wrongType = await run("square", 1, { step: "two" })
    expect(wrongType.structuredContent).toMatchObject({ kind: "InvalidArguments", path: ["step"] })
    const unknown = await run("sqare", 1)
    expect(unknown.structuredContent).toMatchObject({ kind: "UnknownTool", path: ["code"] })
    expect(textOf(unknown)).toContain("square")
    const badInput = await run("square", { zeta: 1 })
    expect(badInput.structuredContent).toMatchObject({ kind: "TermParseError", argument: "input" })
    expect((await run({ head: { nil: true } }, null)).structuredContent).toMatchObject({ kind: "EmptyList" })
    expect((await run('{"div":[-9223372036854775808,-1]}', null)).structuredContent).toMatchObject({ kind: "Overflow" })
    expect(textOf(await run('{"sub":[9223372036854775807,1]}', null))).toBe("9223372036854775806")
    // biome-ignore lint/correctness/noPrecisionLoss: an integer a double cannot hold exactly is the case under test
    const inexact = await run({ add: [9223372036854775807, 0] }, null)
    expect(inexact.structuredContent).toMatchObject({ kind: "InexactInteger", path: ["add", 0], argument: "code" })
    expect((await run("square", 2 ** 60)).structuredContent).toMatchObject({ kind: "InexactInteger", argument: "input" })
    expect((await run({ lam: "x", body: { continue: { input: 1 } } }, 1)).structuredContent).toMatchObject({ kind: "RuntimeError" })
    // Nothing above broke the registry.
    expect(((await call(s.client, "list")).structuredContent as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).not.toContain("bad")
  })

  it("answers protocol faults with JSON-RPC errors and keeps serving", async () => {
    const unknown = await s.client.callTool({ name: "no_such_tool", arguments: {} }).catch((e: unknown) => e)
    expect(unknown).toBeInstanceOf(McpError)
    expect((unknown as McpError).code).toBe(ErrorCode.InvalidParams)
    expect((unknown as McpError).message).toContain("Unknown tool: no_such_tool")
    const method = await s.client.request({ method: "no/such_method", params: {} }, (await import("zod")).z.object({})).catch((e: unknown) => e)
    expect((method as McpError).code).toBe(ErrorCode.MethodNotFound)
    await expect(s.client.ping()).resolves.toBeDefined()
    expect(valueOf(await run("square", 2))).toBe(8)
  })

  it("handles deeply nested inputs and oversized terms without crashing", async () => {
    // (Deeper nesting than this is tested over raw stdio: the SDK client itself cannot serialise it.)
    let deep: unknown = 1
    for (let i = 0; i < 1500; i++) deep = [deep]
    const result = await run(identity, deep)
    expect(result.isError).toBeUndefined()
    const text = textOf(result)
    expect(text.length).toBe(3001)
    expect(text.startsWith("[[[[")).toBe(true)
    expect(result.structuredContent).toBeUndefined() // too deep for structured content; the text carries it
    // A 60,000-deep term, sent as JSON text (code may be JSON text).
    const big = '{"add":['.repeat(60_000) + "0" + ",1]}".repeat(60_000)
    const tooBig = await evolve("big", `{"lam":"x","body":${big}}`)
    expect(tooBig.structuredContent).toMatchObject({ kind: "TermTooLarge" })
    expect(valueOf(await run(big, null))).toBe(60_000)
  })

  it("persists tools to the store file and its journal, one line per evolve", async () => {
    // a small registry lives in the journal until it outgrows the file (see jsonFileStore)
    const lines = (await readFile(`${storePath}.journal`, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { name: string; version: number })
    expect(lines.filter((l) => l.name === "square").map((l) => l.version)).toEqual([1, 2])
    const stored = await jsonFileStore(storePath).load()
    const names = stored.map((t) => t.name)
    expect(names).toEqual([...names].sort())
    expect(names).toContain("factorial")
    expect(stored.find((t) => t.name === "square")!.versions).toHaveLength(2)
    expect((await readdir(dir.path)).filter((f) => f.endsWith(".tmp"))).toEqual([])
  })
})

describe("persistence across restarts", () => {
  it("a new server process reads the tools (and versions) an earlier one evolved", async () => {
    const dir = await tempDir()
    const store = join(dir.path, "nested", "tools.json")
    try {
      const first = await connectStdio(["--store", store])
      await call(first.client, "evolve", { name: "square", description: "v1", code: square })
      await call(first.client, "evolve", { name: "square", description: "v2", code: { lam: "x", body: { add: [{ var: "x" }, 1] } } })
      await call(first.client, "evolve", { name: "factorial", description: "acc", code: factorialAcc })
      await first.close()

      const second = await connectStdio(["--store", store])
      try {
        expect(second.stderr()).toMatch(/2 tools from file /)
        const { tools } = await second.client.listTools()
        expect(tools.map((t) => t.name)).toEqual(["evolve", "run", "list", "help", "factorial", "square"])
        expect(valueOf(await call(second.client, "square", { input: 4 }))).toBe(5)
        expect(valueOf(await call(second.client, "run", { code: "square", input: 4, version: 1 }))).toBe(16)
        const k = await call(second.client, "run", { code: "factorial", input: { pair: [3, 1] } })
        expect(k.structuredContent).toMatchObject({ type: "continuation", step: 1 })
        // A third evolve continues the version numbering.
        expect((await call(second.client, "evolve", { name: "square", description: "v3", code: square })).structuredContent).toMatchObject({ version: 3 })
      } finally {
        await second.close()
      }
    } finally {
      await dir.remove()
    }
  })

  it("refuses to start on a store it cannot read, and leaves the file alone", async () => {
    const dir = await tempDir()
    const store = join(dir.path, "tools.json")
    try {
      const { writeFile } = await import("node:fs/promises")
      await writeFile(store, "{ this is not json")
      await expect(connectStdio(["--store", store])).rejects.toThrow()
      expect(await readFile(store, "utf8")).toBe("{ this is not json")
    } finally {
      await dir.remove()
    }
  })
})
