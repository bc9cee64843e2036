/**
 * Two agents on the same input at the same time, merged by a third (`par` + a merge agent).
 * Run: npx tsx examples/parallel.ts
 */
import * as Effect from "effect/Effect"
import { createRuntime, type LanguageModel, Scripted, Term } from "lambdagent"

export const agent = Term.compose([
  Term.par([Term.llm({ name: "researcher", system: "Research the topic." }), Term.llm({ name: "critic", system: "Critique the topic." })], "concat"),
  Term.llm({ name: "merge", system: "Synthesize the research and the critique." })
])

export async function main(): Promise<{ result: string; mostCallsAtOnce: number }> {
  // each call takes 100 ms; counting the calls in flight shows the two branches overlap
  const scripted = Scripted.respond((req) => `<${req.messages[0]!.content.split(" ")[0]}>`, { latencyMs: 100 })
  let inFlight = 0
  let mostCallsAtOnce = 0
  const model: LanguageModel.LanguageModelShape = {
    ...scripted,
    chat: (request) =>
      Effect.acquireUseRelease(
        Effect.sync(() => (mostCallsAtOnce = Math.max(mostCallsAtOnce, ++inFlight))),
        () => scripted.chat(request),
        () => Effect.sync(() => inFlight--)
      )
  }
  const runtime = createRuntime({ model })
  const out = await runtime.run(agent, "lambda calculus")
  await runtime.close()
  return { result: String(out.value), mostCallsAtOnce }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
