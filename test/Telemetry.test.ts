import { afterEach, beforeEach, describe, expect, it } from "vitest"
import * as z from "zod"
import { createRuntime, type LanguageModel, OpenAI, Scripted, Telemetry, Term, Tools, type TraceSink } from "lambdagent"
import { childrenOf, type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./fixtures/otlpReceiver.ts"
import { completion, startOpenAIServer } from "./providers/servers/openai.ts"

const add = Tools.define({
  name: "add",
  description: "Add two numbers.",
  input: z.object({ a: z.number(), b: z.number() }),
  run: ({ a, b }) => a + b
})

const systemOf = (req: LanguageModel.ChatRequest) => req.messages[0]!.content

/** ReAct calls `add`, then ends with its observation; the summariser answers at once. */
const model = Scripted.respond((req) => {
  if (systemOf(req).startsWith("Summarise")) return "a summary"
  const observed = req.messages.some((m) => m.role !== "system" && m.content.includes("Observation"))
  return observed ? '{"tool":"terminate","args":"5"}' : '{"tool":"add","args":{"a":2,"b":3}}'
})

const agent = Term.par([
  Term.react({ think: Term.llm({ system: "Use tools.", name: "thinker" }), tools: ["add", "terminate"], maxSteps: 4 }),
  Term.llm({ system: "Summarise the input.", name: "summariser" })
])

let receiver: OtlpReceiver
beforeEach(async () => {
  receiver = await startOtlpReceiver()
})
afterEach(async () => {
  await receiver.close()
})

const byName = (spans: ReadonlyArray<ReceivedSpan>, name: string) => spans.filter((s) => s.name === name)

/** A loopback port nothing listens on. */
const closedPort = async (): Promise<string> => {
  const probe = await startOtlpReceiver()
  await probe.close()
  return probe.url
}

describe("createRuntime({ otel })", () => {
  it("reports the provider's own finish reason, read from its response", async () => {
    const server = await startOpenAIServer()
    try {
      server.enqueue({ kind: "json", body: completion({ text: "cut sh", finishReason: "length" }) })
      const runtime = createRuntime({
        model: OpenAI.make({ baseUrl: `${server.url}/v1`, apiKey: "sk-test", model: "gpt-test", maxRetries: 0 }),
        otel: { url: receiver.url }
      })
      await runtime.run(Term.llm({ system: "Be long." }), "x")
      await runtime.close()
      const [chat] = receiver.spans.filter((s) => s.name.startsWith("chat "))
      expect(chat!.attributes["gen_ai.response.finish_reasons"]).toEqual(["length"])
    } finally {
      await server.close()
    }
  })

  it("exports a run's span tree over OTLP/HTTP, flushed when the runtime closes", async () => {
    const runtime = createRuntime({ model, tools: [add], otel: { url: receiver.url, serviceName: "otel-test", serviceVersion: "9.9.9" } })
    const out = await runtime.run(agent, "2+3?")
    expect(out.result).toEqual({ pair: ["5", "a summary"] })
    await runtime.close()
    const spans = receiver.spans
    const [run, ...otherRoots] = spans.filter((s) => s.parentSpanId === undefined)
    expect(otherRoots).toEqual([])
    expect(run!.name).toBe("lambdagent.run")
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([run!.traceId]))
    expect(run!.resource).toMatchObject({ "service.name": "otel-test", "service.version": "9.9.9" })
    expect(run!.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "lambdagent.term": "par",
      "lambdagent.llm_calls": 3,
      "lambdagent.tool_calls": 1,
      "lambdagent.steps": out.stats.steps,
      "gen_ai.usage.total_tokens": out.stats.tokens
    })
    // run → par → one span per branch → that branch's calls
    const [par] = childrenOf(spans, run!)
    expect(par!.name).toBe("lambdagent.par")
    expect(par!.attributes["lambdagent.par.branches"]).toBe(2)
    const branches = childrenOf(spans, par!).sort((a, b) => Number(a.attributes["lambdagent.par.branch"]) - Number(b.attributes["lambdagent.par.branch"]))
    expect(branches.map((b) => [b.name, b.attributes["lambdagent.par.branch"]])).toEqual([
      ["lambdagent.par.branch", 0],
      ["lambdagent.par.branch", 1]
    ])
    const react = spans.filter((s) => s.parentSpanId === branches[0]!.spanId).sort((a, b) => (a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1))
    expect(react.map((s) => s.name)).toEqual(["chat scripted", "execute_tool add", "chat scripted"])
    expect(childrenOf(spans, branches[1]!).map((s) => [s.name, s.attributes["lambdagent.llm.name"]])).toEqual([["chat scripted", "summariser"]])
    const [think] = react
    expect(think!.kind).toBe(3) // client
    expect(think!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.system": "scripted",
      "gen_ai.response.model": "scripted",
      "gen_ai.response.finish_reasons": ["stop"],
      "lambdagent.llm.name": "thinker"
    })
    expect(think!.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0)
    expect(think!.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0)
    expect(react[1]!.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "add",
      "gen_ai.tool.description": "Add two numbers.",
      "gen_ai.tool.type": "function"
    })
    // a span that succeeded keeps the unset status, as OpenTelemetry asks of instrumentation libraries
    for (const span of spans) {
      expect(span.status.code, span.name).toBe(0)
      expect(span.endTimeUnixNano >= span.startTimeUnixNano).toBe(true)
    }
    // a child lies within its parent
    for (const span of spans) {
      const parent = spans.find((p) => p.spanId === span.parentSpanId)
      if (parent !== undefined) expect(span.startTimeUnixNano >= parent.startTimeUnixNano && span.endTimeUnixNano <= parent.endTimeUnixNano).toBe(true)
    }
  })

  it("the model's requested name and settings become gen_ai.request.* attributes; a failed run's span says why", async () => {
    const runtime = createRuntime({ model, otel: { url: receiver.url } })
    const llm = Term.llm({ system: "Summarise it.", model: { name: "tiny-1", temperature: 0.5, maxTokens: 64 } })
    await runtime.run(llm, "text")
    await expect(runtime.run(Term.tool("missing"), "x")).rejects.toMatchObject({ _tag: "EvalError" })
    await runtime.close()
    const [chat] = byName(receiver.spans, "chat tiny-1")
    expect(chat!.attributes).toMatchObject({ "gen_ai.request.model": "tiny-1", "gen_ai.request.temperature": 0.5, "gen_ai.request.max_tokens": 64 })
    expect(chat!.resource["service.name"]).toBe("lambdagent")
    const failed = byName(receiver.spans, "lambdagent.run").find((s) => s.attributes["lambdagent.term"] === "tool")
    expect(failed!.status.code).toBe(2)
    expect(failed!.status.message).toContain("unknown tool")
  })

  it("a tool failure the agent observes marks its span with error.type", async () => {
    const broken = Tools.define({ name: "broken", description: "Fails.", input: z.object({}), run: () => Promise.reject(new Error("disk on fire")) })
    const scripted = Scripted.sequence(['{"tool":"broken","args":{}}', '{"tool":"terminate","args":"gave up"}'])
    const runtime = createRuntime({ model: scripted, tools: [broken], otel: { url: receiver.url } })
    await runtime.run(Term.react({ think: Term.llm({ system: "s" }), tools: ["broken", "terminate"], maxSteps: 3 }), "go")
    await runtime.close()
    const [span] = byName(receiver.spans, "execute_tool broken")
    expect(span!.attributes["error.type"]).toBe("tool_error")
    expect(String(span!.attributes["lambdagent.tool.error"])).toContain("disk on fire")
  })

  it("keeps a trace sink of the host's receiving events next to the export", async () => {
    const events: Array<TraceSink.SinkEvent> = []
    const runtime = createRuntime({ model, tools: [add], traceSink: { record: (e) => void events.push(e), spans: false }, otel: { url: receiver.url } })
    await runtime.run(agent, "2+3?")
    await runtime.close()
    expect(events.map((e) => e.kind)).toContain("tool")
    expect(byName(receiver.spans, "execute_tool add")).toHaveLength(1)
  })

  it("an unreachable collector fails nothing: the run succeeds, close resolves, one warning is given", async () => {
    const warnings: Array<string> = []
    const url = await closedPort()
    const runtime = createRuntime({ model, tools: [add], otel: { url, onWarning: (line) => warnings.push(line) } })
    for (let i = 0; i < 3; i++) expect((await runtime.run(agent, "2+3?")).result).toEqual({ pair: ["5", "a summary"] })
    await runtime.close()
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/^\[otel: spans could not be sent to http:\/\/127\.0\.0\.1:\d+\/v1\/traces \(ECONNREFUSED\); runs go on without them\]$/)
  })

  it("a collector that refuses the spans (an HTTP error) is warned about once", async () => {
    const warnings: Array<string> = []
    const runtime = createRuntime({ model, otel: { url: `${receiver.url}/wrong/path`, onWarning: (line) => warnings.push(line) } })
    await runtime.run(Term.llm({ system: "Summarise." }), "x")
    await runtime.close()
    expect(receiver.requests).toBeGreaterThan(0)
    expect(warnings).toEqual([`[otel: spans could not be sent to ${receiver.url}/wrong/path (HTTP 404); runs go on without them]`])
  })

  it("an endpoint that is not an http(s) URL is a configuration error at once", () => {
    expect(() => createRuntime({ otel: { url: "collector:4318" } })).toThrow(Telemetry.TelemetryConfigError)
    expect(() => createRuntime({ otel: { url: "not a url" } })).toThrow(/must be an http\(s\) URL/)
  })
})

describe("Telemetry.tracesUrl", () => {
  it("adds /v1/traces to a base URL and keeps a URL with a path", () => {
    expect(Telemetry.tracesUrl("http://127.0.0.1:4318")).toBe("http://127.0.0.1:4318/v1/traces")
    expect(Telemetry.tracesUrl("https://otel.example.com/")).toBe("https://otel.example.com/v1/traces")
    expect(Telemetry.tracesUrl("https://tempo.example.com/otlp/v1/traces")).toBe("https://tempo.example.com/otlp/v1/traces")
  })
})
