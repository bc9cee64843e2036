/**
 * The evaluator against plain TypeScript doing the same computation in the same run.
 */
import { Evaluator, Term } from "lambdagent"
import { fmt, measure, table } from "./harness.ts"

const T = Term
const pairSum = T.lam("p", T.add(T.fst(T.var("p")), T.snd(T.var("p"))))
const sumFold = T.lam("xs", T.fold(pairSum, T.lit(0), T.var("xs")))
const fib = T.lam(
  "n",
  T.if(T.lt(T.var("n"), T.lit(2)), T.var("n"), T.add(T.app(T.self, T.sub(T.var("n"), T.lit(1))), T.app(T.self, T.sub(T.var("n"), T.lit(2)))))
)
// Σ over xs of (Σ over ys of y): the inner fold runs |xs|·|ys| times
const nested = T.lam("xs", T.fold(T.lam("p", T.fold(pairSum, T.fst(T.var("p")), T.var("xs"))), T.lit(0), T.var("xs")))
const square = T.lam("x", T.mul(T.var("x"), T.var("x")))

const plainFib = (n: number): number => (n < 2 ? n : plainFib(n - 1) + plainFib(n - 2))

interface Workload {
  readonly name: string
  readonly lambda: () => { steps: number; value: unknown }
  readonly plain: () => unknown
}

export async function run(): Promise<void> {
  const list9k = Array.from({ length: 9_000 }, (_, i) => i)
  const list1m = Array.from({ length: 1_000_000 }, (_, i) => i)
  const list1k = Array.from({ length: 1_000 }, (_, i) => i)
  const tools = { fib, square }
  const workloads: Array<Workload> = [
    {
      name: "fold-sum 9,000 (input list)",
      lambda: () => Evaluator.run(sumFold, list9k),
      plain: () => list9k.reduce((a, b) => a + b, 0)
    },
    {
      name: "fold-sum 1,000,000 (input list)",
      lambda: () => Evaluator.run(sumFold, list1m),
      plain: () => list1m.reduce((a, b) => a + b, 0)
    },
    {
      name: "fib(25), self-recursive",
      lambda: () => Evaluator.runTool("fib", 25, { tools }),
      plain: () => plainFib(25)
    },
    {
      name: "nested folds, 1,000,000 inner",
      lambda: () => Evaluator.run(nested, list1k),
      plain: () => {
        let total = 0
        for (let i = 0; i < 1000; i++) {
          let acc = total
          for (const y of list1k) acc += y
          total = acc
        }
        return total
      }
    },
    {
      name: "1,000 runs of tool square",
      lambda: () => {
        let steps = 0
        let value: unknown
        for (let i = 0; i < 1000; i++) {
          const r = Evaluator.runTool("square", i, { tools })
          steps += r.steps
          value = r.value
        }
        return { steps, value }
      },
      plain: () => {
        let last = 0
        for (let i = 0; i < 1000; i++) last = i * i
        return last
      }
    }
  ]
  const rows = workloads.map((w) => {
    const steps = w.lambda().steps
    const lambda = measure(w.lambda, 7, 2)
    const plain = measure(w.plain, 7, 2)
    return [
      w.name,
      fmt(lambda.medianMs, 2),
      fmt(steps / (lambda.medianMs / 1000) / 1e6, 1),
      fmt(plain.medianMs, 3),
      `${fmt(lambda.medianMs / Math.max(plain.medianMs, 0.001), 0)}×`
    ]
  })
  table(
    "Evaluator vs plain TypeScript (median of 7 runs; reference Haskell: fib(25) ≈ 120 ms, nested folds ≈ 320 ms)",
    ["workload", "lambda ms", "Msteps/s", "plain TS ms", "ratio"],
    rows
  )
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
