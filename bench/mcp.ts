/**
 * The MCP server (`lambdagent mcp`) under load: tools/call throughput and latency of `run` on a small
 * term over stdio and Streamable HTTP, next to a server built from the MCP SDK alone with one `echo`
 * tool (the floor) on the same transport, in the same run, cold (the first call of a new connection)
 * and warm; the round trip of a `continue` loop; and `run` of a self-recursive fib(25). The warm
 * figures of lambdagent and of the floor are measured in rounds taking turns, so that a change of
 * load on the machine during the run falls on both.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { fmt, stopChildren, table } from "./harness.ts"
import { LineClient } from "./lineClient.ts"
import { fetchWithOwnSignal } from "../plugins/mcp/ownSignalFetch.ts"

const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url))
const ECHO = fileURLToPath(new URL("./fixtures/echo-server.mjs", import.meta.url))
const CALLS = 5_000
// a long warm-up: the figure of interest is a running server's, once the JIT has compiled its hot path
const WARMUP = 3_000
const CONCURRENCY = 8
const SMALL = { code: { add: [1, 2] }, input: null }
const FIB = {
  lam: "n",
  body: {
    if: {
      cond: { lt: [{ var: "n" }, 2] },
      then: { var: "n" },
      else: {
        add: [{ app: { func: { self: true }, arg: { sub: [{ var: "n" }, 1] } } }, { app: { func: { self: true }, arg: { sub: [{ var: "n" }, 2] } } }]
      }
    }
  }
}

/** Counts down by continuations: each step below n > 0 is one round trip to the client. */
const COUNTDOWN = {
  lam: "n",
  body: { if: { cond: { lte: [{ var: "n" }, 0] }, then: { var: "n" }, else: { continue: { input: { sub: [{ var: "n" }, 1] } } } } }
}
const ROUND_TRIPS = 3_000

interface Server {
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly tool: string
}
const servers: ReadonlyArray<Server> = [
  { name: "lambdagent", args: [CLI, "mcp", "--store", ":memory:"], tool: "run" },
  { name: "SDK echo (floor)", args: [ECHO], tool: "echo" }
]

const children = new Set<ChildProcess>()
const clients = new Set<Client>()

const connectStdio = async (server: Server): Promise<Client> => {
  const client = new Client({ name: "bench", version: "1.0.0" })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [...server.args], stderr: "ignore" }))
  clients.add(client)
  return client
}

/** Start an HTTP server on a free port; resolves with its endpoint once it prints it on standard error. */
const startHttp = (server: Server): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...server.args, "--http", "0"], { stdio: ["ignore", "ignore", "pipe"] })
    children.add(child)
    let seen = ""
    const timer = setTimeout(() => reject(new Error(`${server.name}: no URL within 10 s: ${seen}`)), 10_000)
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      seen += chunk
      const match = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen)
      if (match !== null) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    })
    child.once("exit", (code) => reject(new Error(`${server.name} exited with ${code}: ${seen}`)))
  })

const connectHttp = async (url: string): Promise<Client> => {
  const client = new Client({ name: "bench", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: fetchWithOwnSignal }))
  clients.add(client)
  return client
}

const call = async (client: Client, tool: string, args: Record<string, unknown> = SMALL): Promise<void> => {
  const result = await client.callTool({ name: tool, arguments: args })
  if (result.isError === true) throw new Error(`${tool} failed: ${JSON.stringify(result.content)}`)
}

interface Load {
  /** The first call of the connection (cold: neither side's code is compiled yet). */
  readonly firstMs: number
  readonly perSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
}

/** Calls measured in rounds, the two servers taking turns (see {@link sideBySide}). */
const ROUNDS = 10

/** A server under measurement: its client(s) and its tool. */
interface Side {
  readonly clients: ReadonlyArray<Client>
  readonly tool: string
}

/**
 * Runs `measure` on both sides in {@link ROUNDS} rounds, taking turns (and swapping who goes
 * first each round): on a shared machine the load changes during a run, and the process measured
 * first also pays for the benchmark client's own garbage collection after start-up. Taking turns
 * spreads both over the two servers alike.
 */
const sideBySide = async <S, A>(sides: readonly [S, S], measure: (side: S) => Promise<A>): Promise<[Array<A>, Array<A>]> => {
  const results: [Array<A>, Array<A>] = [[], []]
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0]
    for (const index of order) results[index as 0 | 1].push(await measure(sides[index as 0 | 1]))
  }
  return results
}

/** The value below which a fraction `q` of the sorted `times` fall. */
const percentile = (sorted: ReadonlyArray<number>, q: number): number => sorted[Math.floor(sorted.length * q)]!

/** Sequential calls from one client each: the first call, then throughput and latency percentiles after a warm-up. */
const sequential = async (sides: readonly [Side, Side]): Promise<[Load, Load]> => {
  const firstMs: Array<number> = []
  for (const side of sides) {
    const first = performance.now()
    await call(side.clients[0]!, side.tool)
    firstMs.push(performance.now() - first)
  }
  for (const side of sides) for (let i = 0; i < WARMUP; i++) await call(side.clients[0]!, side.tool)
  const perRound = CALLS / ROUNDS
  const rounds = await sideBySide(sides, async (side) => {
    const times = new Array<number>(perRound)
    for (let i = 0; i < perRound; i++) {
      const t = performance.now()
      await call(side.clients[0]!, side.tool)
      times[i] = performance.now() - t
    }
    return times
  })
  const load = (index: 0 | 1): Load => {
    const times = rounds[index].flat().sort((a, b) => a - b)
    const total = times.reduce((a, b) => a + b, 0)
    return {
      firstMs: firstMs[index]!,
      perSecond: (times.length * 1000) / total,
      p50Ms: percentile(times, 0.5),
      p99Ms: percentile(times, 0.99)
    }
  }
  return [load(0), load(1)]
}

/** Calls/s with several loops calling at once, each on its own client (or sharing one). */
const concurrent = async (sides: readonly [Side, Side]): Promise<[number, number]> => {
  const perLoop = (side: Side, calls: number) =>
    Promise.all(
      side.clients.map(async (c) => {
        for (let i = 0; i < calls; i++) await call(c, side.tool)
      })
    )
  for (const side of sides) await perLoop(side, Math.ceil(WARMUP / side.clients.length))
  const per = Math.ceil(CALLS / ROUNDS / CONCURRENCY)
  const rounds = await sideBySide(sides, async (side) => {
    const start = performance.now()
    await perLoop(side, per)
    return { calls: per * side.clients.length, ms: performance.now() - start }
  })
  const rate = (index: 0 | 1) => (rounds[index].reduce((a, r) => a + r.calls, 0) * 1000) / rounds[index].reduce((a, r) => a + r.ms, 0)
  return [rate(0), rate(1)]
}

/** Follow a countdown's continuations to its value: the first round trip, then the rest's mean and percentiles. */
const continueLoop = async (client: Client, from: number): Promise<Load> => {
  let input: unknown = from
  let step = 0
  const times: Array<number> = []
  for (;;) {
    const t = performance.now()
    const result = await client.callTool({ name: "run", arguments: { code: "countdown", input, step } })
    times.push(performance.now() - t)
    const text = (result.content as Array<{ type: string; text?: string }>)[0]?.text ?? ""
    if (result.isError === true) throw new Error(`countdown failed: ${text}`)
    const answer = JSON.parse(text) as { type?: string; next_input?: unknown; step?: number } | number
    if (typeof answer !== "object" || answer.type !== "continuation") {
      if (answer !== 0) throw new Error(`countdown answered ${text}`)
      break
    }
    input = answer.next_input
    step = answer.step!
  }
  if (times.length !== from + 1) throw new Error(`countdown took ${times.length} calls, expected ${from + 1}`)
  const firstMs = times[0]!
  // warm: the last two thirds of the loop
  const warm = times.slice(Math.floor(times.length / 3)).sort((a, b) => a - b)
  const warmTotal = warm.reduce((a, b) => a + b, 0)
  return { firstMs, perSecond: (warm.length * 1000) / warmTotal, p50Ms: percentile(warm, 0.5), p99Ms: percentile(warm, 0.99) }
}

interface LeanFigures {
  readonly p50Ms: number
  readonly p99Ms: number
  readonly perSecond: number
  /** The server's CPU time per call with 8 in flight, µs (undefined where it cannot be read). */
  readonly cpuUs: number | undefined
}

/**
 * Both servers over stdio from the lean client ({@link LineClient}): sequential latency, and
 * throughput with {@link CONCURRENCY} calls in flight with the server's own CPU time per call, in
 * rounds taking turns.
 */
const leanClient = async (): Promise<[LeanFigures, LeanFigures]> => {
  const sides = await Promise.all(servers.map(async (server) => ({ server, client: await LineClient.start(process.execPath, server.args) })))
  try {
    const inFlight = (side: (typeof sides)[number], calls: number) =>
      Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let i = 0; i < calls / CONCURRENCY; i++) await side.client.call(side.server.tool, SMALL)
        })
      )
    for (const side of sides) await inFlight(side, WARMUP * 2)
    const PIPELINED = 4_000
    const rounds = await sideBySide(sides as [(typeof sides)[number], (typeof sides)[number]], async (side) => {
      const latencies: Array<number> = []
      for (let i = 0; i < CALLS / ROUNDS; i++) {
        const t = performance.now()
        await side.client.call(side.server.tool, SMALL)
        latencies.push(performance.now() - t)
      }
      const cpuBefore = side.client.serverCpuMs()
      const started = performance.now()
      await inFlight(side, PIPELINED)
      const ms = performance.now() - started
      const cpuAfter = side.client.serverCpuMs()
      return { latencies, ms, cpuMs: cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined }
    })
    const figures = (index: 0 | 1): LeanFigures => {
      const times = rounds[index].flatMap((r) => r.latencies).sort((a, b) => a - b)
      const calls = PIPELINED * rounds[index].length
      const cpu = rounds[index].every((r) => r.cpuMs !== undefined) ? rounds[index].reduce((a, r) => a + r.cpuMs!, 0) : undefined
      return {
        p50Ms: percentile(times, 0.5),
        p99Ms: percentile(times, 0.99),
        perSecond: (calls * 1000) / rounds[index].reduce((a, r) => a + r.ms, 0),
        cpuUs: cpu !== undefined ? (cpu * 1000) / calls : undefined
      }
    }
    return [figures(0), figures(1)]
  } finally {
    await Promise.all(sides.map((side) => side.client.close()))
  }
}

const loadRows = (transport: string, lambda: Load, floor: Load): Array<Array<string>> => [
  [
    `${transport}: lambdagent run {add:[1,2]}`,
    fmt(lambda.firstMs, 2),
    fmt(lambda.perSecond, 0),
    fmt(lambda.p50Ms, 3),
    fmt(lambda.p99Ms, 3),
    `${fmt(floor.perSecond / lambda.perSecond, 2)}×`
  ],
  [`${transport}: SDK echo (floor)`, fmt(floor.firstMs, 2), fmt(floor.perSecond, 0), fmt(floor.p50Ms, 3), fmt(floor.p99Ms, 3), "1.00×"]
]

export async function run(): Promise<void> {
  const [lambdagent, echo] = servers as [Server, Server]
  try {
    // stdio: each client spawns its own server process
    const stdioLambda = await connectStdio(lambdagent)
    const stdioEcho = await connectStdio(echo)
    const [sl, se] = await sequential([
      { clients: [stdioLambda], tool: lambdagent.tool },
      { clients: [stdioEcho], tool: echo.tool }
    ])
    const [slConc, seConc] = await concurrent([
      { clients: Array.from({ length: CONCURRENCY }, () => stdioLambda), tool: lambdagent.tool },
      { clients: Array.from({ length: CONCURRENCY }, () => stdioEcho), tool: echo.tool }
    ])

    // Streamable HTTP: one server process each, on a free port
    const [lambdaUrl, echoUrl] = await Promise.all([startHttp(lambdagent), startHttp(echo)])
    const httpLambda = await connectHttp(lambdaUrl)
    const httpEcho = await connectHttp(echoUrl)
    const [hl, he] = await sequential([
      { clients: [httpLambda], tool: lambdagent.tool },
      { clients: [httpEcho], tool: echo.tool }
    ])
    const lambdaClients = [httpLambda, ...(await Promise.all(Array.from({ length: CONCURRENCY - 1 }, () => connectHttp(lambdaUrl))))]
    const echoClients = [httpEcho, ...(await Promise.all(Array.from({ length: CONCURRENCY - 1 }, () => connectHttp(echoUrl))))]
    const [hlConc, heConc] = await concurrent([
      { clients: lambdaClients, tool: lambdagent.tool },
      { clients: echoClients, tool: echo.tool }
    ])

    table(
      `tools/call, one client, ${fmt(CALLS, 0)} sequential calls after ${fmt(WARMUP, 0)} warm-up, in ${ROUNDS} rounds taking turns with the floor (reference Haskell server: small run ≈ 0.045 ms p50 over stdio)`,
      ["workload", "cold: 1st call ms", "warm calls/s", "warm p50 ms", "warm p99 ms", "time lambdagent/floor"],
      [...loadRows("stdio", sl, se), ...loadRows("HTTP", hl, he)]
    )
    table(
      `tools/call throughput, ${CONCURRENCY} concurrent callers, ${ROUNDS} rounds taking turns (stdio: ${CONCURRENCY} in flight on one connection; HTTP: ${CONCURRENCY} clients/sessions)`,
      ["workload", "lambdagent calls/s", "SDK echo calls/s", "time lambdagent/floor"],
      [
        ["stdio", fmt(slConc, 0), fmt(seConc, 0), `${fmt(seConc / slConc, 2)}×`],
        ["HTTP", fmt(hlConc, 0), fmt(heConc, 0), `${fmt(heConc / hlConc, 2)}×`]
      ]
    )

    const [leanLambda, leanEcho] = await leanClient()
    const leanRow = (name: string, figures: LeanFigures): Array<string> => [
      name,
      fmt(figures.p50Ms, 3),
      fmt(figures.p99Ms, 3),
      fmt(figures.perSecond, 0),
      figures.cpuUs !== undefined ? fmt(figures.cpuUs, 1) : "n/a",
      `${fmt((figures.perSecond / leanEcho.perSecond) * 100, 0)}%`
    ]
    table(
      `tools/call over stdio from a lean JSON-RPC client (no SDK client work in the figures): ${fmt(CALLS, 0)} sequential calls and ${CONCURRENCY} in flight, in ${ROUNDS} rounds taking turns; server CPU from /proc`,
      ["workload", "warm p50 ms", "warm p99 ms", `${CONCURRENCY} in flight calls/s`, "server CPU µs/call", "throughput vs floor"],
      [leanRow("lambdagent run {add:[1,2]}", leanLambda), leanRow("SDK echo (floor)", leanEcho)]
    )

    // a `continue` loop: every continuation goes back to the client, which sends next_input and the step
    const countdown = await stdioLambda.callTool({
      name: "evolve",
      arguments: { name: "countdown", description: "Count down to 0 by continuations.", code: COUNTDOWN }
    })
    if (countdown.isError === true) throw new Error(`evolve failed: ${JSON.stringify(countdown.content)}`)
    const roundTrips = await continueLoop(stdioLambda, ROUND_TRIPS)
    table(
      `continue loop over stdio: countdown from ${fmt(ROUND_TRIPS, 0)}, one tools/call per continuation (reference Haskell server: 0.154 ms a round trip)`,
      ["workload", "cold: 1st round trip ms", "warm mean ms", "warm p50 ms", "warm p99 ms", "SDK echo warm p50 ms (floor)"],
      [
        [
          "run countdown, round trip",
          fmt(roundTrips.firstMs, 2),
          fmt(roundTrips.perSecond > 0 ? 1000 / roundTrips.perSecond : 0, 3),
          fmt(roundTrips.p50Ms, 3),
          fmt(roundTrips.p99Ms, 3),
          fmt(se.p50Ms, 3)
        ]
      ]
    )

    // fib(25): a self-recursive evolved tool, called by name
    const evolved = await stdioLambda.callTool({ name: "evolve", arguments: { name: "fib", description: "Fibonacci, naively.", code: FIB } })
    if (evolved.isError === true) throw new Error(`evolve failed: ${JSON.stringify(evolved.content)}`)
    const fibArgs = { code: "fib", input: 25, fuel: 10_000_000 }
    const check = await stdioLambda.callTool({ name: "run", arguments: fibArgs })
    const text = (check.content as Array<{ type: string; text?: string }>)[0]?.text ?? ""
    if (check.isError === true || text.trim() !== "75025") throw new Error(`fib(25) answered ${text}`)
    const fibTimes: Array<number> = []
    for (let i = 0; i < 5; i++) {
      const t = performance.now()
      await call(stdioLambda, "run", fibArgs)
      fibTimes.push(performance.now() - t)
    }
    fibTimes.sort((a, b) => a - b)
    table(
      "run of an evolved self-recursive fib(25) over stdio (median of 5 after 1 warm-up)",
      ["workload", "median ms", "min ms"],
      [["run fib 25 → 75025", fmt(fibTimes[2]!, 1), fmt(fibTimes[0]!, 1)]]
    )
  } finally {
    await Promise.allSettled([...clients].map((c) => c.close()))
    await stopChildren(children)
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
