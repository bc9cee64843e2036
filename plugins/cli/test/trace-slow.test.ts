/**
 * `lambdagent trace --slow` on a real terminal: util-linux `script` gives the CLI a
 * pseudo-terminal, and the test presses keys when the prompt appears.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { cliPath, runCli } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-trace-slow-"))
const traceFile = join(dir, "trace.json")
writeFileSync(
  traceFile,
  JSON.stringify({
    trace: [
      { step: 1, kind: "llm", name: "think", input: "question", output: "first answer", durationMs: 12 },
      { step: 2, kind: "tool", name: "sum", input: "1 2", output: "3", durationMs: 3 },
      { step: 3, kind: "llm", name: "think", input: "3", output: "last answer", durationMs: 8 }
    ]
  })
)

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

/** Run `trace --slow` in a pseudo-terminal; `press` answers each prompt with a key. */
const onTerminal = async (press: (prompt: number) => string) => {
  const command = [process.execPath, cliPath, "trace", traceFile, "--slow"].map(quote).join(" ")
  const child = spawn("script", ["-qfec", command, "/dev/null"], { stdio: ["pipe", "pipe", "pipe"] })
  let out = ""
  let prompts = 0
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8")
    const seen = out.split("Enter for the next, q to quit").length - 1
    while (prompts < seen) child.stdin.write(press(++prompts))
  })
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
  return { code, out, prompts }
}

describe("lambdagent trace --slow", () => {
  it("shows one step per key on a terminal and stops at q", async () => {
    const r = await onTerminal((n) => (n === 1 ? "\r" : "q"))
    expect(r.code, r.out).toBe(0)
    expect(r.prompts).toBe(2)
    expect(r.out).toContain("β[0] think")
    expect(r.out).toContain("Output:   first answer")
    expect(r.out).toContain("β[1] Tool:sum")
    expect(r.out).toContain("-- step 1 of 3: Enter for the next, q to quit --")
    expect(r.out).not.toContain("β[2]")
    expect(r.out).not.toContain("Total:")
  }, 60_000)

  it("goes to the end and prints the total when every prompt gets Enter", async () => {
    const r = await onTerminal(() => "\r")
    expect(r.code, r.out).toBe(0)
    expect(r.prompts).toBe(2)
    expect(r.out).toContain("Output:   last answer")
    expect(r.out).toContain("Total: 3 β-reductions")
  }, 60_000)

  it("refuses without a terminal, saying what to do instead, with exit 2", async () => {
    const r = await runCli(["trace", traceFile, "--slow"])
    expect(r).toMatchObject({ code: 2, stdout: "" })
    expect(r.stderr).toBe(
      "error: UsageError: --slow steps through the trace on a terminal (Enter for the next step, q to quit), and stdin or stdout is not one: leave out --slow to print every step\n"
    )
    const json = await runCli(["trace", traceFile, "--slow", "--format", "json"])
    expect(json.code).toBe(2)
    expect(json.stderr).toContain("--slow shows the steps one at a time as text")
  })
})
