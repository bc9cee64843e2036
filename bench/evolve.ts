/**
 * `evolve` as the registry grows: 10,000 distinct tools, then 1,000 versions of one tool, on the
 * JSON file store (journal) and in memory, through `createLambdaServer().callTool`. Each figure is
 * next to the whole-file save the store did before (a baseline store without `append`), measured
 * in the same run on the first 1,000 tools, where it is still bearable.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createLambdaServer, jsonFileStore, type ToolRegistryStore } from "lambdagent/mcp"
import { fmt, table } from "./harness.ts"

const TOOLS = 10_000
const VERSIONS = 1_000
const BASELINE_TOOLS = 1_000

const square = { lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } }

/** Time `count` evolves; the mean of the first and the last tenth shows whether the cost grows. */
const evolveMany = async (store: string | ToolRegistryStore, count: number, name: (i: number) => string) => {
  const server = await createLambdaServer({ store })
  const times: Array<number> = []
  try {
    for (let i = 0; i < count; i++) {
      const started = performance.now()
      const result = await server.callTool("evolve", { name: name(i), description: `tool ${i}`, code: square })
      times.push(performance.now() - started)
      if (result.isError === true) throw new Error(`evolve ${i} failed: ${JSON.stringify(result.content)}`)
    }
  } finally {
    await server.close()
  }
  const tenth = Math.max(1, Math.floor(count / 10))
  const mean = (xs: Array<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
  return {
    totalMs: times.reduce((a, b) => a + b, 0),
    coldMs: times[0]!,
    firstMs: mean(times.slice(0, tenth)),
    lastMs: mean(times.slice(-tenth))
  }
}

/** The JSON file store as it was: every evolve rewrites the whole file. */
const wholeFileStore = (path: string): ToolRegistryStore => {
  const { append: _append, ...store } = jsonFileStore(path)
  return store
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-bench-evolve-"))
  try {
    const rows: Array<Array<string>> = []
    const row = (label: string, r: { totalMs: number; coldMs: number; firstMs: number; lastMs: number }, count: number) =>
      rows.push([
        label,
        fmt(r.totalMs / 1000, 2),
        fmt(r.coldMs * 1000, 0),
        fmt((r.totalMs / count) * 1000, 0),
        fmt(r.firstMs * 1000, 0),
        fmt(r.lastMs * 1000, 0)
      ])
    row(
      `baseline: whole-file save, ${fmt(BASELINE_TOOLS, 0)} tools`,
      await evolveMany(wholeFileStore(join(dir, "whole.json")), BASELINE_TOOLS, (i) => `t${i}`),
      BASELINE_TOOLS
    )
    row(`journal: ${fmt(BASELINE_TOOLS, 0)} tools (same run)`, await evolveMany(join(dir, "small.json"), BASELINE_TOOLS, (i) => `t${i}`), BASELINE_TOOLS)
    row(`journal: ${fmt(TOOLS, 0)} tools`, await evolveMany(join(dir, "tools.json"), TOOLS, (i) => `t${i}`), TOOLS)
    row(`journal: ${fmt(VERSIONS, 0)} versions of one tool`, await evolveMany(join(dir, "versions.json"), VERSIONS, () => "square"), VERSIONS)
    row(`memory: ${fmt(TOOLS, 0)} tools`, await evolveMany(":memory:", TOOLS, (i) => `t${i}`), TOOLS)
    table(
      "evolve as the registry grows (each evolve flushed to disk before it answers; cold: a new server's first evolve; first/last: mean of the first and last tenth)",
      ["workload", "total s", "cold µs", "µs per evolve", "first tenth µs", "last tenth µs"],
      rows
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
