/**
 * A guard: the answer must look like a JSON object (checked by a pure validator term); retry
 * twice, else fall back to a fixed value.
 * Run: npx tsx examples/guard.ts
 */
import { createRuntime, Scripted, Term } from "lambdagent"

// λx. "{" ≤ x < "|": strings order by code unit, so this holds exactly when x starts with "{"
export const startsWithBrace = Term.lam("x", Term.and(Term.gte(Term.var("x"), Term.lit("{")), Term.lt(Term.var("x"), Term.lit("|"))))

export const agent = Term.guard({
  agent: Term.llm({ name: "json-writer", system: "Answer with a JSON object.", conversation: false }),
  validate: startsWithBrace,
  retry: 2,
  fallback: { value: Term.lit('{"error":"no valid answer"}') }
})

export async function main(): Promise<{ result: string; attempts: number }> {
  const runtime = createRuntime({ model: Scripted.sequence(["Sure! Here it is:", '{"city":"Paris"}']) })
  const out = await runtime.run(agent, "Where is the Louvre?")
  await runtime.close()
  return { result: String(out.value), attempts: out.stats.llmCalls }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
