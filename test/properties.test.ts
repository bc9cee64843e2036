/**
 * Properties of the semantics (docs/semantics.md): determinism given the oracles' answers, the
 * soundness of the static bounds, budget monotonicity, `par` of pure branches as their sequence,
 * and requests as values.
 */
import { Effect } from "effect"
import fc from "fast-check"
import { createRuntime, Driver, Errors, Evaluator, Oracle, type LanguageModel, Replay, Scripted, Term, Tools, Value } from "lambdagent"
import { execute } from "lambdagent/mcp"
import { describe, expect, it } from "vitest"
import { agentTerms, observable, tools } from "./fixtures/agentTerms.ts"

const agent = agentTerms({ conversations: true })

/**
 * A model whose answers follow `seed`: texts, route labels, ReAct tool calls and final answers;
 * offered tools natively, often several calls in one answer.
 */
const scripted = (seed: number): LanguageModel.LanguageModelShape => {
  const replies = ["a", "b", '{"tool":"t1","args":"q"}', "done", "a much longer answer than twelve", "HANDOFF b: go"]
  let state = seed
  return Scripted.respond((request) => {
    state = (state * 1103515245 + 12345) % 2147483648
    if (request.tools !== undefined && request.tools.length > 0 && state % 3 !== 0) {
      const toolCalls = Array.from({ length: 1 + (state % 6) }, (_, i) => ({ id: `c${i}`, name: i % 2 === 0 ? "t1" : "t2", arguments: '{"input":"q"}' }))
      return { text: "", toolCalls }
    }
    return replies[state % replies.length]!
  })
}

/** What a run came to: its value, or its error (a failed route or guard is an outcome too). */
type Outcome = { readonly value: Term.Json } | { readonly error: string }

const outcomeOf = (error: unknown): Outcome => {
  if (!Errors.isLambdagentError(error)) throw error
  return { error: `${error._tag}:${(error as { kind?: string }).kind ?? ""}:${error.message}` }
}

/** Run `term` on a scripted model, counting the calls the model and the tools really answer. */
const runOn = async (term: Term.Term, seed: number) => {
  const model = scripted(seed)
  const calls = { llm: 0, tool: 0 }
  const counted: LanguageModel.LanguageModelShape = { ...model, chat: (request) => (calls.llm++, model.chat(request)) }
  const countedTools = tools.map((t) => ({ ...t, run: (input: string, context: Tools.ToolContext) => (calls.tool++, t.run(input, context)) }))
  const runtime = createRuntime({ model: counted, tools: countedTools, trace: "agent" })
  try {
    const result = await runtime.run(term, "go", { budget: { llmCalls: 1000, toolCalls: 1000 } })
    return { calls, outcome: { value: result.result } as Outcome, trace: result.trace, steps: result.stats.steps }
  } catch (error) {
    return { calls, outcome: outcomeOf(error), trace: (error as { trace?: ReadonlyArray<unknown> }).trace ?? [], steps: -1 }
  } finally {
    await runtime.close()
  }
}

describe("semantics (properties)", () => {
  it("no run makes more LLM or tool calls than the static bounds say", async () => {
    await fc.assert(
      fc.asyncProperty(agent, fc.nat(1000), async (term, seed) => {
        const bounds = Term.bounds(term)
        const { calls } = await runOn(term, seed)
        expect(calls.llm).toBeLessThanOrEqual(bounds.llmCalls)
        expect(calls.tool).toBeLessThanOrEqual(bounds.toolCalls)
      }),
      { numRuns: 300 }
    )
  })

  it("a run is determined by its term, its input and the oracles' answers", async () => {
    await fc.assert(
      fc.asyncProperty(agent, fc.nat(1000), async (term, seed) => {
        const first = await runOn(term, seed)
        const second = await runOn(term, seed)
        expect(second.outcome).toEqual(first.outcome)
        expect(second.steps).toBe(first.steps)
        expect(second.calls).toEqual(first.calls)
        expect(observable(second.trace)).toEqual(observable(first.trace))
      }),
      { numRuns: 100 }
    )
  })

  /** Pure terms that terminate or run out of steps: self-free arithmetic, lists, folds and loops. */
  const { pure } = fc.letrec<{ pure: Term.Term }>((tie) => {
    const p = () => tie("pure")
    return {
      pure: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.integer({ min: -50, max: 50 }).map(Term.lit),
        fc.tuple(fc.constantFrom<Term.BinaryOp>("add", "sub", "mul", "eq", "lt"), p(), p()).map(([op, l, r]) => Term.binary(op, l, r)),
        fc.tuple(p(), p(), p()).map(([c, t, e]) => Term.if(Term.lt(c, Term.lit(0)), t, e)),
        fc
          .array(p(), { maxLength: 4 })
          .map((items) => Term.fold(Term.lam("q", Term.add(Term.fst(Term.var("q")), Term.snd(Term.var("q")))), Term.lit(0), Term.list(items))),
        fc.tuple(p(), fc.nat(30)).map(([body, max]) => Term.app(Term.loop({ body: Term.lam("n", Term.add(Term.var("n"), Term.lit(1))), max }), body)),
        p().map((body) => Term.app(Term.lam("y", Term.mul(Term.var("y"), Term.var("y"))), body))
      )
    }
  })

  /** A pure evaluation's outcome and the steps it took (the steps counted when it stopped, for errors). */
  const evaluated = (term: Term.Term, steps?: number) => {
    try {
      const result = Evaluator.evaluateDetailed(term, steps === undefined ? {} : { budget: { steps } })
      return { outcome: { value: Value.toJson(result.value) } as Outcome, steps: result.steps, exhausted: false }
    } catch (error) {
      const exhausted = error instanceof Errors.BudgetExceeded && error.budget === "steps"
      return { outcome: outcomeOf(error), steps: (error as { steps: number }).steps, exhausted }
    }
  }

  it("budgets are monotone: more steps never change an outcome, fewer never rescue a run that ran out", () => {
    fc.assert(
      fc.property(pure, fc.integer({ min: 1, max: 400 }), (term, steps) => {
        const full = evaluated(term)
        const limited = evaluated(term, steps)
        if (limited.exhausted) {
          expect(full.steps).toBeGreaterThan(steps)
          expect(evaluated(term, Math.max(1, steps - 1)).exhausted).toBe(true)
        } else {
          expect(limited.outcome).toEqual(full.outcome)
          expect(limited.steps).toBe(full.steps)
        }
      }),
      { numRuns: 500 }
    )
  })

  it("a par of pure branches equals their results in sequence", async () => {
    const branch = pure.map((body) => Term.lam("z", body))
    await fc.assert(
      fc.asyncProperty(fc.array(branch, { minLength: 1, maxLength: 4 }), async (branches) => {
        const runtime = createRuntime()
        try {
          const parallel: Outcome = await runtime.run(Term.par(branches, Term.lam("xs", Term.var("xs"))), 0).then((r) => ({ value: r.result }), outcomeOf)
          // in sequence: each branch's outcome; the par fails with the first branch that fails
          const each = branches.map((b) => evaluated(Term.app(b, Term.lit(0))).outcome)
          const failed = each.find((o) => "error" in o)
          const sequence: Outcome = failed ?? { value: each.map((o) => (o as { value: Term.Json }).value) }
          expect(Object.hasOwn(parallel, "error")).toBe(Object.hasOwn(sequence, "error"))
          if ("value" in sequence) expect(parallel).toEqual(sequence)
        } finally {
          await runtime.close()
        }
      }),
      { numRuns: 100 }
    )
  })

  it("a request is a value: every request of a run reads the same once the run has ended as when it was answered", async () => {
    await fc.assert(
      fc.asyncProperty(agent, fc.nat(1000), async (term, seed) => {
        let state = seed
        const next = () => (state = (state * 1103515245 + 12345) % 2147483648)
        const replies = ["a", "b", '{"tool":"t1","args":"q"}', "done", "HANDOFF b: go"]
        const kept: Array<{ readonly request: Oracle.Request; readonly json: string }> = []
        const handlers: Driver.Handlers<never, never> = {
          llm: (request) =>
            Effect.sync(() =>
              request.toolCalling !== undefined && next() % 2 === 0
                ? Oracle.toolCallAnswer("", [{ id: "c0", name: "t1", arguments: '{"input":"q"}' }])
                : replies[next() % replies.length]!
            ),
          tool: (request) => Effect.succeed(`ok ${Value.toText(request.input)}`),
          memory: (request) => Effect.succeed(request.kind === "memory-read" ? request.input : request.output),
          answered: (request) => {
            kept.push({ request, json: JSON.stringify(Replay.requestOf(request)) })
          }
        }
        const exec = Evaluator.startApply(term, "go", { budget: { llmCalls: 1000, toolCalls: 1000 } })
        await Effect.runPromise(Effect.exit(Driver.drive(exec, handlers)))
        for (const { request, json } of kept) expect(JSON.stringify(Replay.requestOf(request))).toBe(json)
      }),
      { numRuns: 300 }
    )
  })

  it("an oracle's answer becomes the same value in an agent run and on the MCP server", async () => {
    const answers = fc.oneof(
      fc.integer(),
      fc.double({ noNaN: false }),
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
      fc.string(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.oneof(fc.integer(), fc.string(), fc.double())),
      fc.dictionary(fc.string(), fc.integer())
    )
    await fc.assert(
      fc.asyncProperty(answers, async (answer) => {
        const runtime = createRuntime({ tools: [Tools.define({ name: "host", description: "h", run: () => answer })] })
        try {
          const viaAgent = (await runtime.run(Term.tool("host"), "q")).value
          const viaServer = (
            await execute({
              code: Term.tool("host"),
              input: "q",
              tools: new Map(),
              budget: {},
              policy: { tools: ["host"] },
              oracle: () => answer
            })
          ).value
          expect(Value.toJson(viaServer)).toEqual(Value.toJson(viaAgent))
          expect(Value.toJson(viaAgent)).toEqual(Value.toJson(Oracle.toValue(answer)))
        } finally {
          await runtime.close()
        }
      }),
      { numRuns: 200 }
    )
  })
})
