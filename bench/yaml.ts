/**
 * YAML configs: compile + lint of a ReAct config in process, and the wall time of `lambdagent lint`.
 */
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { lint, loadConfig } from "lambdagent/yaml"
import { fmt, measure, table } from "./harness.ts"

const config = fileURLToPath(new URL("../examples/agents/react.yml", import.meta.url))
const cli = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url))

export async function run(): Promise<void> {
  const text = readFileSync(config, "utf8")
  const compileLint = measure(() => {
    for (let i = 0; i < 1000; i++) {
      loadConfig({ text, file: config })
      lint({ text, file: config })
    }
  }, 5, 1)
  const wall: Array<number> = []
  for (let i = 0; i < 7; i++) {
    const started = performance.now()
    const r = spawnSync(process.execPath, [cli, "lint", config], { encoding: "utf8" })
    wall.push(performance.now() - started)
    if (r.status !== 0) throw new Error(`lint failed: ${r.stderr}`)
  }
  wall.sort((a, b) => a - b)
  table(
    "YAML compile + lint (reference Python: ~3.2 ms per compile+lint, ~125 ms per CLI lint)",
    ["workload", "ms"],
    [
      ["compile + lint of react.yml, per config (1,000 in process, median of 5)", fmt(compileLint.medianMs / 1000, 3)],
      ["lambdagent lint react.yml, wall time (median of 7)", fmt(wall[3]!, 1)]
    ]
  )
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
