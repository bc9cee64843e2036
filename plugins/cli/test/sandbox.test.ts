/**
 * The built `lambdagent` binary: `--tool` commands cannot be injected (the commands), and
 * `--sandbox` / the `sandbox:` block put every process-running tool under a policy.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { Sandbox } from "lambdagent"
import { type CliResult, cliPath, runCli } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-cli-sandbox-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const REACT =
  "type: react\nname: runner\nsystemPrompt: Use the tools.\nmodel: {provider: openai, name: gpt-4o-mini}\nreact: {maxSteps: 4}\nmcp:\n  localTools: [terminate]\n"
const agent = (name: string, extra = "") => {
  const file = join(dir, name)
  writeFileSync(file, REACT + extra)
  return file
}
/** A scripted model that calls `tool` with each input in turn, then terminates. */
const calling = (tool: string, ...inputs: Array<string>) =>
  `scripted:sequence:${JSON.stringify([...inputs.map((args) => JSON.stringify({ tool, args })), JSON.stringify({ tool: "terminate", args: "done" })])}`
const toolOutputs = (r: CliResult) =>
  (JSON.parse(r.stdout) as { trace: Array<{ kind: string; output: string }> }).trace.filter((e) => e.kind === "tool").map((e) => e.output)

describe("--tool commands cannot be injected", () => {
  it("lambdagent run x.yml 'a; touch ./pwned' --tool \"sh=echo '{}'\" echoes the input and creates nothing", async () => {
    const work = mkdtempSync(join(dir, "work-"))
    const r = await runCli(
      ["run", agent("x.yml"), "a; touch ./pwned", "--tool", "sh=echo '{}'", "--model", calling("sh", "a; touch ./pwned"), "--format", "json"],
      { cwd: work }
    )
    expect(r.code, r.stderr).toBe(0)
    expect(toolOutputs(r)).toEqual(["a; touch ./pwned"])
    expect(existsSync(join(work, "pwned"))).toBe(false)
  })

  it("--tool search='grep -r \"{}\" src/' with a model answering $(touch ./pwned) searches for that text", async () => {
    const work = mkdtempSync(join(dir, "work-"))
    mkdirSync(join(work, "src"))
    writeFileSync(join(work, "src", "notes.txt"), "run $(touch ./pwned) to break it\n")
    const r = await runCli(
      ["run", agent("x.yml"), "go", "--tool", 'search=grep -r "{}" src/', "--model", calling("search", "$(touch ./pwned)"), "--format", "json"],
      { cwd: work }
    )
    expect(r.code, r.stderr).toBe(0)
    expect(toolOutputs(r)).toEqual(["src/notes.txt:run $(touch ./pwned) to break it"])
    expect(existsSync(join(work, "pwned"))).toBe(false)
  })

  it("a {} the command would run as code is refused before the run, as a usage error (exit code 2)", async () => {
    const r = await runCli(["run", agent("x.yml"), "go", "--tool", "sh=sh -c '{}'"])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(
      "error: UnsafePlaceholder: unsafe {} in \"sh -c '{}'\" at column 8: {} is in the code that sh runs, so the input would be run as a program; pass it as an argument instead: sh -c '… \"$1\" …' sh {}, or give the input on standard input (a command without {})\n"
    )
  })
})

const capabilities = await Sandbox.probe()
if (!capabilities.available) console.log(`[skipping the CLI sandbox runs: the sandbox needs ${capabilities.missing.join("; ")}]`)

describe.skipIf(!capabilities.available)("--sandbox and the sandbox: block", () => {
  it("lambdagent run --sandbox strict: a memory hog is an observation, the next call runs", async () => {
    const r = await runCli(
      ["run", agent("x.yml"), "go", "--tool", "run=sh", "--sandbox", "strict", "--model", calling("run", "tail /dev/zero", "echo alive"), "--format", "json"],
      { cwd: dir }
    )
    expect(r.code, r.stderr).toBe(0)
    const [hog, after] = toolOutputs(r)
    expect(hog).toMatch(/^\[TOOL_ERROR\] run: \[SANDBOX:memory\] the command ran out of memory: it may use 64 MB/)
    expect(after).toBe("alive")
  })

  it("says which tools the policy covers", async () => {
    const r = await runCli(["run", agent("x.yml"), "go", "--tool", "run=sh", "--sandbox", "default", "--model", calling("run", "echo hi")], { cwd: dir })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain("[sandbox default: 30 s CPU, 256 MB, no network, 16 processes, 65536 B output, 64 files — for run]")
  })

  it("the sandbox: block of a config covers its cli.agents; --sandbox off turns it off", async () => {
    const outside = mkdtempSync(join(existsSync("/var/tmp") ? "/var/tmp" : process.cwd(), "lambdagent-cli-outside-"))
    try {
      const target = join(outside, "written")
      const file = agent("sandboxed.yml", `cli:\n  agents:\n    writer: {command: "echo x > ${target}"}\nsandbox: {policy: strict}\n`)
      const sandboxed = await runCli(["run", file, "go", "--model", calling("writer", "x"), "--format", "json"], { cwd: dir })
      expect(sandboxed.code, sandboxed.stderr).toBe(0)
      // the trace keeps the first 200 characters of an observation
      expect(toolOutputs(sandboxed)[0]).toMatch(
        /^\[TOOL_ERROR\] writer: \[SANDBOX:filesystem\] only the work directory \S+ and a private \/tmp are writable \(\/bin\/sh: 1: cannot create /
      )
      expect(existsSync(target)).toBe(false)
      const off = await runCli(["run", file, "go", "--sandbox", "off", "--model", calling("writer", "x"), "--format", "json"], { cwd: dir })
      expect(off.code, off.stderr).toBe(0)
      expect(existsSync(target)).toBe(true)
    } finally {
      rmSync(outside, { recursive: true, force: true })
    }
  })

  it("examples/agents/sandboxed.yml runs its CLI tools in the strict sandbox", async () => {
    const r = await runCli(["run", "examples/agents/sandboxed.yml", "one two three", "--model", calling("words", "one two three"), "--format", "json"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain("[sandbox strict: 5 s CPU, 64 MB, no network, 16 processes, 4096 B output, 8 files — for words, lines]")
    expect(toolOutputs(r)).toEqual(["3"])
  })

  it("an unknown --sandbox value is a usage error", async () => {
    const r = await runCli(["run", agent("x.yml"), "go", "--tool", "run=sh", "--sandbox", "lenient"])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('error: UsageError: --sandbox expects strict, default, permissive or off, got "lenient"\n')
  })

  it("where user namespaces cannot be made, a sandboxed run is refused before it starts, naming what is missing", async () => {
    // a user namespace whose limit of nested user namespaces is 0, as in a container without them
    const r = await new Promise<CliResult>((resolve, reject) => {
      const child = spawn(
        "unshare",
        [
          "--user",
          "--map-root-user",
          "/bin/sh",
          "-c",
          'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"',
          "sh",
          process.execPath,
          cliPath,
          "run",
          agent("x.yml"),
          "go",
          "--tool",
          "run=sh",
          "--sandbox",
          "strict"
        ],
        { cwd: dir }
      )
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (d) => (stdout += d))
      child.stderr.on("data", (d) => (stderr += d))
      child.on("error", reject)
      child.on("close", (code) => resolve({ code, stdout, stderr }))
    })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(
      /^error: SandboxUnavailable: the sandbox cannot enforce this policy here: it needs user, mount and pid namespaces \(unshare --user failed: .*\); run with --sandbox off to run the tools without it\n$/
    )
    expect(r.stdout).toBe("")
  })
})
