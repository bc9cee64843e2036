/**
 * Memory: earlier exchanges of the session are prepended to the input, and each result is stored.
 * Run: npx tsx examples/memory.ts
 */
import { createRuntime, Scripted, Term } from "lambdagent"

export const agent = Term.memory({
  agent: Term.llm({ name: "assistant", system: "You are a helpful assistant.", conversation: false }),
  size: 10,
  ttl: 3600,
  scope: "session"
})

export async function main(): Promise<Array<string>> {
  // The offline model answers with what it can see of the conversation.
  const runtime = createRuntime({
    model: Scripted.respond((req) => {
      const input = req.messages.at(-1)!.content
      const name = /my name is (\w+)/i.exec(input)?.[1]
      return name === undefined ? "I don't know your name yet." : `Your name is ${name}.`
    })
  })
  const replies: Array<string> = []
  replies.push(String((await runtime.run(agent, "Hello, my name is Ada.", { session: "demo" })).value))
  replies.push(String((await runtime.run(agent, "What is my name?", { session: "demo" })).value))
  replies.push(String((await runtime.run(agent, "What is my name?", { session: "someone-else" })).value))
  await runtime.close()
  return replies
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
