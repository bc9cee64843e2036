/**
 * Channels: par branches passing messages (pipeline, fan-in, rendezvous, buffering), deadlocks
 * ending the run with an error that names the channels and branches, bad channels refused, the
 * messages traced, budgeted; a run with channels checkpointed anywhere (inside its scopes too)
 * and resumed, or replayed offline, ends as the uninterrupted run without asking again for what
 * was answered.
 */
import fc from "fast-check"
import { Checkpoint, createRuntime, type LanguageModel, Replay, Scripted, Term, Tools } from "lambdagent"
import { describe, expect, it } from "vitest"
import { agentTerms, conversationModel, observable, tools as agentTools } from "./fixtures/agentTerms.ts"

const x = Term.var("x")
const agent = (system: string) => Term.llm({ system, conversation: false })
const chain = (...stages: ReadonlyArray<Term.Term>) => Term.compose(stages)

/** Each agent answers `name(input)`, so a result shows the path a message took. */
const model: LanguageModel.LanguageModelShape = Scripted.respond((request) => {
  const last = request.messages[request.messages.length - 1]!.content
  return `${request.messages[0]!.content}(${last})`
})

const run = async (
  term: Term.Term,
  input: unknown = "go",
  options: Parameters<ReturnType<typeof createRuntime>["run"]>[2] = {},
  tools: NonNullable<Parameters<typeof createRuntime>[0]>["tools"] = []
) => {
  const runtime = createRuntime({ model, tools, trace: "agent" })
  try {
    return await runtime.run(term, input, options)
  } finally {
    await runtime.close()
  }
}

const failure = async (term: Term.Term, input: unknown = "go") => {
  try {
    await run(term, input)
  } catch (error) {
    return error as { _tag: string; kind?: string; message: string }
  }
  throw new Error("the run succeeded")
}

/** A tool that records the order things happened in. */
const marker = (log: Array<string>) => Tools.define({ name: "mark", description: "log", run: (s: string) => (log.push(s), s) })
const mark = (what: string) => chain(Term.lam("_", Term.lit(what)), Term.tool("mark"))

describe("channels", () => {
  it("pipeline: A → B → C through two rendezvous channels", async () => {
    const term = Term.channels(
      [
        { name: "ab", capacity: 0 },
        { name: "bc", capacity: 0 }
      ],
      Term.par([chain(agent("A"), Term.send("ab")), chain(Term.receive("ab"), agent("B"), Term.send("bc")), chain(Term.receive("bc"), agent("C"))])
    )
    const out = await run(term, "task")
    expect(out.result).toEqual(["A(task)", "B(A(task))", "C(B(A(task)))"])
    const messages = out.trace.filter((e) => e.kind === "send" || e.kind === "receive").map((e) => `${e.branch}:${e.kind}:${e.name}`)
    expect(messages.sort()).toEqual(["0:send:ab", "1:receive:ab", "1:send:bc", "2:receive:bc"])
    expect(out.trace.find((e) => e.kind === "receive" && e.name === "bc")?.output).toBe("B(A(task))")
  })

  it("fan-in: many senders, one receiver takes every message", async () => {
    const receiveAll = Term.lam("x", Term.list([0, 1, 2].map(() => Term.app(Term.receive("in"), x))))
    const term = Term.channels(
      [{ name: "in", capacity: 0 }],
      Term.par([chain(agent("w1"), Term.send("in")), chain(agent("w2"), Term.send("in")), chain(agent("w3"), Term.send("in")), receiveAll])
    )
    const out = await run(term, "q")
    const results = out.result as ReadonlyArray<unknown>
    expect([...(results[3] as ReadonlyArray<string>)].sort()).toEqual(["w1(q)", "w2(q)", "w3(q)"])
  })

  it("rendezvous (capacity 0): a send waits until a receiver takes the value", async () => {
    const log: Array<string> = []
    const term = (capacity: number) =>
      Term.channels([{ name: "c", capacity }], Term.par([chain(Term.send("c"), mark("sent")), chain(mark("receiving"), Term.receive("c"), mark("received"))]))
    await run(term(0), "v", {}, [marker(log)])
    expect(log.indexOf("receiving")).toBeLessThan(log.indexOf("sent"))
    log.length = 0
    // with room in the channel the sender goes on at once
    await run(term(1), "v", {}, [marker(log)])
    expect(log.indexOf("sent")).toBeLessThan(log.indexOf("receiving"))
  })

  it("buffered: a channel of capacity n holds n values in order", async () => {
    const sendTwice = (capacity: number) =>
      Term.channels(
        [{ name: "c", capacity }],
        Term.lam(
          "x",
          Term.list([
            Term.app(Term.send("c"), Term.lit(1)),
            Term.app(Term.send("c"), Term.lit(2)),
            Term.app(Term.receive("c"), x),
            Term.app(Term.receive("c"), x)
          ])
        )
      )
    expect((await run(sendTwice(2))).result).toEqual([1, 2, 1, 2])
    const error = await failure(sendTwice(1))
    expect(error).toMatchObject({ _tag: "EvalError", kind: "Deadlock" })
    expect(error.message).toContain(`the run sends on "c"`)
  })

  it("deadlock: every branch waiting ends the run with the channels and branches named", async () => {
    const term = Term.channels(
      [
        { name: "a", capacity: 0 },
        { name: "b", capacity: 0 }
      ],
      Term.par([chain(Term.receive("a"), Term.send("b")), chain(Term.receive("b"), Term.send("a"))])
    )
    const error = await failure(term)
    expect(error).toMatchObject({ _tag: "EvalError", kind: "Deadlock" })
    expect(error.message).toContain(`deadlock on channels "a", "b"`)
    expect(error.message).toContain(`branch 0 receives on "a"`)
    expect(error.message).toContain(`branch 1 receives on "b"`)
  })

  it("a receive with no sender anywhere, outside any par, is a deadlock too", async () => {
    const error = await failure(Term.channels([{ name: "c", capacity: 0 }], chain(agent("A"), Term.receive("c"))))
    expect(error).toMatchObject({ kind: "Deadlock" })
    expect(error.message).toContain(`the run receives on "c"`)
  })

  it("a branch still working is not a deadlock: the waiting branch gets its message later", async () => {
    const slow = Tools.define({
      name: "slow",
      description: "answers on a later turn",
      run: (s: string) => new Promise<string>((resolve) => setImmediate(() => resolve(`slow(${s})`)))
    })
    const term = Term.channels([{ name: "c", capacity: 0 }], Term.par([Term.receive("c"), chain(Term.tool("slow"), Term.send("c"))]))
    const out = await run(term, "m", {}, [slow])
    expect(out.result).toEqual({ pair: ["slow(m)", "slow(m)"] })
  })

  it("the time budget holds while a branch waits: the branch computing runs out of it", async () => {
    const spin = Term.loop({ body: Term.lam("n", Term.add(Term.var("n"), Term.lit(1))), max: 1_000_000_000 })
    const term = Term.channels([{ name: "c", capacity: 0 }], Term.par([Term.receive("c"), chain(Term.lam("_", Term.lit(0)), spin, Term.send("c"))]))
    await expect(run(term, "go", { budget: { timeMs: 100, steps: Number.MAX_SAFE_INTEGER } })).rejects.toMatchObject({ _tag: "BudgetExceeded", budget: "time" })
  })

  it("nested scopes: an inner declaration shadows an outer one; outer channels stay reachable", async () => {
    const term = Term.channels(
      [
        { name: "c", capacity: 1 },
        { name: "out", capacity: 1 }
      ],
      chain(
        Term.lam("_", Term.lit("outer")),
        Term.send("c"),
        Term.channels([{ name: "c", capacity: 1 }], chain(Term.lam("_", Term.lit("inner")), Term.send("c"), Term.receive("c"), Term.send("out"))),
        Term.lam("v", Term.pair(Term.app(Term.receive("c"), Term.var("v")), Term.app(Term.receive("out"), Term.var("v"))))
      )
    )
    expect((await run(term)).result).toEqual({ pair: ["outer", "inner"] })
  })

  describe("bad channels", () => {
    it("refuses an empty name, a negative capacity, a repeated name and an empty declaration list", () => {
      const declare = (declare: unknown) => () => Term.parse({ channels: { declare, agent: { receive: "c" } } })
      expect(declare([{ name: "c", capacity: -1 }])).toThrow(/capacity/)
      expect(declare([{ name: "c", capacity: 1.5 }])).toThrow(/an integer ≥ 0/)
      expect(declare([{ name: "" }])).toThrow(/a channel name/)
      expect(declare([{ name: "c" }, { name: "c" }])).toThrow(/declared twice/)
      expect(declare([])).toThrow(/non-empty array/)
      expect(() => Term.parse({ send: 3 })).toThrow(/a channel name/)
      try {
        declare([{ name: "c", capacity: -1 }])()
      } catch (error) {
        expect(error).toMatchObject({ _tag: "TermParseError", path: ["channels", "declare", 0, "capacity"] })
      }
    })

    it("a send to an undeclared channel is a RuntimeError listing the declared ones", async () => {
      const error = await failure(Term.channels([{ name: "a", capacity: 1 }], Term.send("typo")))
      expect(error).toMatchObject({ _tag: "EvalError", kind: "RuntimeError" })
      expect(error.message).toBe(`unknown channel "typo": the enclosing channels scopes declare "a"`)
    })

    it("a receive outside any channels scope is a RuntimeError", async () => {
      const error = await failure(Term.receive("c"))
      expect(error).toMatchObject({ _tag: "EvalError", kind: "RuntimeError", message: `receive on channel "c" outside any channels scope` })
    })
  })

  it("each message counts as a step of the budget", async () => {
    const pingPong = (n: number) =>
      Term.channels(
        [{ name: "c", capacity: 0 }],
        Term.par([
          Term.lam("x", Term.list(Array.from({ length: n }, (_, i) => Term.app(Term.send("c"), Term.lit(i))))),
          Term.lam("x", Term.list(Array.from({ length: n }, () => Term.app(Term.receive("c"), x))))
        ])
      )
    const used = (await run(pingPong(1))).stats.steps
    const more = (await run(pingPong(11))).stats.steps
    // each extra message adds its send, its receive and the list's pure steps
    expect(more - used).toBeGreaterThanOrEqual(20)
    await expect(run(pingPong(50), "go", { budget: { steps: used + 20 } })).rejects.toMatchObject({ _tag: "BudgetExceeded", budget: "steps" })
  })

  it("checkpoints inside the scope too; resumed from each, a run ends the same without repeating a recorded call", async () => {
    const journal = Checkpoint.journal()
    const term = chain(
      agent("first"),
      Term.channels([{ name: "c", capacity: 0 }], Term.par([chain(agent("A"), Term.send("c")), chain(Term.receive("c"), agent("B"))], "concat")),
      agent("last")
    )
    const whole = await run(term, "go", { checkpoint: { save: journal.save } })
    const saved = journal.checkpoints()
    // at "first", at the channels scope, at its par, at "A" and "B" inside it, at "last"
    expect(saved.map((c) => c.waiting?.kind)).toEqual(["llm", "channels", "par", "llm", "llm", "llm"])
    for (const checkpoint of saved) {
      let calls = 0
      const counting: LanguageModel.LanguageModelShape = { ...model, chat: (request) => (calls++, model.chat(request)) }
      const runtime = createRuntime({ model: counting, trace: "agent" })
      try {
        const resumed = await runtime.resume(Checkpoint.parse(JSON.stringify(checkpoint)))
        expect(resumed.result).toBe(whole.result)
        expect(resumed.trace.map((e) => `${e.kind}:${e.name}:${e.output ?? ""}`)).toEqual(whole.trace.map((e) => `${e.kind}:${e.name}:${e.output ?? ""}`))
        expect(calls).toBe(4 - checkpoint.answers.filter((a) => a.kind === "llm").length)
      } finally {
        await runtime.close()
      }
    }
    expect(whole.result).toBe("last(A(first(go))\n\nB(A(first(go))))")
  })

  it("a resumed scope keeps the order its messages arrived in, though its branches now run in another", async () => {
    // "slow" answers only once the consumer, having taken the first message, calls "open"
    let open: () => void = () => {}
    const gate = new Promise<void>((resolve) => (open = resolve))
    const gated = [
      Tools.define({ name: "slow", description: "waits for open", run: async () => (await gate, "slow") }),
      Tools.define({ name: "fast", description: "at once", run: () => "fast" }),
      Tools.define({ name: "open", description: "opens the gate", run: (s: string) => (open(), s) })
    ]
    const term = Term.channels(
      [{ name: "c", capacity: 0 }],
      Term.par([
        chain(Term.tool("slow"), Term.send("c")),
        chain(Term.tool("fast"), Term.send("c")),
        Term.lam("x", Term.list([Term.app(chain(Term.receive("c"), Term.tool("open")), x), Term.app(Term.receive("c"), x)]))
      ])
    )
    const journal = Checkpoint.journal()
    const whole = await run(term, "go", { checkpoint: { save: journal.save } }, gated)
    expect(whole.result).toEqual(["slow", "fast", ["fast", "slow"]])
    // before "open": the consumer had taken "fast"; "slow" was still being called
    const last = journal.checkpoints().at(-1)!
    expect(last.waiting).toMatchObject({ kind: "tool", name: "open" })
    const calls: Array<string> = []
    const ungated = ["slow", "fast", "open"].map((name) =>
      Tools.define({ name, description: name, run: (s: string) => (calls.push(name), name === "open" ? s : name) })
    )
    const runtime = createRuntime({ model, tools: ungated, trace: "agent" })
    try {
      // "slow" now answers at once and its branch runs first: run again, the scope would hand "slow" over first
      const resumed = await runtime.resume(Checkpoint.parse(JSON.stringify(last)))
      expect(resumed.result).toEqual(whole.result)
      // the call in flight at the checkpoint is made again; "fast", answered before it, is not
      expect(calls.sort()).toEqual(["open", "slow"])
    } finally {
      await runtime.close()
    }
  })

  it("nested scopes resume from each checkpoint, each message from its own scope's record", async () => {
    const term = Term.channels(
      [{ name: "c", capacity: 1 }],
      Term.par(
        [
          chain(
            agent("outer"),
            Term.channels([{ name: "c", capacity: 0 }], Term.par([chain(agent("inner"), Term.send("c")), chain(Term.receive("c"), agent("took"))], "concat")),
            Term.send("c")
          ),
          chain(Term.receive("c"), agent("end"))
        ],
        "concat"
      )
    )
    const journal = Checkpoint.journal()
    const whole = await run(term, "go", { checkpoint: { save: journal.save } })
    for (const checkpoint of journal.checkpoints()) {
      const runtime = createRuntime({ model, trace: "agent" })
      try {
        expect((await runtime.resume(Checkpoint.parse(JSON.stringify(checkpoint)))).result).toBe(whole.result)
      } finally {
        await runtime.close()
      }
    }
    const scopes = new Set(
      journal
        .checkpoints()
        .at(-1)!
        .answers.flatMap((a) => (a.message === undefined ? [] : [a.message.scope]))
    )
    expect([...scopes].sort()).toEqual(["1", "1.0/1.0/2"])
  })

  it("a resumed run recording its answers records the scope's messages too, and the recording replays offline", async () => {
    const term = Term.channels(
      [{ name: "c", capacity: 0 }],
      Term.par([
        chain(agent("A"), Term.send("c")),
        chain(agent("B"), Term.send("c")),
        Term.lam("x", Term.list([Term.app(Term.receive("c"), x), Term.app(Term.receive("c"), x)]))
      ])
    )
    const journal = Checkpoint.journal()
    const recorded: Array<Replay.Entry> = []
    // checkpointing and recording at once: both are told of every message
    const whole = await run(term, "go", { checkpoint: { save: journal.save }, record: (e) => void recorded.push(e) })
    expect(recorded.filter((a) => a.message !== undefined)).toHaveLength(4)
    for (const checkpoint of journal.checkpoints()) {
      const answers: Array<Replay.Entry> = []
      const resumed = await createRuntime({ model }).resume(checkpoint, { record: (e) => void answers.push(e) })
      expect(resumed.result).toEqual(whole.result)
      expect(answers.filter((a) => a.kind === "send" || a.kind === "receive")).toHaveLength(4)
      const offline = await createRuntime({ model: Scripted.fixed("never asked") }).run(term, "go", { replay: { recording: Replay.make({ term, answers }) } })
      expect(offline.result).toEqual(whole.result)
    }
  })

  it("an ask inside a scope pauses the run; resumed with the answer (through JSON), it ends as a run answered at once", async () => {
    const term = chain(
      agent("first"),
      Term.channels(
        [{ name: "c", capacity: 0 }],
        Term.par([chain(agent("A"), Term.send("c")), chain(Term.receive("c"), Term.ask("Go on?"), agent("B"))], "concat")
      ),
      agent("last")
    )
    const answered = await run(term, "go", { ask: () => "yes" })
    let calls = 0
    const counting: LanguageModel.LanguageModelShape = { ...model, chat: (request) => (calls++, model.chat(request)) }
    const paused = await createRuntime({ model: counting })
      .run(term, "go")
      .then(
        () => undefined,
        (error: unknown) => error as { _tag: string; question: string; checkpoint: unknown }
      )
    expect(paused).toMatchObject({ _tag: "RunPaused", question: "Go on?" })
    expect(calls).toBe(2)
    calls = 0
    const resumed = await createRuntime({ model: counting }).resume(JSON.parse(JSON.stringify(paused!.checkpoint)), { answer: "yes" })
    expect(resumed.result).toBe(answered.result)
    expect(resumed.trace.map((e) => `${e.kind}:${e.name}`)).toEqual(answered.trace.map((e) => `${e.kind}:${e.name}`))
    // the scope's messages and "A" are recorded: only "B" and "last" are asked
    expect(calls).toBe(2)
  })

  describe("recorded messages", () => {
    const inner = agentTerms()
    /**
     * Random scopes that cannot deadlock: producers each run an agent and send its answer, one
     * consumer takes every message (in whatever order they arrive) and runs an agent on each,
     * through a channel of capacity 0 to 2; agents before and after the scope.
     */
    const scoped = fc
      .tuple(inner, fc.array(inner, { minLength: 1, maxLength: 3 }), fc.array(inner, { minLength: 1, maxLength: 3 }), fc.nat(2), inner)
      .map(([before, producers, consumers, capacity, after]) => {
        const taken = (i: number) => Term.app(chain(Term.receive("c"), consumers[i % consumers.length]!), x)
        const consumer = Term.lam("x", Term.list(producers.map((_, i) => taken(i))))
        return chain(before, Term.channels([{ name: "c", capacity }], Term.par([...producers.map((p) => chain(p, Term.send("c"))), consumer], "tuple")), after)
      })

    /** A run of `term` counting the model's and the tools' calls; `save` is told how many were made before each checkpoint. */
    const counted = () => {
      const calls = { llm: 0, tool: 0 }
      const model: LanguageModel.LanguageModelShape = { ...conversationModel, chat: (r) => (calls.llm++, conversationModel.chat(r)) }
      const tools = agentTools.map((t) => ({
        ...t,
        run: (input: never, context: never) => (calls.tool++, (t.run as (i: never, c: never) => unknown)(input, context))
      }))
      return { calls, runtime: createRuntime({ model, tools: tools as typeof agentTools, trace: "agent" }) }
    }
    const budget = { llmCalls: 1000, toolCalls: 1000 }

    type Outcome = Awaited<ReturnType<ReturnType<typeof createRuntime>["run"]>>
    /** A run's result, or its error's message. */
    const settled = (run: Promise<Outcome>) =>
      run.then(
        (out) => ({ out }),
        (error: Error) => ({ error: error.message })
      )
    /**
     * What two runs alike agree on: the value, the counters, the trace without durations, and
     * without the step numbers of `par` branches' events (branches share the step counter, and a
     * message answered from a record does not wait for the branch that sent it, so they interleave
     * differently).
     */
    const alike = (run: { out: Outcome } | { error: string }) =>
      "error" in run
        ? run
        : {
            result: run.out.result,
            steps: run.out.stats.steps,
            llmCalls: run.out.stats.llmCalls,
            toolCalls: run.out.stats.toolCalls,
            trace: observable(run.out.trace).map((e) => ("branch" in e ? { ...e, step: 0 } : e))
          }

    it("resumed from each of its checkpoints, a random run with channels ends the same and makes only the calls not yet answered", async () => {
      await fc.assert(
        fc.asyncProperty(scoped, async (term) => {
          const original = counted()
          const journal = Checkpoint.journal()
          const before: Array<{ llm: number; tool: number }> = []
          const save = (entry: Checkpoint.Entry) => (before.push({ ...original.calls }), journal.save(entry))
          const whole = await settled(original.runtime.run(term, "go", { budget, checkpoint: { save } }))
          await original.runtime.close()
          const checkpoints = journal.checkpoints()
          for (const [i, checkpoint] of checkpoints.entries()) {
            const again = counted()
            const resumed = await settled(again.runtime.resume(Checkpoint.parse(JSON.stringify(checkpoint))))
            await again.runtime.close()
            expect(alike(resumed)).toEqual(alike(whole))
            // every call answered before the checkpoint comes from its record, every later one is made once
            expect(again.calls).toEqual({ llm: original.calls.llm - before[i]!.llm, tool: original.calls.tool - before[i]!.tool })
          }
        }),
        { numRuns: 40 }
      )
    })

    it("a random run with channels, recorded, replays offline with no model or tools and ends the same", async () => {
      await fc.assert(
        fc.asyncProperty(scoped, async (term) => {
          const answers: Array<Replay.Entry> = []
          const original = counted()
          const whole = await settled(original.runtime.run(term, "go", { budget, record: (e) => void answers.push(e) }))
          await original.runtime.close()
          const recording = Replay.parse(Term.stringify(Replay.make({ term, answers })))
          const offline = createRuntime({ model: Scripted.sequence([], { name: "unreachable" }), trace: "agent" })
          const replayed = await settled(offline.run(term, "go", { budget, replay: { recording } }))
          await offline.close()
          expect(alike(replayed)).toEqual(alike(whole))
        }),
        { numRuns: 40 }
      )
    })
  })
})
