/**
 * A durable pipeline with channels: three branches — a writer, a reviewer and an editor — pass
 * the work along through two channels, checkpointed before every call. The process dies while the
 * editor is being asked; resumed from the newest checkpoint in a fresh runtime, the branches get
 * the messages they got before, so only the editor is asked again; the resumed run's recording
 * then replays the whole pipeline offline, with no model at all.
 * Run: npx tsx examples/channels-resume.ts
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CheckpointStore, createRuntime, Replay, Scripted, Term } from "lambdagent"

const step = (system: string) => Term.llm({ system, conversation: false })

export const agent = Term.channels(
  [
    { name: "drafts", capacity: 0 },
    { name: "notes", capacity: 1 }
  ],
  Term.par([
    Term.compose([step("Draft."), Term.send("drafts")]),
    Term.compose([Term.receive("drafts"), step("Review."), Term.send("notes")]),
    Term.compose([Term.receive("notes"), step("Edit.")])
  ])
)

/** Each stage answers `Stage(input)`, so the result shows the path the work took. */
const stage = (req: { messages: ReadonlyArray<{ content: string }> }) => `${req.messages[0]!.content.replace(".", "")}(${req.messages.at(-1)!.content})`

export async function main(): Promise<{ result: unknown; askedAfterResume: Array<string>; replayed: unknown }> {
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-example-"))
  try {
    const crashing = Scripted.respond((req) => {
      if (req.messages[0]!.content === "Edit.") throw new Error("the process died")
      return stage(req)
    })
    const store = CheckpointStore.directory({ path: dir, runId: "pipeline" })
    const first = createRuntime({ model: crashing })
    await first.run(agent, "the topic", { checkpoint: { save: store.save } }).catch(() => undefined)
    await first.close()

    // another process: the newest checkpoint was taken inside the channels scope, before "Edit."
    const askedAfterResume: Array<string> = []
    const model = Scripted.respond((req) => {
      askedAfterResume.push(req.messages[0]!.content)
      return stage(req)
    })
    const answers: Array<Replay.Entry> = []
    const second = createRuntime({ model })
    const out = await second.resume(CheckpointStore.read(CheckpointStore.list(dir).at(-1)!.key), { record: (entry) => void answers.push(entry) })
    await second.close()

    // the whole run from its recording, messages included: no model is asked
    const offline = createRuntime()
    const again = await offline.run(agent, "the topic", { replay: { recording: Replay.make({ term: agent, answers }) } })
    await offline.close()
    return { result: out.result, askedAfterResume, replayed: again.result }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
