/**
 * Checkpoints, each figure beside a baseline measured in the same run:
 * - the cost of a checkpoint before every oracle call on a 20-step ReAct loop on a zero-latency
 *   model: no checkpoints (the baseline), entries kept in memory (`Checkpoint.journal`), a term that
 *   may pause at an `ask` (answers noted, no store), entries
 *   written as text to a location in memory, to a directory without `fdatasync` (survives a crash of
 *   the process) and with it (survives a crash of the machine; the default) — warm medians of rounds
 *   that take turns, and the first run of each in this process (cold);
 * - size and time of that run's journal and newest checkpoint, and of a machine 100,000 frames deep;
 * - resume latency: reading, checking and restoring the newest checkpoint and driving it to its first
 *   live model call, in a new process (cold: `node -e 0`, a plain run's start, the resume) and in this
 *   one (warm).
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as z from "zod"
import { Checkpoint, CheckpointStore, createRuntime, Evaluator, Scripted, Term, Tools } from "lambdagent"
import { fmt, measure, table } from "./harness.ts"

const add = Tools.define({ name: "add", description: "Add two numbers.", input: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => a + b })
const agent = Term.react({ think: Term.llm({ system: "think", conversation: false }), tools: ["add", "terminate"], maxSteps: 25 })
const STEPS = 20
const resumeScript = fileURLToPath(new URL("./fixtures/resume.mjs", import.meta.url))

const model = () => {
  let n = 0
  return Scripted.respond(() => (++n % STEPS === 0 ? '{"tool":"terminate","args":"done"}' : '{"tool":"add","args":{"a":1,"b":2}}'))
}

const deepTerm = (n: number) => {
  const v = Term.var
  const half = Term.lam("x", Term.app(v("f"), Term.lam("y", Term.app(Term.app(v("x"), v("x")), v("y")))))
  const fix = Term.lam("f", Term.app(half, half))
  const sum = Term.lam(
    "self",
    Term.lam(
      "k",
      Term.if(Term.eq(v("k"), Term.lit(0)), Term.app(Term.tool("bottom"), Term.lit(0)), Term.add(v("k"), Term.app(v("self"), Term.sub(v("k"), Term.lit(1)))))
    )
  )
  return Term.app(Term.app(fix, sum), Term.lit(n))
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/**
 * Median ms per run of each variant: `rounds` rounds, in each of which every variant runs `runs`
 * times in turn (so a change of the machine's load falls on all of them); the median of the rounds'
 * medians. Also the time of each variant's first run (cold, in this process).
 */
const takingTurns = async (variants: ReadonlyArray<readonly [string, () => Promise<unknown>, number]>, rounds: number) => {
  const cold = new Map<string, number>()
  const perRound = new Map<string, Array<number>>(variants.map(([name]) => [name, []]))
  for (let round = 0; round < rounds; round++) {
    for (const [name, run, runs] of variants) {
      const times: Array<number> = []
      for (let i = 0; i < runs; i++) {
        const started = performance.now()
        await run()
        times.push(performance.now() - started)
      }
      if (!cold.has(name)) cold.set(name, times[0]!)
      perRound.get(name)!.push(median(times))
    }
  }
  return new Map(variants.map(([name]) => [name, { warm: median(perRound.get(name)!), cold: cold.get(name)! }]))
}

const child = (args: ReadonlyArray<string>) => {
  const started = performance.now()
  const r = spawnSync(process.execPath, args, { encoding: "utf8" })
  const wall = performance.now() - started
  if (r.status !== 0) throw new Error(`${args.join(" ")} failed: ${r.stderr}`)
  return { wall, out: r.stdout.trim() === "" ? {} : (JSON.parse(r.stdout) as { imported?: number; read?: number; first?: number }) }
}

export const run = async (): Promise<void> => {
  const runtime = createRuntime({ model: model(), tools: [add], trace: "agent" })
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-bench-"))
  const synced = CheckpointStore.directory({ path: join(dir, "synced"), runId: "bench", maxCheckpoints: 50 })
  const unsynced = CheckpointStore.directory({ path: join(dir, "unsynced"), runId: "bench", maxCheckpoints: 50, fsync: false })
  const memory = Effect.runSync(CheckpointStore.open(CheckpointStore.memoryLocation(), { runId: "bench", maxCheckpoints: 50 }))
  let entries = 0
  const counted = (save: (entry: Checkpoint.Entry) => Effect.Effect<void, unknown>) => ({
    save: (entry: Checkpoint.Entry) => (entries++, save(entry) as Effect.Effect<void, never>)
  })
  const journal = () => {
    const j = Checkpoint.journal()
    return runtime.run(agent, "go", { checkpoint: counted(j.save) })
  }
  // a term that may pause at an `ask` (which this input never reaches) notes each answer, to hand over a checkpoint if it does
  const mayPause = Term.compose([
    agent,
    Term.lam("x", Term.if(Term.eq(Term.var("x"), Term.lit("never")), Term.app(Term.ask("Go on?"), Term.var("x")), Term.var("x")))
  ])
  await runtime.run(agent, "go", { checkpoint: counted(Checkpoint.journal().save) })
  const perRun = entries
  const figures = await takingTurns(
    [
      ["none", () => runtime.run(agent, "go"), 40],
      ["journal", journal, 40],
      ["pausable", () => runtime.run(mayPause, "go"), 40],
      ["memory", () => runtime.run(agent, "go", { checkpoint: { save: memory.save } }), 40],
      ["unsynced", () => runtime.run(agent, "go", { checkpoint: { save: unsynced.save } }), 10],
      ["synced", () => runtime.run(agent, "go", { checkpoint: { save: synced.save } }), 3]
    ],
    7
  )
  const base = figures.get("none")!
  const row = (label: string, name: string) => {
    const f = figures.get(name)!
    const over = name === "none" ? "" : `+${fmt(((f.warm - base.warm) / base.warm) * 100, 0)}%`
    const each = name === "none" ? "" : fmt(((f.warm - base.warm) * 1000) / perRun, 1)
    return [label, fmt(f.cold, 2), fmt(f.warm, 3), over, each]
  }
  table(
    `${STEPS}-step ReAct loop, zero-latency model, a checkpoint before every oracle call (${perRun} a run); cold: first run in this process, warm: median of 7 rounds taking turns`,
    ["checkpoints", "cold ms/run", "warm ms/run", "overhead", "µs/checkpoint"],
    [
      row("none (baseline)", "none"),
      row("entries kept in memory (Checkpoint.journal)", "journal"),
      row("none kept: a term that may pause at an ask", "pausable"),
      row("written as text to a location in memory", "memory"),
      row("to a directory, no fdatasync (process-crash safe)", "unsynced"),
      row("to a directory, fdatasync each (machine-crash safe)", "synced")
    ]
  )

  // the journal of one run, its newest checkpoint, and reading it back
  const journalDir = join(dir, "one")
  const one = CheckpointStore.directory({ path: journalDir, runId: "one", maxCheckpoints: 100 })
  await runtime.run(agent, "go", { checkpoint: { save: one.save } })
  await runtime.close()
  const journalFile = join(journalDir, readdirSync(journalDir).find((f) => f.endsWith(".checkpoint.jsonl"))!)
  const lines = readFileSync(journalFile, "utf8").trimEnd().split("\n")
  const newest = CheckpointStore.read(journalFile)
  const newestText = JSON.stringify(newest)
  const read = measure(() => CheckpointStore.read(journalFile))
  const restoreWhole = measure(() => Checkpoint.restore(Checkpoint.parse(newestText)))
  const encodeWhole = measure(() => JSON.stringify(Checkpoint.extend(CheckpointStore.read(journalFile), [])))

  const term = deepTerm(100_000)
  const exec = Evaluator.start(term, { budget: { steps: 100_000_000 } })
  const step = exec.next()
  const pending = step._tag === "Suspended" ? step.request : undefined
  const deepCapture = measure(() => JSON.stringify(Checkpoint.capture(exec, pending)), 3, 1)
  const deepText = JSON.stringify(Checkpoint.capture(exec, pending))
  const deepDecode = measure(() => Checkpoint.restore(Checkpoint.parse(deepText)), 3, 1)
  table(
    "checkpoint size and time (warm medians)",
    ["what", "bytes", "encode ms", "read + check ms", "restore ms"],
    [
      [`${STEPS}-step ReAct: its journal (a base, ${lines.length - 1} deltas)`, String(statSync(journalFile).size), "", fmt(read.medianMs, 3), ""],
      [`  its first entry (the run's start)`, String(Buffer.byteLength(lines[0]!)), "", "", ""],
      [`  a delta (median)`, String(median(lines.slice(1).map((l) => Buffer.byteLength(l)))), "", "", ""],
      [
        `  its newest checkpoint, whole (${newest.answers.length} answers)`,
        String(newestText.length),
        fmt(encodeWhole.medianMs, 3),
        "",
        fmt(restoreWhole.medianMs, 3)
      ],
      ["100,000 frames deep (capture + JSON)", String(deepText.length), fmt(deepCapture.medianMs, 0), "", fmt(deepDecode.medianMs, 0)]
    ]
  )

  // resume latency: new processes, then this one
  const COLD = 5
  const floor = median(Array.from({ length: COLD }, () => child(["-e", "0"]).wall))
  const starts = Array.from({ length: COLD }, () => child([resumeScript, "start"]))
  const resumes = Array.from({ length: COLD }, () => child([resumeScript, "resume", journalFile]))
  const at = (xs: typeof starts, key: "imported" | "read" | "first") => median(xs.map((x) => x.out[key] ?? Number.NaN))
  let first = 0
  let stop = new AbortController()
  const warm = createRuntime({
    model: Scripted.respond(() => {
      first ||= performance.now()
      stop.abort()
      return ""
    }),
    tools: [add],
    trace: "agent"
  })
  const warmTimes: Array<number> = []
  for (let i = 0; i < 200; i++) {
    first = 0
    stop = new AbortController()
    const started = performance.now()
    await warm.resume(CheckpointStore.read(journalFile), { signal: stop.signal }).catch(() => undefined)
    warmTimes.push(first - started)
  }
  await warm.close()
  table(
    `resume latency: the ${STEPS}-step run's newest checkpoint (${newest.answers.length} answers replayed from its base) read, checked, restored and driven to its first live model call; ms (medians of ${COLD} processes, 200 warm)`,
    ["process", "wall ms", "lambdagent loaded at", "checkpoint read at", "first model call at", "after load"],
    [
      ["node -e 0", fmt(floor, 1), "", "", "", ""],
      [
        "a plain run, to its first model call",
        fmt(median(starts.map((s) => s.wall)), 1),
        fmt(at(starts, "imported"), 1),
        "",
        fmt(at(starts, "first"), 1),
        fmt(at(starts, "first") - at(starts, "imported"), 1)
      ],
      [
        "resume, to its first live model call",
        fmt(median(resumes.map((s) => s.wall)), 1),
        fmt(at(resumes, "imported"), 1),
        fmt(at(resumes, "read"), 1),
        fmt(at(resumes, "first"), 1),
        fmt(at(resumes, "first") - at(resumes, "imported"), 1)
      ],
      ["resume in this process (warm)", "", "", "", "", fmt(median(warmTimes), 3)]
    ]
  )
  rmSync(dir, { recursive: true, force: true })
}
