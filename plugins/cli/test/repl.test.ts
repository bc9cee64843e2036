import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { cliPath, runCli } from "./helpers.ts"

const echo = "echo=printf '%s' {}"
let dir = ""
let memoryAgent = ""

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "lambdagent-repl-"))
  memoryAgent = join(dir, "companion.yml")
  writeFileSync(
    memoryAgent,
    ["name: Companion", "type: simple", "systemPrompt: You remember what the user told you.", "memory:", "  enabled: true", "  strategy: local", ""].join("\n")
  )
})

const lines = (...input: ReadonlyArray<string>) => input.join("\n") + "\n"

describe("lambdagent repl (stdin not a terminal)", () => {
  it("runs a session: turns, :stats, :trace, :lambda, :tools, :memory, :tool, an unknown command, :quit", async () => {
    const r = await runCli(["repl", memoryAgent, "--tool", echo], {
      stdin: lines(
        "my name is Ada",
        "what is my name?",
        ":stats",
        ":trace",
        ":trace 1",
        ":trace 99",
        ":lambda",
        ":tools",
        ":memory",
        ':tool echo "x y"',
        ":frobnicate",
        ":quit",
        "never run"
      )
    })
    expect(r.code).toBe(0)
    const out = r.stdout
    expect(out).toMatch(
      /^lambdagent REPL v\d+\.\d+\.\d+\nAgent: Companion \(simple, memory: session:repl\)\nLambda: Memory\(Companion:LLM\("You remember what the user told you\."\), Γ ∪ session\{size=10, ttl=0\}\)\nType :help for commands, :quit to exit\n/
    )
    // turn 1: step lines, the result and the counts
    expect(out).toMatch(/λ> my name is Ada\n\[β\[0\] memory:read \d+\.\ds\] 0 entries from session:repl\n\[β\[1\] Companion \d+\.\ds\] my name is Ada\n/)
    expect(out).toMatch(/\nResult: my name is Ada\n\(3 β-reductions, \d+\.\ds, ~\d+ tokens\)\n/)
    // turn 2 sees turn 1 through memory (the offline model echoes its input)
    expect(out).toMatch(/\[β\[0\] memory:read \d+\.\ds\] 1 entry from session:repl/)
    expect(out).toMatch(
      /Result: \[Memory Context\]\n\(\d+s ago\) user: my name is Ada\n\(\d+s ago\) assistant: my name is Ada\n\n\[Current Input\]\nwhat is my name\?\n/
    )
    expect(out).toMatch(/λ> :stats\nSession repl: 2 turns \(0 failed\)\n {2}β-reductions: 6\n {2}LLM calls: 2, tool calls: 0\n/)
    expect(out).toMatch(/λ> :trace\nβ\[0\] {2}memory:read .*\nβ\[1\] {2}Companion .*\nβ\[2\] {2}memory:write .*\n─+\nTotal: 3 β-reductions/)
    expect(out).toMatch(/λ> :trace 1\nβ\[1\] Companion\n {2}Kind: {5}llm\n/)
    expect(r.stderr).toContain("error: step 99 not found (the last turn has 3 steps: 0…2)")
    expect(out).toContain('λ> :lambda\nCompanion = Memory(Companion:LLM("You remember what the user told you."), Γ ∪ session{size=10, ttl=0})\n')
    expect(out).toMatch(/λ> :tools\nTools for Companion:\n {2}\[Shell\] {2}echo {2}printf '%s' \{\}\n/)
    expect(out).toMatch(
      /λ> :memory\nMemory session:repl: 2 entries \(newest first\)\n {2}\[1\] \d+s ago {2}user: what is my name\? {2}→ {2}assistant: \[Memory Context\].*\n {2}\[2\] \d+s ago {2}user: my name is Ada {2}→ {2}assistant: my name is Ada\n/
    )
    expect(out).toContain('λ> :tool echo "x y"\nx y\n')
    expect(r.stderr).toContain("error: unknown command :frobnicate (type :help for the list)")
    expect(out).toContain("λ> :quit\n")
    expect(out).not.toContain("never run")
  })

  it("exits 0 at the end of the input, after reporting a failing turn as one line and going on", async () => {
    const term = join(dir, "divide.json")
    writeFileSync(term, JSON.stringify({ lam: "x", body: { div: [1, 0] } }))
    const r = await runCli(["repl", term], { stdin: lines("1", ":stats", ":help") })
    expect(r.code).toBe(0)
    expect(r.stderr.split("\n").filter((l) => l.startsWith("error:"))).toEqual(["error: DivisionByZero: division by zero (at $.body)"])
    expect(r.stdout).toContain("Session repl: 1 turn (1 failed)")
    expect(r.stdout).toContain(":memory [clear]")
    expect(r.stdout).toContain(':tool NAME "input"')
  })

  it("keeps memory when :model, :temp and :reload rebuild the runtime, and forgets it with :memory clear", async () => {
    const r = await runCli(["repl", memoryAgent], {
      stdin: lines("first", ":model scripted:echo", ":temp 0.4", ":reload", "second", ":model", ":memory clear", ":memory", "third")
    })
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("[model: scripted:echo]")
    expect(r.stdout).toContain("[temperature: 0.4]")
    expect(r.stdout).toMatch(/\[reloaded .*companion\.yml: Companion \(simple\)\]/)
    expect(r.stdout).toMatch(/λ> second\n\[β\[0\] memory:read \d+\.\ds\] 1 entry from session:repl/)
    expect(r.stdout).toContain("λ> :model\nmodel: scripted:echo\n")
    expect(r.stdout).toContain("[memory cleared: session:repl; conversation history reset]")
    expect(r.stdout).toContain("λ> :memory\nMemory session:repl: 0 entries\n")
    expect(r.stdout).toMatch(/λ> third\n\[β\[0\] memory:read \d+\.\ds\] 0 entries from session:repl\n[\s\S]*Result: third\n/)
  })

  it("rejects a bad :model or :temp with one line and keeps the current runtime", async () => {
    const r = await runCli(["repl", memoryAgent], { stdin: lines(":model nowhere:x", ":temp 7", "still here") })
    expect(r.code).toBe(0)
    expect(r.stderr).toContain('unknown model spec "nowhere:x"')
    expect(r.stderr).toContain('error: UsageError: :temp expects a number from 0 to 2, got "7"')
    expect(r.stdout).toContain("Result: still here\n")
  })

  it("runs an example config on the offline model, and :export saves the session as JSON", async () => {
    const file = join(dir, "session.json")
    const r = await runCli(["repl", "examples/agents/react.yml"], { stdin: lines("what is 2+2?", ":tools", ":lint", `:export ${file}`) })
    expect(r.code).toBe(0)
    expect(r.stderr).toContain("running on the offline scripted model")
    expect(r.stdout).toContain("Agent: Research assistant (react, maxSteps=12)")
    expect(r.stdout).toMatch(/\[β\[0\] Research assistant\.think \d+\.\ds\] what is 2\+2\?\n/)
    expect(r.stdout).toContain("Result: what is 2+2?")
    expect(r.stdout).toMatch(/\[MCP\]\s+web_search\s+search-server/)
    expect(r.stdout).toContain("lambdagent lint: examples/agents/react.yml")
    expect(r.stdout).toContain(`[exported 1 turn to ${file}]`)
    const saved = JSON.parse(readFileSync(file, "utf8"))
    expect(saved).toMatchObject({
      agent: { name: "Research assistant", type: "react" },
      session: "repl",
      turns: [{ input: "what is 2+2?", text: "what is 2+2?" }]
    })
    expect(saved.turns[0].trace.length).toBeGreaterThan(0)
    expect(saved.turns[0].stats.llmCalls).toBe(1)
  })

  it("keeps a --session's memory apart: :memory names that session", async () => {
    const r = await runCli(["repl", memoryAgent, "--session", "alice"], { stdin: lines("hi", ":memory") })
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("Memory session:alice: 1 entry (newest first)")
  })
})

const hasScript = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0

/** Drive the REPL in a pseudo-terminal (util-linux `script`), writing each input once `expect` shows up. */
const inTerminal = (args: ReadonlyArray<string>, steps: ReadonlyArray<readonly [RegExp, string]>, timeoutMs = 30_000) =>
  new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const quoted = [process.execPath, cliPath, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ")
    const child = spawn("script", ["-qfec", quoted, "/dev/null"], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, TERM: "dumb" } })
    let output = ""
    let next = 0
    let seen = 0
    const advance = () => {
      while (next < steps.length) {
        const [wait, send] = steps[next]!
        const match = wait.exec(output.slice(seen))
        if (match === null) return
        seen += match.index + match[0].length
        next++
        child.stdin.write(send)
      }
    }
    child.stdout.on("data", (d) => {
      output += d
      advance()
    })
    child.stderr.on("data", (d) => (output += d))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`timed out at step ${next}; output so far:\n${output}`))
    }, timeoutMs)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })

describe.skipIf(!hasScript || !existsSync(cliPath))("lambdagent repl in a terminal", () => {
  it("Ctrl+C cancels the running turn, then clears the line at the prompt; Ctrl+D exits 0", async () => {
    const slow = join(dir, "slow.json")
    writeFileSync(slow, JSON.stringify({ tool: "slow" }))
    const r = await inTerminal(
      ["repl", slow, "--tool", "slow=sleep 30; echo {}"],
      [
        [/λ> /, "wait for it\r"],
        [/wait for it/, "\x03"],
        [/\[turn cancelled\][\s\S]*λ> /, "half a line"],
        [/half a line/, "\x03"],
        [/λ> /, ":stats\r"],
        [/1 turn \(1 failed\)[\s\S]*λ> /, "\x04"]
      ]
    )
    expect(r.code).toBe(0)
    expect(r.output).toContain("[turn cancelled]")
    expect(r.output).toContain("Session repl: 1 turn (1 failed)")
    expect(r.output).not.toContain("[interrupted]")
  })
})
