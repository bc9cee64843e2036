import { describe, expect, it } from "vitest"
import * as z from "zod"
import { type Agent, Checkpoint, createRuntime, type LanguageModel, Oracle, Replay, Scripted, Term, Tools, Value } from "lambdagent"
import { recording } from "./fixtures/recordingModel.ts"

const add = Tools.define({
  name: "add",
  description: "Add two numbers.",
  input: z.object({ a: z.number(), b: z.number() }),
  run: ({ a, b }) => a + b
})

const upper = Tools.define({ name: "upper", description: "Upper-case text.", run: (s: string) => s.toUpperCase() })

const call = (id: string, name: string, args: string): LanguageModel.ToolCall => ({ id, name, arguments: args })
const calls = (...toolCalls: Array<LanguageModel.ToolCall>): LanguageModel.ChatResponse => ({ text: "", toolCalls })

const agent = (toolCalling: Term.ToolCalling, tools: ReadonlyArray<string> = ["add", "upper", "terminate"]) =>
  Term.react({ think: Term.llm({ system: "Use the tools." }), tools, maxSteps: 5, toolCalling })

describe("native tool calling (react.toolCalling)", () => {
  it("sends the tools as definitions, runs the call and answers it with its id", async () => {
    const { model, requests } = recording([calls(call("call_1", "add", '{"a":2,"b":40}')), "The sum is 42."])
    const result = await createRuntime({ model, tools: [add, upper] }).run(agent("native"), "2+40?")
    expect(result.value).toBe("The sum is 42.")
    const first = requests[0]!
    expect(first.toolChoice).toBe("auto")
    expect(first.tools?.map((t) => t.name)).toEqual(["add", "upper", "terminate"])
    expect(first.tools?.[0]?.parameters).toMatchObject({ type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] })
    // a text tool takes its text as the `input` property
    expect(first.tools?.[1]?.parameters).toMatchObject({ type: "object", properties: { input: { type: "string" } }, required: ["input"] })
    // no text instructions on how to write a call
    expect(first.messages[0]!.content).toBe("Use the tools.")
    expect(requests[1]!.messages.slice(1)).toEqual([
      { role: "user", content: "2+40?" },
      { role: "assistant", content: "", toolCalls: [call("call_1", "add", '{"a":2,"b":40}')] },
      { role: "tool", toolCallId: "call_1", content: "42" }
    ])
    expect(result.trace.filter((e) => e.kind === "tool").map((e) => [e.name, e.output])).toEqual([["add", "42"]])
    expect(result.stats.toolCalls).toBe(1)
  })

  it("runs several calls of one turn at the same time and sends each result back under its call id", async () => {
    let running = 0
    let most = 0
    const gates: Array<() => void> = []
    const slow = Tools.define({
      name: "slow",
      description: "Waits until every call started.",
      input: z.object({ n: z.number() }),
      run: ({ n }) =>
        new Promise<number>((resolve) => {
          most = Math.max(most, ++running)
          gates.push(() => (running--, resolve(n * 10)))
          if (gates.length === 3) for (const open of gates) open()
        })
    })
    const { model, requests } = recording([calls(call("a", "slow", '{"n":1}'), call("b", "slow", '{"n":2}'), call("c", "slow", '{"n":3}')), "done"])
    const result = await createRuntime({ model, tools: [slow] }).run(agent("native", ["slow"]), "go")
    expect(result.value).toBe("done")
    expect(most).toBe(3)
    expect(requests[1]!.messages.filter((m) => m.role === "tool")).toEqual([
      { role: "tool", toolCallId: "a", content: "10" },
      { role: "tool", toolCallId: "b", content: "20" },
      { role: "tool", toolCallId: "c", content: "30" }
    ])
    // the trace lists the calls in call order, whatever order they finished in
    expect(result.trace.filter((e) => e.kind === "tool").map((e) => e.input)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}'])
    expect(result.stats.toolCalls).toBe(3)
  })

  it("makes at most maxToolCalls calls of one answer, answers the rest with an error, and bounds count them", async () => {
    const five = calls(...[1, 2, 3, 4, 5].map((n) => call(`c${n}`, "add", `{"a":${n},"b":0}`)))
    const { model, requests } = recording([five, five, "done"])
    const capped = Term.react({
      think: Term.llm({ system: "Use the tools." }),
      tools: ["add", "terminate"],
      maxSteps: 3,
      toolCalling: "native",
      maxToolCalls: 2
    })
    const result = await createRuntime({ model, tools: [add] }).run(capped, "go")
    expect(result.stats.toolCalls).toBe(4)
    expect(requests[1]!.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      "1",
      "2",
      ...[3, 4, 5].map(() => "[TOOL_ERROR] too many calls in one answer: at most 2 are made")
    ])
    expect(Term.bounds(capped).toolCalls).toBe(6)
    expect(Term.bounds(Term.react({ think: Term.llm({ system: "s" }), tools: ["add", "terminate"], maxSteps: 3, toolCalling: "auto" })).toolCalls).toBe(
      3 * Term.defaultMaxToolCalls
    )
    // a call written in the text is one call a step
    expect(Term.bounds(Term.react({ think: Term.llm({ system: "s" }), tools: ["add", "terminate"], maxSteps: 3 })).toolCalls).toBe(3)
    expect(Term.parse(Term.encode(capped))).toEqual(capped)
  })

  it("answers a malformed arguments string, a wrong shape and an invented tool with what was wrong", async () => {
    const { model, requests } = recording([
      calls(
        call("1", "add", '{"a": 1, "b":'),
        call("2", "add", '{"a":"one","b":2}'),
        call("3", "search", '{"q":"x"}'),
        call("4", "upper", '{"text":"hi"}'),
        call("5", "upper", '{"input":"hi"}')
      ),
      "recovered"
    ])
    const result = await createRuntime({ model, tools: [add, upper] }).run(agent("native"), "try")
    expect(result.value).toBe("recovered")
    const answers = requests[1]!.messages.filter((m) => m.role === "tool").map((m) => [m.toolCallId, m.content])
    expect(answers[0]![1]).toMatch(/^\[TOOL_ERROR\] add: the arguments are not valid JSON \(.+\): \{"a": 1, "b":$/)
    expect(answers[1]![1]).toMatch(/^\[TOOL_ERROR\] add: a: .*expected number/i)
    expect(answers[2]![1]).toBe('[TOOL_ERROR] unknown tool "search"; available: add, upper, terminate')
    expect(answers[3]![1]).toBe('[TOOL_ERROR] upper: expected the arguments {"input": …}')
    expect(answers[4]).toEqual(["5", "HI"])
    expect(answers.map(([id]) => id)).toEqual(["1", "2", "3", "4", "5"])
    // only the well-formed calls of known tools count against the budget
    expect(result.stats.toolCalls).toBe(3)
  })

  it("ends with a terminate call's answer", async () => {
    const { model } = recording([calls(call("t", "terminate", '{"answer":"all done"}'))])
    expect((await createRuntime({ model, tools: [add] }).run(agent("native"), "x")).value).toBe("all done")
  })

  it("auto falls back to text for a model that does not call tools natively", async () => {
    const { model, requests } = recording(['{"tool": "add", "args": {"a": 1, "b": 2}}', "three"], { nativeTools: false })
    const result = await createRuntime({ model, tools: [add] }).run(agent("auto"), "1+2?")
    expect(result.value).toBe("three")
    expect(requests[0]!.tools).toBeUndefined()
    expect(requests[0]!.messages[0]!.content).toContain('{"tool": "<name>", "args": <arguments>}')
    expect(requests[1]!.messages.at(-1)).toEqual({ role: "user", content: "Observation: 3" })
  })

  it("native on a model that cannot call tools natively fails, saying what to do", async () => {
    const { model } = recording(["x"], { nativeTools: false })
    await expect(createRuntime({ model, tools: [add] }).run(agent("native"), "x")).rejects.toThrow(/does not call tools natively.*auto or text/)
  })

  it("reads a call a native model wrote in its text as JSON, not a tool name in prose", async () => {
    const { model } = recording(['{"tool": "add", "args": {"a": 5, "b": 5}}', "I used add: ten."])
    const result = await createRuntime({ model, tools: [add] }).run(agent("native"), "5+5?")
    expect(result.value).toBe("I used add: ten.")
    expect(result.stats.toolCalls).toBe(1)
  })

  it("counts each call against the toolCalls budget before making them", async () => {
    const { model } = recording([calls(call("1", "add", '{"a":1,"b":1}'), call("2", "add", '{"a":2,"b":2}')), "done"])
    await expect(createRuntime({ model, tools: [add] }).run(agent("native"), "x", { budget: { toolCalls: 1 } })).rejects.toMatchObject({
      _tag: "BudgetExceeded",
      budget: "toolCalls"
    })
  })

  it("a recording keeps the native calls: the replay gives the same answer and trace offline", async () => {
    const entries: Array<Replay.Entry> = []
    const term = agent("native")
    const { model } = recording([calls(call("1", "add", '{"a":1,"b":2}'), call("2", "upper", '{"input":"ok"}')), "3 OK"])
    const live = await createRuntime({ model, tools: [add, upper] }).run(term, "go", { record: (e) => entries.push(e) })
    expect(entries.map((e) => e.kind)).toEqual(["llm", "tools", "llm"])
    expect(entries[0]!.answer).toEqual(Value.toJson(Oracle.toolCallAnswer("", [call("1", "add", '{"a":1,"b":2}'), call("2", "upper", '{"input":"ok"}')])))
    const recordingOf = Replay.parse(JSON.stringify(Replay.make({ term, answers: entries })))
    const replayed = await createRuntime({ model: Scripted.fixed("never asked"), tools: [] }).run(term, "go", { replay: { recording: recordingOf } })
    expect(replayed.value).toBe(live.value)
    expect(replayed.trace.map((e) => [e.kind, e.name, e.output])).toEqual(live.trace.map((e) => [e.kind, e.name, e.output]))
    // the recorded replies give the native calls back, as a scripted model answers them
    expect(Replay.llmReplies(recordingOf)[0]?.toolCalls).toEqual([call("1", "add", '{"a":1,"b":2}'), call("2", "upper", '{"input":"ok"}')])
  })

  it("a checkpoint taken before the calls resumes with the native calls and their ids", async () => {
    const journal = Checkpoint.journal()
    const term = agent("native")
    const model = Scripted.sequence([calls(call("x1", "add", '{"a":20,"b":22}'), call("x2", "add", '{"a":1,"b":1}'))])
    await expect(createRuntime({ model, tools: [add] }).run(term, "go", { checkpoint: { save: journal.save } })).rejects.toThrow(/exhausted/)
    // the second checkpoint waits on the two calls: its delta holds the model's answer with them
    const before = JSON.parse(JSON.stringify(journal.checkpoints()[1])) as Checkpoint.Checkpoint
    expect(before.waiting).toMatchObject({ kind: "tools", name: "add, add" })
    const resumedModel = recording(["42 and 2"])
    const resumed = await createRuntime({ model: resumedModel.model, tools: [add] }).resume(before)
    expect(resumed.value).toBe("42 and 2")
    expect(resumedModel.requests[0]!.messages.filter((m) => m.role === "tool")).toEqual([
      { role: "tool", toolCallId: "x1", content: "42" },
      { role: "tool", toolCallId: "x2", content: "2" }
    ])
  })

  it("streams each call as tool-call events, under the tool's own name", async () => {
    const lookup = Tools.define({ name: "docs/lookup", description: "Look up.", run: (s: string) => `found ${s}` })
    const { model } = recording([calls(call("c1", "docs_lookup", '{"input":"x"}'), call("c2", "add", '{"a":1,"b":1}')), "done"])
    const runtime = createRuntime({ model, tools: [add, lookup] })
    const events: Array<Agent.RunEvent> = []
    for await (const event of runtime.stream(agent("native", ["docs/lookup", "add", "terminate"]), "go")) if (event.type === "tool-call") events.push(event)
    expect(events).toEqual([
      { type: "tool-call", name: "llm", index: 0, callId: "c1", tool: "docs/lookup", arguments: '{"input":"x"}' },
      { type: "tool-call", name: "llm", index: 1, callId: "c2", tool: "add", arguments: '{"a":1,"b":1}' }
    ])
    await runtime.close()
  })

  it("parses and prints toolCalling, and refuses another mode", () => {
    const json = { react: { think: { llm: { system: "s" } }, tools: ["add"], maxSteps: 2, toolCalling: "auto" } }
    expect(Term.encode(Term.parse(json))).toEqual(json)
    expect(() => Term.parse({ react: { ...json.react, toolCalling: "json" } })).toThrow(/toolCalling/)
  })
})
