/**
 * Two agents talking over A2A: a trip planner published as an A2A server, and a ReAct concierge
 * whose `planner` tool is that server's A2A client. Here both live in one process; across
 * processes it is `lambdagent serve examples/a2a/server.yml` and `examples/a2a/client.yml`.
 * Run: npx tsx examples/a2a.ts
 */
import { createRuntime, Scripted, Term } from "lambdagent"
import { a2aTool, serve } from "lambdagent/a2a"

export const concierge = Term.react({
  think: Term.llm({ name: "think", system: "Help travellers. Ask the planner for plans." }),
  tools: ["planner", "terminate"],
  maxSteps: 4
})

// The offline model plays a concierge that asks the planner once, then answers with its plan.
const offline = Scripted.respond((req) => {
  const observed = /Observation: ([^\n]*)/.exec(req.messages.at(-1)!.content)
  return observed === null ? '{"tool": "planner", "args": "2 days in Rome"}' : JSON.stringify({ tool: "terminate", args: `Your plan: ${observed[1]}` })
})

export async function main(): Promise<{ answer: string; skills: Array<string> }> {
  const planner = await serve({
    agent: Term.llm({ name: "planner", system: "Plan short trips, one line per day." }),
    runtimeOptions: { model: Scripted.fixed("Day 1: Colosseum. Day 2: Vatican.") },
    name: "trip-planner",
    skills: [{ name: "Plan a trip", examples: ["2 days in Rome"] }]
  })
  const runtime = createRuntime({ model: offline, tools: [a2aTool({ name: "planner", url: planner.url, timeout: 10 })] })
  try {
    const card = (await (await fetch(planner.cardUrl)).json()) as { skills: Array<{ name: string }> }
    const out = await runtime.run(concierge, "I have two days in Rome.")
    return { answer: String(out.value), skills: card.skills.map((s) => s.name) }
  } finally {
    await runtime.close()
    await planner.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
