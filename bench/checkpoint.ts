/**
 * Checkpoints (warm figures, this process):
 * - a 20-step ReAct loop on a zero-latency scripted model, without checkpoints (the baseline, same
 *   run), checkpointing before every oracle call into memory (JSON text), and into a directory
 *   (atomic write with fsync);
 * - size and capture/encode/decode time of the 20-step run's last checkpoint and of a machine
 *   100,000 frames deep.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as z from "zod"
import { Checkpoint, CheckpointStore, createRuntime, Evaluator, Scripted, Term, Tools } from "lambdagent"
import { fmt, measure, measureAsync, table } from "./harness.ts"

const add = Tools.define({ name: "add", description: "Add two numbers.", input: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => a + b })
const agent = Term.react({ think: Term.llm({ system: "think", conversation: false }), tools: ["add", "terminate"], maxSteps: 25 })
const STEPS = 20

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

export const run = async (): Promise<void> => {
  const runtime = createRuntime({ model: model(), tools: [add], trace: "agent" })
  let last = ""
  let saves = 0
  const inMemory = { save: (c: Checkpoint.Checkpoint) => Effect.sync(() => void ((last = JSON.stringify(c)), saves++)) }
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-bench-"))
  const store = CheckpointStore.directory({ path: dir, runId: "bench", maxCheckpoints: 3 })
  const base = await measureAsync(() => runtime.run(agent, "go"), 31, 20)
  saves = 0
  const memory = await measureAsync(() => runtime.run(agent, "go", { checkpoint: inMemory }), 31, 20)
  const perRun = saves / 51
  const disk = await measureAsync(() => runtime.run(agent, "go", { checkpoint: { save: store.save } }), 11, 3)
  await runtime.close()
  rmSync(dir, { recursive: true, force: true })
  const over = (m: { medianMs: number }) => `${fmt(((m.medianMs - base.medianMs) / base.medianMs) * 100, 0)}%`
  const perCheckpoint = (m: { medianMs: number }) => fmt(((m.medianMs - base.medianMs) * 1000) / perRun, 0)
  table(
    `${STEPS}-step ReAct loop, zero-latency model (${fmt(perRun, 0)} checkpoints a run; warm medians)`,
    ["run", "ms/run", "overhead", "µs/checkpoint"],
    [
      ["no checkpoints (baseline)", fmt(base.medianMs, 2), "", ""],
      ["checkpoint to memory", fmt(memory.medianMs, 2), over(memory), perCheckpoint(memory)],
      ["checkpoint to a directory (fsync)", fmt(disk.medianMs, 2), over(disk), perCheckpoint(disk)]
    ]
  )

  const parsed = JSON.parse(last) as unknown
  const small = Checkpoint.decode(parsed)
  const smallEncode = measure(() => JSON.stringify(small))
  const smallDecode = measure(() => Checkpoint.restore(Checkpoint.parse(last)))

  const term = deepTerm(100_000)
  const exec = Evaluator.start(term, { budget: { steps: 100_000_000 } })
  const step = exec.next()
  const pending = step._tag === "Suspended" ? step.request : undefined
  const deepCapture = measure(() => Checkpoint.capture(exec, pending), 3, 1)
  const deepText = JSON.stringify(Checkpoint.capture(exec, pending))
  const deepDecode = measure(() => Checkpoint.restore(Checkpoint.parse(deepText)), 3, 1)
  table(
    "checkpoint size and time (warm medians)",
    ["machine", "bytes", "capture + encode ms", "decode + restore ms"],
    [
      [`${STEPS}-step ReAct, last checkpoint`, String(last.length), fmt(smallEncode.medianMs, 3), fmt(smallDecode.medianMs, 3)],
      ["100,000 frames deep", String(deepText.length), fmt(deepCapture.medianMs, 0), fmt(deepDecode.medianMs, 0)]
    ]
  )
}
