/**
 * Offline replay: record a ReAct run (its model replies and tool outputs), replay it with no model
 * and no tools, then replay a changed agent and see where it first asks something new.
 * Run: npx tsx examples/replay.ts
 */
import * as z from "zod"
import { createRuntime, Errors, Replay, Scripted, Term, Tools } from "lambdagent"

let additions = 0
const add = Tools.define({
  name: "add",
  description: "Add two integers.",
  input: z.object({ a: z.number().int(), b: z.number().int() }),
  run: ({ a, b }) => (additions++, a + b)
})

const agentWith = (system: string) => Term.react({ think: Term.llm({ name: "think", system }), tools: ["add", "terminate"], maxSteps: 5 })
export const agent = agentWith("Solve arithmetic with the tools.")

const model = Scripted.sequence(['{"tool": "add", "args": {"a": 19, "b": 23}}', '{"tool": "terminate", "args": "The answer is 42."}'])

export async function main(): Promise<{ recorded: string; replayed: string; toolRunsInReplay: number; divergence: string }> {
  // 1. a live run, recording every oracle answer
  const answers: Array<Replay.Entry> = []
  const live = createRuntime({ model, tools: [add] })
  const out = await live.run(agent, "What is 19 + 23?", { record: (entry) => answers.push(entry) })
  await live.close()
  const text = Term.stringify(Replay.make({ term: agent, answers }))

  // 2. the same run from the recording: no model, no tools
  const before = additions
  const offline = createRuntime()
  const again = await offline.run(agent, "What is 19 + 23?", { replay: { recording: Replay.parse(text) } })

  // 3. a changed prompt diverges at its first LLM call
  const divergence = await offline.run(agentWith("Solve arithmetic."), "What is 19 + 23?", { replay: { recording: Replay.parse(text) } }).then(
    () => "none",
    (error: unknown) => (error instanceof Errors.ReplayDivergence ? `request ${error.key}: ${error.form}` : String(error))
  )
  await offline.close()
  return { recorded: String(out.value), replayed: String(again.value), toolRunsInReplay: additions - before, divergence }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
