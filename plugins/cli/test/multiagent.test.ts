/**
 * The multi-agent configs through the built CLI: `skills list`, `compile` and `lambda`.
 */
import { describe, expect, it } from "vitest"
import { runCli } from "./helpers.ts"

describe("lambdagent with many agents", () => {
  it("skills list prints a file's skills and sub-agents with their tool names", async () => {
    const r = await runCli(["skills", "list", "examples/agents/assistant.yml"])
    expect(r.code).toBe(0)
    expect(r.stdout.split("\n")).toEqual([
      "examples/agents/assistant.yml:",
      "  skill    headline: Str → Str [text] — Writes a headline for a text.",
      "  subagent call_summarizer: Str → Str [text] — Summarizes a text in two sentences.",
      "  subagent call_translator: Str → Str [text, language] — Translates a text into French.",
      ""
    ])
    const json = await runCli(["skills", "list", "examples/agents/assistant.yml", "--format", "json"])
    expect(JSON.parse(json.stdout).skills.map((s: { tool: string }) => s.tool)).toEqual(["headline", "call_summarizer", "call_translator"])
    const missing = await runCli(["skills", "list", "examples/agents/nope.yml"])
    expect([missing.code, missing.stderr]).toEqual([4, "error: examples/agents/nope.yml: file not found\n"])
  })

  it("lambda prints a group chat and a hand-off in lambda notation; compile gives their bounds", async () => {
    const chat = await runCli(["lambda", "examples/agents/review-chat.yml"])
    expect(chat.code).toBe(0)
    expect(chat.stdout).toMatch(/^Review chat = GroupChat₄\[writer: writer:LLM/)
    const desk = await runCli(["lambda", "examples/agents/support-desk.yml"])
    expect(desk.stdout).toMatch(/Handoff_\{depth≤2\}\(/)
    const compiled = await runCli(["compile", "examples/agents/review-chat.yml", "--format", "json"])
    expect(compiled.code).toBe(0)
    expect(compiled.stdout).toContain('"llmCalls": 13')
  })
})
