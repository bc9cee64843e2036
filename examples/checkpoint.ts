/**
 * A durable run: checkpoint a three-stage chain before every call, stop it after the second
 * call (as a crash would), and resume it from its newest checkpoint in a fresh runtime. The
 * resumed run asks only the calls that were not answered yet.
 * Run: npx tsx examples/checkpoint.ts
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CheckpointStore, createRuntime, Scripted, Term } from "lambdagent"

export const agent = Term.compose([
  Term.llm({ name: "extract", system: "Extract.", conversation: false }),
  Term.llm({ name: "analyze", system: "Analyze.", conversation: false }),
  Term.llm({ name: "write", system: "Write.", conversation: false })
])

export async function main(): Promise<{ result: string; callsAfterResume: number }> {
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-example-"))
  try {
    let calls = 0
    const crashing = Scripted.respond((req) => {
      if (++calls === 3) throw new Error("the process died")
      return `${req.messages[0]!.content.replace(".", "")}(${req.messages.at(-1)!.content})`
    })
    const store = CheckpointStore.directory({ path: dir, runId: "report" })
    const first = createRuntime({ model: crashing })
    await first.run(agent, "report", { checkpoint: { save: store.save } }).catch(() => undefined)
    await first.close()

    // another process, days later: read the newest checkpoint and go on
    let callsAfterResume = 0
    const model = Scripted.respond((req) => {
      callsAfterResume++
      return `${req.messages[0]!.content.replace(".", "")}(${req.messages.at(-1)!.content})`
    })
    const newest = CheckpointStore.list(dir).at(-1)!
    const second = createRuntime({ model })
    const out = await second.resume(CheckpointStore.read(newest.file))
    await second.close()
    return { result: String(out.value), callsAfterResume }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
