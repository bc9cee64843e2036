/**
 * The evaluator's step rate with its memory and time accounting (values' sizes counted as they
 * are built, the clock read as often as steps cost) next to the evaluator before it — commit
 * 76bd19e, whose machine read the clock every 65,536 steps and counted no memory — both run from
 * source in this process on the same terms.
 *
 *   npm run bench -- evaluator
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { fmt, measure, table } from "./harness.ts"

/** The last commit before the accounting. */
const BASELINE = "76bd19e"

interface Core {
  readonly Term: { readonly parse: (json: unknown) => unknown; readonly parseText: (text: string) => unknown }
  readonly Evaluator: {
    readonly run: (code: never, input: unknown, options?: object) => { readonly steps: number }
    readonly runTool: (name: string, input: unknown, options: object) => { readonly steps: number }
  }
}

const root = fileURLToPath(new URL("..", import.meta.url))

/** The baseline's `src`, extracted once from git into `bench/.baseline/<commit>` (ignored by git). */
const loadBaseline = async (): Promise<Core | string> => {
  const dir = `${root}bench/.baseline/${BASELINE}`
  if (!existsSync(`${dir}/src/index.ts`)) {
    try {
      mkdirSync(dir, { recursive: true })
      const archive = execFileSync("git", ["-C", root, "archive", BASELINE, "src"], { maxBuffer: 64 * 2 ** 20 })
      execFileSync("tar", ["-x", "-C", dir], { input: archive })
    } catch (error) {
      return `commit ${BASELINE} is not in this checkout's history (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`
    }
  }
  const [Term, Evaluator] = await Promise.all([import(`${dir}/src/Term.ts`), import(`${dir}/src/Evaluator.ts`)])
  return { Term, Evaluator } as Core
}

const loadCurrent = async (): Promise<Core> => {
  const [Term, Evaluator] = await Promise.all([import("../src/Term.ts"), import("../src/Evaluator.ts")])
  return { Term, Evaluator } as unknown as Core
}

const pairSum = { lam: "p", body: { add: [{ fst: { var: "p" } }, { snd: { var: "p" } }] } }
const sumFold = { lam: "xs", body: { fold: [pairSum, 0, { var: "xs" }] } }
const fib = {
  lam: "n",
  body: {
    if: {
      cond: { lt: [{ var: "n" }, 2] },
      then: { var: "n" },
      else: { add: [{ app: { func: { self: true }, arg: { sub: [{ var: "n" }, 1] } } }, { app: { func: { self: true }, arg: { sub: [{ var: "n" }, 2] } } }] }
    }
  }
}
/** Appends "ab" once per list item: every step builds a new string, so memory is counted every step. */
const appendFold = { lam: "xs", body: { length: { fold: [{ lam: "p", body: { concat: [{ fst: { var: "p" } }, "ab"] } }, "", { var: "xs" }] } } }
/** A list of pairs, rebuilt item by item: lists and pairs built every step. */
const pairsFold = {
  lam: "xs",
  body: {
    length: {
      fold: [{ lam: "p", body: { cons: { head: { pair: [{ snd: { var: "p" } }, { snd: { var: "p" } }] }, tail: { fst: { var: "p" } } } } }, [], { var: "xs" }]
    }
  }
}
const deepAdd = (depth: number) => `${'{"add":['.repeat(depth)}1${",1]}".repeat(depth)}`

interface Workload {
  readonly name: string
  readonly run: (core: Core) => { readonly steps: number }
}

const list = (n: number) => Array.from({ length: n }, (_, i) => i)

const workloads = (): ReadonlyArray<Workload> => {
  const list1m = list(1_000_000)
  const list100k = list(100_000)
  const deep = deepAdd(100_000)
  return [
    { name: "fold-sum 1,000,000", run: (c) => c.Evaluator.run(c.Term.parse(sumFold) as never, list1m) },
    { name: "fib(22), self-recursive", run: (c) => c.Evaluator.runTool("fib", 22, { tools: { fib: c.Term.parse(fib) } }) },
    { name: "string append ×100,000", run: (c) => c.Evaluator.run(c.Term.parse(appendFold) as never, list100k) },
    { name: "list of pairs ×100,000", run: (c) => c.Evaluator.run(c.Term.parse(pairsFold) as never, list100k) },
    {
      name: "parse + run a 100,000-deep term",
      run: (c) => c.Evaluator.run(c.Term.parseText(deep) as never, null, { budget: { depth: 1_000_000 } })
    }
  ]
}

/**
 * Runs the benchmark and prints its table: for each workload the first (cold) run and the median
 * of 5 (warm), in ms and million steps per second, for the baseline and for this checkout.
 *
 * @example
 * ```ts
 * import { run } from "./evaluator.ts"
 * await run()
 * ```
 */
export async function run(): Promise<void> {
  const baseline = await loadBaseline()
  const current = await loadCurrent()
  if (typeof baseline === "string") console.log(`baseline skipped: ${baseline}`)
  const rows: Array<Array<string>> = []
  for (const workload of workloads()) {
    const figures = (core: Core) => {
      const start = performance.now()
      const steps = workload.run(core).steps
      const coldMs = performance.now() - start
      const warm = measure(() => workload.run(core), 5, 1)
      return { steps, coldMs, warmMs: warm.medianMs, rate: steps / (warm.medianMs / 1000) / 1e6 }
    }
    // the baseline first, so that neither version runs with the other's warm-up alone
    const before = typeof baseline === "string" ? undefined : figures(baseline)
    const after = figures(current)
    rows.push([
      workload.name,
      fmt(after.steps, 0),
      before === undefined ? "–" : `${fmt(before.coldMs, 0)} / ${fmt(before.warmMs, 1)}`,
      `${fmt(after.coldMs, 0)} / ${fmt(after.warmMs, 1)}`,
      before === undefined ? "–" : fmt(before.rate, 1),
      fmt(after.rate, 1),
      before === undefined ? "–" : `${fmt((after.warmMs / before.warmMs - 1) * 100, 0)}%`
    ])
  }
  table(
    `Evaluator with memory and time accounting vs ${BASELINE} (before it): cold / warm (median of 5) ms`,
    ["workload", "steps", "before ms", "now ms", "before Msteps/s", "now Msteps/s", "time Δ"],
    rows
  )
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
