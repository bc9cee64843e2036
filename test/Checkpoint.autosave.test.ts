/**
 * Checkpoints during long pure evaluation (`everySteps`, YAML `checkpoint.autoSaveSteps`): taken
 * between time slices, waiting on no request, and a run resumed from one ends as it would have.
 */
import { Effect } from "effect"
import { type Checkpoint, createRuntime, Scripted, Term } from "lambdagent"
import { describe, expect, it } from "vitest"

const x = Term.var("x")
// 750,000 steps (tens of time slices) of pure counting, then one LLM call
const counting = Term.compose([
  Term.loop({ body: Term.lam("x", Term.add(x, Term.lit(1))), max: 150_000 }),
  Term.llm({ system: "Report.", conversation: false })
])

describe("checkpoints every so many steps", () => {
  it("are taken during pure evaluation, and a run resumed from one ends the same", async () => {
    const saved: Array<Checkpoint.Checkpoint> = []
    const runtime = createRuntime({ model: Scripted.echo() })
    // no trace: each checkpoint holds the trace so far, and this loop records an event per iteration
    const whole = await runtime.run(counting, 0, {
      trace: "off",
      checkpoint: { save: (c) => Effect.sync(() => void saved.push(JSON.parse(JSON.stringify(c)))), everySteps: 10_000 }
    })
    expect(whole.value).toBe("150000")
    const during = saved.filter((c) => c.usage.llmCalls === 0 && c.usage.steps > 0)
    // the last checkpoint is the one before the LLM call; the others were taken while counting
    expect(during.length).toBeGreaterThan(1)
    const steps = during.map((c) => c.usage.steps)
    expect([...steps].sort((a, b) => a - b)).toEqual(steps)
    for (let i = 1; i < steps.length; i++) expect(steps[i]! - steps[i - 1]!).toBeGreaterThanOrEqual(10_000)

    const middle = during[Math.floor(during.length / 2)]!
    const resumed = await createRuntime({ model: Scripted.echo() }).resume(middle)
    expect(resumed.value).toBe("150000")
    expect(resumed.stats.steps).toBe(whole.stats.steps)
    expect(resumed.stats.llmCalls).toBe(1)
  })

  it("are not taken without everySteps", async () => {
    const saved: Array<Checkpoint.Checkpoint> = []
    await createRuntime({ model: Scripted.echo() }).run(counting, 0, { trace: "off", checkpoint: { save: (c) => Effect.sync(() => void saved.push(c)) } })
    expect(saved.map((c) => c.usage.llmCalls)).toEqual([0])
    expect(saved).toHaveLength(1)
  })
})
