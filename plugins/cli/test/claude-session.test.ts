/**
 * Claude Code session mode through the built CLI: a fake `claude` on the PATH records its
 * arguments, and each conversation (a REPL, a `serve` session id) must resume its own session.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { runCli, startServe } from "./helpers.ts"

/**
 * The fake: a call without `--resume` starts the session `s-<prompt>`, a call with it continues
 * that session; the answer names the session and the prompt it was given.
 */
const fakeClaude = String.raw`
const fs = require("node:fs")
const args = process.argv.slice(2)
fs.appendFileSync(process.env.FAKE_CLAUDE_LOG, JSON.stringify(args) + "\n")
const get = (flag) => { const i = args.indexOf(flag); return i === -1 ? undefined : args[i + 1] }
const prompt = get("-p")
const session = get("--resume") ?? "s-" + prompt.replace(/\W+/g, "-")
process.stdout.write(JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "[" + session + "] " + prompt, session_id: session }))
`

let dir = ""
let log = ""
let env: Record<string, string> = {}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "lambdagent-claude-session-"))
  writeFileSync(join(dir, "fake-claude.cjs"), fakeClaude)
  writeFileSync(join(dir, "claude"), `#!/bin/sh\nexec "${process.execPath}" "${join(dir, "fake-claude.cjs")}" "$@"\n`)
  chmodSync(join(dir, "claude"), 0o755)
  log = join(dir, "calls.log")
  env = { PATH: `${dir}${delimiter}${process.env.PATH ?? ""}`, FAKE_CLAUDE_LOG: log }
  writeFileSync(join(dir, "session.yml"), "type: simple\nsystemPrompt: Be brief.\nmodel: {provider: claude-code, session: true}\n")
  writeFileSync(join(dir, "plain.yml"), "type: simple\nsystemPrompt: Be brief.\n")
})

beforeEach(() => rmSync(log, { force: true }))

afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The arguments of each `claude` call so far. */
const calls = (): Array<Array<string>> =>
  readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Array<string>)

const resumed = (args: ReadonlyArray<string>) => {
  const i = args.indexOf("--resume")
  return i === -1 ? undefined : args[i + 1]
}
const prompt = (args: ReadonlyArray<string>) => args[args.indexOf("-p") + 1]

describe("Claude Code session mode", () => {
  it("model.session: true — a REPL resumes its session on every turn, sending only the new turn", async () => {
    const r = await runCli(["repl", join(dir, "session.yml")], { stdin: "first question\nsecond question\nthird\n:quit\n", env })
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("Result: [s-first-question] second question")
    const made = calls()
    expect(made.map(prompt)).toEqual(["first question", "second question", "third"])
    expect(made.map(resumed)).toEqual([undefined, "s-first-question", "s-first-question"])
    expect(made[0]).toEqual(expect.arrayContaining(["--system-prompt", "Be brief."]))
  })

  it("--model claude-code+session selects session mode for a file without a model", async () => {
    const r = await runCli(["repl", join(dir, "plain.yml"), "--model", "claude-code+session:sonnet"], { stdin: "hello\nagain\n:quit\n", env })
    expect(r.code).toBe(0)
    const made = calls()
    expect(made.map(resumed)).toEqual([undefined, "s-hello"])
    expect(made[1]).toEqual(expect.arrayContaining(["--model", "sonnet"]))
    // without session mode, every call starts afresh and carries the history in its prompt
    rmSync(log)
    const plain = await runCli(["repl", join(dir, "plain.yml"), "--model", "claude-code:sonnet"], { stdin: "hello\nagain\n:quit\n", env })
    expect(plain.code).toBe(0)
    expect(calls().map(resumed)).toEqual([undefined, undefined])
    expect(prompt(calls()[1]!)).toContain("User: hello")
  })

  it("without a claude binary, run falls back to the offline model for claude-code+session too", async () => {
    writeFileSync(join(dir, "spec.yml"), "type: simple\nsystemPrompt: Be brief.\nmodel: {provider: claude-code+session}\n")
    const r = await runCli(["run", join(dir, "spec.yml"), "hi"], { env: { PATH: join(dir, "empty") } })
    expect(r.code).toBe(0)
    expect(r.stderr).toContain("claude-code+session: the claude binary is not installed; running on the offline scripted model")
    expect(r.stdout).toBe("hi\n")
  })

  it("serve keeps one Claude Code session per session id", async () => {
    const served = await startServe([join(dir, "session.yml"), "--port", "0"], env)
    const ask = async (input: string, session: string) => {
      const response = await fetch(`${served.url}/run`, { method: "POST", body: JSON.stringify({ input, session }) })
      expect(response.status).toBe(200)
      return ((await response.json()) as { result: unknown }).result
    }
    try {
      expect(await ask("alice one", "alice")).toBe("[s-alice-one] alice one")
      expect(await ask("bob one", "bob")).toBe("[s-bob-one] bob one")
      expect(await ask("alice two", "alice")).toBe("[s-alice-one] alice two")
      expect(await ask("bob two", "bob")).toBe("[s-bob-one] bob two")
      expect(calls().map(resumed)).toEqual([undefined, undefined, "s-alice-one", "s-bob-one"])
    } finally {
      expect(await served.stop()).toBe(0)
    }
  })
})
