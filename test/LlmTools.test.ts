/**
 * An `llm` term given `tools`: one model call with the tools, the calls it asks for made at once,
 * the model asked again with their results (at most `toolRounds` rounds, the last one with tool
 * choice `none`), bounded by the analyses; on the scripted model, natively and in text.
 */
import { describe, expect, it } from "vitest"
import * as z from "zod"
import { createRuntime, type LanguageModel, Term, Tools } from "lambdagent"
import { recording } from "./fixtures/recordingModel.ts"

const add = Tools.define({ name: "add", description: "Add two numbers.", input: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => a + b })
const call = (id: string, name: string, args: string): LanguageModel.ToolCall => ({ id, name, arguments: args })
const calls = (...toolCalls: Array<LanguageModel.ToolCall>): LanguageModel.ChatResponse => ({ text: "", toolCalls })

const calculator = (options: Partial<Term.LlmOptions> = {}) => Term.llm({ system: "Compute with the tools.", tools: ["add"], ...options })

describe("an llm term with tools", () => {
  it("makes the calls the model asks for, at once, and asks again with their results and no tools", async () => {
    const { model, requests } = recording([calls(call("c1", "add", '{"a":40,"b":2}'), call("c2", "add", '{"a":1,"b":1}')), "42 and 2."])
    const out = await createRuntime({ model, tools: [add] }).run(calculator(), "40+2 and 1+1?")
    expect(out.value).toBe("42 and 2.")
    expect([out.stats.llmCalls, out.stats.toolCalls]).toEqual([2, 2])
    expect(requests[0]!.tools?.map((t) => t.name)).toEqual(["add"])
    expect(requests[0]!.toolChoice).toBe("auto")
    expect(requests[0]!.messages[0]!.content).toBe("Compute with the tools.")
    expect(requests[1]!.toolChoice).toBe("none")
    expect(requests[1]!.messages.slice(1)).toEqual([
      { role: "user", content: "40+2 and 1+1?" },
      { role: "assistant", content: "", toolCalls: [call("c1", "add", '{"a":40,"b":2}'), call("c2", "add", '{"a":1,"b":1}')] },
      { role: "tool", toolCallId: "c1", content: "42" },
      { role: "tool", toolCallId: "c2", content: "2" }
    ])
    expect(out.trace.map((e) => e.kind)).toEqual(["llm", "tool", "tool", "llm"])
  })

  it("answers at once when the model calls nothing", async () => {
    const { model, requests } = recording(["No tools needed."])
    const out = await createRuntime({ model, tools: [add] }).run(calculator(), "hello")
    expect(out.value).toBe("No tools needed.")
    expect(requests).toHaveLength(1)
  })

  it("makes as many rounds as toolRounds allow, the last one answered without tools", async () => {
    const { model, requests } = recording([calls(call("c1", "add", '{"a":1,"b":2}')), calls(call("c2", "add", '{"a":3,"b":3}')), "6"])
    const out = await createRuntime({ model, tools: [add] }).run(calculator({ toolRounds: 2 }), "1+2, then +3")
    expect(out.value).toBe("6")
    expect(requests.map((r) => r.toolChoice)).toEqual(["auto", "auto", "none"])
    expect(out.stats.toolCalls).toBe(2)
  })

  it("answers invalid calls and calls past maxToolCalls with what was wrong, without making them", async () => {
    const { model, requests } = recording([
      calls(call("c1", "add", '{"a":1,"b":2}'), call("c2", "add", '{"a":'), call("c3", "search", "{}"), call("c4", "add", '{"a":5,"b":5}')),
      "done"
    ])
    const out = await createRuntime({ model, tools: [add] }).run(calculator({ maxToolCalls: 3 }), "x")
    expect(out.stats.toolCalls).toBe(1)
    const results = requests[1]!.messages.filter((m) => m.role === "tool").map((m) => m.content)
    expect(results[0]).toBe("3")
    expect(results[1]).toMatch(/^\[TOOL_ERROR\] add: the arguments are not valid JSON/)
    expect(results[2]).toBe('[TOOL_ERROR] unknown tool "search"; available: add')
    expect(results[3]).toBe("[TOOL_ERROR] too many calls in one answer: at most 3 are made")
  })

  it("asks a model without native tools for calls in its text, and reads them from it", async () => {
    const { model, requests } = recording(['{"tool": "add", "args": {"a": 2, "b": 2}}', "It is 4."], { nativeTools: false })
    const out = await createRuntime({ model, tools: [add] }).run(calculator(), "2+2?")
    expect(out.value).toBe("It is 4.")
    expect(requests[0]!.tools).toBeUndefined()
    expect(requests[0]!.messages[0]!.content).toContain('To use a tool, answer with one JSON object: {"tool": "<name>", "args": <arguments>}')
    expect(requests[1]!.messages.at(-1)).toEqual({ role: "tool", toolCallId: "call_0_0", content: "4" })
  })

  it("is bounded: one call plus one per round, each round at most maxToolCalls tool calls", () => {
    expect(Term.bounds(calculator())).toEqual({ llmCalls: 2, toolCalls: 8 })
    expect(Term.bounds(calculator({ toolRounds: 3, maxToolCalls: 2 }))).toEqual({ llmCalls: 4, toolCalls: 6 })
    expect([...Term.capabilities(calculator()).tools]).toEqual(["add"])
    expect(Term.pretty(calculator({ toolRounds: 2 }))).toBe('LLM("Compute with the tools.")[add]×2')
  })

  it("reads and writes its JSON, and refuses what it cannot mean", () => {
    const json = { llm: { system: "s", tools: ["add"], toolRounds: 2, maxToolCalls: 3 } }
    expect(Term.encode(Term.parse(json))).toEqual(json)
    expect(() => Term.parse({ llm: { system: "s", tools: ["add"], output: { schema: { type: "object" } } } })).toThrow(
      "$.llm.tools: expected nothing beside output"
    )
    expect(() => Term.parse({ llm: { system: "s", toolRounds: 2 } })).toThrow("$.llm.toolRounds: expected tools beside toolRounds and maxToolCalls")
    expect(() => Term.parse({ llm: { system: "s", tools: ["add"], toolRounds: 0 } })).toThrow("$.llm.toolRounds: expected an integer ≥ 1")
  })
})
