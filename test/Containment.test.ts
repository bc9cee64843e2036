import { Errors, Evaluator, Term } from "lambdagent"
import { describe, expect, it } from "vitest"

/** `λx. self(x ++ x)`: a value that doubles on every step, forever. */
const doubling = Term.parse({ lam: "x", body: { app: { func: { self: true }, arg: { concat: [{ var: "x" }, { var: "x" }] } } } })

/**
 * `p = (k, (m, s))`: double `s` k times, then loop m times taking the length of `s` — cheap
 * steps, but each one touches every character of a large string.
 */
const expensiveSteps = Term.parse({
  lam: "p",
  body: {
    if: {
      cond: { gt: [{ fst: { var: "p" } }, 0] },
      then: {
        app: {
          func: { self: true },
          arg: {
            pair: [
              { sub: [{ fst: { var: "p" } }, 1] },
              { pair: [{ fst: { snd: { var: "p" } } }, { concat: [{ snd: { snd: { var: "p" } } }, { snd: { snd: { var: "p" } } }] }] }
            ]
          }
        }
      },
      else: {
        if: {
          cond: { eq: [{ fst: { snd: { var: "p" } } }, 0] },
          then: 0,
          else: {
            app: {
              func: { self: true },
              arg: {
                pair: [
                  0,
                  {
                    pair: [
                      {
                        sub: [{ fst: { snd: { var: "p" } } }, { div: [{ length: { snd: { snd: { var: "p" } } } }, { length: { snd: { snd: { var: "p" } } } }] }]
                      },
                      { snd: { snd: { var: "p" } } }
                    ]
                  }
                ]
              }
            }
          }
        }
      }
    }
  }
})

const failure = (f: () => unknown): Errors.BudgetExceeded => {
  try {
    f()
  } catch (error) {
    if (error instanceof Errors.BudgetExceeded) return error
    throw error
  }
  throw new Error("expected the run to exhaust a budget")
}

describe("bounded evaluation", () => {
  it("a value that doubles forever stops at the memory budget with a typed error, lists and strings alike", () => {
    const tools = { dbl: doubling }
    for (const input of [[1, 2], "ab"]) {
      const error = failure(() => Evaluator.runTool("dbl", input, { tools }))
      expect(error).toMatchObject({ budget: "memory", limit: 64 * 1024 * 1024 })
      expect(error.message).toMatch(/exceeds the memory budget of 64\.0 MiB/)
    }
    expect(failure(() => Evaluator.runTool("dbl", "ab", { tools, budget: { memory: 1024 } })).limit).toBe(1024)
  })

  it("the time budget fires when single steps are expensive (string scans are charged by what they touch)", () => {
    // 2^22 characters, then a million length computations over them: minutes of work without the charge
    const error = failure(() =>
      Evaluator.runTool("scan", { pair: [22, { pair: [1_000_000, "ab"] }] }, { tools: { scan: expensiveSteps }, budget: { timeMs: 300 } })
    )
    expect(error).toMatchObject({ budget: "time", limit: 300 })
    expect(error.usage).toEqual({ llmCalls: 0, toolCalls: 0, tokens: 0 })
  })

  it("completes in slices: other work runs meanwhile, and an abort stops it between slices", async () => {
    const exec = Evaluator.startRun(expensiveSteps, { pair: [20, { pair: [1_000_000, "ab"] }] }, { tool: "scan" })
    const controller = new AbortController()
    let ticks = 0
    const timer = setInterval(() => {
      // the event loop keeps turning while the term computes
      if (++ticks === 3) controller.abort(new Error("stopped by the host"))
    }, 1)
    await expect(Evaluator.complete(exec, { signal: controller.signal, sliceMs: 5 })).rejects.toThrow("stopped by the host")
    clearInterval(timer)
    expect(ticks).toBeGreaterThanOrEqual(3)
  })

  it("a budget error reports the budget, the counters and the partial trace as JSON", () => {
    const omega = Term.parse({
      app: {
        func: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } },
        arg: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } }
      }
    })
    const json = Errors.toJson(failure(() => Evaluator.evaluate(omega, { budget: { steps: 50 }, trace: "beta" })))
    expect(json).toMatchObject({ kind: "BudgetExceeded", budget: "steps", limit: 50, usage: { llmCalls: 0, toolCalls: 0, tokens: 0 } })
    expect(json.steps).toBeGreaterThan(50)
    expect(json.trace?.length).toBeGreaterThan(10)
  })
})

describe("parsing counts against the time budget", () => {
  /** A term of 300,001 nodes: a list literal of additions. */
  const hugeTerm = Array.from({ length: 100_000 }, (_, i) => ({ add: [i, 1] }))
  const identity = Term.lam("x", Term.var("x"))

  it("Term.parse stops with BudgetExceeded (time) once the deadline has passed", () => {
    const error = (() => {
      try {
        Term.parse(hugeTerm, { deadline: Date.now() - 1, timeMs: 250 })
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(Errors.BudgetExceeded)
    expect(error).toMatchObject({ budget: "time", limit: 250, message: "time budget of 250 ms exhausted while parsing the term" })
    // without a deadline the same term parses
    expect(Term.parse(hugeTerm)._tag).toBe("List")
  })

  it("Term.parseText counts reading the JSON text too", () => {
    expect(() => Term.parseText(JSON.stringify(hugeTerm), { deadline: Date.now() - 1, timeMs: 250 })).toThrow(
      expect.objectContaining({ _tag: "BudgetExceeded", budget: "time", message: expect.stringContaining("while reading the term's JSON") })
    )
  })

  it("a run whose input term takes longer to read than the whole time budget is stopped, not free", () => {
    // reading 300,000 nodes takes far longer than 1 ms; the identity itself takes 2 steps
    expect(() => Evaluator.run(identity, hugeTerm, { budget: { timeMs: 1 } })).toThrow(
      expect.objectContaining({ _tag: "BudgetExceeded", budget: "time", limit: 1 })
    )
    expect(Evaluator.run(identity, hugeTerm, { budget: { timeMs: 60_000 } }).value).toBeInstanceOf(Object)
  })

  it("startedAt makes the work before the run (parsing its code) count", () => {
    const startedAt = Date.now() - 10_000
    expect(() => Evaluator.evaluate(Term.add(Term.lit(1), Term.lit(2)), { budget: { timeMs: 5_000 }, startedAt })).toThrow(
      expect.objectContaining({ _tag: "BudgetExceeded", budget: "time" })
    )
  })
})
