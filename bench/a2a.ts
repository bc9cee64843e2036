/**
 * The A2A server (`lambdagent serve … --a2a`) under load: `message/send` (A2A 0.3) and `SendMessage`
 * (A2A 1.0) of a scripted echo agent over loopback, sent by the SDK's own client, next to servers
 * built from the A2A SDK alone in the same run: one whose executor answers with a message (the
 * floor) and one that answers as lambdagent does, with a task, an artifact and a final status.
 * Cold: the first requests after start; warm: after a warm-up; then 8 concurrent callers.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { AgentCard, Role } from "@a2a-js/sdk"
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client"
import { fmt, stopChildren, table } from "./harness.ts"

const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url))
const AGENT = fileURLToPath(new URL("./fixtures/a2a-agent.yml", import.meta.url))
const ECHO = fileURLToPath(new URL("./fixtures/a2a-echo-server.mjs", import.meta.url))
const COLD = 200
const WARMUP = 2_000
const CALLS = 3_000
const ROUNDS = 5
const CONCURRENCY = 8

interface Target {
  readonly name: string
  readonly args: ReadonlyArray<string>
}
const targets: ReadonlyArray<Target> = [
  { name: "lambdagent serve --a2a (scripted echo agent)", args: [CLI, "serve", AGENT, "--a2a", "--port", "0"] },
  { name: "SDK echo, message reply (floor)", args: [ECHO] },
  { name: "SDK echo, task + artifact", args: [ECHO, "--task"] }
]

const children = new Set<ChildProcess>()

/** Start a server; resolves with its endpoint once it prints it. Its output is drained. */
const start = (target: Target): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...target.args], { stdio: ["ignore", "pipe", "pipe"] })
    children.add(child)
    let seen = ""
    const timer = setTimeout(() => reject(new Error(`${target.name}: no URL within 20 s: ${seen}`)), 20_000)
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      if (seen.length < 10_000) seen += chunk
      const match = /listening (?:on )?(http:\/\/127\.0\.0\.1:\d+\/)/.exec(seen)
      if (match !== null) {
        clearTimeout(timer)
        resolve(match[1]!)
        seen = "x".repeat(10_000) // found: stop collecting the access log
      }
    })
    child.stderr!.resume()
    child.once("exit", (code) => reject(new Error(`${target.name} exited with ${code}: ${seen}`)))
  })

/** The SDK's client for a server, speaking the given protocol version. */
const clientFor = async (url: string, version: "1.0" | "0.3"): Promise<Client> => {
  const card = AgentCard.fromJSON(await (await fetch(`${url}.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } })).json())
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })]
    })
  )
  return factory.createFromAgentCard({ ...card, supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === version) })
}

let counter = 0
const send = async (client: Client): Promise<void> => {
  const text = `hello ${counter++}`
  const result = await client.sendMessage({
    tenant: "",
    message: {
      messageId: `m-${counter}`,
      contextId: "",
      taskId: "",
      role: Role.ROLE_USER,
      parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: []
    },
    configuration: undefined,
    metadata: undefined
  })
  const parts = "messageId" in result ? result.parts : (result.artifacts[0]?.parts ?? [])
  const answer = parts[0]?.content
  if (answer?.$case !== "text" || answer.value !== text) throw new Error(`unexpected answer ${JSON.stringify(result).slice(0, 300)}`)
}

interface Load {
  readonly perSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
}

/** Sequential calls: each call's latency in milliseconds, and the total time. */
const sequential = async (client: Client, calls: number): Promise<{ readonly times: Array<number>; readonly totalMs: number }> => {
  const times = new Array<number>(calls)
  const started = performance.now()
  for (let i = 0; i < calls; i++) {
    const t = performance.now()
    await send(client)
    times[i] = performance.now() - t
  }
  return { times, totalMs: performance.now() - started }
}

const loadOf = (runs: ReadonlyArray<{ readonly times: Array<number>; readonly totalMs: number }>): Load => {
  const times = runs.flatMap((r) => r.times).sort((a, b) => a - b)
  const totalMs = runs.reduce((sum, r) => sum + r.totalMs, 0)
  return { perSecond: (times.length * 1000) / totalMs, p50Ms: times[Math.floor(times.length * 0.5)]!, p99Ms: times[Math.floor(times.length * 0.99)]! }
}

/** Calls per second with {@link CONCURRENCY} callers sharing one client. */
const concurrent = async (client: Client, calls: number): Promise<{ readonly calls: number; readonly totalMs: number }> => {
  const per = Math.ceil(calls / CONCURRENCY)
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = 0; i < per; i++) await send(client)
    })
  )
  return { calls: per * CONCURRENCY, totalMs: performance.now() - started }
}

interface Figures {
  readonly cold: Load
  readonly warm: Load
  readonly parallel: number
}

/**
 * Every server's figures. The warm and concurrent figures are taken in rounds that visit the
 * servers in turn, so that a busy moment of the (shared) machine weighs on all of them alike.
 */
const measure = async (clients: ReadonlyArray<Client>): Promise<Array<Figures>> => {
  const cold: Array<Load> = []
  for (const client of clients) cold.push(loadOf([await sequential(client, COLD)]))
  for (const client of clients) await sequential(client, WARMUP)
  const warm = clients.map(() => [] as Array<{ times: Array<number>; totalMs: number }>)
  const parallel = clients.map(() => ({ calls: 0, totalMs: 0 }))
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, client] of clients.entries()) warm[i]!.push(await sequential(client, CALLS / ROUNDS))
    for (const [i, client] of clients.entries()) {
      const r = await concurrent(client, CALLS / ROUNDS)
      parallel[i] = { calls: parallel[i]!.calls + r.calls, totalMs: parallel[i]!.totalMs + r.totalMs }
    }
  }
  return clients.map((_, i) => ({ cold: cold[i]!, warm: loadOf(warm[i]!), parallel: (parallel[i]!.calls * 1000) / parallel[i]!.totalMs }))
}

export async function run(): Promise<void> {
  try {
    const urls = await Promise.all(targets.map(start))
    for (const version of ["0.3", "1.0"] as const) {
      const method = version === "0.3" ? "message/send" : "SendMessage"
      const figures = await measure(await Promise.all(urls.map((url) => clientFor(url, version))))
      const floor = figures[1]!
      const share = (n: number, of: number) => `${fmt((100 * n) / of, 0)}%`
      table(
        `${method} (A2A ${version}), one client: ${COLD} cold requests, then ${fmt(CALLS, 0)} after ${fmt(WARMUP, 0)} warm-up, in ${ROUNDS} rounds over the servers; ${CONCURRENCY} concurrent callers`,
        ["server", "cold req/s", "cold p50 ms", "cold p99 ms", "warm req/s", "warm p50 ms", "warm p99 ms", `req/s ×${CONCURRENCY}`, "warm req/s of floor"],
        targets.map((t, i) => {
          const f = figures[i]!
          return [
            t.name,
            fmt(f.cold.perSecond, 0),
            fmt(f.cold.p50Ms, 3),
            fmt(f.cold.p99Ms, 3),
            fmt(f.warm.perSecond, 0),
            fmt(f.warm.p50Ms, 3),
            fmt(f.warm.p99Ms, 3),
            fmt(f.parallel, 0),
            share(f.warm.perSecond, floor.warm.perSecond)
          ]
        })
      )
    }
  } finally {
    await stopChildren(children)
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
