/**
 * A three-stage pipeline: extract → analyze → draft (`compose`).
 * Run: npx tsx examples/chain.ts
 */
import { createRuntime, Scripted, Term } from "lambdagent"

export const agent = Term.compose([
  Term.llm({ name: "extract", system: "Extract the key facts." }),
  Term.llm({ name: "analyze", system: "Analyze the facts." }),
  Term.llm({ name: "draft", system: "Write a short draft." })
])

export async function main(): Promise<{ result: string; stages: Array<string> }> {
  const runtime = createRuntime({ model: Scripted.respond((req) => `${req.messages[0]!.content.split(" ")[0]}(${req.messages.at(-1)!.content})`) })
  const out = await runtime.run(agent, "report")
  await runtime.close()
  return { result: String(out.value), stages: out.trace.filter((e) => e.kind === "llm").map((e) => e.name) }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
