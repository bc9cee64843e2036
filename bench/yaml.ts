/**
 * YAML configs: compile + lint of a ReAct config in process, and the wall time of `lambdagent lint`.
 */
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { lint, loadConfig, maxSourceBytes } from "lambdagent/yaml"
import { parseDocument } from "yaml"
import { fmt, measure, table } from "./harness.ts"

const config = fileURLToPath(new URL("../examples/agents/react.yml", import.meta.url))
const cli = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url))

export async function run(): Promise<void> {
  const text = readFileSync(config, "utf8")
  const firstStarted = performance.now()
  loadConfig({ text, file: config })
  lint({ text, file: config })
  const firstCompileLint = performance.now() - firstStarted
  const compileLint = measure(
    () => {
      for (let i = 0; i < 1000; i++) {
        loadConfig({ text, file: config })
        lint({ text, file: config })
      }
    },
    5,
    1
  )
  // interleaved, so the machine's load falls on every command alike
  const commands = {
    floor: ["-e", "0"],
    lint: [cli, "lint", config],
    fullCli: [cli, "version"]
  }
  const wall: Record<keyof typeof commands, Array<number>> = { floor: [], lint: [], fullCli: [] }
  for (let i = 0; i < 11; i++) {
    for (const [name, args] of Object.entries(commands) as Array<[keyof typeof commands, Array<string>]>) {
      const started = performance.now()
      const r = spawnSync(process.execPath, args, { encoding: "utf8" })
      wall[name].push(performance.now() - started)
      if (r.status !== 0) throw new Error(`${name} failed: ${r.stderr}`)
    }
  }
  const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  // a router with many routes: the time per route should not grow with their number
  const routerOf = (n: number) => {
    const names = Array.from({ length: n }, (_, i) => `c${i}`)
    return (
      `type: router\nrouter:\n  classifier:\n    prompt: pick\n    categories: [${names.join(", ")}]\n  routes:\n` +
      names.map((c, i) => `    ${c}: Answer ${i}.\n`).join("") +
      "  default: Sorry.\n"
    )
  }
  // 30,000 routes is about the largest router a file may hold (maxSourceBytes, 1 MiB)
  const routers = [2_000, 8_000, 30_000].map((n) => {
    const source = routerOf(n)
    if (source.length > maxSourceBytes) throw new Error(`the router with ${n} routes is over maxSourceBytes`)
    const parser = measure(() => parseDocument(source, { uniqueKeys: false, version: "1.2" }).toJS(), 3, 1)
    const m = measure(() => loadConfig({ text: source }), 3, 1)
    return [
      `compile of a router with ${fmt(n, 0)} routes (${fmt(source.length / 1e6, 2)} MB, median of 3)`,
      fmt(parser.medianMs, 1),
      fmt(m.medianMs, 1),
      fmt((m.medianMs / n) * 1000, 1)
    ]
  })
  table(
    "YAML compile + lint (reference Python: ~3.2 ms per compile+lint, ~125 ms per CLI lint)",
    ["workload", "ms"],
    [
      ["compile + lint of react.yml, the first in this process (cold)", fmt(firstCompileLint, 3)],
      ["compile + lint of react.yml, per config (warm: 1,000 in process, median of 5)", fmt(compileLint.medianMs / 1000, 3)],
      ["lambdagent lint react.yml, wall time of a fresh process (cold; median of 11)", fmt(median(wall.lint), 1)],
      ["  node -e 0 in the same run (start-up floor)", fmt(median(wall.floor), 1)],
      ["  lambdagent version in the same run (the full CLI's start-up)", fmt(median(wall.fullCli), 1)]
    ]
  )
  table(
    "YAML compile as routes grow (linear: µs per route stays flat; the YAML parser alone, parseDocument + toJS, is the floor)",
    ["workload", "parser ms", "compile ms", "µs per route"],
    routers
  )
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
