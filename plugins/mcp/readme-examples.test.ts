import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, type Connected, connectStdio, factorialAcc, tempDir, textOf, valueOf } from "./test-support.ts"

/** The tool-evolving server's examples exactly as the reference README writes them. */
describe("the reference README's examples, as written", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let s: Connected

  beforeAll(async () => {
    dir = await tempDir()
    s = await connectStdio(["--store", join(dir.path, "tools.json")])
  })

  afterAll(async () => {
    await s?.close()
    await dir?.remove()
  })

  it("creates square and runs it with {tool, input}: 49", async () => {
    const evolved = await call(s.client, "evolve", {
      name: "square",
      description: "Squares a number",
      code: { lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } }
    })
    expect(evolved.isError).toBeUndefined()
    const result = await call(s.client, "run", { tool: "square", input: 7 })
    expect(textOf(result)).toBe("49")
    expect(valueOf(result)).toBe(49)
    expect(valueOf(await call(s.client, "run", { code: "square", input: 7 }))).toBe(49)
  })

  it("gets help on lists", async () => {
    expect(textOf(await call(s.client, "help", { category: "lists" }))).toMatch(/^## Lists/)
  })

  it("factorial by continuation returns the structured response with the reference's message", async () => {
    await call(s.client, "evolve", { name: "factorial", description: "Computes factorial using continuation with accumulator", code: factorialAcc })
    const result = await call(s.client, "run", { code: "factorial", input: { pair: [5, 1] } })
    expect(result.structuredContent).toMatchObject({
      type: "continuation",
      message: "Recursive step needed. Call run again with:",
      tool: "factorial",
      next_input: { pair: [4, 5] },
      step: 1
    })
    // next_call is the call to send back, as is, until the value comes.
    let k = result.structuredContent as { type?: string; next_call?: { tool: string; arguments: Record<string, unknown> } }
    let last = result
    while (k.type === "continuation") {
      last = await call(s.client, k.next_call!.tool, k.next_call!.arguments)
      k = last.structuredContent as typeof k
    }
    expect(valueOf(last)).toBe(120)
  })

  it("evolves double from a body with one unbound variable, taken as its parameter: 42", async () => {
    const evolved = await call(s.client, "evolve", { name: "double", description: "Doubles a number", code: { mul: [{ var: "x" }, 2] } })
    expect(evolved.isError).toBeUndefined()
    expect(evolved.structuredContent).toMatchObject({ name: "double", parameter: "x", isFunction: true })
    expect((evolved.structuredContent as { warnings: Array<string> }).warnings[0]).toContain("taken as the tool's parameter")
    expect(valueOf(await call(s.client, "run", { tool: "double", input: 21 }))).toBe(42)
    expect(valueOf(await call(s.client, "double", { input: 21 }))).toBe(42)
  })
})

describe("run {tool} and unbound variables, beyond the README", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let s: Connected

  beforeAll(async () => {
    dir = await tempDir()
    s = await connectStdio(["--store", join(dir.path, "tools.json")])
    await call(s.client, "evolve", { name: "inc", description: "v1", code: { lam: "n", body: { add: [{ var: "n" }, 1] } } })
    await call(s.client, "evolve", { name: "inc", description: "v2", code: { lam: "n", body: { add: [{ var: "n" }, 2] } } })
  })

  afterAll(async () => {
    await s?.close()
    await dir?.remove()
  })

  it("runs a named version with {tool, version}", async () => {
    expect(valueOf(await call(s.client, "run", { tool: "inc", input: 1 }))).toBe(3)
    expect(valueOf(await call(s.client, "run", { tool: "inc", input: 1, version: 1 }))).toBe(2)
  })

  it("refuses tool and code together, neither, or an unknown tool, naming the argument", async () => {
    const both = await call(s.client, "run", { tool: "inc", code: "inc", input: 1 })
    expect(both.structuredContent).toMatchObject({ kind: "InvalidArguments", path: ["tool"] })
    const neither = await call(s.client, "run", { input: 1 })
    expect(neither.structuredContent).toMatchObject({ kind: "InvalidArguments", path: ["code"] })
    const unknown = await call(s.client, "run", { tool: "incc", input: 1 })
    expect(unknown.structuredContent).toMatchObject({ kind: "UnknownTool", path: ["tool"] })
    expect(textOf(unknown)).toContain("tools: inc")
  })

  it("refuses an unbound variable inside a lam, saying what to write instead", async () => {
    const typo = await call(s.client, "evolve", { name: "typo", description: "", code: { lam: "x", body: { mul: [{ var: "y" }, 2] } } })
    expect(typo.structuredContent).toMatchObject({ kind: "FreeVariable", variables: ["y"], path: ["body", "mul", 0] })
    expect(textOf(typo)).toContain('bind it with another {\\"lam\\"')
  })

  it("refuses a body with two unbound variables, suggesting one parameter", async () => {
    const two = await call(s.client, "evolve", { name: "two", description: "", code: { add: [{ var: "a" }, { var: "b" }] } })
    expect(two.structuredContent).toMatchObject({ kind: "FreeVariable", variables: ["a", "b"] })
    expect((two.structuredContent as { message: string }).message).toContain('write {"lam": "a", "body": <code>}')
  })
})
