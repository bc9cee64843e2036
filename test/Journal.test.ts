/**
 * `Agent.RunOptions.journal`: every call that reaches the services passes through it; an entry it
 * gives back answers the call without making it, and carries the time the run had used, so a run
 * executed again goes on under the time budget its earlier execution left.
 */
import { Cause, Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { Agent, type Errors, LanguageModel, MemoryStore, type Replay, Scripted, Term, Tools } from "lambdagent"

const term = Term.compose([Term.llm({ system: "Repeat." }), Term.tool("shout")])

const runWith = (journal: Agent.Journal, calls: { llm: number; tool: number }, timeMs = 60_000) => {
  const shout = Tools.define({ name: "shout", description: "Upper-case text.", run: (s: string) => (calls.tool++, s.toUpperCase()) })
  const model = Scripted.respond((request) => (calls.llm++, String(request.messages.at(-1)?.content ?? "")))
  const layer = Layer.mergeAll(Layer.succeed(LanguageModel.LanguageModel, model), Tools.layer([shout]), MemoryStore.layerLocal())
  return Effect.runPromiseExit(Agent.run(term, "hello", { journal, budget: { timeMs } }).pipe(Effect.provide(layer)))
}

const valueOf = (exit: Exit.Exit<Agent.RunResult, unknown>) => (Exit.isSuccess(exit) ? exit.value.value : Cause.squash(exit.cause))

/** A journal that keeps what it is given, and gives back what it kept (as a durable engine does). */
const keeping =
  (kept: Map<string, Replay.Entry>): Agent.Journal =>
  (key, _request, call) =>
    kept.has(key) ? Effect.succeed(kept.get(key)!) : Effect.tap(call, (entry) => Effect.sync(() => kept.set(key, entry)))

describe("a run's journal", () => {
  it("keeps each call's entry with the time the run had used, and a second execution makes no call again", async () => {
    const kept = new Map<string, Replay.Entry>()
    const first = { llm: 0, tool: 0 }
    const ran = await runWith(keeping(kept), first)
    expect(valueOf(ran)).toBe("HELLO")
    expect(first).toEqual({ llm: 1, tool: 1 })
    expect([...kept.values()].map((e) => e.kind)).toEqual(["llm", "tool"])
    for (const entry of kept.values()) expect(entry.elapsedMs).toBeGreaterThanOrEqual(0)
    const again = { llm: 0, tool: 0 }
    const replayed = await runWith(keeping(kept), again)
    expect(valueOf(replayed)).toBe("HELLO")
    expect(again).toEqual({ llm: 0, tool: 0 })
  })

  it("goes on under the time its earlier execution left: a given-back answer that came after the budget ran out ends the run", async () => {
    const kept = new Map<string, Replay.Entry>()
    await runWith(keeping(kept), { llm: 0, tool: 0 }, 60_000)
    // the model's answer came 61 s into the run, in an execution that then died
    const [llmKey, llmEntry] = [...kept.entries()][0]!
    const late = new Map([[llmKey, { ...llmEntry, elapsedMs: 61_000 }]])
    const calls = { llm: 0, tool: 0 }
    const ran = await runWith(keeping(late), calls, 60_000)
    expect(Exit.isFailure(ran)).toBe(true)
    expect(valueOf(ran) as Errors.BudgetExceeded).toMatchObject({ _tag: "BudgetExceeded", budget: "time" })
    expect(calls).toEqual({ llm: 0, tool: 0 })
    // an answer that came early leaves the rest of the budget
    const early = new Map([[llmKey, { ...llmEntry, elapsedMs: 1_000 }]])
    const ok = await runWith(keeping(early), calls, 60_000)
    expect(valueOf(ok)).toBe("HELLO")
    expect(calls).toEqual({ llm: 0, tool: 1 })
  })
})
