/**
 * Durable runs on a cluster: a run is submitted to PostgreSQL and run by a runner — here this
 * process, in single-process mode, which needs nothing but PostgreSQL. Submitting the same id
 * again gives the same one run; a run that asks a person waits in the database, not in a process,
 * until it is answered. See docs/cluster.md for runners on several machines.
 * Run: LAMBDAGENT_PG_URL=postgres://postgres@127.0.0.1:5432/test npx tsx examples/cluster.ts
 */
import { Term, Tools } from "lambdagent"
import { connect } from "lambdagent/cluster"

export const agent = Term.compose([
  Term.llm({ name: "draft", system: "Draft a plan.", conversation: false }),
  Term.ask("Approve this plan, or say what to change."),
  Term.tool("publish")
])

export async function main(prefix = "lambdagent_example"): Promise<{ created: ReadonlyArray<boolean>; question?: string; result: unknown; published: number }> {
  let published = 0
  const publish = Tools.define({ name: "publish", description: "Publish a plan.", run: (plan: string) => (published++, `published: ${plan}`) })
  // the runner's model is the offline scripted echo model: it repeats the input
  const cluster = await connect({ prefix, tools: [publish] })
  try {
    const id = `plan-${Date.now()}`
    const first = await cluster.submit(agent, "3 days in Rome", { id })
    const second = await cluster.submit(agent, "3 days in Rome", { id })
    let status = await cluster.status(id)
    while (status.state !== "waiting") status = await cluster.result(id)
    await cluster.answer(id, "Approved: 3 days in Rome, with the Vatican")
    const ended = await cluster.result(id, { wait: true })
    return {
      created: [first.created, second.created],
      ...(status.question !== undefined ? { question: status.question.question } : {}),
      result: ended.outcome?.result,
      published
    }
  } finally {
    await cluster.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
