/**
 * kill -9 and resume, driving the built CLI: a run on an OpenAI-compatible fake server (which
 * counts requests), with tools and `par`, is killed while each of its LLM calls is in flight;
 * `lambdagent resume` from the newest checkpoint ends with the uninterrupted run's result and
 * trace, and asks the server only for the calls the checkpoint had not recorded. The same run on
 * the scripted model is killed once its k-th checkpoint file appears, for every k.
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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
    const messages = (JSON.parse(body) as { messages: Array<{ content: string }> }).messages
    const text = messages.map((m) => m.content).join("|")
    const reply = `r${text.length % 97}:${text.slice(-12)}`
    res.setHeader("content-type", "application/json")
    res.end(
      JSON.stringify({
        id: "x",
        object: "chat.completion",
        created: 0,
        model: "fake",
        choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }],
        usage: { prompt_tokens: text.length, completion_tokens: reply.length, total_tokens: text.length + reply.length }
      })
    )
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
      const files = readdirSync(checkpoints)
        .filter((f) => f.endsWith(".checkpoint.json"))
        .sort()
      expect(files.length).toBeGreaterThan(0)
      const newest = join(checkpoints, files.at(-1)!)
      const recorded = (JSON.parse(readFileSync(newest, "utf8")) as { answers: Array<{ kind: string }> }).answers.filter((a) => a.kind === "llm").length
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

  it("resumes after a kill at each of the scripted run's checkpoints with the uninterrupted run's result and trace", async () => {
    const scripted = ["--model", "scripted:echo"]
    const whole = await runCli(["run", termFile, "go", ...toolFlag, ...scripted, "--quiet", "--format", "json"], { env })
    expect(whole.code, whole.stderr).toBe(0)
    const expected = JSON.parse(whole.stdout) as { result: unknown; trace: Array<Record<string, unknown>> }
    let killed = 0
    for (let k = 1; k <= 24; k++) {
      const checkpoints = join(dir, `scripted-k${k}`)
      mkdirSync(checkpoints)
      const signal = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
        const written = new Set<string>()
        const child = spawn(
          process.execPath,
          [cliPath, "run", termFile, "go", ...toolFlag, ...scripted, "--quiet", "--format", "json", "--checkpoint", checkpoints],
          { env: { ...process.env, ...env }, stdio: "ignore" }
        )
        // the rename that puts a checkpoint in place is the event: kill the run at its k-th
        const watcher = watch(checkpoints, (_event, name) => {
          if (name === null || name.startsWith(".") || !name.endsWith(".checkpoint.json")) return
          written.add(name)
          if (written.size === k) child.kill("SIGKILL")
        })
        child.on("error", reject)
        child.on("exit", (_code, signal) => {
          watcher.close()
          resolve(signal)
        })
      })
      if (signal !== "SIGKILL") continue
      killed++
      const files = readdirSync(checkpoints)
        .filter((f) => f.endsWith(".checkpoint.json"))
        .sort()
      const resumed = await runCli(["resume", join(checkpoints, files.at(-1)!), "--format", "json"], { env })
      expect(resumed.code, `k=${k}: ${resumed.stderr}`).toBe(0)
      const out = JSON.parse(resumed.stdout) as typeof expected
      expect(out.result, `k=${k}`).toEqual(expected.result)
      expect(observable(out.trace), `k=${k}`).toEqual(observable(expected.trace))
    }
    expect(killed).toBeGreaterThanOrEqual(20)
  }, 600_000)
})
