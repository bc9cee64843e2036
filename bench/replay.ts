/**
 * Offline replay (cold and warm figures, this process), on the 20-step ReAct loop of the checkpoint
 * benchmark with a zero-latency scripted model: the live run (the baseline, same run), the live
 * run recording every answer, and the replay of its recording with no model or tools; the
 * recording's size and the time to read it back (`Replay.parse`: JSON, schema, digest).
 */
import * as z from "zod"
import { createRuntime, Replay, Scripted, Term, Tools } from "lambdagent"
import { fmt, measure, measureAsync, table } from "./harness.ts"

const add = Tools.define({ name: "add", description: "Add two numbers.", input: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => a + b })
const agent = Term.react({ think: Term.llm({ system: "think", conversation: false }), tools: ["add", "terminate"], maxSteps: 25 })
const STEPS = 20

const model = () => {
  let n = 0
  return Scripted.respond(() => (++n % STEPS === 0 ? '{"tool":"terminate","args":"done"}' : '{"tool":"add","args":{"a":1,"b":2}}'))
}

export const run = async (): Promise<void> => {
  const live = createRuntime({ model: model(), tools: [add], trace: "agent" })
  let answers: Array<Replay.Entry> = []
  const base = await measureAsync(() => live.run(agent, "go"), 31, 20)
  const recording = await measureAsync(
    () => {
      answers = []
      return live.run(agent, "go", { record: (entry) => answers.push(entry) })
    },
    31,
    20
  )
  await live.close()
  const text = Term.stringify(Replay.make({ term: agent, answers }))
  const parsed = Replay.parse(text)
  const offline = createRuntime({ trace: "agent" })
  const replay = await measureAsync(() => offline.run(agent, "go", { replay: { recording: parsed } }), 31, 20)
  await offline.close()
  const read = measure(() => Replay.parse(text), 31, 10)
  const over = (m: { medianMs: number }) => `${fmt(((m.medianMs - base.medianMs) / base.medianMs) * 100, 0)}%`
  table(
    `${STEPS}-step ReAct loop, zero-latency model (${answers.length} answers a run; cold: the first run of each in this process, warm: medians)`,
    ["run", "cold ms", "warm ms/run", "warm vs live"],
    [
      ["live (baseline)", fmt(base.firstMs, 2), fmt(base.medianMs, 2), ""],
      ["live, recording every answer", fmt(recording.firstMs, 2), fmt(recording.medianMs, 2), over(recording)],
      ["replay of the recording (no model, no tools)", fmt(replay.firstMs, 2), fmt(replay.medianMs, 2), over(replay)]
    ]
  )
  table(
    "recording size and read time (cold: the first read; warm: median)",
    ["recording", "bytes", "Replay.parse cold ms", "warm ms"],
    [[`${STEPS}-step ReAct`, String(text.length), fmt(read.firstMs, 2), fmt(read.medianMs, 2)]]
  )
}
