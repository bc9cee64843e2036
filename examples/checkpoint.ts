/**
 * A durable run: checkpoint a three-stage chain before every call, stop it after the second
 * call (as a crash would), and resume it from its newest checkpoint in a fresh runtime. The
 * resumed run asks only the calls that were not answered yet, and records every answer of the
 * run — those before the checkpoint too — so that it replays offline, with no model at all.
 * Run: npx tsx examples/checkpoint.ts
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CheckpointStore, createRuntime, Replay, Scripted, Term } from "lambdagent"

export const agent = Term.compose([
  Term.llm({ name: "extract", system: "Extract.", conversation: false }),
  Term.llm({ name: "analyze", system: "Analyze.", conversation: false }),
  Term.llm({ name: "write", system: "Write.", conversation: false })
])

export async function main(): Promise<{ result: string; callsAfterResume: number; recorded: number; replayed: string }> {
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
    const answers: Array<Replay.Entry> = []
    const second = createRuntime({ model })
    const out = await second.resume(CheckpointStore.read(newest.key), { record: (entry) => void answers.push(entry) })
    await second.close()

    // the whole run, replayed from its recording: no model is asked
    const offline = createRuntime()
    const again = await offline.run(agent, "report", { replay: { recording: Replay.make({ term: agent, answers }) } })
    await offline.close()
    return { result: String(out.value), callsAfterResume, recorded: answers.length, replayed: String(again.value) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
