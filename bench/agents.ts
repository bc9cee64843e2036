/**
 * Orchestration overhead per agent step with a zero-latency scripted model, next to the same loop
 * written as plain TypeScript in the same run; and `par` of 10 branches on a 100 ms model.
 */
import * as z from "zod"
import { createRuntime, Scripted, Term, Tools } from "lambdagent"
import { fmt, measureAsync, measure, table } from "./harness.ts"

const STEPS = 20
const add = Tools.define({
  name: "add",
  description: "Add two numbers.",
  input: z.object({ a: z.number(), b: z.number() }),
  run: ({ a, b }) => a + b
})
const callText = "{\"tool\":\"add\",\"args\":{\"a\":1,\"b\":2}}"

/** The same ReAct loop by hand: call the model, parse the call, run the tool, extend the state. */
const plainReact = (model: (messages: ReadonlyArray<{ role: string; content: string }>) => string, input: string): string => {
  let state = input
  for (let step = 1; step <= STEPS; step++) {
    const thought = model([{ role: "system", content: "Use tools." }, { role: "user", content: state }])
    const call = JSON.parse(thought) as { tool: string; args: { a: number; b: number } }
    const parsed = add.input!.parse(call.args) as { a: number; b: number }
    const observation = String(parsed.a + parsed.b)
    state = `[Previous Context]\n${state}\n\n[Step ${step}]\nThought: ${thought}\nAction: ${call.tool}\nObservation: ${observation}`
  }
  return state
}

const plainChain = (model: (messages: ReadonlyArray<{ role: string; content: string }>) => string, input: string): string => {
  let value = input
  for (const system of ["extract", "analyze", "draft"]) value = model([{ role: "system", content: system }, { role: "user", content: value }])
  return value
}

export async function run(): Promise<void> {
  const runtime = createRuntime({ model: Scripted.fixed(callText), tools: [add], trace: "agent" })
  const react = Term.react({ think: Term.llm({ system: "Use tools." }), tools: ["add"], maxSteps: STEPS })
  const chainRuntime = createRuntime({ model: Scripted.echo(), trace: "agent" })
  const chain = Term.compose(["extract", "analyze", "draft"].map((system) => Term.llm({ system, conversation: false })))
  // the plain baseline calls a function with the same cost as the scripted model's own work
  const fixedModel = () => callText
  const echoModel = (messages: ReadonlyArray<{ role: string; content: string }>) => messages[messages.length - 1]!.content

  const reactTime = await measureAsync(() => runtime.run(react, "start"), 9, 3)
  const reactPlain = measure(() => plainReact(fixedModel, "start"), 9, 3)
  const chainTime = await measureAsync(() => chainRuntime.run(chain, "text"), 9, 3)
  const chainPlain = measure(() => plainChain(echoModel, "text"), 9, 3)
  const perStep = (ms: number, steps: number) => (ms * 1000) / steps
  table(
    "Agent orchestration overhead per step (zero-latency scripted model; median of 9)",
    ["workload", "µs/step", "plain TS µs/step", "ratio"],
    [
      [`ReAct, ${STEPS} steps (think + tool)`, fmt(perStep(reactTime.medianMs, STEPS), 2), fmt(perStep(reactPlain.medianMs, STEPS), 2), `${fmt(reactTime.medianMs / reactPlain.medianMs, 1)}×`],
      ["chain, 3 stages", fmt(perStep(chainTime.medianMs, 3), 2), fmt(perStep(chainPlain.medianMs, 3), 2), `${fmt(chainTime.medianMs / chainPlain.medianMs, 1)}×`]
    ]
  )

  const slow = createRuntime({ model: Scripted.echo({ latencyMs: 100 }) })
  const branches = Array.from({ length: 10 }, (_, i) => Term.llm({ system: `branch ${i}` }))
  const parTime = await measureAsync(() => slow.run(Term.par(branches), "x"), 5, 1)
  const serialTime = await measureAsync(() => slow.run(Term.compose(branches), "x"), 1, 0)
  table(
    "par of 10 branches on a model that takes 100 ms per call",
    ["workload", "ms"],
    [["par, 10 branches", fmt(parTime.medianMs, 1)], ["the same 10 calls in sequence (compose)", fmt(serialTime.medianMs, 1)]]
  )
  await Promise.all([runtime.close(), chainRuntime.close(), slow.close()])
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
