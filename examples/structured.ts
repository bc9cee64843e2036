/**
 * Structured output: an `llm` term with an output schema answers one JSON value that matches it.
 * The first answer misses a field, so it goes back to the model with what was wrong; the repaired
 * answer is taken apart with `get`. `generateObject` does the same from a host, typed by zod.
 * Run: npx tsx examples/structured.ts
 */
import * as z from "zod"
import { createRuntime, Scripted, Term } from "lambdagent"

export const Person = z.object({ name: z.string(), born: z.number().int() })

export const extract = Term.llm({ name: "extract", system: "Extract the person.", output: { name: "person", schema: Person } })

// λp. the `born` field of the extracted person
export const bornOf = Term.compose([extract, Term.lam("p", Term.get(Term.var("p"), Term.lit("born")))])

export async function main(): Promise<{ born: unknown; calls: number; problem: string | undefined; person: { name: string; born: number } }> {
  const runtime = createRuntime({
    model: Scripted.sequence(['{"name": "Ada Lovelace"}', '{"name": "Ada Lovelace", "born": 1815}', '{"name": "Alan Turing", "born": 1912}'])
  })
  const out = await runtime.run(bornOf, "Ada Lovelace was born in 1815.")
  const problem = out.trace.find((e) => e.kind === "output")?.output
  const { object } = await runtime.generateObject({ schema: Person, prompt: "Alan Turing was born in 1912." })
  await runtime.close()
  return { born: out.value, calls: out.stats.llmCalls, problem, person: object }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
