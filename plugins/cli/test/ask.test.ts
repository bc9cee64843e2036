/**
 * Human in the loop through the built CLI: `run` pauses at an `ask` step (exit code 5) and leaves
 * its checkpoint; `resume FILE --answer …` — a new process — goes on from the question.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCli } from "./helpers.ts"

const config = path.resolve("examples/agents/approval.yml")

describe("lambdagent run with an ask step", () => {
  let dir: string
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "ask-cli-"))
  })
  afterAll(() => fs.rm(dir, { recursive: true, force: true }))

  it("pauses with exit code 5, and resume --answer goes on in a new process", async () => {
    const run = await runCli(["run", config, "3 days in Rome", "--model", "scripted:echo", "--checkpoint", dir])
    expect(run.code).toBe(5)
    expect(run.stdout).toBe("")
    expect(run.stderr).toContain('paused: the run asks "Approve this plan, or say what to change." about: 3 days in Rome\n')
    const file = /answer with: lambdagent resume (\S+) --answer/.exec(run.stderr)?.[1]
    expect(file).toBeDefined()

    const show = await runCli(["checkpoints", "show", file!, "--format", "json"])
    expect(JSON.parse(show.stdout)).toMatchObject({
      waitingOn: 'an answer to "Approve this plan, or say what to change."',
      asking: { input: "3 days in Rome" }
    })

    const noAnswer = await runCli(["resume", file!])
    expect(noAnswer.code).toBe(2)
    expect(noAnswer.stderr).toContain('the run is waiting for an answer to "Approve this plan, or say what to change.": give it with --answer')

    const resumed = await runCli(["resume", file!, "--answer", "Approved; add the Vatican.", "--format", "json"])
    expect(resumed.stderr).toBe("")
    expect(resumed.code).toBe(0)
    const out = JSON.parse(resumed.stdout) as { result: unknown; trace: Array<{ kind: string; output?: string }>; stats: { llmCalls: number } }
    expect(out.result).toBe("Approved; add the Vatican.")
    expect(out.trace.filter((e) => e.kind !== "beta").map((e) => e.kind)).toEqual(["llm", "ask", "llm"])
    expect(out.stats.llmCalls).toBe(2)
  })

  it("checkpoints prune --format json lists the checkpoints it deleted", async () => {
    const own = await fs.mkdtemp(path.join(dir, "prune-"))
    const run = await runCli(["run", config, "Lisbon", "--model", "scripted:echo", "--checkpoint", own])
    expect(run.code).toBe(5)
    // the run's journal (its start, then a delta before each call), and the paused checkpoint, whole
    const before = (await fs.readdir(own)).sort()
    expect(before).toHaveLength(2)
    const listed = JSON.parse((await runCli(["checkpoints", "list", own, "--format", "json"])).stdout) as Array<{ file: string; base: number }>
    const pruned = await runCli(["checkpoints", "prune", own, "--format", "json"])
    expect(pruned.code, pruned.stderr).toBe(0)
    const { deleted } = JSON.parse(pruned.stdout) as { deleted: Array<string> }
    expect(await fs.readdir(own)).toEqual([before.at(-1)])
    expect(deleted.map((k) => path.basename(k))).toEqual(listed.slice(0, -1).map((c) => c.file))
  })

  it("keeps only the paused checkpoint when no directory is given, and says so in JSON", async () => {
    const work = await fs.mkdtemp(path.join(dir, "default-"))
    const copy = path.join(work, "approval.yml")
    await fs.copyFile(config, copy)
    const run = await runCli(["run", copy, "Paris", "--model", "scripted:echo", "--format", "json"])
    expect(run.code).toBe(5)
    const { paused } = JSON.parse(run.stdout) as { paused: { question: string; input: string; checkpoint: string } }
    expect(paused.input).toBe("Paris")
    expect(path.dirname(paused.checkpoint)).toBe(path.join(work, ".lambdagent", "checkpoints"))
    expect(await fs.readdir(path.dirname(paused.checkpoint))).toEqual([`${path.basename(paused.checkpoint)}.checkpoint.jsonl`])
    const resumed = await runCli(["resume", paused.checkpoint, "--answer", "fine"])
    expect([resumed.code, resumed.stdout]).toEqual([0, "fine\n"])
  })

  it("refuses --answer for a run that is not waiting for one", async () => {
    const other = await fs.mkdtemp(path.join(dir, "plain-"))
    const run = await runCli(["run", "examples/agents/chain.yml", "report", "--model", "scripted:echo", "--checkpoint", other, "--quiet"])
    expect(run.code).toBe(0)
    const first = (await fs.readdir(other)).sort()[0]!
    const resumed = await runCli(["resume", path.join(other, first), "--answer", "yes"])
    expect(resumed.code).toBe(2)
    expect(resumed.stderr).toMatch(/--answer given, but the run is not waiting for an answer \(it waits on llm/)
  })
})

describe("lambdagent resume", () => {
  it("rebuilds the term with the run's --max-steps and --temperature", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "resume-flags-"))
    try {
      const args = [
        "examples/agents/react.yml",
        "What is 2 + 2?",
        "--model",
        "scripted:echo",
        "--max-steps",
        "2",
        "--temperature",
        "0.5",
        "--checkpoint",
        dir,
        "--quiet"
      ]
      const run = await runCli(["run", ...args])
      expect(run.code).toBe(0)
      const first = (await fs.readdir(dir)).sort()[0]!
      const resumed = await runCli(["resume", path.join(dir, first)])
      expect([resumed.code, resumed.stderr]).toEqual([0, ""])
      expect(resumed.stdout).toBe(run.stdout)
    } finally {
      await fs.rm(dir, { recursive: true, force: true })
    }
  })
})
