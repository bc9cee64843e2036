/**
 * A single LLM agent, run offline on the scripted model.
 * Run: npx tsx examples/simple.ts
 */
import { createRuntime, Scripted, Term } from "lambdagent"

export const agent = Term.llm({ name: "summarizer", system: "Summarize the text in one sentence." })

export async function main(): Promise<string> {
  const runtime = createRuntime({ model: Scripted.respond((req) => `Summary: ${req.messages.at(-1)!.content.slice(0, 40)}`) })
  const out = await runtime.run(agent, "Lambda terms make agents inspectable, composable and bounded.")
  await runtime.close()
  return String(out.value)
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
