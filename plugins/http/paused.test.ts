/**
 * Human in the loop over HTTP: a run stopped at an `ask` answers 202 with its run id, and
 * `POST /runs/:id/resume` goes on with the answer — on this server, or on a new one that keeps
 * its paused runs in the same directory.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { Scripted, Term } from "lambdagent"
import { describe, expect, it } from "vitest"
import { forget, post, start } from "./test/helpers.ts"

const agent = Term.compose([
  Term.llm({ system: "Draft.", conversation: false }),
  Term.ask("Approve this plan?"),
  Term.llm({ system: "Carry out.", conversation: false })
])
const options = { agent, runtimeOptions: { model: Scripted.echo() } } as const

interface Paused {
  status: string
  runId: string
  question: string
  input: string
  resume: string
}

describe("paused runs", () => {
  it("answer 202 with a run id, and resume with the answer", async () => {
    const server = await start(options)
    const res = await post(server, "/run", { input: "Rome", session: "alice" })
    expect(res.status).toBe(202)
    const paused = (await res.json()) as Paused
    expect(paused).toMatchObject({ status: "paused", question: "Approve this plan?", input: "Rome" })
    expect(paused.resume).toBe(`/runs/${paused.runId}/resume`)
    const done = await post(server, paused.resume, { answer: "approved" })
    expect(done.status).toBe(200)
    const body = (await done.json()) as { result: unknown; trace: Array<{ kind: string }>; stats: { llmCalls: number } }
    expect(body.result).toBe("approved")
    expect(body.trace.map((e) => e.kind)).toEqual(["llm", "ask", "llm"])
    expect(body.stats.llmCalls).toBe(2)
    // a finished run is gone
    const again = await post(server, paused.resume, { answer: "approved" })
    expect(again.status).toBe(404)
  })

  it("refuses bad resume requests with clear 4xx errors", async () => {
    const server = await start(options)
    const paused = (await (await post(server, "/run", { input: "Rome" })).json()) as Paused
    const cases: ReadonlyArray<[string, unknown, number, string]> = [
      [paused.resume, {}, 400, 'the field "answer" is required'],
      [paused.resume, { answer: "yes", input: 1 }, 400, 'unknown field "input"; accepted: answer'],
      [paused.resume, [1], 400, "expected a JSON object"],
      ["/runs/0123/resume", { answer: "yes" }, 404, 'no paused run "0123"'],
      ["/runs/..%2F..%2Fetc/resume", { answer: "yes" }, 404, "no paused run"]
    ]
    for (const [where, body, status, message] of cases) {
      const res = await post(server, where, body)
      expect(res.status, where).toBe(status)
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain(message)
    }
    const get = await fetch(`${server.url}${paused.resume}`)
    expect(get.status).toBe(405)
    // the run is still there after the bad requests
    expect((await post(server, paused.resume, { answer: "yes" })).status).toBe(200)
  })

  it("outlive the server when kept in a directory", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "paused-"))
    try {
      const first = await start({ ...options, pausedRunsDirectory: dir })
      const paused = (await (await post(first, "/run", { input: "Rome" })).json()) as Paused
      forget(first)
      await first.close()
      expect(await fs.readdir(dir)).toEqual([`${paused.runId}.paused.json`])
      const second = await start({ ...options, pausedRunsDirectory: dir })
      const res = await post(second, paused.resume, { answer: "go" })
      expect(res.status).toBe(200)
      expect(((await res.json()) as { result: unknown }).result).toBe("go")
      expect(await fs.readdir(dir)).toEqual([])
      // a server of another agent does not resume it
      const other = (await (await post(second, "/run", { input: "Paris" })).json()) as Paused
      const third = await start({ agent: Term.compose([Term.ask("Other?"), Term.lam("x", Term.var("x"))]), pausedRunsDirectory: dir })
      const refused = await post(third, other.resume, { answer: "go" })
      expect(refused.status).toBe(409)
      expect(((await refused.json()) as { error: { message: string } }).error.message).toContain("not of this term")
    } finally {
      await fs.rm(dir, { recursive: true, force: true })
    }
  })

  it("stream a pause as a paused event", async () => {
    const server = await start(options)
    const res = await post(server, "/stream", { input: "Rome" })
    const text = await res.text()
    expect(text).toMatch(/event: paused\ndata: \{"status":"paused","runId":"[0-9a-f]{32}"/)
  })
})
