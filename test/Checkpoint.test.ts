/**
 * Checkpoints: a run paused at any oracle call, written as JSON, read back and resumed in a fresh
 * runtime, ends exactly as the uninterrupted run; bad checkpoints are refused with one-line errors.
 */
import { Effect } from "effect"
import fc from "fast-check"
import { Checkpoint, createRuntime, Errors, Evaluator, type LanguageModel, Term } from "lambdagent"
import { describe, expect, it } from "vitest"
import { agentTerms, conversationModel as model, observable, tools } from "./fixtures/agentTerms.ts"

const agent = agentTerms()

/** Run `term`, keeping every checkpoint (as JSON text) and counting live calls. */
const runKeeping = async (term: Term.Term) => {
  const saved: Array<string> = []
  const runtime = createRuntime({ model, tools, trace: "agent" })
  try {
    const out = await runtime.run(term, "go", {
      budget: { llmCalls: 1000, toolCalls: 1000 },
      checkpoint: { save: (c) => Effect.sync(() => void saved.push(JSON.stringify(c))) }
    })
    return { out, saved }
  } catch (error) {
    return { error: (error as Error).message, saved }
  } finally {
    await runtime.close()
  }
}

const resumeFrom = async (text: string) => {
  let live = 0
  const counted = { ...model, chat: (r: LanguageModel.ChatRequest) => (live++, model.chat(r)) }
  const runtime = createRuntime({ model: counted, tools, trace: "agent" })
  try {
    const out = await runtime.resume(JSON.parse(text))
    return { out, live }
  } catch (error) {
    return { error: (error as Error).message, live }
  } finally {
    await runtime.close()
  }
}

describe("Checkpoint", () => {
  it("resuming from any checkpoint of a random run ends as the uninterrupted run", async () => {
    await fc.assert(
      fc.asyncProperty(agent, fc.double({ min: 0, max: 1, noNaN: true }), async (term, at) => {
        const whole = await runKeeping(term)
        fc.pre(whole.saved.length > 0)
        const text = whole.saved[Math.min(whole.saved.length - 1, Math.floor(at * whole.saved.length))]!
        const resumed = await resumeFrom(text)
        if ("error" in whole) {
          expect(resumed).toMatchObject({ error: whole.error })
          return
        }
        expect("out" in resumed && resumed.out.result).toEqual(whole.out!.result)
        const out = (resumed as { out: typeof whole.out }).out!
        expect(observable(out.trace)).toEqual(observable(whole.out!.trace))
        expect(out.stats.steps).toBe(whole.out!.stats.steps)
        expect(out.stats.llmCalls).toBe(whole.out!.stats.llmCalls)
        expect(out.stats.toolCalls).toBe(whole.out!.stats.toolCalls)
      }),
      { numRuns: 150 }
    )
  })

  it("a resumed run does not ask again for answers recorded before the checkpoint", async () => {
    const term = Term.compose([
      Term.llm({ system: "a", conversation: false }),
      Term.llm({ system: "b", conversation: false }),
      Term.llm({ system: "c", conversation: false })
    ])
    const whole = await runKeeping(term)
    expect(whole.saved).toHaveLength(3)
    for (const [i, text] of whole.saved.entries()) {
      const resumed = await resumeFrom(text)
      expect(resumed.live).toBe(3 - i)
    }
  })

  it("snapshots a machine 100,000 frames deep and resumes it", () => {
    // sum 0..n-1 by non-tail recursion through a tool call at the bottom
    const n = 100_000
    const fix = Term.lam(
      "f",
      Term.app(
        Term.lam("x", Term.app(Term.var("f"), Term.lam("v", Term.app(Term.app(Term.var("x"), Term.var("x")), Term.var("v"))))),
        Term.lam("x", Term.app(Term.var("f"), Term.lam("v", Term.app(Term.app(Term.var("x"), Term.var("x")), Term.var("v")))))
      )
    )
    const sum = Term.lam(
      "self",
      Term.lam(
        "k",
        Term.if(
          Term.eq(Term.var("k"), Term.lit(0)),
          Term.app(Term.tool("bottom"), Term.lit(0)),
          Term.add(Term.var("k"), Term.app(Term.var("self"), Term.sub(Term.var("k"), Term.lit(1))))
        )
      )
    )
    const term = Term.app(Term.app(fix, sum), Term.lit(n))
    const exec = Evaluator.start(term, { budget: { steps: 100_000_000 } })
    const step = exec.next()
    expect(step._tag).toBe("Suspended")
    const text = JSON.stringify(Checkpoint.capture(exec, step._tag === "Suspended" ? step.request : undefined))
    const restored = Checkpoint.restore(Checkpoint.parse(text, { term }))
    expect(restored.pending?.kind).toBe("tool")
    const done = restored.execution.resume(7)
    expect(done).toEqual({ _tag: "Done", value: 7 + (n * (n + 1)) / 2 })
  }, 120_000)

  describe("bad checkpoints", () => {
    const good = () => {
      const exec = Evaluator.startApply(Term.lam("s", Term.app(Term.tool("t"), Term.var("s"))), "x")
      const step = exec.next()
      return JSON.stringify(Checkpoint.capture(exec, step._tag === "Suspended" ? step.request : undefined))
    }
    const reason = (f: () => unknown) => {
      try {
        f()
      } catch (e) {
        expect(e).toBeInstanceOf(Errors.CheckpointError)
        const error = e as Errors.CheckpointError
        expect(error.message).not.toContain("\n")
        return error.reason
      }
      throw new Error("accepted")
    }
    it("refuses truncated, foreign, edited and other-version checkpoints, and other terms", () => {
      const text = good()
      expect(reason(() => Checkpoint.parse(text.slice(0, text.length / 2)))).toBe("format")
      expect(reason(() => Checkpoint.parse('{"hello":1}'))).toBe("format")
      expect(reason(() => Checkpoint.parse(text.replace('"version":1', '"version":2')))).toBe("version")
      expect(reason(() => Checkpoint.parse(text.replace('"steps":', '"steps":1')))).toBe("digest")
      expect(reason(() => Checkpoint.parse(text, { term: Term.tool("other") }))).toBe("term")
      expect(Checkpoint.restore(Checkpoint.parse(text)).pending?.kind).toBe("tool")
    })
    it("a runtime rejects a bad checkpoint with a CheckpointError", async () => {
      const runtime = createRuntime()
      await expect(runtime.resume({ format: "lambdagent.checkpoint", version: 0 })).rejects.toMatchObject({ _tag: "CheckpointError", reason: "version" })
      await runtime.close()
    })
  })
})
