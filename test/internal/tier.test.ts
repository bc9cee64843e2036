/**
 * The compiled tier against the machine: random pure terms run on both must give the same
 * values, the same errors (kind, message, path) and the same step counts.
 */
import fc from "fast-check"
import { Errors, Evaluator, Term, Value } from "lambdagent"
import { afterEach, describe, expect, it } from "vitest"
import { compile } from "../../src/internal/compile.ts"
import * as Tier from "../../src/internal/tier.ts"
import { sourceOf } from "../../src/internal/tierSource.ts"

const T = Term

/** Names a term may use, hostile ones included: the tier must treat them as data. */
const names = ["x", "p", "acc", '"); process.exit(1); //', "${globalThis}", "\u2028\\n`"]

const intLit = fc.oneof(fc.integer({ min: -3, max: 12 }), fc.constantFrom(2 ** 53 - 1, -(2 ** 53) + 1, 2 ** 62, 2n ** 63n - 1n, -(2n ** 63n)))
const literal = fc.oneof(
  intLit.map((n) => T.lit(n)),
  fc.constantFrom(
    T.lit(true),
    T.lit(false),
    T.lit(null),
    T.lit("ab"),
    T.lit(" A b "),
    T.lit('{"k":[1,2]}'),
    T.lit("</script>\"'`"),
    T.lit(" 12\n"),
    T.lit("1e3"),
    T.lit("nan"),
    T.lit("-0.5")
  )
)

const binaryOps: ReadonlyArray<Term.BinaryOp> = [
  "add",
  "sub",
  "mul",
  "div",
  "mod",
  "eq",
  "lt",
  "gt",
  "lte",
  "gte",
  "and",
  "or",
  "concat",
  "contains",
  "get",
  "compareNumbers"
]
const unaryOps: ReadonlyArray<Term.UnaryOp> = ["not", "head", "tail", "isEmpty", "length", "fst", "snd", "trim", "upper", "isJson", "toInt", "toFloat"]

/** Pure terms: the calculus, operators, lists, pairs, folds, `self`, `continue` and `code_of`. */
const { term } = fc.letrec<{ term: Term.Term }>((tie) => ({
  term: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    literal,
    fc.constantFrom(...names).map((n) => T.var(n)),
    fc.constantFrom(T.self, T.codeOf("tool"), T.codeOf("self"), T.codeOf("missing"), T.list([])),
    fc.tuple(fc.constantFrom(...names), tie("term")).map(([n, body]) => T.lam(n, body)),
    fc.tuple(tie("term"), tie("term")).map(([f, a]) => T.app(f, a)),
    fc.tuple(fc.constantFrom(...binaryOps), tie("term"), tie("term")).map(([op, a, b]) => T.binary(op, a, b)),
    fc.tuple(fc.constantFrom(...unaryOps), tie("term")).map(([op, a]) => T.unary(op, a)),
    fc.tuple(tie("term"), tie("term"), tie("term")).map(([c, a, b]) => T.if(c, a, b)),
    fc.tuple(tie("term"), tie("term")).map(([a, b]) => T.cons(a, b)),
    fc.tuple(tie("term"), tie("term")).map(([a, b]) => T.pair(a, b)),
    fc.array(tie("term"), { minLength: 1, maxLength: 3 }).map((items) => T.list(items)),
    fc.tuple(tie("term"), tie("term"), tie("term")).map(([f, z, xs]) => T.fold(f, z, xs)),
    tie("term").map((a) => T.continue(a)),
    // recursion through `self`, bounded by the input when it is a small integer
    fc
      .tuple(fc.constantFrom(...names), tie("term"))
      .map(([n, base]) =>
        T.lam(n, T.if(T.binary("lt", T.var(n), T.lit(1)), base, T.binary("add", T.var(n), T.app(T.self, T.binary("sub", T.var(n), T.lit(1))))))
      )
  )
}))

const input = fc.oneof(fc.integer({ min: -2, max: 30 }), fc.constantFrom([1, 2, 3], [], "text", '{"a":1}', true))

/** What a run came to, everything a user can observe of it. */
const outcome = (run: () => Evaluator.Result): unknown => {
  try {
    const r = run()
    return { value: Value.toJson(r.value), steps: r.steps, trace: r.trace }
  } catch (error) {
    if (!Errors.isLambdagentError(error)) throw error
    const { _tag, message } = error
    const e = error as unknown as { kind?: string; path?: unknown; steps?: number; budget?: string; trace?: unknown }
    return { _tag, message, kind: e.kind, path: e.path, steps: e.steps, budget: e.budget, trace: e.trace }
  }
}

/** The same run on the machine alone and on each way the tier compiles (they must agree). */
const both = (run: () => Evaluator.Result): [unknown, unknown] => {
  Tier.setMode("off")
  const machine = outcome(run)
  Tier.setMode("closures")
  const closures = outcome(run)
  Tier.setMode("source")
  // a term runs on generated functions from its second run on
  outcome(run)
  const source = outcome(run)
  expect(closures).toEqual(source)
  return [machine, source]
}

afterEach(() => Tier.setMode("source"))

describe("compiled tier", () => {
  it("gives the machine's values, errors and steps on random pure terms", () => {
    let tiered = 0
    fc.assert(
      fc.property(term, input, fc.integer({ min: 1, max: 400 }), fc.constantFrom<"off" | "agent">("off", "agent"), (code, json, steps, trace) => {
        if (Tier.tierOf(compile(code, undefined)) !== undefined) tiered++
        const options = { tool: "tool", tools: { tool: code }, budget: { steps }, trace }
        const [machine, tier] = both(() => Evaluator.run(code, json, options))
        expect(tier).toEqual(machine)
      }),
      { numRuns: 1500 }
    )
    // the property is about the tier: most terms must have run on it
    expect(tiered).toBeGreaterThan(1000)
  })

  it("gives the machine's depth errors under a small depth budget", () => {
    fc.assert(
      fc.property(term, fc.integer({ min: 0, max: 40 }), fc.integer({ min: 2, max: 60 }), (code, n, depth) => {
        const options = { tool: "tool", tools: { tool: code }, budget: { depth } }
        const [machine, tier] = both(() => Evaluator.run(code, n, options))
        expect(tier).toEqual(machine)
      }),
      { numRuns: 300 }
    )
  })

  it("hands recursion deeper than the JavaScript stack to the machine", () => {
    const sum = T.lam(
      "n",
      T.if(T.binary("lt", T.var("n"), T.lit(1)), T.lit(0), T.binary("add", T.var("n"), T.app(T.self, T.binary("sub", T.var("n"), T.lit(1)))))
    )
    const [machine, tier] = both(() => Evaluator.runTool("sum", 200_000, { tools: { sum }, budget: { steps: 100_000_000 } }))
    expect(tier).toEqual(machine)
    expect((tier as { value: unknown }).value).toBe((200_000 * 200_001) / 2)
  })

  it("reports integer overflow where the machine does", () => {
    const factorial = T.lam(
      "n",
      T.if(T.binary("lt", T.var("n"), T.lit(1)), T.lit(1), T.binary("mul", T.var("n"), T.app(T.self, T.binary("sub", T.var("n"), T.lit(1)))))
    )
    const [machine, tier] = both(() => Evaluator.runTool("factorial", 40, { tools: { factorial } }))
    expect(tier).toEqual(machine)
    expect(tier).toMatchObject({ _tag: "EvalError", kind: "Overflow" })
  })

  it("holds the time budget", () => {
    const pairSum = T.lam("p", T.binary("add", T.unary("fst", T.var("p")), T.unary("snd", T.var("p"))))
    const nested = T.lam("xs", T.fold(T.lam("p", T.fold(pairSum, T.unary("fst", T.var("p")), T.var("xs"))), T.lit(0), T.var("xs")))
    expect(Tier.tierOf(compile(nested, undefined))).toBeDefined()
    const xs = Array.from({ length: 5_000 }, (_, i) => i)
    expect(outcome(() => Evaluator.run(nested, xs, { budget: { timeMs: 20, steps: 1e12 } }))).toMatchObject({ _tag: "BudgetExceeded", budget: "time" })
  })

  it("counts a fold's steps as the machine does", () => {
    const sum = T.lam("xs", T.fold(T.lam("p", T.binary("add", T.unary("fst", T.var("p")), T.unary("snd", T.var("p")))), T.lit(0), T.var("xs")))
    const xs = Array.from({ length: 50_000 }, (_, i) => i)
    const [machine, tier] = both(() => Evaluator.run(sum, xs))
    expect(tier).toEqual(machine)
  })

  it("gives the machine's values, errors and steps for a fold whose simple function runs inline in its loop", () => {
    // operators with inline code and without (`eq` when unequal, `mul`), over elements the inline code gives up on
    const leaf = fc.oneof(
      intLit.map((n) => T.lit(n)),
      fc.constantFrom(T.lit(true), T.lit("ab"), T.var("p"), T.var("k"), T.var("xs"), T.self, T.unary("fst", T.var("p")), T.unary("snd", T.var("p")))
    )
    const { body } = fc.letrec<{ body: Term.Term }>((tie) => ({
      body: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        leaf,
        fc
          .tuple(fc.constantFrom<Term.BinaryOp>("add", "sub", "lt", "gte", "and", "or", "eq", "mul"), tie("body"), tie("body"))
          .map(([op, a, b]) => T.binary(op, a, b)),
        fc.tuple(fc.constantFrom<Term.UnaryOp>("fst", "snd"), tie("body")).map(([op, a]) => T.unary(op, a))
      )
    }))
    // sums and differences of the pair's parts, the shapes that keep the accumulator a number
    const operand = fc.oneof(
      fc.constantFrom(T.unary("fst", T.var("p")), T.unary("snd", T.var("p")), T.var("k")),
      intLit.map((n) => T.lit(n)),
      body
    )
    const fn = fc.oneof(
      body,
      fc.tuple(fc.constantFrom<Term.BinaryOp>("add", "sub"), operand, operand).map(([op, a, b]) => T.binary(op, a, b))
    )
    const element = fc.oneof(
      fc.integer({ min: -5, max: 5 }),
      fc.constantFrom<Term.Json>(2 ** 53 - 1, -(2 ** 53) + 1, true, "ab", { pair: [1, 2] }, { pair: [true, 2 ** 53 - 2] })
    )
    const start = fc.oneof(
      intLit.map((n) => T.lit(n)),
      fc.constantFrom(T.lit(true), T.pair(T.lit(1), T.lit(2)))
    )
    fc.assert(
      fc.property(
        fn,
        start,
        fc.oneof(fc.array(element, { maxLength: 40 }), fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 40 })),
        fc.integer({ min: 1, max: 400 }),
        fc.boolean(),
        (b, z, xs, steps, asTool) => {
          const code = T.lam("xs", T.app(T.lam("k", T.fold(T.lam("p", b), z, T.var("xs"))), T.lit(3)))
          const options = asTool ? { tool: "tool", tools: { tool: code }, budget: { steps } } : { budget: { steps } }
          const [machine, tier] = both(() => Evaluator.run(code, xs, options))
          expect(tier).toEqual(machine)
        }
      ),
      { numRuns: 1000 }
    )
  })

  it("holds the memory budget as the machine does", () => {
    const copy = T.lam("xs", T.fold(T.lam("p", T.cons(T.unary("snd", T.var("p")), T.unary("fst", T.var("p")))), T.list([]), T.var("xs")))
    const xs = Array.from({ length: 70_000 }, (_, i) => i)
    const [machine, tier] = both(() => Evaluator.run(copy, xs, { budget: { memory: 1024 * 1024 } }))
    expect(tier).toEqual(machine)
    expect(tier).toMatchObject({ _tag: "BudgetExceeded", budget: "memory" })
  })

  it("runs a term inside another's trace listener (the outer run streams its events, so it is the machine's)", () => {
    const count = T.lam("n", T.if(T.binary("lt", T.var("n"), T.lit(1)), T.continue(T.lit("done")), T.app(T.self, T.binary("sub", T.var("n"), T.lit(1)))))
    const sum = T.lam("xs", T.fold(T.lam("p", T.binary("add", T.unary("fst", T.var("p")), T.unary("snd", T.var("p")))), T.lit(0), T.var("xs")))
    const inner: Array<unknown> = []
    const [machine, tier] = both(() => {
      inner.length = 0
      return Evaluator.runTool("count", 3000, { tools: { count }, trace: "agent", onEvent: () => inner.push(Evaluator.run(sum, [1, 2, 3]).value) })
    })
    expect(tier).toEqual(machine)
    expect(inner).toEqual([6])
  })

  it("generates source without any text of the term", () => {
    fc.assert(
      fc.property(term, (code) => {
        let source: string
        try {
          source = sourceOf(compile(code, undefined)).source
        } catch {
          return
        }
        for (const text of [...names.slice(3), "</script>", "A b"]) expect(source).not.toContain(text)
      }),
      { numRuns: 500 }
    )
  })
})
