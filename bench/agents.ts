/**
 * Orchestration overhead per agent step with a zero-latency scripted model, next to the same loop
 * written as plain TypeScript in the same run:
 * - cold: the first runs of a fresh process ({@link COLD_RUNS}; a child process per figure);
 * - warm: after at least 3 seconds of the same runs in this process;
 * - the ReAct loop with native tool calls (the model answers with a call) beside text extraction,
 *   the two sampled in turn;
 * - how the cost per step changes with the loop's length (5 to 320 steps), on the scripted model and
 *   on one that reports its usage as a provider does;
 * - a 3-stage chain per stage; `par` of 10 branches on a 100 ms model, cold and warm, beside ten
 *   plain 100 ms timers awaited together;
 * - resident memory of a process after its 20-step runs, beside plain TypeScript's and `node -e 0`'s;
 * - a group chat per turn, and a channel message between two `par` branches, each beside plain TypeScript;
 * - the same ReAct loop with OpenTelemetry spans on, alone and exported over OTLP/HTTP to loopback;
 * - the peer, last: the same loop in the Vercel AI SDK on its mock model (cold, warm, memory); the
 *   SDK is one of the development tools of test/tools, installed on first use.
 */
import { spawnSync } from "node:child_process"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import * as z from "zod"
import { createRuntime, Scripted, Term, Tools, TraceSink } from "lambdagent"
import { ensureTools } from "../test/tools/index.ts"
import { fmt, table } from "./harness.ts"

const loopScript = fileURLToPath(new URL("./fixtures/react-loop.mjs", import.meta.url))
const callText = '{"tool":"add","args":{"a":1,"b":2}}'
const add = Tools.define({
  name: "add",
  description: "Add two numbers.",
  input: z.object({ a: z.number(), b: z.number() }),
  run: ({ a, b }) => a + b
})

/** The loop a child process runs: lambdagent's, the plain TypeScript one, or the AI SDK's. */
type LoopMode = "lambdagent" | "plain" | "ai-sdk"

/**
 * A fresh process running `runs` loops of `steps` steps: the time of its imports, of its setup (the
 * tool, the runtime and the term; the plain loop's schema), of each run by the clock and by CPU
 * time, and its final RSS.
 */
const child = (mode: LoopMode, steps: number, runs: number): { imports: number; setup: number; times: Array<number>; cpuTimes: Array<number>; rss: number } => {
  const r = spawnSync(process.execPath, [loopScript, mode, String(steps), String(runs)], { encoding: "utf8" })
  if (r.status !== 0) throw new Error(`react-loop.mjs ${mode} failed: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length

/** The runs of a fresh process that the cold figures cover. */
const COLD_RUNS = 10

/**
 * Cold figures of a loop: the first {@link COLD_RUNS} runs of fresh processes (five processes, the
 * median of their means), and what the first run costs with the setup before it (creating the
 * runtime counts).
 */
const coldOf = (mode: LoopMode, steps: number) => {
  const processes = [0, 1, 2, 3, 4].map(() => child(mode, steps, COLD_RUNS))
  return {
    runs: median(processes.map((p) => mean(p.times) * 1000)),
    cpuRuns: median(processes.map((p) => mean(p.cpuTimes) * 1000)),
    cpuFirst: median(processes.map((p) => p.cpuTimes[0]!)),
    cpuLater: median(processes.map((p) => mean(p.cpuTimes.slice(1)) * 1000)),
    imports: median(processes.map((p) => p.imports)),
    setup: median(processes.map((p) => p.setup)),
    first: median(processes.map((p) => p.times[0]!)),
    setupAndFirst: median(processes.map((p) => p.setup + p.times[0]!)),
    setupAndRuns: median(processes.map((p) => ((p.setup + p.times.reduce((a, b) => a + b, 0)) * 1000) / COLD_RUNS))
  }
}

/** The plain TypeScript loop of the same shape (the model sees the growing conversation). */
const plainReact = (steps: number) => {
  const model = (messages: ReadonlyArray<{ role: string; content: string }>) => (messages.length > 0 ? callText : "")
  const transcript: Array<{ role: string; content: string }> = [{ role: "user", content: "start" }]
  for (let step = 1; step <= steps; step++) {
    const thought = model([{ role: "system", content: "Use tools." }, ...transcript])
    const call = JSON.parse(thought) as { args: unknown }
    const { a, b } = add.input!.parse(call.args) as { a: number; b: number }
    transcript.push({ role: "assistant", content: thought }, { role: "user", content: `Observation: ${a + b}` })
  }
  return transcript
}

const plainChain = (input: string) => {
  let value = input
  for (const system of ["extract", "analyze", "draft"])
    value = [
      { role: "system", content: system },
      { role: "user", content: value }
    ].at(-1)!.content
  return value
}

/** The process's CPU time so far (all its threads), ms. */
const cpuNow = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/** µs per call of `reps` calls of `f`, by the clock and by CPU time. */
const sample = async (f: () => unknown, reps: number): Promise<{ wall: number; cpu: number }> => {
  const started = performance.now()
  const cpuStarted = cpuNow()
  for (let i = 0; i < reps; i++) await f()
  return { wall: ((performance.now() - started) / reps) * 1000, cpu: ((cpuNow() - cpuStarted) / reps) * 1000 }
}

/** How many calls of `f` take at least 20 ms (a power of two). */
const repsFor = async (f: () => unknown): Promise<number> => {
  let reps = 1
  while ((await sample(f, reps)).wall * reps < 20_000) reps *= 2
  return reps
}

/** Medians of µs per call by the clock and by CPU time. */
const medians = (xs: ReadonlyArray<{ wall: number; cpu: number }>) => ({ wall: median(xs.map((x) => x.wall)), cpu: median(xs.map((x) => x.cpu)) })

/**
 * Median µs of one call after at least `warmMs` of calls, by the clock and by CPU time (which a
 * loaded machine's waits for a core do not inflate).
 */
const warmTimes = async (f: () => unknown, warmMs = 3000, samples = 15): Promise<{ wall: number; cpu: number }> => {
  const until = performance.now() + warmMs
  while (performance.now() < until) await f()
  const reps = await repsFor(f)
  const times: Array<{ wall: number; cpu: number }> = []
  for (let s = 0; s < samples; s++) times.push(await sample(f, reps))
  return medians(times)
}

/** Median µs (by the clock) of one call after at least `warmMs` of calls. */
const warm = async (f: () => unknown, warmMs = 3000, samples = 15): Promise<number> => (await warmTimes(f, warmMs, samples)).wall

/**
 * Median µs of one call of each of two workloads, warmed and sampled in turn, so that a machine
 * whose load changes during the run weighs on both alike (text and native tool calling).
 */
const warmBoth = async (f: () => unknown, g: () => unknown, warmMs = 3000, samples = 21): Promise<readonly [number, number]> => {
  const until = performance.now() + warmMs
  while (performance.now() < until) {
    await f()
    await g()
  }
  const reps = await repsFor(f)
  const fs: Array<number> = []
  const gs: Array<number> = []
  for (let s = 0; s < samples; s++) {
    fs.push((await sample(f, reps)).wall)
    gs.push((await sample(g, reps)).wall)
  }
  return [median(fs), median(gs)]
}

export async function run(): Promise<void> {
  const STEPS = 20
  const cold = { lambdagent: coldOf("lambdagent", STEPS), plain: coldOf("plain", STEPS) }
  const coldLambda = cold.lambdagent.runs
  const coldPlain = cold.plain.runs

  // budgets out of the way: the longest loop makes 320 LLM calls
  const budgets = { llmCalls: 1_000_000, toolCalls: 1_000_000, tokens: Number.MAX_SAFE_INTEGER }
  const runtime = createRuntime({ model: Scripted.fixed(callText), tools: [add], trace: "agent", budgets })
  const react = (steps: number) => Term.react({ think: Term.llm({ system: "Use tools." }), tools: ["add"], maxSteps: steps })
  const react20 = react(STEPS)
  // the same loop with the calls made natively: the model answers with a tool call, not a text to
  // read one from; text and native are sampled in turn, so the load of the machine weighs on both
  const nativeReply = { text: "", toolCalls: [{ id: "call_1", name: "add", arguments: '{"a":1,"b":2}' }] }
  const nativeRuntime = createRuntime({ model: Scripted.respond(() => nativeReply), tools: [add], trace: "agent", budgets })
  const nativeReact20 = Term.react({ think: Term.llm({ system: "Use tools." }), tools: ["add"], maxSteps: STEPS, toolCalling: "native" })
  const [warmLambda, warmNative] = await warmBoth(
    () => runtime.run(react20, "start"),
    () => nativeRuntime.run(nativeReact20, "start")
  )
  const warmPlain = await warm(() => plainReact(STEPS), 1000)

  const chainRuntime = createRuntime({ model: Scripted.echo(), trace: "agent" })
  const chain = Term.compose(["extract", "analyze", "draft"].map((system) => Term.llm({ system, conversation: false })))
  const chainTimes = await warmTimes(() => chainRuntime.run(chain, "text"))
  const chainPlainTimes = await warmTimes(() => plainChain("text"), 1000)
  const warmChain = chainTimes.wall
  const warmChainPlain = chainPlainTimes.wall

  const perStep = (us: number, steps: number) => us / steps
  table(
    `Agent orchestration per step (zero-latency in-process model; cold: first ${COLD_RUNS} runs of a fresh process; warm: after ≥ 3 s)`,
    ["workload", "cold µs/step", "warm µs/step", "plain TS cold", "plain TS warm", "warm ratio"],
    [
      [
        `ReAct, ${STEPS} steps (think + tool)`,
        fmt(perStep(coldLambda, STEPS), 2),
        fmt(perStep(warmLambda, STEPS), 2),
        fmt(perStep(coldPlain, STEPS), 2),
        fmt(perStep(warmPlain, STEPS), 2),
        `${fmt(warmLambda / warmPlain, 1)}×`
      ],
      [
        `ReAct, ${STEPS} steps, native tool calls (${fmt(warmNative / warmLambda, 2)}× text)`,
        "",
        fmt(perStep(warmNative, STEPS), 2),
        "",
        fmt(perStep(warmPlain, STEPS), 2),
        `${fmt(warmNative / warmPlain, 1)}×`
      ],
      ["chain, 3 stages (per stage)", "", fmt(warmChain / 3, 2), "", fmt(warmChainPlain / 3, 3), `${fmt(warmChain / warmChainPlain, 0)}×`]
    ]
  )
  // the first run alone spread over the cold figure's steps: a floor under the cold figure, which
  // no loop doing the same work gets below
  table(
    `A fresh process: the imports (plain: zod), the setup (tool, runtime, term; plain: the schema), then the first of its ReAct runs (${STEPS} steps)`,
    ["", "imports ms", "setup ms", "first run ms", `first run ÷ ${COLD_RUNS * STEPS} cold steps, µs`, "setup + first run ms", "cold µs/step with the setup"],
    (["lambdagent", "plain"] as const).map((mode) => [
      mode === "plain" ? "plain TS" : mode,
      fmt(cold[mode].imports, 1),
      fmt(cold[mode].setup, 2),
      fmt(cold[mode].first, 2),
      fmt((cold[mode].first * 1000) / (COLD_RUNS * STEPS), 2),
      fmt(cold[mode].setupAndFirst, 2),
      fmt(perStep(cold[mode].setupAndRuns, STEPS), 2)
    ])
  )
  // CPU time is what a run costs however loaded the machine is: a wait for a core counts in the
  // clock's figures above, not in these
  table(
    `The same by CPU time (process.cpuUsage): cold ReAct (the first ${COLD_RUNS} runs of a fresh process, the first alone, the ones after it) and the warm chain`,
    ["", "cold µs/step", "first run ms", `runs 2–${COLD_RUNS} µs/step`, "chain µs/stage warm"],
    [
      [
        "lambdagent",
        fmt(perStep(cold.lambdagent.cpuRuns, STEPS), 2),
        fmt(cold.lambdagent.cpuFirst, 2),
        fmt(perStep(cold.lambdagent.cpuLater, STEPS), 2),
        fmt(chainTimes.cpu / 3, 2)
      ],
      [
        "plain TS",
        fmt(perStep(cold.plain.cpuRuns, STEPS), 2),
        fmt(cold.plain.cpuFirst, 2),
        fmt(perStep(cold.plain.cpuLater, STEPS), 2),
        fmt(chainPlainTimes.cpu / 3, 3)
      ]
    ]
  )

  // beside the scripted model, which estimates the input tokens from the characters of every
  // message (one comparison a message to count only the new ones), a model that reports its usage
  // as a provider does: what grows with the loop in the first row and not in the second is the
  // estimate's, not the runtime's
  const reported = { text: callText, usage: { inputTokens: 1, outputTokens: 1 }, finishReason: "stop" as const }
  const reporting = createRuntime({ model: Scripted.respond(() => reported), tools: [add], trace: "agent", budgets })
  const lengths = [5, 20, 80, 320]
  const costs: Array<number> = []
  const reportingCosts: Array<number> = []
  for (const steps of lengths) {
    const term = react(steps)
    const [estimating, reportingCost] = await warmBoth(
      () => runtime.run(term, "start"),
      () => reporting.run(term, "start"),
      1000
    )
    costs.push(perStep(estimating, steps))
    reportingCosts.push(perStep(reportingCost, steps))
  }
  const spread = (xs: ReadonlyArray<number>) => `${fmt(Math.max(...xs) / Math.min(...xs), 2)}×`
  table(
    "Warm cost per ReAct step by the loop's length (flat: the conversation grows, it is never re-rendered)",
    ["model", ...lengths.map((n) => `${n} steps`), "max / min"],
    [
      ["scripted (estimates tokens), µs/step", ...costs.map((c) => fmt(c, 2)), spread(costs)],
      ["reporting its usage, µs/step", ...reportingCosts.map((c) => fmt(c, 2)), spread(reportingCosts)]
    ]
  )

  const quiet = createRuntime({ model: Scripted.fixed(callText), tools: [add], trace: "off" })
  const off = await quiet.run(react20, "start")
  const warmOff = await warm(() => quiet.run(react20, "start"), 1000)
  table('trace: "off"', ["events recorded", "warm µs/step"], [[String(off.trace.length), fmt(perStep(warmOff, STEPS), 2)]])

  // OpenTelemetry: the spans alone (Effect's tracer, nothing exported), then exported over OTLP/HTTP
  // to a collector on loopback that accepts every batch
  let exported = 0
  const collector = createServer((req, res) => {
    req.on("data", (chunk: Buffer) => (exported += chunk.length))
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"))
  })
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
  const collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
  const spanning = createRuntime({ model: Scripted.fixed(callText), tools: [add], trace: "agent", budgets, traceSink: TraceSink.spansOnly })
  const warmSpans = await warm(() => spanning.run(react20, "start"), 1000)
  const exporting = createRuntime({ model: Scripted.fixed(callText), tools: [add], trace: "agent", budgets, otel: { url: collectorUrl } })
  const warmExport = await warm(() => exporting.run(react20, "start"), 1000)
  await Promise.all([spanning.close(), exporting.close()])
  await new Promise<void>((resolve) => collector.close(() => resolve()))
  table(
    `OpenTelemetry spans, ReAct ${STEPS} steps (off: the first table's warm figure)`,
    ["setting", "warm µs/step", "vs off"],
    [
      ["off (default)", fmt(perStep(warmLambda, STEPS), 2), "1.0×"],
      ["spans, no exporter (TraceSink.spansOnly)", fmt(perStep(warmSpans, STEPS), 2), `${fmt(warmSpans / warmLambda, 1)}×`],
      [
        `otel: OTLP/HTTP JSON to loopback (${fmt(exported / 1024 / 1024, 1)} MiB sent)`,
        fmt(perStep(warmExport, STEPS), 2),
        `${fmt(warmExport / warmLambda, 1)}×`
      ]
    ]
  )

  const slow = createRuntime({ model: Scripted.echo({ latencyMs: 100 }) })
  const branches = Array.from({ length: 10 }, (_, i) => Term.llm({ system: `branch ${i}` }))
  const parTerm = Term.par(branches)
  const timed = async (f: () => Promise<unknown>) => {
    const started = performance.now()
    await f()
    return performance.now() - started
  }
  // cold: the process's first par (its fork and join code runs for the first time); warm: after a
  // second of par runs on a 1 ms model, the median of 5, taken in turn with the floor: ten 100 ms
  // timers awaited together, as plain TypeScript would wait on ten calls (a timer fires up to a
  // millisecond late)
  const coldPar = await timed(() => slow.run(parTerm, "x"))
  const quick = createRuntime({ model: Scripted.echo({ latencyMs: 1 }) })
  const warmUntil = performance.now() + 1000
  while (performance.now() < warmUntil) await quick.run(parTerm, "x")
  const plainPar = () => Promise.all(branches.map(() => new Promise<void>((resolve) => setTimeout(resolve, 100))))
  const parTimes: Array<number> = []
  const plainParTimes: Array<number> = []
  for (let i = 0; i < 5; i++) {
    parTimes.push(await timed(() => slow.run(parTerm, "x")))
    plainParTimes.push(await timed(plainPar))
  }
  const serial = await timed(() => slow.run(Term.compose(branches), "x"))
  table(
    "par of 10 branches on a model that takes 100 ms per call",
    ["workload", "ms"],
    [
      ["par, 10 branches, warm (median of 5)", fmt(median(parTimes), 1)],
      ["plain TS: Promise.all of ten 100 ms timers (median of 5)", fmt(median(plainParTimes), 1)],
      ["par, 10 branches, cold (the process's first)", fmt(coldPar, 1)],
      ["the same 10 calls in sequence (compose)", fmt(serial, 1)]
    ]
  )

  const rssOf = (mode: LoopMode) => median([0, 1, 2].map(() => child(mode, STEPS, 30).rss / (1024 * 1024)))
  const rssLambda = rssOf("lambdagent")
  const floor = median(
    [0, 1, 2].map(() => {
      const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.memoryUsage().rss))"], { encoding: "utf8" })
      return Number(r.stdout) / (1024 * 1024)
    })
  )
  table(
    "Resident memory of a process after 30 runs of the 20-step loop (median of 3 processes)",
    ["process", "RSS MB"],
    [
      ["lambdagent", fmt(rssLambda, 0)],
      ["plain TypeScript (zod only)", fmt(rssOf("plain"), 0)],
      ["node -e 0", fmt(floor, 0)]
    ]
  )
  await Promise.all([runtime.close(), nativeRuntime.close(), reporting.close(), chainRuntime.close(), quiet.close(), slow.close(), quick.close()])
  await groupChat()
  await channelMessages()
  await peer(STEPS, { cold: cold.lambdagent, warm: warmLambda, rss: rssLambda }, rssOf)
}

/**
 * The peer, measured last so that its garbage and its code weigh on none of the figures before:
 * the same ReAct loop in the Vercel AI SDK, beside lambdagent's figures of this run.
 */
const peer = async (
  steps: number,
  lambdagent: { cold: ReturnType<typeof coldOf>; warm: number; rss: number },
  rssOf: (mode: LoopMode) => number
): Promise<void> => {
  ensureTools()
  const { aiSdkReact } = await import("../test/tools/ai-sdk-loop.mjs")
  const cold = coldOf("ai-sdk", steps)
  const warmPeer = await warm(aiSdkReact(steps), 1000)
  const rows = [
    { name: "lambdagent", cold: lambdagent.cold, warm: lambdagent.warm, rss: lambdagent.rss },
    { name: "AI SDK 7 (generateText, its mock model)", cold, warm: warmPeer, rss: rssOf("ai-sdk") }
  ]
  table(
    `The peer: the same ReAct loop (${steps} steps) in the Vercel AI SDK; cold as in the first table, CPU as in the third`,
    ["", "cold µs/step", "cold µs/step, CPU", "first run ms, CPU", "warm µs/step", "imports ms", "RSS MB (30 runs)"],
    rows.map((r) => [
      r.name,
      fmt(r.cold.runs / steps, 2),
      fmt(r.cold.cpuRuns / steps, 2),
      fmt(r.cold.cpuFirst, 2),
      fmt(r.warm / steps, 2),
      fmt(r.cold.imports, 1),
      fmt(r.rss, 0)
    ])
  )
}

const CHAT_AGENTS = 5
const CHAT_ROUNDS = 10

/** The plain TypeScript group chat of the same shape: round robin, the transcript rendered for every turn. */
const plainChat = (task: string) => {
  const model = (messages: ReadonlyArray<{ role: string; content: string }>) => `noted (${messages[1]!.content.length})`
  const transcript: Array<{ speaker: string; text: string }> = []
  for (let turn = 0; turn < CHAT_AGENTS * CHAT_ROUNDS; turn++) {
    const speaker = `agent${turn % CHAT_AGENTS}`
    const input = `[Task]\n${task}\n\n[Conversation]\n${transcript.map((m) => `${m.speaker}: ${m.text}\n`).join("")}\n[You are ${speaker}; it is your turn.]`
    const text = model([
      { role: "system", content: speaker },
      { role: "user", content: input }
    ])
    transcript.push({ speaker, text })
    if (text.includes("CONSENSUS") || text.includes("DONE")) break
  }
  return transcript.at(-1)!.text
}

/** Overhead per group-chat turn: 5 agents, 10 rounds, a zero-latency model, against the plain loop. */
export async function groupChat(): Promise<void> {
  const turns = CHAT_AGENTS * CHAT_ROUNDS
  const model = Scripted.respond((request) => `noted (${request.messages[1]!.content.length})`)
  const chat = () =>
    Term.groupChat({
      agents: Array.from({ length: CHAT_AGENTS }, (_, i) => [`agent${i}`, Term.llm({ system: `agent${i}`, conversation: false })] as const),
      maxRounds: CHAT_ROUNDS,
      scheduler: "round_robin",
      keywords: Term.defaultKeywords
    })
  const budgets = { llmCalls: 1_000_000, toolCalls: 1_000_000, tokens: Number.MAX_SAFE_INTEGER }
  // cold: the first 10 runs of a new runtime and a new term in this process
  const fresh = createRuntime({ model, trace: "agent", budgets })
  const first = chat()
  const coldTimes: Array<number> = []
  for (let i = 0; i < 10; i++) {
    const started = performance.now()
    await fresh.run(first, "Plan the launch.")
    coldTimes.push((performance.now() - started) * 1000)
  }
  const coldPlainTimes: Array<number> = []
  for (let i = 0; i < 10; i++) {
    const started = performance.now()
    plainChat("Plan the launch.")
    coldPlainTimes.push((performance.now() - started) * 1000)
  }
  const term = chat()
  const warmChat = await warm(() => fresh.run(term, "Plan the launch."))
  const warmPlain = await warm(() => plainChat("Plan the launch."), 1000)
  table(
    `Group chat per turn (${CHAT_AGENTS} agents × ${CHAT_ROUNDS} rounds = ${turns} turns, zero-latency model; cold: first 10 runs of a new runtime in this process; warm: after ≥ 3 s)`,
    ["workload", "cold µs/turn", "warm µs/turn", "plain TS cold", "plain TS warm", "warm ratio"],
    [
      [
        "groupchat, round robin",
        fmt(mean(coldTimes) / turns, 2),
        fmt(warmChat / turns, 2),
        fmt(mean(coldPlainTimes) / turns, 2),
        fmt(warmPlain / turns, 2),
        `${fmt(warmChat / warmPlain, 1)}×`
      ]
    ]
  )
  await fresh.close()
}

const MESSAGES = 1000

/** The plain TypeScript handoff of the same shape: a rendezvous (or buffered) queue between two async tasks. */
class PlainChannel<A> {
  private readonly buffer: Array<A> = []
  private readonly senders: Array<{ value: A; resume: () => void }> = []
  private readonly receivers: Array<(value: A) => void> = []
  constructor(private readonly capacity: number) {}

  send(value: A): Promise<void> {
    const receiver = this.receivers.shift()
    if (receiver !== undefined) return (receiver(value), Promise.resolve())
    if (this.buffer.length < this.capacity) return (this.buffer.push(value), Promise.resolve())
    return new Promise((resume) => this.senders.push({ value, resume }))
  }

  receive(): Promise<A> {
    const sender = this.senders.shift()
    if (this.buffer.length > 0) {
      const value = this.buffer.shift()!
      if (sender !== undefined) this.buffer.push(sender.value), sender.resume()
      return Promise.resolve(value)
    }
    if (sender !== undefined) return (sender.resume(), Promise.resolve(sender.value))
    return new Promise((resolve) => this.receivers.push(resolve))
  }
}

const plainHandoff = async (capacity: number) => {
  const channel = new PlainChannel<number>(capacity)
  const sender = async () => {
    for (let i = 0; i < MESSAGES; i++) await channel.send(i)
  }
  const receiver = async () => {
    let sum = 0
    for (let i = 0; i < MESSAGES; i++) sum += await channel.receive()
    return sum
  }
  return (await Promise.all([sender(), receiver()]))[1]
}

/** Overhead per channel message: one `par` branch sends 1000 values, the other receives them, against two async tasks. */
export async function channelMessages(): Promise<void> {
  const indices = Array.from({ length: MESSAGES }, (_, i) => i)
  const x = Term.var("x")
  const term = (capacity: number) =>
    Term.channels(
      [{ name: "c", capacity }],
      Term.par([
        Term.lam("x", Term.list(indices.map((i) => Term.app(Term.send("c"), Term.lit(i))))),
        Term.lam("x", Term.list(indices.map(() => Term.app(Term.receive("c"), x))))
      ])
    )
  const traced = createRuntime({ model: Scripted.echo(), trace: "agent" })
  const quiet = createRuntime({ model: Scripted.echo(), trace: "off" })
  const rows: Array<Array<string>> = []
  for (const capacity of [0, 16]) {
    const t = term(capacity)
    const check = await traced.run(t, null)
    const received = (check.result as { readonly pair: readonly [unknown, ReadonlyArray<number>] }).pair[1]
    if (received[MESSAGES - 1] !== MESSAGES - 1) throw new Error("the receiver lost a message")
    const withTrace = await warm(() => traced.run(t, null))
    const withoutTrace = await warm(() => quiet.run(t, null), 1000)
    const plain = await warm(() => plainHandoff(capacity), 1000)
    rows.push([
      capacity === 0 ? "rendezvous (capacity 0)" : `buffered (capacity ${capacity})`,
      fmt(withTrace / MESSAGES, 2),
      fmt(withoutTrace / MESSAGES, 2),
      fmt(plain / MESSAGES, 3),
      `${fmt(withoutTrace / plain, 1)}×`
    ])
  }
  table(
    `Channel message between two par branches (${MESSAGES} messages per run; warm: after ≥ 3 s; plain TS: two async tasks and a promise queue)`,
    ["channel", "µs/message (trace agent)", "µs/message (trace off)", "plain TS µs/message", "ratio (trace off)"],
    rows
  )
  await Promise.all([traced.close(), quiet.close()])
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await (process.argv[2] === "groupchat" ? groupChat() : process.argv[2] === "channels" ? channelMessages() : run())
}
