/**
 * Durable runs on the cluster (`lambdagent/cluster`), beside a baseline from the same run:
 * - RUNS short runs (a scripted model, 3 oracle calls each; default 1,000, `CLUSTER_BENCH_RUNS`)
 *   submitted at once to 1, 2 and 3 runner processes (the built CLI) sharing PostgreSQL
 *   (`LAMBDAGENT_PG_URL`, default the test database): throughput, and p50/p99 latency from submit
 *   to result (as a client sees it: `result --wait` polls every 100 ms);
 * - the baseline: the same runs in this process with `createRuntime`; the per-run overhead is the
 *   difference of the mean times per run;
 * - cold: the first run's latency on a freshly started cluster.
 * Every process shares this machine's cores with PostgreSQL: see docs/cluster.md for what changes
 * on separate machines.
 */
import type { ChildProcess } from "node:child_process"
import { fileURLToPath } from "node:url"
import { createRuntime, Term } from "lambdagent"
import { connect } from "lambdagent/cluster"
import { dropTables, startRunnerProcess } from "../plugins/cluster/test-support.ts"
import { fmt, stopChildren, table } from "./harness.ts"

const RUNS = Number(process.env.CLUSTER_BENCH_RUNS ?? 1000)
const pg = process.env.LAMBDAGENT_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const cli = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url))
const agent = Term.compose([
  Term.llm({ system: "one", conversation: false }),
  Term.llm({ system: "two", conversation: false }),
  Term.llm({ system: "three", conversation: false })
])

const startRunner = async (prefix: string): Promise<ChildProcess> => (await startRunnerProcess(cli, ["--pg", pg, "--prefix", prefix])).child

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!

const throughCluster = async (runners: number) => {
  const prefix = `lgbench_${runners}_${Date.now().toString(36)}`
  const children: Array<ChildProcess> = []
  for (let i = 0; i < runners; i++) children.push(await startRunner(prefix))
  const client = await connect({ pg, prefix, role: "client" })
  try {
    const coldStart = performance.now()
    const { id } = await client.submit(agent, "cold")
    await client.result(id, { wait: true })
    const cold = performance.now() - coldStart
    const latencies: Array<number> = []
    const started = performance.now()
    await Promise.all(
      Array.from({ length: RUNS }, async (_, i) => {
        const submitted = performance.now()
        const { id } = await client.submit(agent, `input ${i}`)
        const ended = await client.result(id, { wait: true })
        if (ended.state !== "done") throw new Error(`run ${id} ended ${ended.state}`)
        latencies.push(performance.now() - submitted)
      })
    )
    const wall = performance.now() - started
    latencies.sort((a, b) => a - b)
    return { wall, cold, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
  } finally {
    await client.close()
    await stopChildren(children)
    await dropTables(pg, [prefix])
  }
}

export const run = async (): Promise<void> => {
  const runtime = createRuntime({})
  const baselineStart = performance.now()
  await Promise.all(Array.from({ length: RUNS }, (_, i) => runtime.run(agent, `input ${i}`)))
  const baseline = performance.now() - baselineStart
  await runtime.close()
  const rows: Array<Array<string>> = [["in-process createRuntime (baseline)", fmt(RUNS / (baseline / 1000), 0), "-", "-", "-", "-"]]
  for (const runners of [1, 2, 3]) {
    const r = await throughCluster(runners)
    rows.push([
      `${runners} runner${runners === 1 ? "" : "s"}`,
      fmt(RUNS / (r.wall / 1000), 0),
      fmt(r.p50, 0),
      fmt(r.p99, 0),
      fmt((r.wall - baseline) / RUNS, 2),
      fmt(r.cold, 0)
    ])
  }
  table(`${RUNS} runs of 3 scripted model calls each, submitted at once`, ["", "runs/s", "p50 ms", "p99 ms", "overhead ms/run", "cold ms"], rows)
}
