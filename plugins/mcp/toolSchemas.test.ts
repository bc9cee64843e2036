import { readFile } from "node:fs/promises"
import * as z from "zod"
import { describe, expect, it } from "vitest"
import { defineTool, lambdaToolsModule, ToolRegistry } from "./index.ts"

const square = { lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } }

describe("tool input schemas", () => {
  it("publish the same JSON Schema, byte for byte, as when they were converted at definition", async () => {
    // recorded from `lambdagent mcp`'s tools/list (default limits) before the conversion was deferred to the first read
    const recorded = JSON.parse(await readFile(new URL("./fixtures/tool-input-schemas.json", import.meta.url), "utf8")) as Record<string, unknown>
    const module = lambdaToolsModule({
      registry: await ToolRegistry.open(),
      limits: { defaultFuel: 10_000_000, maxFuel: 100_000_000, timeoutMs: 10_000, maxTermSize: 100_000 },
      policy: {},
      reservedNames: () => new Set(),
      log: () => {}
    })
    const evolve = module.tools!().find((t) => t.name === "evolve")!
    const evolved = await evolve.call({ name: "square", description: "Square a number", code: square }, { signal: new AbortController().signal })
    expect(evolved.isError).toBeUndefined()
    const tools = module.tools!()
    expect(tools.map((t) => t.name)).toEqual(Object.keys(recorded))
    for (const tool of tools) expect(JSON.stringify(tool.inputSchema), tool.name).toBe(JSON.stringify(recorded[tool.name]))
  })

  it("are converted on first read and then kept", () => {
    // zod cannot express a Date in JSON Schema: converting at definition would throw here
    const spec = defineTool({ name: "when", description: "A date", input: z.object({ at: z.date() }), run: () => ({ content: [] }) })
    expect(spec.name).toBe("when")
    expect(() => spec.inputSchema).toThrow()
    const echo = defineTool({ name: "echo", description: "Echo", input: z.object({ message: z.string() }), run: () => ({ content: [] }) })
    expect(echo.inputSchema).toBe(echo.inputSchema)
    expect(echo.inputSchema).toEqual({ type: "object", properties: { message: { type: "string" } }, required: ["message"] })
  })

  it("are included when a tool is copied or written as JSON", () => {
    const echo = defineTool({ name: "echo", description: "Echo", input: z.object({ message: z.string() }), run: () => ({ content: [] }) })
    expect({ ...echo }.inputSchema).toEqual(echo.inputSchema)
    expect(JSON.parse(JSON.stringify(echo)).inputSchema).toEqual(echo.inputSchema)
  })
})
