/**
 * The command line and the HTTP server: wall time of `lambdagent run simple.yml "Hello"` on the
 * scripted model, and POST /run requests per second at concurrency 1 and 8.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { createRuntime, Scripted, Term } from "lambdagent"
import { serve } from "lambdagent/http"
import { fmt, table } from "./harness.ts"

const cli = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url))
const simple = fileURLToPath(new URL("../examples/agents/simple.yml", import.meta.url))

const requestsPerSecond = async (url: string, concurrency: number, total: number): Promise<number> => {
  let sent = 0
  const worker = async () => {
    while (sent < total) {
      sent++
      const response = await fetch(`${url}/run`, { method: "POST", body: '{"input":"Hello"}' })
      if (response.status !== 200) throw new Error(`POST /run: ${response.status}`)
      await response.arrayBuffer()
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, worker))
  return total / ((performance.now() - started) / 1000)
}

export async function run(): Promise<void> {
  const wall: Array<number> = []
  for (let i = 0; i < 7; i++) {
    const started = performance.now()
    const r = spawnSync(process.execPath, [cli, "run", simple, "Hello", "--model", "scripted:echo", "--quiet"], { encoding: "utf8" })
    wall.push(performance.now() - started)
    if (r.stdout !== "Hello\n") throw new Error(`run failed: ${r.stderr}`)
  }
  wall.sort((a, b) => a - b)
  const runtime = createRuntime({ model: Scripted.echo() })
  const server = await serve({ agent: Term.llm({ name: "simple", system: "Summarize." }), runtime, port: 0 })
  await requestsPerSecond(server.url, 4, 200)
  const one = await requestsPerSecond(server.url, 1, 2000)
  const eight = await requestsPerSecond(server.url, 8, 4000)
  await server.close()
  await runtime.close()
  table(
    "CLI and HTTP (scripted model)",
    ["workload", "figure"],
    [
      ['lambdagent run simple.yml "Hello", wall time (median of 7)', `${fmt(wall[3]!, 1)} ms`],
      ["POST /run, concurrency 1", `${fmt(one, 0)} req/s`],
      ["POST /run, concurrency 8", `${fmt(eight, 0)} req/s`]
    ]
  )
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
