/**
 * Two agents on the same input at the same time, merged by a third (`par` + a merge agent).
 * Run: npx tsx examples/parallel.ts
 */
import { createRuntime, Scripted, Term } from "lambdagent"

export const agent = Term.compose([
  Term.par([Term.llm({ name: "researcher", system: "Research the topic." }), Term.llm({ name: "critic", system: "Critique the topic." })], "concat"),
  Term.llm({ name: "merge", system: "Synthesize the research and the critique." })
])

export async function main(): Promise<{ result: string; elapsedMs: number }> {
  // each call takes 100 ms: the two branches overlap, so the run takes about 200 ms, not 300
  const runtime = createRuntime({ model: Scripted.respond((req) => `<${req.messages[0]!.content.split(" ")[0]}>`, { latencyMs: 100 }) })
  const started = Date.now()
  const out = await runtime.run(agent, "lambda calculus")
  await runtime.close()
  return { result: String(out.value), elapsedMs: Date.now() - started }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
