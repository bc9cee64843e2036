/**
 * kill -9 and resume, driving the built CLI: a run on an OpenAI-compatible fake server (which
 * counts requests), with tools and `par`, is killed while each of its LLM calls is in flight;
 * `lambdagent resume` from the newest checkpoint ends with the uninterrupted run's result and
 * trace, and asks the server only for the calls the checkpoint had not recorded. The same run on
 * the scripted model is killed once its journal holds k checkpoints, for every k.
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { completion, textFrames } from "../../../test/providers/servers/openai.ts"
import { cliPath, runCli } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-crash-"))
let onRequest: (count: number, res: ServerResponse) => boolean = () => true
let requests = 0
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  let body = ""
  req.on("data", (d) => (body += d))
  req.on("end", () => {
    requests++
    if (!onRequest(requests, res)) return
    const { messages, stream } = JSON.parse(body) as { messages: Array<{ content: string }>; stream?: boolean }
    const text = messages.map((m) => m.content).join("|")
    const reply = `r${text.length % 97}:${text.slice(-12)}`
    if (stream === true) {
      // a run with --trace-file streams its calls
      res.setHeader("content-type", "text/event-stream")
      res.end(textFrames([reply], { prompt_tokens: text.length, completion_tokens: reply.length }).join(""))
      return
    }
    res.setHeader("content-type", "application/json")
    res.end(JSON.stringify(completion({ text: reply, usage: { prompt_tokens: text.length, completion_tokens: reply.length } })))
  })
})
let termFile = ""

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const llm = (system: string) => ({
    llm: { system, conversation: false, model: { provider: "openai-compatible", name: "fake", baseUrl: `http://127.0.0.1:${port}/v1` } }
  })
  const stage = (i: number) => [
    llm(`s${i}`),
    { par: { branches: [{ compose: [llm(`a${i}`), { tool: "upper" }] }, llm(`b${i}`)], merge: "concat" } },
    { tool: "upper" }
  ]
  termFile = join(dir, "agent.json")
  writeFileSync(termFile, JSON.stringify({ compose: [0, 1, 2, 3, 4, 5, 6].flatMap(stage) }))
})
afterAll(() => {
  server.close()
  rmSync(dir, { recursive: true, force: true })
})

const env = { OPENAI_API_KEY: "test" }
const toolFlag = ["--tool", "upper=printf %s {}"]
const observable = (trace: ReadonlyArray<Record<string, unknown>>) =>
  trace.map(({ durationMs: _d, duration_ms: _ms, step, ...e }) => (e.branch === undefined ? { ...e, step } : e))

/** The journal files of a checkpoint directory, oldest first. */
const journals = (checkpoints: string) =>
  readdirSync(checkpoints)
    .filter((f) => f.endsWith(".checkpoint.jsonl"))
    .sort()
    .map((f) => join(checkpoints, f))

/** The entries of a journal: its whole checkpoint, then its deltas. */
const entriesOf = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { answers: Array<{ kind: string }> })

/** Run the agent and SIGKILL it when the server receives its `k`-th request (left unanswered). */
const runKilledAt = (k: number, checkpoints: string) =>
  new Promise<void>((resolve, reject) => {
    requests = 0
    const child = spawn(process.execPath, [cliPath, "run", termFile, "go", ...toolFlag, "--quiet", "--format", "json", "--checkpoint", checkpoints], {
      env: { ...process.env, ...env },
      stdio: "ignore"
    })
    onRequest = (count) => {
      if (count < k) return true
      child.kill("SIGKILL")
      return false
    }
    child.on("error", reject)
    child.on("exit", () => resolve())
  })

describe("lambdagent run --checkpoint, kill -9, lambdagent resume", () => {
  it("resumes at every in-flight LLM call with the uninterrupted run's result and trace", async () => {
    onRequest = () => true
    requests = 0
    const whole = await runCli(["run", termFile, "go", ...toolFlag, "--quiet", "--format", "json"], { env })
    expect(whole.code, whole.stderr).toBe(0)
    const total = requests
    expect(total).toBe(21)
    const expected = JSON.parse(whole.stdout) as { result: unknown; trace: Array<Record<string, unknown>>; stats: { llmCalls: number; toolCalls: number } }
    for (let k = 1; k <= total; k++) {
      const checkpoints = join(dir, `k${k}`)
      await runKilledAt(k, checkpoints)
      const files = journals(checkpoints)
      expect(files.length).toBeGreaterThan(0)
      // the newest journal's newest checkpoint: its whole checkpoint's answers and its deltas'
      const newest = files.at(-1)!
      const recorded = entriesOf(newest)
        .flatMap((e) => e.answers)
        .filter((a) => a.kind === "llm").length
      onRequest = () => true
      requests = 0
      const resumed = await runCli(["resume", newest, "--format", "json"], { env })
      expect(resumed.code, `k=${k}: ${resumed.stderr}`).toBe(0)
      const out = JSON.parse(resumed.stdout) as typeof expected
      expect(out.result, `k=${k}`).toEqual(expected.result)
      expect(observable(out.trace), `k=${k}`).toEqual(observable(expected.trace))
      expect(out.stats.llmCalls).toBe(expected.stats.llmCalls)
      expect(out.stats.toolCalls).toBe(expected.stats.toolCalls)
      // no call the checkpoint had recorded an answer for is made again
      expect(requests, `k=${k}`).toBe(total - recorded)
      expect(recorded).toBeGreaterThanOrEqual(k - 2)
    }
  }, 600_000)

  it("a resumed run's trace file records every answer: it replays offline to the same result and diffs identical to the uninterrupted run", async () => {
    onRequest = () => true
    requests = 0
    const uninterrupted = join(dir, "uninterrupted.json")
    const whole = await runCli(["run", termFile, "go", ...toolFlag, "--quiet", "--format", "json", "--trace-file", uninterrupted], { env })
    expect(whole.code, whole.stderr).toBe(0)
    const expected = (JSON.parse(whole.stdout) as { result: unknown }).result
    for (const k of [1, 6, 11, 16, 21]) {
      const checkpoints = join(dir, `traced-k${k}`)
      await runKilledAt(k, checkpoints)
      onRequest = () => true
      const traced = join(dir, `resumed-k${k}.json`)
      const resumed = await runCli(["resume", journals(checkpoints).at(-1)!, "--quiet", "--trace-file", traced], { env })
      expect(resumed.code, `k=${k}: ${resumed.stderr}`).toBe(0)
      const recorded = JSON.parse(readFileSync(traced, "utf8")) as { replay: { answers: Array<{ kind: string }> } }
      expect(
        recorded.replay.answers.filter((a) => a.kind === "llm"),
        `k=${k}`
      ).toHaveLength(21)
      // offline: the provider is not asked once
      requests = 0
      const replayed = await runCli(["replay", traced, "--format", "json"], { env })
      expect(replayed.code, `k=${k}: ${replayed.stderr}`).toBe(0)
      expect(requests, `k=${k}`).toBe(0)
      expect((JSON.parse(replayed.stdout) as { result: unknown; divergence: unknown }).result, `k=${k}`).toEqual(expected)
      const diff = await runCli(["trace", "diff", uninterrupted, traced, "--format", "json"])
      expect(diff.code, diff.stderr).toBe(0)
      expect(JSON.parse(diff.stdout), `k=${k}`).toMatchObject({ identical: true, firstDivergence: null, prompts: [], tools: [] })
    }
  }, 600_000)

  it("resumes after a kill at each of the scripted run's checkpoints with the uninterrupted run's result and trace", async () => {
    const scripted = ["--model", "scripted:echo"]
    const whole = await runCli(["run", termFile, "go", ...toolFlag, ...scripted, "--quiet", "--format", "json"], { env })
    expect(whole.code, whole.stderr).toBe(0)
    const expected = JSON.parse(whole.stdout) as { result: unknown; trace: Array<Record<string, unknown>> }
    const killedAt = new Set<number>()
    for (let k = 1; k <= 42; k++) {
      const checkpoints = join(dir, `scripted-k${k}`)
      mkdirSync(checkpoints)
      const count = () => journals(checkpoints).reduce((n, file) => n + entriesOf(file).length, 0)
      const signal = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [cliPath, "run", termFile, "go", ...toolFlag, ...scripted, "--quiet", "--format", "json", "--checkpoint", checkpoints],
          { env: { ...process.env, ...env }, stdio: "ignore" }
        )
        // each checkpoint is a line appended to a journal (or a new journal): kill the run once it has k
        const watcher = watch(checkpoints, (_event, name) => {
          if (name === null || name.startsWith(".") || child.exitCode !== null) return
          try {
            if (count() >= k) child.kill("SIGKILL")
          } catch {
            // a journal renamed into place while it was read: the next event counts it
          }
        })
        child.on("error", reject)
        child.on("exit", (_code, signal) => {
          watcher.close()
          resolve(signal)
        })
      })
      if (signal !== "SIGKILL") continue
      killedAt.add(count())
      const resumed = await runCli(["resume", journals(checkpoints).at(-1)!, "--format", "json"], { env })
      expect(resumed.code, `k=${k}: ${resumed.stderr}`).toBe(0)
      const out = JSON.parse(resumed.stdout) as typeof expected
      expect(out.result, `k=${k}`).toEqual(expected.result)
      expect(observable(out.trace), `k=${k}`).toEqual(observable(expected.trace))
    }
    // killed at twenty or more different checkpoints
    expect(killedAt.size).toBeGreaterThanOrEqual(20)
  }, 600_000)
})
