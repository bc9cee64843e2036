/**
 * Checkpoints during long pure evaluation (`everySteps`, YAML `checkpoint.autoSaveSteps`): taken
 * between time slices, waiting on no request, and a run resumed from one ends as it would have.
 */
import { Checkpoint, createRuntime, Scripted, Term } from "lambdagent"
import { describe, expect, it } from "vitest"

const x = Term.var("x")
// 750,000 steps (tens of time slices) of pure counting, then one LLM call
const counting = Term.compose([
  Term.loop({ body: Term.lam("x", Term.add(x, Term.lit(1))), max: 150_000 }),
  Term.llm({ system: "Report.", conversation: false })
])

describe("checkpoints every so many steps", () => {
  it("are taken during pure evaluation, and a run resumed from one ends the same", async () => {
    const journal = Checkpoint.journal()
    const runtime = createRuntime({ model: Scripted.echo() })
    // no trace: each checkpoint holds the trace so far, and this loop records an event per iteration
    const whole = await runtime.run(counting, 0, { trace: "off", checkpoint: { save: journal.save, everySteps: 10_000 } })
    // each taken while counting is a whole checkpoint: its base keeps the computation done so far (the
    // last, before the LLM call, is a delta when the last of those came fewer steps before than a replay is worth)
    expect(journal.entries.slice(0, -1).every((e) => e._tag === "Base")).toBe(true)
    const saved = journal.checkpoints().map((c) => JSON.parse(JSON.stringify(c)) as Checkpoint.Checkpoint)
    expect(whole.value).toBe("150000")
    const during = saved.filter((c) => c.usage.llmCalls === 0 && c.usage.steps > 0)
    // the last checkpoint is the one before the LLM call; the others were taken while counting
    expect(during.length).toBeGreaterThan(1)
    const steps = during.map((c) => c.usage.steps)
    expect([...steps].sort((a, b) => a - b)).toEqual(steps)
    for (let i = 1; i < steps.length; i++) expect(steps[i]! - steps[i - 1]!).toBeGreaterThanOrEqual(10_000)

    // one taken while counting (the last one may be a delta)
    const middle = during[Math.floor((during.length - 1) / 2)]!
    const resumed = await createRuntime({ model: Scripted.echo() }).resume(middle)
    expect(resumed.value).toBe("150000")
    expect(resumed.stats.steps).toBe(whole.stats.steps)
    expect(resumed.stats.llmCalls).toBe(1)
    // resumed from its base, the run does not count again: it takes fewer steps than counting from the start
    expect(middle.base.usage.steps).toBe(middle.usage.steps)
  })

  it("are not taken without everySteps", async () => {
    const journal = Checkpoint.journal()
    await createRuntime({ model: Scripted.echo() }).run(counting, 0, { trace: "off", checkpoint: { save: journal.save } })
    expect(journal.checkpoints().map((c) => c.usage.llmCalls)).toEqual([0])
  })
})
