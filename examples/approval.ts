/**
 * Human in the loop: a chain drafts a plan, asks a person to approve it, then carries it out.
 * The run pauses at the question as a checkpoint (plain JSON: keep it in a file or a database);
 * a fresh runtime — another process, days later — resumes it with the answer. The draft is not
 * made again.
 * Run: npx tsx examples/approval.ts
 */
import { createRuntime, Errors, Scripted, Term } from "lambdagent"

export const agent = Term.compose([
  Term.llm({ name: "draft", system: "Draft a plan.", conversation: false }),
  Term.ask("Approve this plan, or say what to change."),
  Term.llm({ name: "carry-out", system: "Carry out the approved plan.", conversation: false })
])

export async function main(): Promise<{ question: string; result: string; calls: ReadonlyArray<string> }> {
  const calls: Array<string> = []
  const model = Scripted.respond((req) => {
    calls.push(req.messages[0]!.content)
    return `${req.messages[0]!.content} → ${req.messages.at(-1)!.content}`
  })
  const first = createRuntime({ model })
  const paused = await first.run(agent, "3 days in Rome").then(
    () => undefined,
    (error: unknown) => {
      if (error instanceof Errors.RunPaused) return error
      throw error
    }
  )
  await first.close()
  if (paused === undefined) throw new Error("the run did not ask")
  const saved = JSON.stringify(paused.checkpoint)

  const later = createRuntime({ model })
  const out = await later.resume(JSON.parse(saved), { answer: "Approved, but add the Vatican." })
  await later.close()
  return { question: paused.question, result: String(out.value), calls }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
