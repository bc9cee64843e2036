/**
 * Bad checkpoint files through the built CLI: a journal cut short, an edited entry, another
 * version, a foreign or empty file, a missing one, a checkpoint of a config that changed since —
 * each refused by `resume` and `checkpoints show` with one line naming the file (and the entry),
 * the exit code cli.md gives, never a stack trace; `checkpoints list` names the damaged entries. A
 * directory that cannot be written fails the run before its first oracle call.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCli } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-ckfiles-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const config = join(dir, "agent.json")
writeFileSync(
  config,
  JSON.stringify({ compose: [{ llm: { system: "a", conversation: false } }, { tool: "upper" }, { llm: { system: "b", conversation: false } }] })
)
const flags = ["--tool", "upper=printf %s {}", "--model", "scripted:echo"]

/** A run's journal in a directory of its own: its path and lines. */
let journal = ""
let lines: Array<string> = []
let expected: unknown

beforeAll(async () => {
  const checkpoints = join(dir, "good")
  const run = await runCli(["run", config, "go", ...flags, "--quiet", "--format", "json", "--checkpoint", checkpoints])
  expect(run.code, run.stderr).toBe(0)
  expected = (JSON.parse(run.stdout) as { result: unknown }).result
  const [name] = readdirSync(checkpoints)
  journal = join(checkpoints, name!)
  lines = readFileSync(journal, "utf8").trimEnd().split("\n")
  expect(lines).toHaveLength(3)
}, 60_000)

/** A copy of the journal under the same name in a new directory, its lines changed by `edit`. */
const damaged = (label: string, edit: (lines: Array<string>) => string): string => {
  const own = join(dir, label)
  mkdirSync(own)
  const file = join(own, journal.split("/").at(-1)!)
  writeFileSync(file, edit([...lines]))
  return file
}

const oneLine = (stderr: string) => {
  expect(stderr.endsWith("\n")).toBe(true)
  expect(stderr.trimEnd()).not.toContain("\n")
  expect(stderr).not.toMatch(/\n\s+at /)
}

describe("bad checkpoint files", () => {
  const runId = () => journal.split("/").at(-1)!.split(".")[0]!

  it("a journal cut short names its whole checkpoint before, which resumes", async () => {
    const file = damaged("cut", (l) => `${l[0]}\n${l[1]}\n${l[2]!.slice(0, 50)}`)
    for (const command of [
      ["resume", file],
      ["checkpoints", "show", file]
    ]) {
      const result = await runCli(command)
      expect(result.code, command.join(" ")).toBe(1)
      oneLine(result.stderr)
      expect(result.stderr).toMatch(/^error: CheckpointError: /)
      expect(result.stderr).toContain(`${file}: `)
      expect(result.stderr).toContain(
        `${runId()}.000003 is cut short (the run stopped while writing it, or the journal was truncated); ${runId()}.000002 before it is whole`
      )
    }
    const listed = await runCli(["checkpoints", "list", join(dir, "cut"), "--format", "json"])
    expect(listed.code, listed.stderr).toBe(0)
    const rows = JSON.parse(listed.stdout) as Array<{ sequence: number; problem?: string; waitingOn: string | null }>
    expect(rows.map((r) => [r.sequence, r.waitingOn, r.problem === undefined])).toEqual([
      [1, "llm", true],
      [2, "tool upper", true],
      [3, null, false]
    ])
    const before = join(dir, "cut", `${runId()}.000002`)
    const resumed = await runCli(["resume", before, "--format", "json"])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect((JSON.parse(resumed.stdout) as { result: unknown }).result).toEqual(expected)
  })

  it("refuses an edited, reordered, foreign, empty or other-version journal with one line naming it and the entry", async () => {
    const cases: Array<[string, (l: Array<string>) => string, RegExp]> = [
      ["edited-delta", (l) => [l[0], l[1], l[2]!.replace('"steps":', '"steps":1')].join("\n"), /\.000003: does not match its digest/],
      ["edited-base", (l) => [l[0]!.replace('"steps":', '"steps":1'), l[1], l[2]].join("\n"), /\.000001: the checkpoint does not match its digest/],
      ["reordered", (l) => [l[0], l[2], l[1]].join("\n"), /\.000002: does not match its digest/],
      [
        "other-version",
        (l) => [l[0]!.replace('"version":3', '"version":4'), l[1], l[2]].join("\n"),
        /a checkpoint of format version 4; this lambdagent reads format version 3/
      ],
      ["foreign", () => '{"hello":"world"}\n', /: not a lambdagent checkpoint$/m],
      ["empty", () => "", /: an empty file, not a checkpoint journal$/m]
    ]
    for (const [label, edit, says] of cases) {
      const file = damaged(label, edit)
      const result = await runCli(["resume", file])
      expect(result.code, label).toBe(1)
      oneLine(result.stderr)
      expect(result.stderr, label).toMatch(/^error: CheckpointError: /)
      expect(result.stderr, label).toContain(file)
      expect(result.stderr, label).toMatch(says)
    }
  })

  it("a missing checkpoint is exit code 4; one of a config that changed since is refused", async () => {
    const missing = await runCli(["resume", join(dir, "good", `${runId()}.000009`)])
    expect(missing.code).toBe(4)
    oneLine(missing.stderr)
    expect(missing.stderr).toContain(`${runId()}.000009: not found`)
    const nowhere = await runCli(["checkpoints", "show", join(dir, "nowhere", "x.000001.checkpoint.jsonl")])
    expect(nowhere.code).toBe(4)
    oneLine(nowhere.stderr)

    const moved = join(dir, "changed")
    mkdirSync(moved)
    const changedConfig = join(moved, "agent.json")
    copyFileSync(config, changedConfig)
    const run = await runCli(["run", changedConfig, "go", ...flags, "--quiet", "--checkpoint", moved])
    expect(run.code, run.stderr).toBe(0)
    writeFileSync(changedConfig, JSON.stringify({ compose: [{ llm: { system: "A", conversation: false } }, { tool: "upper" }] }))
    const file = readdirSync(moved).find((f) => f.endsWith(".checkpoint.jsonl"))!
    const resumed = await runCli(["resume", join(moved, file)])
    expect(resumed.code).toBe(1)
    oneLine(resumed.stderr)
    expect(resumed.stderr).toMatch(/the checkpoint is of term sha256:\w+, not of this term .*changed since the run/)
  })

  it("a directory that cannot be written fails the run before its first oracle call", async () => {
    const marker = join(dir, "called")
    const toolFirst = join(dir, "tool-first.json")
    writeFileSync(toolFirst, JSON.stringify({ compose: [{ tool: "mark" }, { llm: { system: "a", conversation: false } }] }))
    const aFile = join(dir, "a-file")
    writeFileSync(aFile, "")
    for (const where of [join(aFile, "runs"), "/proc/lambdagent-none/runs"]) {
      const mark = `mark=sh -c 'echo x >> ${marker}; printf %s "$1"' _ {}`
      const result = await runCli(["run", toolFirst, "go", "--tool", mark, "--model", "scripted:echo", "--checkpoint", where])
      expect(result.code, where).toBe(1)
      oneLine(result.stderr)
      expect(result.stderr).toMatch(new RegExp(`^error: CheckpointError: checkpoint directory ${where}: `))
      expect(existsSync(marker)).toBe(false)
    }
  })
})
