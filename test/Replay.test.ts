/**
 * Replay: a run's oracle answers recorded, written as JSON, read back and replayed with no model,
 * tools or store ends exactly as the recorded run; a changed term diverges at its first changed
 * request; bad recordings are refused with one-line errors.
 */
import { Effect } from "effect"
import fc from "fast-check"
import { Checkpoint, createRuntime, Errors, type LanguageModel, Replay, Scripted, Term, Tools } from "lambdagent"
import { replayModel } from "lambdagent/testing"
import { describe, expect, it } from "vitest"
import { agentTerms, conversationModel as model, observable, tools } from "./fixtures/agentTerms.ts"

const agent = agentTerms({ conversations: true, memory: true })

/** A model that must never be asked: a replay answers every LLM call itself. */
const unreachable: LanguageModel.LanguageModelShape = Scripted.sequence([], { name: "unreachable" })

/** Run `term`, recording every answer; the recording goes through JSON text, as a trace file does. */
const record = async (term: Term.Term, input = "go") => {
  const answers: Array<Replay.Entry> = []
  const runtime = createRuntime({ model, tools, trace: "agent" })
  try {
    const out = await runtime.run(term, input, { budget: { llmCalls: 1000, toolCalls: 1000 }, record: (e) => answers.push(e) })
    return { out, text: Term.stringify(Replay.make({ term, answers, meta: { input } })) }
  } catch (error) {
    return { error: (error as Error).message, text: Term.stringify(Replay.make({ term, answers, meta: { input } })) }
  } finally {
    await runtime.close()
  }
}

/** Replay a recording on a runtime with no tools and a model that cannot answer. */
const replay = async (term: Term.Term, text: string, options: { live?: LanguageModel.LanguageModelShape; input?: string } = {}) => {
  const divergences: Array<Errors.ReplayDivergence> = []
  const runtime = createRuntime({ model: options.live ?? unreachable, ...(options.live !== undefined ? { tools } : {}), trace: "agent" })
  try {
    const out = await runtime.run(term, options.input ?? "go", {
      budget: { llmCalls: 1000, toolCalls: 1000 },
      replay: { recording: Replay.parse(text), live: options.live !== undefined, onDivergence: (d) => divergences.push(d) }
    })
    return { out, divergences }
  } catch (error) {
    return { error, divergences }
  } finally {
    await runtime.close()
  }
}

describe("Replay", () => {
  it("replaying a random run's recording with no model, tools or store ends as the recorded run", async () => {
    await fc.assert(
      fc.asyncProperty(agent, async (term) => {
        const whole = await record(term)
        const replayed = await replay(term, whole.text)
        if ("error" in whole) {
          expect((replayed.error as Error | undefined)?.message).toBe(whole.error)
          return
        }
        expect(replayed.error).toBeUndefined()
        const out = replayed.out!
        expect(out.result).toEqual(whole.out!.result)
        expect(observable(out.trace)).toEqual(observable(whole.out!.trace))
        expect(out.stats.steps).toBe(whole.out!.stats.steps)
        expect(out.stats.llmCalls).toBe(whole.out!.stats.llmCalls)
        expect(out.stats.toolCalls).toBe(whole.out!.stats.toolCalls)
        expect(out.stats.tokens).toBe(whole.out!.stats.tokens)
        expect(replayed.divergences).toEqual([])
      }),
      { numRuns: 150 }
    )
  })

  it("records while checkpointing: both are told of every answer", async () => {
    const term = Term.compose([Term.llm({ system: "a", conversation: false }), Term.tool("t1"), Term.llm({ system: "b", conversation: false })])
    const answers: Array<Replay.Entry> = []
    const journal = Checkpoint.journal()
    const runtime = createRuntime({ model, tools })
    const out = await runtime.run(term, "go", { record: (e) => answers.push(e), checkpoint: { save: journal.save } })
    await runtime.close()
    const checkpoints = journal.checkpoints()
    expect(checkpoints).toHaveLength(3)
    expect(JSON.parse(JSON.stringify(checkpoints[2])).answers).toHaveLength(2)
    expect(answers.map((a) => a.key)).toEqual(["1", "2", "3"])
    const replayed = await replay(term, Term.stringify(Replay.make({ term, answers })))
    expect(replayed.out!.result).toEqual(out.result)
    expect(observable(replayed.out!.trace)).toEqual(observable(out.trace))
  })

  it("replays a person's answer to an ask form without asking again", async () => {
    const term = Term.compose([Term.ask("Approve?"), Term.tool("t1")])
    const answers: Array<Replay.Entry> = []
    const runtime = createRuntime({ tools })
    const out = await runtime.run(term, "the plan", { ask: () => "yes, go", record: (e) => answers.push(e) })
    await runtime.close()
    expect(answers.map((a) => a.kind)).toEqual(["ask", "tool"])
    const replayed = await replay(term, Term.stringify(Replay.make({ term, answers })), { input: "the plan" })
    expect(replayed.error).toBeUndefined()
    expect(replayed.out!.result).toEqual(out.result)
  })

  it("records the full request of every LLM, tool and memory call", async () => {
    const term = Term.memory({
      agent: Term.compose([
        Term.llm({ system: "Summarise.", name: "sum", model: { provider: "scripted", temperature: 0, baseUrl: "http://x" } }),
        Term.tool("t1")
      ]),
      size: 3,
      ttl: 0,
      scope: "session"
    })
    const whole = await record(term, "a".repeat(500))
    const recording = Replay.parse(whole.text)
    expect(recording.answers.map((a) => a.kind)).toEqual(["memory-read", "llm", "tool", "memory-write"])
    const llm = recording.answers[1]!.request as { system: string; input: string; model: unknown; name: string }
    expect(llm).toMatchObject({ kind: "llm", name: "sum", system: "Summarise.", model: { provider: "scripted", temperature: 0 } })
    // the whole input, not a trace preview; the transport's baseUrl is not part of the request
    expect(llm.input).toBe("a".repeat(500))
    expect(llm.model).not.toHaveProperty("baseUrl")
    expect(recording.answers[2]).toMatchObject({ request: { kind: "tool", name: "t1" }, answer: "t1(500)" })
  })

  it("a changed prompt diverges at its first request, saying the step, the form and both requests", async () => {
    const term = Term.compose([Term.llm({ system: "first", conversation: false }), Term.tool("t1"), Term.llm({ system: "second", conversation: false })])
    const whole = await record(term)
    const changed = Term.compose([Term.llm({ system: "first", conversation: false }), Term.tool("t1"), Term.llm({ system: "changed", conversation: false })])
    const { error } = await replay(changed, whole.text)
    expect(error).toBeInstanceOf(Errors.ReplayDivergence)
    const d = error as Errors.ReplayDivergence
    expect(d.key).toBe("3")
    expect(d.form).toBe("an LLM call")
    expect(d.expected).toMatchObject({ kind: "llm", system: "second" })
    expect(d.actual).toMatchObject({ kind: "llm", system: "changed" })
    expect(d.step).toBeGreaterThan(0)
    expect(d.message).toContain('system is "changed", recorded "second"')
    expect(d.message).not.toContain("\n")
  })

  describe("channels", () => {
    const scope = (system: string, sent: Term.Term) =>
      Term.compose([
        Term.llm({ system: "first", conversation: false }),
        Term.channels(
          [{ name: "c", capacity: 0 }],
          Term.par(
            [
              Term.compose([Term.llm({ system, conversation: false }), sent, Term.send("c")]),
              Term.compose([Term.receive("c"), Term.llm({ system: "review", conversation: false })])
            ],
            "concat"
          )
        )
      ])
    const same = Term.lam("s", Term.var("s"))

    it("records a scope's messages and replays it offline, each message answered from the recording", async () => {
      const term = scope("draft", same)
      const whole = await record(term)
      const recording = Replay.parse(whole.text)
      expect(recording.answers.filter((a) => a.kind === "send" || a.kind === "receive").map((a) => [a.kind, a.message])).toEqual([
        ["send", { scope: "2", channel: "c", seq: 0 }],
        ["receive", { scope: "2", channel: "c", seq: 0 }]
      ])
      const { out, divergences } = await replay(term, whole.text)
      expect(out!.result).toEqual(whole.out!.result)
      expect(divergences).toEqual([])
    })

    it("a changed prompt inside a scope diverges at that request", async () => {
      const whole = await record(scope("draft", same))
      const { error } = await replay(scope("changed", same), whole.text)
      expect(error).toMatchObject({ _tag: "ReplayDivergence", key: "2.0/1.0/1", form: "an LLM call" })
    })

    it("with live, a sender that diverges after its receiver was given its message from the recording is not left waiting", async () => {
      // the receiver comes first: it is given the recorded message before the sender's prompt diverges
      const term = (system: string) =>
        Term.channels(
          [{ name: "c", capacity: 0 }],
          Term.par([
            Term.compose([Term.receive("c"), Term.llm({ system: "review", conversation: false })]),
            Term.compose([Term.llm({ system, conversation: false }), Term.send("c")])
          ])
        )
      const whole = await record(term("draft"))
      const { out, divergences } = await replay(term("changed"), whole.text, { live: model })
      expect(divergences.map((d) => d.key)).toEqual(["1.0/1.1/1"])
      expect((out!.result as ReadonlyArray<unknown>)[0]).toEqual((whole.out!.result as ReadonlyArray<unknown>)[0])
    })

    it("a message that carries another value diverges at the send, though no prompt changed before it", async () => {
      const whole = await record(scope("draft", same))
      const { error } = await replay(scope("draft", Term.lam("s", Term.lit("other"))), whole.text)
      expect(error).toMatchObject({ _tag: "ReplayDivergence", key: "2.0/1.0/2", form: 'a send on channel "c"' })
      expect((error as Errors.ReplayDivergence).message).toContain('value is "other"')
    })
  })

  it("with live, goes on after the divergence with the model and tools, replaying what came before", async () => {
    const term = Term.compose([
      Term.llm({ system: "first", conversation: false }),
      Term.tool("t1"),
      Term.llm({ system: "second", conversation: false }),
      Term.tool("t2")
    ])
    const whole = await record(term)
    const changed = Term.compose([
      Term.llm({ system: "first", conversation: false }),
      Term.tool("t1"),
      Term.llm({ system: "changed", conversation: false }),
      Term.tool("t2")
    ])
    let live = 0
    const counted = { ...Scripted.fixed("live answer"), chat: (r: LanguageModel.ChatRequest) => (live++, Scripted.fixed("live answer").chat(r)) }
    const replayed = await replay(changed, whole.text, { live: counted })
    expect(replayed.error).toBeUndefined()
    expect(replayed.out!.value).toBe("t2 liv")
    expect(live).toBe(1)
    expect(replayed.divergences.map((d) => d.key)).toEqual(["3"])
  })

  it("a run that ends before the recording does diverges at the first answer it did not ask for", async () => {
    const whole = await record(Term.compose([Term.tool("t1"), Term.tool("t2")]))
    const { error } = await replay(Term.tool("t1"), whole.text)
    expect(error).toBeInstanceOf(Errors.ReplayDivergence)
    expect((error as Errors.ReplayDivergence).actual).toBeNull()
    expect((error as Errors.ReplayDivergence).message).toContain('the recording goes on with request 2, a call of tool "t2"')
  })

  it("another input diverges at the first request that sees it", async () => {
    const whole = await record(Term.tool("t1"), "one")
    const { error } = await replay(Term.tool("t1"), whole.text, { input: "two" })
    expect((error as Errors.ReplayDivergence).message).toContain('input is "two", recorded "one"')
  })

  it("refuses truncated, edited, foreign and other-version recordings with one-line errors", () => {
    const text = Term.stringify({
      result: 1,
      trace: [],
      replay: Replay.make({
        term: Term.tool("t1"),
        answers: [{ key: "1", kind: "tool", request: { kind: "tool", name: "t1", input: "go" }, answer: "t1(2)", tokens: 0, events: [] }]
      })
    })
    expect(Replay.parse(text).answers).toHaveLength(1)
    const reason = (t: string) => {
      try {
        Replay.parse(t)
        return "accepted"
      } catch (e) {
        expect(e).toBeInstanceOf(Errors.ReplayError)
        expect((e as Error).message).not.toContain("\n")
        return (e as Errors.ReplayError).reason
      }
    }
    expect(reason(text.slice(0, text.length - 20))).toBe("format")
    expect(reason("")).toBe("format")
    expect(reason(text.replace('"answer":"t1(2)"', '"answer":"t1(3)"'))).toBe("digest")
    expect(reason(text.replace('"version":1', '"version":2'))).toBe("version")
    expect(reason(JSON.stringify({ result: 1, trace: [] }))).toBe("format")
    expect(reason(JSON.stringify({ format: "lambdagent.checkpoint", version: 1 }))).toBe("format")
    expect(reason(text.replace('"tokens":0', '"tokens":"zero"'))).toBe("format")
  })

  it("an answer a recording cannot give back is a ReplayError when it is replayed", async () => {
    const closure = { closure: { lam: { param: "x", body: { var: "x" } } } }
    const recording = Replay.make({
      term: Term.tool("t1"),
      answers: [{ key: "1", kind: "tool", request: { kind: "tool", name: "t1", input: "go" }, answer: closure, tokens: 0, events: [] }]
    })
    const { error } = await replay(Term.tool("t1"), Term.stringify(recording))
    expect(error).toBeInstanceOf(Errors.ReplayError)
    expect((error as Errors.ReplayError).reason).toBe("answer")
  })

  it("keeps lists, pairs and 64-bit integers of answers exact", async () => {
    const big = 2n ** 62n
    const term = Term.tool("t3")
    const answers: Array<Replay.Entry> = []
    const t3 = Tools.define({ name: "t3", description: "three", run: () => [1, [big, "x"]] })
    const runtime = createRuntime({ tools: [t3] })
    const out = await runtime.run(term, "go", { record: (e) => answers.push(e) })
    await runtime.close()
    const replayed = await replay(term, Term.stringify(Replay.make({ term, answers })))
    expect(replayed.out!.result).toEqual(out.result)
  })

  it("replayModel answers a host's run with the recorded LLM replies, in order", async () => {
    const term = Term.react({ think: Term.llm({ system: "think" }), tools: ["t1", "terminate"], maxSteps: 4 })
    const plan = Scripted.sequence(['{"tool":"t1","args":"abc"}', '{"tool":"terminate","args":"done after t1"}'])
    const answers: Array<Replay.Entry> = []
    const first = createRuntime({ model: plan, tools })
    const out = await first.run(term, "go", { record: (e) => answers.push(e) })
    await first.close()
    const trace = { result: out.result, trace: out.trace, replay: Replay.make({ term, answers }) }
    const runtime = createRuntime({ model: replayModel(JSON.parse(Term.stringify(trace))), tools })
    const again = await runtime.run(term, "go")
    await runtime.close()
    expect(again.result).toEqual(out.result)
    expect(again.stats.llmCalls).toBe(2)
    const scripted = replayModel(trace)
    const chat = () => Effect.runPromise(scripted.chat({ messages: [{ role: "user", content: "go" }] }))
    await expect(chat()).resolves.toMatchObject({ text: '{"tool":"t1","args":"abc"}' })
    await expect(chat()).resolves.toMatchObject({ text: '{"tool":"terminate","args":"done after t1"}' })
    await expect(chat()).rejects.toMatchObject({ _tag: "ProviderError", message: expect.stringContaining("exhausted") })
  })
})
