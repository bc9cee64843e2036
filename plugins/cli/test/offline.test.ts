import { copyFileSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { runCli } from "./helpers.ts"

// examples/agents/memory.yml keeps its SQLite memory next to the file: it runs from a copy here
const dir = mkdtempSync(join(tmpdir(), "lambdagent-offline-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const noKeys = { OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" }

/** Whether something listens on 127.0.0.1:11434 (an Ollama server), probed by trying to take the port. */
const ollamaPortTaken = await new Promise<boolean>((resolve) => {
  const probe = createServer()
  probe.once("error", () => resolve(true))
  probe.listen(11434, "127.0.0.1", () => probe.close(() => resolve(false)))
})
if (ollamaPortTaken) console.warn("[offline] port 11434 is taken (an Ollama server?): the no-Ollama fallback is not tested here")

describe("lambdagent run with no provider reachable", () => {
  it("replays the calculator's demo plan: the MCP server computes 19 + 23, the steps and the label on stderr", async () => {
    const r = await runCli(["run", "examples/agents/calculator.yml", "What is 19 + 23?"], { env: noKeys })
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("42\n")
    const lines = r.stderr.split("\n")
    expect(lines[0]).toBe(
      "[openai: no OPENAI_API_KEY is set; running on the scripted demo model: it follows the plan recorded in calculator.yml (demo:) and the tools run for real. For a real model: export OPENAI_API_KEY=…, or pass --model provider:name.]"
    )
    // the tool call went to the MCP server, and its answer is the result
    expect(r.stderr).toMatch(/β\[1\]\s+Tool:run\s+\([\d.]+s\)\s+"\{"code":\{"add":\[19,23\]\},"input":null\}" → "42"/)
    expect(r.stderr).toMatch(/β\[2\]\s+Calculator\.think .*→ "\{"tool": "terminate", "args": "42"\}"/)
  })

  it("echoes any other input, and says the demo plan is for another one", async () => {
    const r = await runCli(["run", "examples/agents/calculator.yml", "What is 2 + 2?"], { env: noKeys })
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("What is 2 + 2?\n")
    expect(r.stderr).toContain('running on the offline scripted model, which echoes its input (the demo plan of calculator.yml is for "What is 19 + 23?")')
  })

  it("--quiet keeps a demo run's stderr empty", async () => {
    const r = await runCli(["run", "examples/agents/calculator.yml", "What is 19 + 23?", "--quiet"], { env: noKeys })
    expect(r).toMatchObject({ code: 0, stdout: "42\n", stderr: "" })
  })

  it.skipIf(ollamaPortTaken)("falls back at once when no Ollama server listens, instead of retrying the connection", async () => {
    copyFileSync("examples/agents/memory.yml", join(dir, "memory.yml"))
    const r = await runCli(["run", join(dir, "memory.yml"), "my name is Ada"], { env: noKeys })
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("my name is Ada\n")
    expect(r.stderr).toContain(
      "[ollama: no Ollama server is listening at localhost:11434; running on the offline scripted model, which echoes its input. For a real model: start one (ollama serve), or pass --model provider:name.]"
    )
  })
})
