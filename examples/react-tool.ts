/**
 * A ReAct agent with a host tool: think, call `add`, observe, terminate.
 * Run: npx tsx examples/react-tool.ts
 */
import * as z from "zod"
import { createRuntime, Scripted, Term, Tools } from "lambdagent"

export const add = Tools.define({
  name: "add",
  description: "Add two integers.",
  input: z.object({ a: z.number().int(), b: z.number().int() }),
  run: ({ a, b }) => a + b
})

export const agent = Term.react({
  think: Term.llm({ name: "think", system: "Solve arithmetic with the tools." }),
  tools: ["add", "terminate"],
  maxSteps: 5
})

// The offline model plays a model that uses the tool once, then answers from the observation.
const offline = Scripted.respond((req) => {
  const state = req.messages.at(-1)!.content
  const observed = /Observation: (.*)$/m.exec(state)
  return observed === null ? 'I should add them. {"tool": "add", "args": {"a": 19, "b": 23}}' : `{"tool": "terminate", "args": "The answer is ${observed[1]}."}`
})

export async function main(): Promise<{ answer: string; toolCalls: number }> {
  const runtime = createRuntime({ model: offline, tools: [add] })
  const out = await runtime.run(agent, "What is 19 + 23?")
  await runtime.close()
  return { answer: String(out.value), toolCalls: out.stats.toolCalls }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
