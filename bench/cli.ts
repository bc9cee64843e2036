/**
 * The command line and the HTTP server: start-up of `lambdagent version`, `lint react.yml` and `mcp`
 * (spawn to its answer to `initialize`) beside `node -e 0` and the MCP SDK's echo server, cold and
 * warm; wall time of `lambdagent run simple.yml "Hello"` on the scripted model; and POST /run
 * requests per second at concurrency 1 and 8.
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { createRuntime, Scripted, Term } from "lambdagent"
import { serve } from "lambdagent/http"
import { fmt, table } from "./harness.ts"

const cli = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url))
const simple = fileURLToPath(new URL("../examples/agents/simple.yml", import.meta.url))
const react = fileURLToPath(new URL("../examples/agents/react.yml", import.meta.url))
const echoServer = fileURLToPath(new URL("./fixtures/echo-server.mjs", import.meta.url))
const ROUNDS = 15

const INITIALIZE = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1.0.0" } }
})}\n`

/** A process to start: runs to its end, or (an MCP server) until its first line on standard output. */
interface Start {
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly mcp?: true
}

const starts: ReadonlyArray<Start> = [
  { name: "node -e 0 (floor)", args: ["-e", "0"] },
  { name: "lambdagent version", args: [cli, "version"] },
  { name: "lambdagent lint react.yml", args: [cli, "lint", react] },
  { name: "MCP SDK echo server: spawn → initialize answered (floor)", args: [echoServer], mcp: true },
  { name: "lambdagent mcp: spawn → initialize answered", args: [cli, "mcp", "--store", ":memory:"], mcp: true }
]

/** Milliseconds from spawn to exit (a command) or to the answer to `initialize` (an MCP server). */
const startOnce = async (start: Start, cacheDir: string): Promise<number> => {
  const env = { ...process.env, NODE_COMPILE_CACHE: cacheDir }
  const started = performance.now()
  if (start.mcp === undefined) {
    const r = spawnSync(process.execPath, [...start.args], { encoding: "utf8", env })
    const ms = performance.now() - started
    if (r.status !== 0) throw new Error(`${start.name} failed: ${r.stderr}`)
    return ms
  }
  const child = spawn(process.execPath, [...start.args], { stdio: ["pipe", "pipe", "ignore"], env })
  child.stdin.write(INITIALIZE)
  const ms = await new Promise<number>((resolve, reject) => {
    child.stdout.once("data", () => resolve(performance.now() - started))
    child.once("exit", (code) => reject(new Error(`${start.name} exited with ${code} before answering`)))
  })
  child.stdin.end()
  await new Promise((resolve) => child.once("close", resolve))
  return ms
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/**
 * Start-up, cold and warm. Cold: the first start with an empty compile cache (as after an install);
 * warm: the median of ${ROUNDS} starts once the cache holds the program. The processes take turns
 * round by round, so the machine's load falls on all of them alike.
 */
const startUp = async (): Promise<void> => {
  const dirs: Array<string> = []
  const freshCache = () => {
    const dir = mkdtempSync(join(tmpdir(), "lambdagent-bench-cache-"))
    dirs.push(dir)
    return dir
  }
  try {
    const cold = new Map<Start, number>()
    for (const start of starts) cold.set(start, await startOnce(start, freshCache()))
    const shared = freshCache()
    for (const start of starts) await startOnce(start, shared)
    const warm = new Map<Start, Array<number>>(starts.map((s) => [s, []]))
    for (let round = 0; round < ROUNDS; round++) {
      for (const start of starts) warm.get(start)!.push(await startOnce(start, shared))
    }
    const floor = median(warm.get(starts[0]!)!)
    table(
      `Start-up, wall ms (cold: first start with an empty compile cache; warm: median of ${ROUNDS} interleaved starts)`,
      ["process", "cold", "warm", "warm min", "warm − node -e 0"],
      starts.map((start) => {
        const times = warm.get(start)!
        return [start.name, fmt(cold.get(start)!, 1), fmt(median(times), 1), fmt(Math.min(...times), 1), fmt(median(times) - floor, 1)]
      })
    )
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  }
}

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
  await startUp()
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
