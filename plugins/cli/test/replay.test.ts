/**
 * Offline replay and trace diff, driving the built CLI: a ReAct run with a shell tool on the
 * scripted model is recorded with `run --trace-file`, replayed with no provider key and no tool
 * run, replayed against a changed prompt (divergence, then `--live-after-divergence`), and diffed;
 * a run of the channels pipeline example replays offline too, its messages from the recording.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCli } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-replay-"))
const config = join(dir, "agent.yml")
const changed = join(dir, "changed.yml")
const recorded = join(dir, "recorded.json")
const toolRuns = join(dir, "tool-runs")
// an OpenAI config: a run or replay that reached the provider would need a key, and there is none
const env = { OPENAI_API_KEY: "", LAMBDAGENT_MODEL: "" }
const yaml = (prompt: string) => `agentId: helper
name: Helper
type: react
systemPrompt: |
  ${prompt}
model:
  provider: openai
  name: gpt-4o-mini
  temperature: 0
react:
  maxSteps: 4
mcp:
  localTools: [upper, terminate]
`
const plan = 'scripted:plan:["{\\"tool\\":\\"upper\\",\\"args\\":\\"hello\\"}","{\\"tool\\":\\"terminate\\",\\"args\\":\\"{{observation}}!\\"}"]'
// the tool leaves a mark each time it runs, so a test can tell a replayed call from a live one
const tool = ["--tool", `upper=sh -c 'echo x >> "$1"; printf %s "$2" | tr a-z A-Z' sh ${toolRuns} {}`]
const toolRunCount = () => {
  try {
    return readFileSync(toolRuns, "utf8")
      .split("\n")
      .filter((l) => l !== "").length
  } catch {
    return 0
  }
}

beforeAll(async () => {
  writeFileSync(config, yaml("You answer by calling the upper tool, then terminate with what it returned."))
  writeFileSync(changed, yaml("You reply by calling the upper tool, then terminate with what it returned."))
  const run = await runCli(["run", config, "say hi", ...tool, "--model", plan, "--trace-file", recorded, "--quiet"], { env })
  expect(run.stderr).toBe("")
  expect(run.stdout).toBe("HELLO!\n")
  expect(toolRunCount()).toBe(1)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("lambdagent replay", () => {
  it("replays a recorded run offline: the same result and trace, no provider, no tool run", async () => {
    const out = await runCli(["replay", recorded, "--format", "json"], { env })
    expect(out.stderr).toBe("")
    expect(out.code).toBe(0)
    const replayed = JSON.parse(out.stdout)
    const original = JSON.parse(readFileSync(recorded, "utf8"))
    expect(replayed.result).toBe("HELLO!")
    expect(replayed.divergence).toBeNull()
    expect(replayed.trace).toEqual(original.trace)
    expect(replayed.stats).toMatchObject({ llmCalls: 2, toolCalls: 1, tokens: original.stats.tokens, steps: original.stats.steps })
    expect(toolRunCount()).toBe(1)
    const text = await runCli(["replay", recorded], { env })
    expect(text.stdout).toBe("HELLO!\n")
    expect(text.stderr).toBe("")
  })

  it("replays a run with a channels scope offline, each message from the recording", async () => {
    const pipeline = join(dir, "pipeline.json")
    const run = await runCli(["run", "examples/agents/pipeline.yml", "the topic", "--model", "scripted:echo", "--trace-file", pipeline, "--quiet"], { env })
    expect(run.stderr).toBe("")
    const original = JSON.parse(readFileSync(pipeline, "utf8"))
    expect(original.replay.answers.map((a: { kind: string }) => a.kind).filter((k: string) => k === "send" || k === "receive")).toHaveLength(4)
    const out = await runCli(["replay", pipeline, "--format", "json"], { env })
    expect(out.stderr).toBe("")
    expect(out.code).toBe(0)
    const replayed = JSON.parse(out.stdout)
    expect(replayed.result).toEqual(original.result)
    expect(replayed.divergence).toBeNull()
    expect(replayed.stats).toMatchObject({ llmCalls: 3, steps: original.stats.steps })
  })

  it("a changed prompt stops at the first request that differs, naming the step, the form and both requests", async () => {
    const out = await runCli(["replay", recorded, changed], { env })
    expect(out.code).toBe(6)
    expect(out.stdout).toBe("")
    const [first, recordedLine, newLine] = out.stderr.split("\n")
    expect(first).toMatch(
      /^error: ReplayDivergence: the run diverged at step \d+, request 1: an LLM call \(Helper\.think\) differs from the recorded one: system is /
    )
    expect(recordedLine).toContain('"system":"You answer by calling')
    expect(newLine).toContain('"system":"You reply by calling')
    expect(toolRunCount()).toBe(1)
    const json = await runCli(["replay", recorded, changed, "--format", "json"], { env })
    expect(json.code).toBe(6)
    const { divergence, result } = JSON.parse(json.stdout)
    expect(result).toBeNull()
    expect(Object.keys(divergence)).toEqual(["key", "step", "form", "expected", "actual", "message"])
    expect(divergence).toMatchObject({ key: "1", form: "an LLM call (Helper.think)", expected: { kind: "llm" }, actual: { kind: "llm" } })
  })

  it("--live-after-divergence goes on live from the divergence, on the model given", async () => {
    const again = join(dir, "live.json")
    const out = await runCli(["replay", recorded, changed, "--live-after-divergence", "--model", plan, "--trace-file", again], { env })
    expect(out.code).toBe(0)
    expect(out.stdout).toBe("HELLO!\n")
    expect(out.stderr).toContain("[replay: the run diverged at step")
    expect(out.stderr).toContain("went on live from there]")
    // the tool (its command taken from the recording) ran live this time
    expect(toolRunCount()).toBe(2)
    // the live run's own trace file replays offline too
    const replayed = await runCli(["replay", again, "--format", "json"], { env })
    expect(replayed.code).toBe(0)
    expect(JSON.parse(replayed.stdout).result).toBe("HELLO!")
  })

  it("refuses truncated, edited and foreign trace files with one line naming the file", async () => {
    const text = readFileSync(recorded, "utf8")
    const cases: Array<[string, string, RegExp]> = [
      ["truncated.json", text.slice(0, Math.floor(text.length / 2)), /not JSON/],
      ["edited.json", text.replace('"answer":"HELLO"', '"answer":"GOODBYE"'), /does not match its digest/],
      ["foreign.json", JSON.stringify({ result: 1, trace: [] }), /holds no recording of oracle answers/],
      ["version.json", text.replace('"format":"lambdagent.replay","version":1', '"format":"lambdagent.replay","version":7'), /format version 7/],
      ["empty.json", "", /an empty file/]
    ]
    for (const [name, content, message] of cases) {
      const file = join(dir, name)
      writeFileSync(file, content)
      const out = await runCli(["replay", file], { env })
      expect(out.code, name).toBe(1)
      expect(out.stdout).toBe("")
      const lines = out.stderr.trimEnd().split("\n")
      expect(lines, name).toHaveLength(1)
      expect(lines[0]).toContain(`error: ReplayError: ${file}: `)
      expect(lines[0]).toMatch(message)
      expect(out.stderr).not.toMatch(/\n\s+at /)
    }
    expect(readFileSync(recorded, "utf8")).toContain('"answer":"HELLO"')
    const missing = await runCli(["replay", join(dir, "nope.json")], { env })
    expect(missing.code).toBe(4)
    const noLive = await runCli(["replay", recorded, "--model", plan], { env })
    expect(noLive.code).toBe(2)
    expect(noLive.stderr).toContain("--live-after-divergence")
  })
})

describe("lambdagent trace diff", () => {
  it("diffs two runs: aligned steps, first divergence, changed prompts and tool calls, deltas", async () => {
    const other = join(dir, "other.json")
    const otherPlan = 'scripted:plan:["{\\"tool\\":\\"upper\\",\\"args\\":\\"bye\\"}","{\\"tool\\":\\"terminate\\",\\"args\\":\\"{{observation}}!\\"}"]'
    await runCli(["run", changed, "say hi", ...tool, "--model", otherPlan, "--trace-file", other, "--quiet"], { env })
    const out = await runCli(["trace", "diff", recorded, other, "--format", "json"], { env })
    expect(out.code).toBe(0)
    const diff = JSON.parse(out.stdout)
    expect(Object.keys(diff)).toEqual(["a", "b", "identical", "firstDivergence", "steps", "prompts", "tools", "totals"])
    expect(diff.identical).toBe(false)
    expect(diff.steps.map((s: { status: string }) => s.status)).toEqual(["changed", "changed", "changed", "changed"])
    expect(diff.firstDivergence).toMatchObject({ row: 0, status: "changed", a: { kind: "llm", name: "Helper.think" } })
    expect(diff.firstDivergence.changes).toContain("request")
    expect(diff.prompts.map((p: { key: string }) => p.key)).toEqual(["1", "3"])
    expect(diff.prompts[0].a.system).toContain("You answer")
    expect(diff.prompts[0].b.system).toContain("You reply")
    expect(diff.tools).toEqual([
      { key: "2", name: "upper", a: { name: "upper", input: "hello", output: "HELLO" }, b: { name: "upper", input: "bye", output: "BYE" } }
    ])
    expect(Object.keys(diff.totals.delta)).toEqual(["events", "llmCalls", "toolCalls", "tokens", "durationMs"])
    expect(diff.totals.delta.events).toBe(0)
    expect(diff.totals.delta.tokens).toBe(diff.totals.b.tokens - diff.totals.a.tokens)

    const text = await runCli(["trace", "diff", recorded, other], { env })
    expect(text.code).toBe(0)
    expect(text.stdout).toContain("first divergence at row 0")
    expect(text.stdout).toContain("changed prompts (2):")
    expect(text.stdout).toContain('upper (request 2): input "hello" → "bye", output "HELLO" → "BYE"')
    expect(text.stdout).toMatch(/^tokens \d+ → \d+ \([+-]\d+\), time /m)
  })

  it("a replay's trace is the same run as its recording", async () => {
    const again = join(dir, "again.json")
    expect((await runCli(["replay", recorded, "--trace-file", again], { env })).code).toBe(0)
    const diff = JSON.parse((await runCli(["trace", "diff", recorded, again, "--format", "json"], { env })).stdout)
    expect(diff.identical).toBe(true)
    expect(diff.firstDivergence).toBeNull()
    expect(diff.totals.delta).toMatchObject({ events: 0, llmCalls: 0, toolCalls: 0, tokens: 0 })
  })

  it("a step only one run took is added or removed, and the rest stays aligned", async () => {
    const longer = join(dir, "longer.json")
    const twice =
      'scripted:plan:["{\\"tool\\":\\"upper\\",\\"args\\":\\"hello\\"}","{\\"tool\\":\\"upper\\",\\"args\\":\\"again\\"}","{\\"tool\\":\\"terminate\\",\\"args\\":\\"{{observation}}!\\"}"]'
    await runCli(["run", config, "say hi", ...tool, "--model", twice, "--trace-file", longer, "--quiet"], { env })
    const diff = JSON.parse((await runCli(["trace", "diff", recorded, longer, "--format", "json"], { env })).stdout)
    const statuses = diff.steps.map((s: { status: string }) => s.status)
    expect(statuses.filter((s: string) => s === "added")).toHaveLength(2)
    expect(statuses[0]).toBe("same")
    expect(diff.totals.delta).toMatchObject({ events: 2, llmCalls: 1, toolCalls: 1 })
  })

  it("a bad trace file is one line naming it", async () => {
    const bad = join(dir, "bad.json")
    writeFileSync(bad, '{"trace": [')
    const out = await runCli(["trace", "diff", recorded, bad])
    expect(out.code).toBe(1)
    expect(out.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(out.stderr).toContain(`${bad} is not JSON`)
  })
})
