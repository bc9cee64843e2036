/**
 * Human in the loop: an `ask` form pauses a run as a checkpoint; resuming it with the answer —
 * after a JSON round trip, in a fresh runtime — goes on from the question without asking again
 * what was answered before.
 */
import { Effect } from "effect"
import { Checkpoint, createRuntime, Driver, Errors, Evaluator, Scripted, Term } from "lambdagent"
import { describe, expect, it } from "vitest"

/** A model that counts its calls and answers `<system>: <input>`. */
const countingModel = () => {
  const calls: Array<string> = []
  const model = Scripted.respond((request) => {
    const system = request.messages.find((m) => m.role === "system")?.content ?? ""
    const user = request.messages.filter((m) => m.role === "user").at(-1)?.content ?? ""
    calls.push(system)
    return `${system}: ${user}`
  })
  return { calls, model }
}

const pausedBy = async (promise: Promise<unknown>): Promise<Errors.RunPaused> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e
  )
  expect(error).toBeInstanceOf(Errors.RunPaused)
  return error as Errors.RunPaused
}

/** Through JSON, as a checkpoint kept in a file or a database comes back. */
const roundTrip = (checkpoint: unknown): unknown => JSON.parse(JSON.stringify(checkpoint))

const approval = Term.compose([
  Term.llm({ system: "draft", conversation: false }),
  Term.ask("Approve this plan?"),
  Term.llm({ system: "do", conversation: false })
])

describe("ask", () => {
  it("parses, prints and analyses as a function that calls nothing", () => {
    const term = Term.parse({ ask: "Approve?" })
    expect(term).toEqual(Term.ask("Approve?"))
    expect(Term.encode(term)).toEqual({ ask: "Approve?" })
    expect(Term.pretty(term)).toBe('Ask("Approve?")')
    expect(Term.capabilities(approval).ask).toBe(true)
    expect(Term.capabilities(Term.llm({ system: "x" })).ask).toBe(false)
    expect(Term.bounds(approval)).toEqual({ llmCalls: 2, toolCalls: 0 })
    expect(() => Term.parse({ ask: 3 })).toThrow(/a question \(string\)/)
  })

  it("pauses a run, which resumes in a fresh runtime with the answer and asks nothing twice", async () => {
    const first = countingModel()
    const paused = await pausedBy(createRuntime({ model: first.model }).run(approval, "Rome"))
    expect(paused.question).toBe("Approve this plan?")
    expect(paused.input).toBe("draft: Rome")
    expect(paused.message).toBe('the run is waiting for an answer to "Approve this plan?"')
    expect(first.calls).toEqual(["draft"])

    const later = countingModel()
    const output = await createRuntime({ model: later.model }).resume(roundTrip(paused.checkpoint), { answer: "yes, go" })
    expect(output.value).toBe("do: yes, go")
    expect(later.calls).toEqual(["do"])
    expect(output.stats.llmCalls).toBe(2)
    expect(output.trace.filter((e) => e.kind !== "beta").map((e) => [e.kind, e.name, e.output])).toEqual([
      ["llm", "llm", "draft: Rome"],
      ["ask", "Approve this plan?", "yes, go"],
      ["llm", "llm", "do: yes, go"]
    ])
  })

  it("pauses again when resumed without an answer, and at each question in turn", async () => {
    const twice = Term.compose([Term.ask("first?"), Term.ask("second?"), Term.llm({ system: "end", conversation: false })])
    const { calls, model } = countingModel()
    const runtime = createRuntime({ model })
    const one = await pausedBy(runtime.run(twice, "in"))
    expect(one.question).toBe("first?")
    const again = await pausedBy(runtime.resume(roundTrip(one.checkpoint)))
    expect(again.question).toBe("first?")
    const two = await pausedBy(runtime.resume(roundTrip(one.checkpoint), { answer: "a1" }))
    expect([two.question, two.input]).toEqual(["second?", "a1"])
    const done = await runtime.resume(roundTrip(two.checkpoint), { answer: "a2" })
    expect(done.value).toBe("end: a2")
    expect(calls).toEqual(["end"])
  })

  it("pauses inside a par branch; the other branch's answered calls are not made again", async () => {
    const term = Term.par(
      [Term.compose([Term.llm({ system: "left", conversation: false }), Term.ask("ok?")]), Term.llm({ system: "right", conversation: false })],
      "concat"
    )
    const first = countingModel()
    const paused = await pausedBy(createRuntime({ model: first.model }).run(term, "x"))
    expect(paused.question).toBe("ok?")
    const later = countingModel()
    const output = await createRuntime({ model: later.model }).resume(roundTrip(paused.checkpoint), { answer: "fine" })
    const answered = new Set(first.calls)
    expect(later.calls.filter((c) => answered.has(c))).toEqual([])
    expect([...first.calls, ...later.calls].sort()).toEqual(["left", "right"])
    expect(output.result).toBe("fine\n\nright: x")
  })

  it("is answered at once by an ask handler", async () => {
    const { model } = countingModel()
    const questions: Array<string> = []
    const output = await createRuntime({ model }).run(approval, "Rome", {
      ask: async (question, input) => {
        questions.push(`${question} / ${String(input)}`)
        return "approved"
      }
    })
    expect(output.value).toBe("do: approved")
    expect(questions).toEqual(["Approve this plan? / draft: Rome"])
    // traced as the answer to a paused run is: the same trace either way
    expect(output.trace.filter((e) => e.kind === "ask").map((e) => [e.name, e.input, e.output])).toEqual([["Approve this plan?", "draft: Rome", "approved"]])
    const failing = createRuntime({ model }).run(approval, "Rome", { ask: () => Promise.reject(new Error("no terminal")) })
    await expect(failing).rejects.toMatchObject({ _tag: "EvalError", message: "the ask handler failed: no terminal" })
  })

  it("refuses a paused checkpoint whose question was edited", async () => {
    const paused = await pausedBy(createRuntime({ model: countingModel().model }).run(approval, "Rome"))
    const edited = roundTrip(paused.checkpoint) as { asking: { question: string } }
    edited.asking.question = "Delete everything?"
    await expect(createRuntime().resume(edited, { answer: "yes" })).rejects.toMatchObject({ _tag: "CheckpointError", reason: "digest" })
  })

  it("fails a driver run that has nothing to answer it", async () => {
    const exec = Evaluator.startApply(Term.ask("anyone?"), "x")
    const handlers: Driver.Handlers<never, never> = { llm: () => Effect.succeed(""), tool: () => Effect.succeed(""), memory: () => Effect.succeed(null) }
    const exit = await Effect.runPromiseExit(Driver.drive(exec, handlers))
    expect(exit._tag).toBe("Failure")
    expect(String(exit)).toContain('nothing answers a question to a person ("anyone?")')
    const answered = await Effect.runPromise(
      Driver.drive(Evaluator.startApply(Term.ask("anyone?"), "x"), { ...handlers, ask: (r) => Effect.succeed(`re: ${r.question}`) })
    )
    expect(answered).toBe("re: anyone?")
  })

  it("marks a checkpoint with what it asks", () => {
    const exec = Evaluator.startApply(Term.ask("Approve?"), "plan")
    const step = exec.next()
    const pending = step._tag === "Suspended" ? step.request : undefined
    expect(pending).toMatchObject({ kind: "ask", question: "Approve?", input: "plan" })
    const marked = Checkpoint.awaiting(Checkpoint.capture(exec, pending), { key: exec.requestKey(pending!), question: "Approve?", input: "plan" })
    expect(Checkpoint.decode(roundTrip(marked)).asking).toEqual({ key: "1", question: "Approve?", input: "plan" })
  })
})
