import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import * as z from "zod"
import { Agent, createRuntime, Errors, LanguageModel, MemoryStore, Scripted, Term, Tools, TraceSink, Value } from "lambdagent"
import { manualClock } from "./fixtures/manualClock.ts"

const T = Term
const lastUser = (req: LanguageModel.ChatRequest) => req.messages[req.messages.length - 1]!.content
const systemOf = (req: LanguageModel.ChatRequest) => req.messages[0]!.content

/** A model that answers "[system] input" so tests can see which agent ran on what. */
const tagging = () => Scripted.respond((req) => `[${systemOf(req).split("\n")[0]}] ${lastUser(req)}`)

const add = Tools.define({
  name: "add",
  description: "Add two numbers.",
  input: z.object({ a: z.number(), b: z.number() }),
  run: ({ a, b }) => a + b
})

const failure = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (e) {
    return e as { _tag: string; [k: string]: unknown }
  }
  throw new Error("expected a failure")
}

describe("agent forms", () => {
  it("llm: system prompt first, then the input; stateless calls see no history", async () => {
    const seen: Array<ReadonlyArray<LanguageModel.ChatMessage>> = []
    const runtime = createRuntime({ model: Scripted.respond((req) => (seen.push(req.messages), "ok")) })
    const agent = T.llm({ system: "Be brief.", conversation: false })
    await runtime.run(agent, "one")
    await runtime.run(agent, "two")
    expect(seen[1]).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "two" }
    ])
    await runtime.close()
  })

  it("llm: conversations keep user/assistant turns per session and fold old turns into a summary", async () => {
    const seen: Array<ReadonlyArray<LanguageModel.ChatMessage>> = []
    const runtime = createRuntime({ model: Scripted.respond((req) => (seen.push(req.messages), `re:${lastUser(req)}`)) })
    const agent = T.llm({ system: "Chat.", maxHistoryTokens: 50 })
    for (let i = 0; i < 30; i++) await runtime.run(agent, `message number ${i} with some padding text`, { session: "a" })
    const last = seen[seen.length - 1]!
    expect(last[0]).toEqual({ role: "system", content: "Chat." })
    expect(last[1]!.content).toMatch(/^\[Conversation summary\]\n\[user\] message number 0/)
    expect(last.slice(2, -1)).toHaveLength(20)
    expect(last[last.length - 1]).toEqual({ role: "user", content: "message number 29 with some padding text" })
    await runtime.run(agent, "hello", { session: "b" })
    expect(seen[seen.length - 1]).toHaveLength(2)
    runtime.resetConversation("a")
    await runtime.run(agent, "again", { session: "a" })
    expect(seen[seen.length - 1]).toHaveLength(2)
    await runtime.close()
  })

  it("compose: a pipeline, left to right", async () => {
    const runtime = createRuntime({ model: tagging() })
    const out = await runtime.run(T.compose([T.llm({ system: "extract" }), T.llm({ system: "analyze" }), T.llm({ system: "draft" })]), "x")
    expect(out.value).toBe("[draft] [analyze] [extract] x")
    expect(out.stats.llmCalls).toBe(3)
    expect(out.trace.filter((e) => e.kind === "llm")).toHaveLength(3)
    await runtime.close()
  })

  it("loop: stops when the exit test holds, returns the last value on exhaustion, fails only when asked", async () => {
    const runtime = createRuntime()
    const inc = T.lam("n", T.add(T.var("n"), T.lit(1)))
    expect((await runtime.run(T.loop({ body: inc, max: 100, until: T.lam("n", T.gte(T.var("n"), T.lit(5))) }), 0)).value).toBe(5)
    expect((await runtime.run(T.loop({ body: inc, max: 3 }), 0)).value).toBe(3)
    const e = await failure(runtime.run(T.loop({ body: inc, max: 3, until: T.lam("n", T.lit(false)), failOnExhaustion: true }), 0))
    expect(e).toMatchObject({ _tag: "BudgetExceeded", budget: "loop" })
    await runtime.close()
  })

  it("route: exact label, then the first contained key, then default, else a RouteError listing the routes", async () => {
    const runtime = createRuntime({ model: Scripted.respond((req) => (systemOf(req) === "classify" ? lastUser(req) : `[${systemOf(req)}]`)) })
    const routes: ReadonlyArray<readonly [string, Term.Term]> = [
      ["code", T.llm({ system: "coder" })],
      ["math", T.llm({ system: "mathematician" })]
    ]
    const router = T.route({ classify: T.llm({ system: "classify" }), routes, default: T.llm({ system: "helper" }) })
    expect((await runtime.run(router, " CODE ")).value).toBe("[coder]")
    expect((await runtime.run(router, "this is about math, clearly")).value).toBe("[mathematician]")
    expect((await runtime.run(router, "weather")).value).toBe("[helper]")
    const e = await failure(runtime.run(T.route({ classify: T.llm({ system: "classify" }), routes }), "weather"))
    expect(e).toMatchObject({ _tag: "EvalError", kind: "RouteError" })
    expect(String(e.message)).toContain("code, math")
    await runtime.close()
  })

  it("par: branches run concurrently; tuple, concat and a merge function", async () => {
    let inFlight = 0
    let peak = 0
    // a call answers once `together` calls are in flight: run one after another, the first run would hang
    let together = 10
    let waiting: Array<() => void> = []
    const allInFlight = () =>
      new Promise<void>((resolve) => {
        waiting.push(resolve)
        if (waiting.length < together) return
        for (const release of waiting) release()
        waiting = []
        together = 1
      })
    const model: LanguageModel.LanguageModelShape = {
      name: "slow",
      chat: (req) =>
        Effect.gen(function* () {
          inFlight++
          peak = Math.max(peak, inFlight)
          yield* Effect.promise(allInFlight)
          inFlight--
          return { text: `[${systemOf(req)}] ${lastUser(req)}` }
        }),
      stream: () => {
        throw new Error("not streamed")
      }
    }
    const runtime = createRuntime({ model })
    const branches = Array.from({ length: 10 }, (_, i) => T.llm({ system: `b${i}` }))
    const list = await runtime.run(T.par(branches), "x")
    expect(peak).toBe(10)
    expect(Value.toJson(list.value)).toEqual(branches.map((_, i) => `[b${i}] x`))
    expect((await runtime.run(T.par(branches.slice(0, 2)), "y")).result).toEqual({ pair: ["[b0] y", "[b1] y"] })
    expect((await runtime.run(T.par(branches.slice(0, 2), "concat"), "z")).value).toBe("[b0] z\n\n[b1] z")
    const merged = await runtime.run(T.par(branches.slice(0, 3), T.lam("rs", T.length(T.var("rs")))), "w")
    expect(merged.value).toBe(3)
    expect(merged.trace.filter((e) => e.kind === "llm").map((e) => e.branch)).toEqual(["0", "1", "2"])
    await runtime.close()
  })

  it("guard: validates with a pure term, retries, then falls back", async () => {
    let n = 0
    const runtime = createRuntime({ model: Scripted.respond(() => (++n === 3 ? "a long enough answer" : "short")) })
    const longEnough = T.lam("x", T.gt(T.length(T.var("x")), T.lit(10)))
    const guarded = (retry: number, fallback: Term.Fallback) =>
      T.guard({ agent: T.llm({ system: "s", conversation: false }), validate: longEnough, retry, fallback })
    const ok = await runtime.run(guarded(2, "error"), "q")
    expect(ok).toMatchObject({ value: "a long enough answer", stats: { llmCalls: 3 } })
    n = 10
    expect(await failure(runtime.run(guarded(1, "error"), "q"))).toMatchObject({ _tag: "EvalError", kind: "ValidationError" })
    expect((await runtime.run(guarded(0, "empty"), "q")).value).toBe("")
    expect((await runtime.run(guarded(0, "last"), "q")).value).toBe("short")
    expect((await runtime.run(guarded(0, { value: T.lit("n/a") }), "q")).value).toBe("n/a")
    await runtime.close()
  })

  it("memory: prepends recent entries with their age, writes results back, scoped by session", async () => {
    const runtime = createRuntime({ model: Scripted.respond((req) => `answer to: ${lastUser(req)}`) })
    const agent = T.memory({ agent: T.llm({ system: "m", conversation: false }), size: 2, ttl: 0, scope: "session" })
    expect((await runtime.run(agent, "first", { session: "s1" })).value).toBe("answer to: first")
    const second = await runtime.run(agent, "second", { session: "s1" })
    expect(second.value).toBe("answer to: [Memory Context]\n(0s ago) user: first\n(0s ago) assistant: answer to: first\n\n[Current Input]\nsecond")
    expect((await runtime.run(agent, "other", { session: "s2" })).value).toBe("answer to: other")
    await runtime.run(agent, "third", { session: "s1" })
    const fourth = await runtime.run(agent, "fourth", { session: "s1" })
    expect(String(fourth.value).startsWith("answer to: [Memory Context]\n(0s ago) user: second\n")).toBe(true)
    expect(fourth.trace.filter((e) => e.kind === "memory").map((e) => e.name)).toEqual(["read", "write"])
    await runtime.close()
  })

  it("memory: ttl expires entries; global scope is shared", async () => {
    const runtime = createRuntime({ model: Scripted.respond((req) => lastUser(req)) })
    const global = T.memory({ agent: T.llm({ system: "m", conversation: false }), size: 5, ttl: 0, scope: "global" })
    await runtime.run(global, "shared fact", { session: "a" })
    expect(String((await runtime.run(global, "q", { session: "b" })).value)).toContain("shared fact")
    const { advance, clock } = manualClock()
    const store = MemoryStore.makeLocal({ clock })
    const ttl = createRuntime({ model: Scripted.respond((req) => lastUser(req)), memory: store })
    const short = T.memory({ agent: T.llm({ system: "m", conversation: false }), size: 5, ttl: 1, scope: "session" })
    await ttl.run(short, "fleeting")
    expect(String((await ttl.run(short, "now")).value)).toContain("fleeting")
    advance(1_000)
    expect((await ttl.run(short, "later")).value).toBe("later")
    await runtime.close()
    await ttl.close()
  })
})

describe("conversation keys", () => {
  it("each llm term's conversation in each session has its own key; a call that keeps none has null", async () => {
    const requests: Array<LanguageModel.ChatRequest> = []
    const runtime = createRuntime({ model: Scripted.respond((req) => (requests.push(req), "ok")) })
    const a = T.llm({ system: "a" })
    const b = T.llm({ system: "b" })
    const stateless = T.llm({ system: "c", conversation: false })
    const both = T.compose([a, b, stateless])
    await runtime.run(both, "x", { session: "s1" })
    await runtime.run(both, "y", { session: "s1" })
    await runtime.run(both, "z", { session: "s2" })
    const keys = requests.map((r) => r.conversation)
    expect(keys[2]).toBeNull()
    const [a1, b1] = keys
    expect(new Set([a1, b1]).size).toBe(2)
    // the same session continues the same conversations; another session has its own
    expect(keys.slice(3, 5)).toEqual([a1, b1])
    expect(keys.slice(6, 8).some((k) => k === a1 || k === b1)).toBe(false)
    // forgetting a session's conversation starts new ones
    runtime.resetConversation("s1")
    await runtime.run(both, "w", { session: "s1" })
    expect(requests[9]!.conversation).not.toBe(a1)
    await runtime.close()
  })
})

describe("ReAct", () => {
  const reactRuntime = (replies: ReadonlyArray<string>, tools: ReadonlyArray<Tools.ToolDefinition> = [add]) => {
    const requests: Array<LanguageModel.ChatRequest> = []
    let i = 0
    const runtime = createRuntime({ model: Scripted.respond((req) => (requests.push(req), replies[i++] ?? "done")), tools })
    return { runtime, requests }
  }
  const react = (tools: ReadonlyArray<string>, maxSteps = 5) => T.react({ think: T.llm({ system: "Solve it." }), tools, maxSteps })

  it("thinks, calls a tool found as JSON, observes, and terminates with the answer", async () => {
    const { requests, runtime } = reactRuntime(['I will add. {"tool": "add", "args": {"a": 2, "b": 3}}', '{"tool":"terminate","args":"5"}'])
    const out = await runtime.run(react(["add", "terminate"]), "2+3?")
    expect(out.value).toBe("5")
    expect(out.stats).toMatchObject({ llmCalls: 2, toolCalls: 1 })
    expect(systemOf(requests[0]!)).toContain("## Tools")
    expect(systemOf(requests[0]!)).toContain("- add: Add two numbers. Arguments: {")
    // the loop is a conversation: the task, then each thought and its observation, never re-nested
    expect(requests[1]!.messages.slice(1)).toEqual([
      { role: "user", content: "2+3?" },
      { role: "assistant", content: 'I will add. {"tool": "add", "args": {"a": 2, "b": 3}}' },
      { role: "user", content: "Observation: 5" }
    ])
    expect(out.trace.map((e) => `${e.kind}:${e.name}`)).toEqual(["llm:llm", "tool:add", "llm:llm", "react:final"])
    await runtime.close()
  })

  it("finds tool calls as XML, then by keyword", async () => {
    const echo = Tools.define({ name: "echo", description: "Echo.", run: (s: string) => `echoed ${s}` })
    const { requests, runtime } = reactRuntime(["<tool>echo</tool><args>hi</args>", "Action: echo\nAction Input: there", "final answer"], [echo])
    const out = await runtime.run(react(["echo"]), "go")
    expect(out.value).toBe("final answer")
    expect(lastUser(requests[1]!)).toContain("Observation: echoed hi")
    expect(lastUser(requests[2]!)).toContain("Observation: echoed there")
    await runtime.close()
  })

  it("a failing, slow or unknown tool becomes an observation, never a crashed run", async () => {
    const boom = Tools.define({
      name: "boom",
      description: "Fails.",
      run: () => {
        throw new Error("kaput")
      }
    })
    const slow = Tools.define({ name: "slow", description: "Slow.", timeoutMs: 50, run: () => new Promise<string>(() => {}) })
    const { requests, runtime } = reactRuntime(['{"tool":"boom","args":"x"}', '{"tool":"slow","args":"x"}', '{"tool":"nope","args":"x"}', "done"], [boom, slow])
    const out = await runtime.run(react(["boom", "slow", "terminate"]), "go")
    expect(out.value).toBe("done")
    expect(lastUser(requests[1]!)).toContain("Observation: [TOOL_ERROR] boom: kaput")
    expect(lastUser(requests[2]!)).toContain("Observation: [TIMEOUT after 0.1s]")
    expect(lastUser(requests[3]!)).toContain('Observation: [TOOL_ERROR] unknown tool "nope"; available: boom, slow, terminate')
    await runtime.close()
  })

  it("stops after maxSteps with the last state", async () => {
    const { runtime } = reactRuntime(Array.from({ length: 10 }, () => '{"tool":"add","args":{"a":1,"b":1}}'))
    const out = await runtime.run(react(["add"], 3), "loop")
    expect(out.stats).toMatchObject({ llmCalls: 3, toolCalls: 3 })
    expect(String(out.value)).toMatch(/^\[Task\]\nloop\n\n\[Step 1\][\s\S]*\[Step 3\]\nThought: .*\nAction: add\nObservation: 2$/)
    expect(Term.bounds(react(["add"], 3))).toEqual({ llmCalls: 3, toolCalls: 3 })
    await runtime.close()
  })

  it("earlyStop ends the loop with the first observation it holds for", async () => {
    const calls = Array.from({ length: 10 }, (_, i) => `{"tool":"add","args":{"a":${i},"b":1}}`)
    const { requests, runtime } = reactRuntime(calls)
    // the sums are 1, 2, 3, …: the loop stops at the observation 3, after three thoughts
    const term = T.react({
      think: T.llm({ system: "Solve it." }),
      tools: ["add", "terminate"],
      maxSteps: 6,
      earlyStop: T.lam("o", T.eq(T.var("o"), T.lit("3")))
    })
    const out = await runtime.run(term, "count", { trace: "agent" })
    expect(out.value).toBe("3")
    expect(out.stats).toMatchObject({ llmCalls: 3, toolCalls: 3 })
    expect(requests).toHaveLength(3)
    expect(out.trace.map((e) => `${e.kind}:${e.name}`).slice(-2)).toEqual(["tool:add", "react:early stop"])
    // a pure predicate adds nothing to the worst case
    expect(Term.bounds(term)).toEqual({ llmCalls: 6, toolCalls: 6 })
    expect(Term.pretty(term)).toContain('ELSE IF (λo. o = "3")(obs) THEN obs')
    await runtime.close()
  })

  it("earlyStop that never holds leaves the loop to maxSteps; one that is not boolean is a type error", async () => {
    const { runtime } = reactRuntime(Array.from({ length: 5 }, () => '{"tool":"add","args":{"a":1,"b":1}}'))
    const never = T.react({ think: T.llm({ system: "s" }), tools: ["add"], maxSteps: 2, earlyStop: T.lam("o", T.lit(false)) })
    expect(String((await runtime.run(never, "loop")).value)).toMatch(/^\[Task\]\nloop\n\n\[Step 1\][\s\S]*\[Step 2\]/)
    const text = T.react({ think: T.llm({ system: "s" }), tools: ["add"], maxSteps: 2, earlyStop: T.lam("o", T.var("o")) })
    expect(await failure(runtime.run(text, "loop"))).toMatchObject({ _tag: "EvalError", kind: "TypeError" })
    await runtime.close()
  })
})

describe("budgets, errors, cancellation, streaming", () => {
  it("LLM-call, tool-call and token budgets are checked before each call; exhaustion carries the trace", async () => {
    const runtime = createRuntime({ model: tagging(), tools: [add] })
    const chain = T.compose([T.llm({ system: "a" }), T.llm({ system: "b" }), T.llm({ system: "c" })])
    const e = await failure(runtime.run(chain, "x", { budget: { llmCalls: 2 } }))
    expect(e).toMatchObject({ _tag: "BudgetExceeded", budget: "llmCalls", limit: 2 })
    expect((e.trace as Array<unknown>).length).toBe(2)
    const tokens = await failure(runtime.run(chain, "x".repeat(400), { budget: { tokens: 150 } }))
    expect(tokens).toMatchObject({ budget: "tokens" })
    const tools = await failure(runtime.run(T.compose([T.tool("add"), T.tool("add")]), { a: 1, b: 2 }, { budget: { toolCalls: 1 } }))
    expect(tools).toMatchObject({ budget: "toolCalls" })
    await runtime.close()
  })

  it("provider errors are typed rejections", async () => {
    const runtime = createRuntime({ model: Scripted.sequence([]) })
    const e = await failure(runtime.run(T.llm({ system: "s" }), "x"))
    expect(e).toMatchObject({ _tag: "ProviderError", reason: "Unavailable" })
    await runtime.close()
  })

  it("an AbortSignal cancels a run and its in-flight model call", async () => {
    let interrupted = false
    const controller = new AbortController()
    // the call is in flight once it has started: that is when the host aborts
    const model: LanguageModel.LanguageModelShape = {
      name: "hang",
      chat: () =>
        Effect.sync(() => setImmediate(() => controller.abort(new Error("user cancelled")))).pipe(
          Effect.andThen(Effect.never),
          Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))
        ),
      stream: () => {
        throw new Error("not streamed")
      }
    }
    const runtime = createRuntime({ model })
    const e = await failure(runtime.run(T.llm({ system: "s" }), "x", { signal: controller.signal }))
    expect((e as unknown as Error).message).toBe("user cancelled")
    expect(interrupted).toBe(true)
    await runtime.close()
  })

  it("a run asked for with an aborted signal is refused with its reason, and no model is called", async () => {
    let calls = 0
    const runtime = createRuntime({ model: Scripted.respond(() => (calls++, "answer")) })
    const controller = new AbortController()
    controller.abort(new Error("cancelled before it began"))
    const e = await failure(runtime.run(T.llm({ system: "s" }), "x", { signal: controller.signal }))
    expect((e as unknown as Error).message).toBe("cancelled before it began")
    expect(calls).toBe(0)
    const events: Array<string> = []
    const streaming = (async () => {
      for await (const event of runtime.stream(T.llm({ system: "s" }), "x", { signal: controller.signal })) events.push(event.type)
    })()
    expect(((await failure(streaming)) as unknown as Error).message).toBe("cancelled before it began")
    expect(events).toEqual([])
    expect(calls).toBe(0)
    expect((await runtime.run(T.llm({ system: "s" }), "x")).value).toBe("answer")
    await runtime.close()
  })

  it("a model that throws rejects the run (the call returns a promise, it does not throw), and the runtime goes on", async () => {
    const runtime = createRuntime({ model: tagging() })
    const broken: LanguageModel.LanguageModelShape = {
      name: "broken",
      chat: () => {
        throw new Error("the model broke")
      },
      stream: () => {
        throw new Error("not streamed")
      }
    }
    const brokenRuntime = createRuntime({ model: broken })
    const thrown = brokenRuntime.run(T.llm({ system: "s" }), "x")
    expect(thrown).toBeInstanceOf(Promise)
    await expect(thrown).rejects.toThrow("the model broke")
    // the runtimes go on serving runs
    expect((await runtime.run(T.llm({ system: "s" }), "x")).value).toBe("[s] x")
    await expect(brokenRuntime.run(T.lit(1), null)).resolves.toMatchObject({ value: 1 })
    await Promise.all([runtime.close(), brokenRuntime.close()])
  })

  it("closing the runtime interrupts the runs still going, and a run after it fails", async () => {
    let started: () => void = () => {}
    const calling = new Promise<void>((resolve) => (started = resolve))
    let interrupted = false
    const model: LanguageModel.LanguageModelShape = {
      name: "hang",
      chat: () =>
        Effect.sync(started).pipe(
          Effect.andThen(Effect.never),
          Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))
        ),
      stream: () => {
        throw new Error("not streamed")
      }
    }
    const runtime = createRuntime({ model })
    const running = failure(runtime.run(T.llm({ system: "s" }), "x"))
    await calling
    await runtime.close()
    await running
    expect(interrupted).toBe(true)
    await expect(runtime.run(T.lit(1), null)).rejects.toThrow()
  })

  it("the wall-time budget stops a run that waits too long", async () => {
    const runtime = createRuntime({ model: Scripted.echo({ latencyMs: 5_000 }) })
    const e = await failure(runtime.run(T.llm({ system: "s" }), "x", { budget: { timeMs: 100 } }))
    expect(e).toMatchObject({ _tag: "BudgetExceeded", budget: "time" })
    await runtime.close()
  })

  it("stream yields tokens and trace events as they happen, then the result", async () => {
    const runtime = createRuntime({ model: Scripted.fixed("hello streaming world") })
    const events: Array<string> = []
    for await (const e of runtime.stream(T.compose([T.llm({ system: "a" }), T.tool("terminate")]), "x")) {
      events.push(
        e.type === "token" ? `token:${e.text}` : e.type === "trace" ? `trace:${e.event.kind}` : e.type === "result" ? `result:${e.output.value}` : e.type
      )
    }
    expect(events).toEqual(["token:hello ", "token:streaming ", "token:world", "trace:llm", "result:hello streaming world"])
    await runtime.close()
  })

  it("breaking out of a stream cancels the run", async () => {
    let aborted = false
    const wait = Tools.define({
      name: "wait",
      description: "Waits until cancelled.",
      run: (_: string, ctx) => new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve((aborted = true))))
    })
    const runtime = createRuntime({ model: Scripted.fixed("tick"), tools: [wait] })
    for await (const e of runtime.stream(T.compose([T.llm({ system: "a" }), T.tool("wait")]), "x")) {
      if (e.type === "trace") break
    }
    expect(aborted).toBe(true)
    await runtime.close()
  })

  it("trace sinks receive every event with the run id", async () => {
    const events: Array<TraceSink.SinkEvent> = []
    const runtime = createRuntime({ model: tagging(), traceSink: { record: (e) => events.push(e), spans: false } })
    const out = await runtime.run(T.compose([T.llm({ system: "a" }), T.llm({ system: "b" })]), "x")
    expect(events.map((e) => e.kind)).toEqual(["llm", "llm"])
    expect(new Set(events.map((e) => e.runId)).size).toBe(1)
    expect(out.trace).toHaveLength(2)
    await runtime.close()
  })
})

describe("plugins and the Effect API", () => {
  it("plugins contribute tools, providers and stores", async () => {
    const store = MemoryStore.makeLocal()
    const runtime = createRuntime({
      plugins: [
        {
          name: "demo",
          tools: [add],
          providers: { offline: (settings) => Scripted.fixed(`model ${settings.name}`) },
          stores: { demo: () => store }
        }
      ],
      memory: "demo"
    })
    expect((await runtime.run(T.llm({ system: "s", model: { provider: "offline", name: "m1" } }), "x")).value).toBe("model m1")
    expect((await runtime.run(T.tool("add"), { a: 2, b: 2 })).value).toBe(4)
    await runtime.run(T.memory({ agent: T.tool("terminate"), size: 3, ttl: 0, scope: "global" }), "kept")
    expect((await Effect.runPromise(store.listRecent("global", 5))).length).toBe(1)
    expect(() => createRuntime({ memory: "nowhere" })).toThrow(/unknown memory store "nowhere"/)
    await runtime.close()
  })

  it("Agent.run is the same thing as an Effect with swappable layers", async () => {
    const layer = Layer.mergeAll(Layer.succeed(LanguageModel.LanguageModel, Scripted.fixed("from a layer")), Tools.layer([add]), MemoryStore.layerLocal())
    const result = await Effect.runPromise(Agent.run(T.llm({ system: "s" }), "x").pipe(Effect.provide(layer)))
    expect(result.value).toBe("from a layer")
    const failed = await Effect.runPromise(Effect.flip(Agent.run(T.app(T.lit(1), T.lit(2)), null).pipe(Effect.provide(layer))))
    expect(failed).toBeInstanceOf(Errors.EvalError)
  })

  it("Term.bounds: loops multiply, routes take the costliest branch, guards multiply attempts", () => {
    const llm = T.llm({ system: "x" })
    expect(Term.bounds(T.compose([llm, T.tool("search"), llm]))).toEqual({ llmCalls: 2, toolCalls: 1 })
    expect(Term.bounds(T.loop({ body: T.compose([llm, T.tool("t")]), max: 10 }))).toEqual({ llmCalls: 10, toolCalls: 10 })
    expect(
      Term.bounds(
        T.route({
          classify: llm,
          routes: [
            ["a", llm],
            ["b", T.compose([llm, llm])]
          ]
        })
      )
    ).toEqual({ llmCalls: 3, toolCalls: 0 })
    expect(Term.bounds(T.guard({ agent: llm, validate: T.lam("x", T.lit(true)), retry: 2, fallback: "error" }))).toEqual({ llmCalls: 3, toolCalls: 0 })
    expect(Term.bounds(T.par([llm, llm, T.tool("t")]))).toEqual({ llmCalls: 2, toolCalls: 1 })
    expect(Term.bounds(T.memory({ agent: llm, size: 1, ttl: 0, scope: "user" }))).toEqual({ llmCalls: 1, toolCalls: 0 })
    expect(Term.bounds(T.lam("x", T.app(T.self, T.app(llm, T.var("x")))))).toEqual({ llmCalls: Infinity, toolCalls: 0 })
    expect(Term.bounds(T.lam("x", T.add(T.var("x"), T.lit(1))))).toEqual({ llmCalls: 0, toolCalls: 0 })
  })
})

describe("OpenTelemetry-style spans", () => {
  /** The names of the spans a run of `agent` opens on a tracer that records them, with `sink` layers. */
  const spanNames = async (agent: Term.Term, ...sink: Array<Layer.Layer<never>>) => {
    const { Tracer } = await import("effect")
    const names: Array<string> = []
    const tracer = Tracer.make({
      span: (options) => {
        names.push(options.name)
        return new Tracer.NativeSpan(options)
      }
    })
    const layer = Layer.mergeAll(Layer.succeed(LanguageModel.LanguageModel, Scripted.fixed('{"tool":"add","args":{"a":1,"b":2}}')), Tools.layer([add]), ...sink)
    await Effect.runPromise(Agent.run(agent, "x").pipe(Effect.provide(layer), Effect.provideService(Tracer.Tracer, tracer)))
    return names
  }

  it("TraceSink.layerSpans opens a run span and a span per LLM and tool call on the host's tracer", async () => {
    const agent = T.react({ think: T.llm({ system: "s" }), tools: ["add"], maxSteps: 2 })
    expect(await spanNames(agent, TraceSink.layerSpans)).toEqual(["lambdagent.run", "chat scripted", "execute_tool add", "chat scripted", "execute_tool add"])
  })

  it("without a sink that asks for spans, a run opens none", async () => {
    const agent = T.par([T.react({ think: T.llm({ system: "s" }), tools: ["add"], maxSteps: 2 }), T.llm({ system: "t" })])
    expect(await spanNames(agent)).toEqual([])
  })
})
