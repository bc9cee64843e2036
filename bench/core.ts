/**
 * The evaluator against plain TypeScript doing the same computation in the same run: the compiled
 * tier (what `Evaluator.run` uses for whole runs of pure code) and the machine alone (what a time
 * slice runs on), each cold (the first run of a term just built) and warm (median of 7 after
 * warm-up). The plain code works on the structure the term is given: a `for` loop over a list
 * value's cells, or over the array of a JSON input; a term given a list value is also set against
 * the same loop over an array of the same numbers, which shows what walking list cells costs.
 */
import { Evaluator, Term, Value } from "lambdagent"
import { fmt, measure, table } from "./harness.ts"

const T = Term
const pairSum = () => T.lam("p", T.add(T.fst(T.var("p")), T.snd(T.var("p"))))
const sumFold = () => T.lam("xs", T.fold(pairSum(), T.lit(0), T.var("xs")))
const fib = () =>
  T.lam("n", T.if(T.lt(T.var("n"), T.lit(2)), T.var("n"), T.add(T.app(T.self, T.sub(T.var("n"), T.lit(1))), T.app(T.self, T.sub(T.var("n"), T.lit(2))))))
// Σ over xs of (Σ over ys of y): the inner fold runs |xs|·|ys| times
const nested = () => T.lam("xs", T.fold(T.lam("p", T.fold(pairSum(), T.fst(T.var("p")), T.var("xs"))), T.lit(0), T.var("xs")))
const square = () => T.lam("x", T.mul(T.var("x"), T.var("x")))

const plainFib = (n: number): number => (n < 2 ? n : plainFib(n - 1) + plainFib(n - 2))

const plainSum = (xs: ReadonlyArray<number>): number => {
  let total = 0
  for (let i = 0; i < xs.length; i++) total += xs[i]!
  return total
}

/** The plain loop over a list value, the structure the term is given (its elements are integers). */
const plainListSum = (xs: Value.List): number => {
  let total = 0
  for (let l = xs; l.length > 0; l = l.tail) total += l.head as number
  return total
}

/** How a run is started; `machine` runs it as one long time slice, which the machine alone serves. */
type Start = (code: Term.Term, input: unknown, options: Evaluator.RunOptions) => Evaluator.Execution

const onTier = (start: Start) => (code: Term.Term, input: unknown, options: Evaluator.RunOptions) => {
  const step = start(code, input, options).next()
  if (step._tag !== "Done") throw new Error("not done")
  return step.value
}
const onMachine = (start: Start) => (code: Term.Term, input: unknown, options: Evaluator.RunOptions) => {
  const step = start(code, input, options).slice(1e9)
  if (step._tag !== "Done") throw new Error("not done")
  return step.value
}

const fromJson: Start = Evaluator.startRun
const fromValue: Start = (code, input, options) => Evaluator.startApply(code, input as Value.Value, options)

interface Workload {
  readonly name: string
  /** A fresh term (so that its first run is cold) and how it runs. */
  readonly make: () => Term.Term
  readonly input: unknown
  readonly start: Start
  readonly options?: (code: Term.Term) => Evaluator.RunOptions
  /** Runs of the term in one sample. */
  readonly repeat?: number
  /** Plain TypeScript doing the same computation on the structure the term is given. */
  readonly plain: () => unknown
  /** The same loop over a JavaScript array, when the term is given a list value (what the list itself costs). */
  readonly array?: () => unknown
}

const asTool = (code: Term.Term): Evaluator.RunOptions => ({ tool: "f", tools: { f: code } })

export async function run(): Promise<void> {
  const list1k = Array.from({ length: 1_000 }, (_, i) => i)
  const list1m = Array.from({ length: 1_000_000 }, (_, i) => i)
  const value1k = Value.fromArray(list1k)
  const value1m = Value.fromArray(list1m)
  const nestedOver = (sum: () => number) => () => {
    let total = 0
    for (let i = 0; i < 1000; i++) total += sum()
    return total
  }
  const workloads: Array<Workload> = [
    {
      name: "fold-sum 1,000 (list value)",
      make: sumFold,
      input: value1k,
      start: fromValue,
      plain: () => plainListSum(value1k),
      array: () => plainSum(list1k)
    },
    {
      name: "fold-sum 1,000,000 (list value)",
      make: sumFold,
      input: value1m,
      start: fromValue,
      plain: () => plainListSum(value1m),
      array: () => plainSum(list1m)
    },
    { name: "fold-sum 1,000,000 (JSON array input)", make: sumFold, input: list1m, start: fromJson, plain: () => plainSum(list1m) },
    { name: "fib(25), self-recursive", make: fib, input: 25, start: fromValue, options: asTool, plain: () => plainFib(25) },
    {
      name: "nested folds, 1,000,000 inner",
      make: nested,
      input: value1k,
      start: fromValue,
      plain: nestedOver(() => plainListSum(value1k)),
      array: nestedOver(() => plainSum(list1k))
    },
    {
      name: "1,000 runs of tool square",
      make: square,
      input: 7,
      start: fromValue,
      options: asTool,
      repeat: 1000,
      plain: () => {
        let last = 0
        for (let i = 0; i < 1000; i++) last = i * i
        return last
      }
    }
  ]
  const rows = workloads.map((w) => {
    const timed = (runner: (s: Start) => (c: Term.Term, i: unknown, o: Evaluator.RunOptions) => unknown, code: Term.Term) => {
      const go = runner(w.start)
      const options = w.options?.(code) ?? {}
      const repeat = w.repeat ?? 1
      return () => {
        let value: unknown
        for (let i = 0; i < repeat; i++) value = go(code, w.input, options)
        return value
      }
    }
    const cold = (runner: typeof onTier) => {
      const once = timed(runner, w.make())
      const start = performance.now()
      once()
      return performance.now() - start
    }
    const tierCold = cold(onTier)
    const machineCold = cold(onMachine)
    const code = w.make()
    const tier = measure(timed(onTier, code), 7, 2)
    const machine = measure(timed(onMachine, code), 7, 2)
    const plain = measure(w.plain, 7, 2)
    const array = w.array === undefined ? undefined : measure(w.array, 7, 2)
    const ratio = (ms: number, base = plain.medianMs) => `${fmt(ms / Math.max(base, 0.0001), 1)}×`
    return [
      w.name,
      fmt(plain.medianMs, 3),
      array === undefined ? "" : fmt(array.medianMs, 3),
      array === undefined ? "" : ratio(tier.medianMs, array.medianMs),
      fmt(tierCold, 2),
      fmt(tier.medianMs, 3),
      ratio(tier.medianMs),
      fmt(machineCold, 2),
      fmt(machine.medianMs, 3),
      ratio(machine.medianMs)
    ]
  })
  table(
    "Evaluator vs plain TypeScript, ms (cold: first run of a fresh term; warm: median of 7 after warm-up; reference Haskell: fib(25) ≈ 120 ms, nested folds ≈ 320 ms)",
    ["workload", "plain TS warm", "array loop warm", "tier/array", "tier cold", "tier warm", "tier/plain", "machine cold", "machine warm", "machine/plain"],
    rows
  )
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
