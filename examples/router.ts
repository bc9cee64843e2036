/**
 * A router: classify the question, then hand it to the matching specialist (`route`).
 * Run: npx tsx examples/router.ts
 */
import { createRuntime, Scripted, Term } from "lambdagent"

export const agent = Term.route({
  classify: Term.llm({ name: "classifier", system: "Answer with one word: code, math or general." }),
  routes: [
    ["code", Term.llm({ name: "coder", system: "You are a programmer." })],
    ["math", Term.llm({ name: "mathematician", system: "You are a mathematician." })]
  ],
  default: Term.llm({ name: "assistant", system: "You are a helpful assistant." })
})

const offline = Scripted.respond((req) => {
  const system = req.messages[0]!.content
  const question = req.messages.at(-1)!.content
  if (system.startsWith("Answer with one word")) return /\d/.test(question) ? "math" : /function|bug/.test(question) ? "code" : "general"
  return `${system} → ${question}`
})

export async function main(): Promise<Array<string>> {
  const runtime = createRuntime({ model: offline })
  const answers: Array<string> = []
  for (const q of ["fix this function", "what is 2 + 2", "hello there"]) answers.push(String((await runtime.run(agent, q)).value))
  await runtime.close()
  return answers
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
