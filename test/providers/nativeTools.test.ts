/**
 * Native tool calling of a ReAct agent over the providers' real wire formats, against the local
 * fake OpenAI and Anthropic servers: tool definitions and tool choice on the way out, parallel
 * calls, a malformed arguments string and an invented tool on the way back, the results sent
 * back under their call ids, streamed calls, and a stream cut in the middle of a call.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as z from "zod"
import { Anthropic, createRuntime, OpenAI, type Runtime, Term, Tools } from "lambdagent"
import { fromConfig } from "lambdagent/yaml"
import { withEnv } from "../fixtures/env.ts"
import { fast } from "./helpers.ts"
import { message, startAnthropicServer, textEvents, toolUsesEvents } from "./servers/anthropic.ts"
import type { TestServer } from "./servers/harness.ts"
import { completion, parallelToolCallFrames, startOpenAIServer, textFrames } from "./servers/openai.ts"

const add = Tools.define({
  name: "add",
  description: "Add two numbers.",
  input: z.object({ a: z.number(), b: z.number() }),
  run: ({ a, b }) => a + b
})
const shout = Tools.define({ name: "shout", description: "Upper-case text.", run: (s: string) => s.toUpperCase() })
const tools = [add, shout]

const reactYaml = (provider: string, url: string) => `
agentId: calculator
type: react
systemPrompt: Compute with the tools.
model:
  provider: ${provider}
  name: test-model
  baseUrl: ${url}
react:
  maxSteps: 4
  toolCalling: native
mcp:
  localTools: [add, shout, terminate]
`

withEnv({ OPENAI_API_KEY: "sk-test-native", ANTHROPIC_API_KEY: "sk-ant-test-native" })
let openai: TestServer
let anthropic: TestServer
beforeAll(async () => {
  ;[openai, anthropic] = await Promise.all([startOpenAIServer(), startAnthropicServer()])
})
afterAll(async () => {
  await Promise.all([openai.close(), anthropic.close()])
})
beforeEach(() => {
  openai.reset()
  anthropic.reset()
})

/** The events of a streamed run, and its output. */
const streamed = async (runtime: Runtime.Runtime, term: Term.Term, input: string) => {
  const events: Array<Runtime.StreamEvent> = []
  for await (const event of runtime.stream(term, input)) events.push(event)
  const last = events.at(-1)
  if (last?.type !== "result") throw new Error("the stream ended without a result")
  return { events, output: last.output }
}

const firstTurn = [
  { id: "call_add", name: "add", arguments: '{"a":40,"b":2}' },
  { id: "call_shout", name: "shout", arguments: '{"input":"done"}' },
  { id: "call_bad", name: "add", arguments: '{"a":1,' },
  { id: "call_made_up", name: "search", arguments: '{"q":"x"}' }
]

describe("native tool calling over the OpenAI wire format", () => {
  const checkSecondRequest = (body: any) => {
    expect(body.messages.slice(2, 3)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: firstTurn.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }))
      }
    ])
    const results = body.messages.slice(3)
    expect(results.map((m: any) => [m.role, m.tool_call_id])).toEqual(firstTurn.map((c) => ["tool", c.id]))
    expect(results[0].content).toBe("42")
    expect(results[1].content).toBe("DONE")
    expect(results[2].content).toMatch(/^\[TOOL_ERROR\] add: the arguments are not valid JSON/)
    expect(results[3].content).toBe('[TOOL_ERROR] unknown tool "search"; available: add, shout, terminate')
  }

  it("a YAML ReAct agent sends tools with tool_choice, runs parallel calls and answers each by id", async () => {
    openai.enqueue({ kind: "json", body: completion({ text: null, toolCalls: firstTurn }) }, { kind: "json", body: completion({ text: "42, DONE" }) })
    const term = fromConfig(reactYaml("openai", `${openai.url}/v1`))
    const output = await createRuntime({ tools }).run(term, "40+2, and shout done")
    expect(output.value).toBe("42, DONE")
    const [first, second] = openai.requests.map((r) => r.body)
    expect(first.tool_choice).toBe("auto")
    expect(first.tools.map((t: any) => [t.type, t.function.name])).toEqual([
      ["function", "add"],
      ["function", "shout"],
      ["function", "terminate"]
    ])
    expect(first.tools[0].function.parameters).toMatchObject({ type: "object", properties: { a: { type: "number" } }, required: ["a", "b"] })
    expect(first.messages[0]).toEqual({ role: "system", content: "Compute with the tools." })
    checkSecondRequest(second)
    expect(output.stats.toolCalls).toBe(2)
  })

  it("streams: tool-call deltas of parallel calls are put together, then the results go back", async () => {
    openai.enqueue({ kind: "sse", frames: parallelToolCallFrames(firstTurn) }, { kind: "sse", frames: textFrames(["42, ", "DONE"]) })
    const term = fromConfig(reactYaml("openai", `${openai.url}/v1`))
    const { events, output } = await streamed(createRuntime({ tools }), term, "40+2, and shout done")
    expect(output.value).toBe("42, DONE")
    expect(openai.requests.map((r) => r.body.stream)).toEqual([true, true])
    checkSecondRequest(openai.requests[1]!.body)
    const traced = events.flatMap((e) => (e.type === "trace" && e.event.kind === "tool" ? [[e.event.name, e.event.output]] : []))
    // every call is traced: the invalid ones when they are read, the others when they answer
    expect(traced).toHaveLength(4)
    expect(traced).toEqual(
      expect.arrayContaining([
        ["add", "42"],
        ["shout", "DONE"],
        ["search", expect.stringMatching(/unknown tool/)]
      ])
    )
  })

  it("a stream cut in the middle of a call fails the run with a clear provider error, no tool is called", async () => {
    let calls = 0
    const counted = Tools.define({ name: "add", description: "Add.", input: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => (calls++, a + b) })
    openai.enqueue({ kind: "sse", frames: parallelToolCallFrames(firstTurn.slice(0, 2), { cut: 3 }), end: "destroy" })
    const model = OpenAI.make({ preset: "openai", baseUrl: `${openai.url}/v1`, apiKey: "sk-test", model: "gpt-test", ...fast, maxRetries: 0 })
    const term = Term.react({ think: Term.llm({ system: "Compute." }), tools: ["add", "shout", "terminate"], maxSteps: 3, toolCalling: "native" })
    const failure = await streamed(createRuntime({ model, tools: [counted, shout] }), term, "go").then(
      () => undefined,
      (error: unknown) => error as { _tag: string; reason: string; message: string }
    )
    expect(failure?._tag).toBe("ProviderError")
    expect(["BadResponse", "Network"]).toContain(failure?.reason)
    expect(failure?.message).not.toMatch(/\n\s+at /)
    expect(calls).toBe(0)
  })
})

describe("native tool calling over the Anthropic wire format", () => {
  const uses = [
    { id: "toolu_add", name: "add", json: '{"a":40,"b":2}' },
    { id: "toolu_shout", name: "shout", json: '{"input":"done"}' },
    { id: "toolu_made_up", name: "search", json: '{"q":"x"}' }
  ]
  const checkSecondRequest = (body: any) => {
    expect(body.messages[1]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "Working." }, ...uses.map((u) => ({ type: "tool_use", id: u.id, name: u.name, input: JSON.parse(u.json) }))]
    })
    // the results of one turn go back as one user turn of tool_result blocks
    expect(body.messages[2].role).toBe("user")
    expect(body.messages[2].content.map((b: any) => [b.type, b.tool_use_id, b.content])).toEqual([
      ["tool_result", "toolu_add", "42"],
      ["tool_result", "toolu_shout", "DONE"],
      ["tool_result", "toolu_made_up", '[TOOL_ERROR] unknown tool "search"; available: add, shout, terminate']
    ])
  }

  it("a YAML ReAct agent sends tools as input_schema, runs the tool_use blocks and sends tool_result blocks", async () => {
    anthropic.enqueue(
      { kind: "json", body: message({ text: "Working.", toolUses: uses.map((u) => ({ id: u.id, name: u.name, input: JSON.parse(u.json) })) }) },
      { kind: "json", body: message({ text: "42, DONE" }) }
    )
    const term = fromConfig(reactYaml("anthropic", anthropic.url))
    const output = await createRuntime({ tools }).run(term, "40+2, and shout done")
    expect(output.value).toBe("42, DONE")
    const [first, second] = anthropic.requests.map((r) => r.body)
    expect(first.tool_choice).toEqual({ type: "auto" })
    expect(first.system).toBe("Compute with the tools.")
    expect(first.tools.map((t: any) => t.name)).toEqual(["add", "shout", "terminate"])
    expect(first.tools[1].input_schema).toMatchObject({ type: "object", properties: { input: { type: "string" } }, required: ["input"] })
    checkSecondRequest(second)
  })

  it("streams: input_json_delta pieces of several tool_use blocks are put together", async () => {
    anthropic.enqueue({ kind: "sse", frames: toolUsesEvents("Working.", uses) }, { kind: "sse", frames: textEvents(["42, ", "DONE"]) })
    const term = fromConfig(reactYaml("anthropic", anthropic.url))
    const { output } = await streamed(createRuntime({ tools }), term, "40+2, and shout done")
    expect(output.value).toBe("42, DONE")
    checkSecondRequest(anthropic.requests[1]!.body)
  })

  it("a stream cut in the middle of a tool_use block fails the run with a clear provider error", async () => {
    anthropic.enqueue({ kind: "sse", frames: toolUsesEvents("", uses, { cut: 2 }), end: "destroy" })
    const model = Anthropic.make({ baseUrl: anthropic.url, apiKey: "sk-ant-test", ...fast, maxRetries: 0 })
    const term = Term.react({ think: Term.llm({ system: "Compute." }), tools: ["add", "shout", "terminate"], maxSteps: 3, toolCalling: "native" })
    const failure = await streamed(createRuntime({ model, tools }), term, "go").then(
      () => undefined,
      (error: unknown) => error as { _tag: string; reason: string }
    )
    expect(failure?._tag).toBe("ProviderError")
    expect(["BadResponse", "Network"]).toContain(failure?.reason)
  })
})

describe("a plain llm with tools over the providers' wire formats", () => {
  const calculator = Term.llm({ system: "Compute with the tools.", tools: ["add", "shout"] })

  it("OpenAI: tools with tool_choice auto, the calls made, then tool_choice none with the results", async () => {
    openai.enqueue(
      { kind: "json", body: completion({ text: null, toolCalls: firstTurn.slice(0, 2) }) },
      { kind: "json", body: completion({ text: "42, DONE" }) }
    )
    const model = OpenAI.make({ baseUrl: `${openai.url}/v1`, apiKey: "sk-test", model: "gpt-test", ...fast })
    const output = await createRuntime({ model, tools }).run(calculator, "40+2, and shout done")
    expect(output.value).toBe("42, DONE")
    const [first, second] = openai.requests.map((r) => r.body)
    expect(first.tool_choice).toBe("auto")
    expect(first.tools.map((t: any) => t.function.name)).toEqual(["add", "shout"])
    expect(second.tool_choice).toBe("none")
    expect(second.messages.slice(3).map((m: any) => [m.role, m.tool_call_id, m.content])).toEqual([
      ["tool", "call_add", "42"],
      ["tool", "call_shout", "DONE"]
    ])
  })

  it("Anthropic: tool_use blocks made, tool_result blocks sent back with tool_choice none", async () => {
    anthropic.enqueue(
      { kind: "json", body: message({ text: "Working.", toolUses: [{ id: "toolu_1", name: "add", input: { a: 40, b: 2 } }] }) },
      { kind: "json", body: message({ text: "42" }) }
    )
    const model = Anthropic.make({ baseUrl: anthropic.url, apiKey: "sk-ant-test", ...fast })
    const output = await createRuntime({ model, tools }).run(calculator, "40+2?")
    expect(output.value).toBe("42")
    const second = anthropic.requests[1]!.body
    expect(second.tool_choice).toEqual({ type: "none" })
    expect(second.messages.at(-1)).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "42" }] })
  })
})
