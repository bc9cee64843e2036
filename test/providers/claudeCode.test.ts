import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ClaudeCode, Providers } from "lambdagent"
import { languageModelConformance } from "../../src/testing/LanguageModelKit.ts"
import { waitFor } from "../fixtures/waitFor.ts"
import { collect, failure, interruptWhen, isInterrupted, run } from "./helpers.ts"

/**
 * A fake `claude`: logs its arguments, then behaves according to the prompt.
 * `__hang__` writes its pid and never exits; `__exit__` fails with code 2; `__is_error__` prints an
 * error result; `__garbage__` prints no JSON; `__array__` prints the verbose array form; otherwise
 * it answers `claude says: <prompt>` and keeps (or starts) a session.
 */
const fakeClaude = String.raw`
const fs = require("node:fs")
const args = process.argv.slice(2)
if (process.env.FAKE_CLAUDE_LOG) fs.appendFileSync(process.env.FAKE_CLAUDE_LOG, JSON.stringify(args) + "\n")
const get = (flag) => { const i = args.indexOf(flag); return i === -1 ? undefined : args[i + 1] }
const prompt = get("-p")
const resume = get("--resume")
const usage = { input_tokens: 10, cache_creation_input_tokens: 2, cache_read_input_tokens: 3, output_tokens: 7 }
switch (prompt) {
  case "__hang__":
    if (process.env.FAKE_CLAUDE_PIDFILE) fs.writeFileSync(process.env.FAKE_CLAUDE_PIDFILE, String(process.pid))
    setInterval(() => {}, 1000)
    break
  case "__exit__":
    process.stderr.write("Error: something broke\n")
    process.exit(2)
  case "__is_error__":
    process.stdout.write(JSON.stringify({ type: "result", subtype: "success", is_error: true, result: "Invalid API key · Please run /login", session_id: "s" }))
    process.exit(1)
  case "__garbage__":
    process.stdout.write("this is not json\n")
    break
  case "__array__":
    process.stdout.write(JSON.stringify([
      { type: "system", subtype: "init", session_id: "arr" },
      { type: "result", subtype: "success", is_error: false, result: "from array", session_id: "arr", usage }
    ]))
    break
  default:
    if (get("--json-schema") !== undefined) {
      // a structured answer: the result text is empty, the value is structured_output
      const schema = JSON.parse(get("--json-schema"))
      process.stdout.write(JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "", session_id: "sess-new", usage, structured_output: { prompt, keys: Object.keys(schema.properties ?? {}) } }))
      break
    }
    process.stdout.write(JSON.stringify({
      type: "result",
      subtype: "success",
      is_error: false,
      result: (resume ? "resumed " + resume + ": " : "claude says: ") + prompt,
      session_id: resume ?? "sess-new",
      usage,
      modelUsage: { [get("--model") ?? "claude-default"]: {} }
    }))
}
`

let dir: string
let bin: string
let logFile: string
let pidFile: string

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "lambdagent-claude-"))
  fs.writeFileSync(path.join(dir, "fake-claude.cjs"), fakeClaude)
  bin = path.join(dir, "claude")
  fs.writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${path.join(dir, "fake-claude.cjs")}" "$@"\n`, { mode: 0o755 })
  logFile = path.join(dir, "calls.log")
  pidFile = path.join(dir, "pid")
})

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

const env = () => ({ ...process.env, FAKE_CLAUDE_LOG: logFile, FAKE_CLAUDE_PIDFILE: pidFile })

const calls = (): Array<Array<string>> =>
  fs.existsSync(logFile)
    ? fs
        .readFileSync(logFile, "utf8")
        .trim()
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l))
    : []

const resetLog = () => fs.rmSync(logFile, { force: true })

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const waitForFile = async (file: string): Promise<string> => {
  await waitFor(() => fs.existsSync(file) && fs.readFileSync(file, "utf8") !== "", `${file} to be written`)
  return fs.readFileSync(file, "utf8")
}

const ask = (content: string) => ({ messages: [{ role: "user" as const, content }] })

describe("Claude Code provider", () => {
  it("runs claude -p with the prompt, --output-format json, system prompt and model", async () => {
    resetLog()
    const model = ClaudeCode.make({ bin, env: env(), systemPrompt: "You are terse." })
    expect(model.name).toBe("claude-code")
    const response = await run(
      model.chat({
        messages: [
          { role: "system", content: "Answer in English." },
          { role: "user", content: "hello" }
        ],
        model: "sonnet"
      })
    )
    expect(response).toEqual({
      text: "claude says: hello",
      usage: { inputTokens: 15, outputTokens: 7 },
      model: "sonnet",
      sessionId: "sess-new"
    })
    expect(calls()).toEqual([["-p", "hello", "--output-format", "json", "--system-prompt", "You are terse.\n\nAnswer in English.", "--model", "sonnet"]])
  })

  it("appendSystemPrompt and extra args", async () => {
    resetLog()
    const model = ClaudeCode.make({ bin, env: env(), appendSystemPrompt: true, args: ["--max-turns", "2"] })
    await run(
      model.chat({
        messages: [
          { role: "system", content: "extra" },
          { role: "user", content: "x" }
        ]
      })
    )
    expect(calls()[0]).toEqual(["-p", "x", "--output-format", "json", "--append-system-prompt", "extra", "--max-turns", "2"])
  })

  it("without a session, several turns are sent as a transcript", async () => {
    resetLog()
    const model = ClaudeCode.make({ bin, env: env() })
    await run(
      model.chat({
        messages: [
          { role: "user", content: "one" },
          { role: "assistant", content: "two" },
          { role: "user", content: "three" }
        ]
      })
    )
    expect(calls()[0]![1]).toBe("User: one\n\nAssistant: two\n\nUser: three")
  })

  it("a prompt starting with '-' is not taken for an option", async () => {
    resetLog()
    const response = await run(ClaudeCode.make({ bin, env: env() }).chat(ask("--version?")))
    expect(response.text).toBe("claude says:  --version?")
    expect(calls()[0]!.slice(0, 2)).toEqual(["-p", " --version?"])
  })

  it("session mode: the next call resumes the session with only the new turn", async () => {
    resetLog()
    const model = ClaudeCode.make({ bin, env: env(), session: true })
    expect(model.sessionId()).toBeUndefined()
    const first = await run(model.chat(ask("remember 7")))
    expect(first.sessionId).toBe("sess-new")
    expect(model.sessionId()).toBe("sess-new")
    const second = await run(
      model.chat({
        messages: [
          { role: "user", content: "remember 7" },
          { role: "assistant", content: first.text },
          { role: "user", content: "which number?" }
        ]
      })
    )
    expect(second.text).toBe("resumed sess-new: which number?")
    const [a, b] = calls()
    expect(a).not.toContain("--resume")
    expect(b).toEqual(["-p", "which number?", "--output-format", "json", "--resume", "sess-new"])
  })

  it("session mode: each conversation key resumes its own session", async () => {
    resetLog()
    const model = ClaudeCode.make({ bin, env: env(), session: true })
    const turn = (conversation: string, content: string) => run(model.chat({ messages: [{ role: "user", content }], conversation }))
    // the fake keeps the id it resumes, so give each conversation its own first id by hand
    expect((await turn("a", "__array__")).sessionId).toBe("arr")
    expect((await turn("b", "hello")).sessionId).toBe("sess-new")
    expect((await turn("a", "next")).text).toBe("resumed arr: next")
    expect((await turn("b", "next")).text).toBe("resumed sess-new: next")
    // a call in no conversation starts afresh and is kept nowhere
    expect((await run(model.chat({ messages: [{ role: "user", content: "alone" }], conversation: null }))).text).toBe("claude says: alone")
    expect((await turn("a", "again")).text).toBe("resumed arr: again")
    expect(calls().map((args) => (args.includes("--resume") ? args[args.indexOf("--resume") + 1] : undefined))).toEqual([
      undefined,
      undefined,
      "arr",
      "sess-new",
      undefined,
      "arr"
    ])
  })

  it("resume option starts from a given session", async () => {
    resetLog()
    const model = ClaudeCode.make({ bin, env: env(), resume: "sess-old" })
    expect((await run(model.chat(ask("hi")))).text).toBe("resumed sess-old: hi")
  })

  it("a response format goes to --json-schema, and the answer is structured_output", async () => {
    resetLog()
    const model = ClaudeCode.make({ bin, env: env() })
    const schema = { type: "object", properties: { prompt: { type: "string" }, keys: { type: "array" } }, required: ["prompt"] }
    const response = await run(model.chat({ ...ask("Extract."), responseFormat: { name: "extraction", schema } }))
    expect(response.text).toBe('{"prompt":"Extract.","keys":["prompt","keys"]}')
    expect(calls()[0]).toEqual(["-p", "Extract.", "--output-format", "json", "--json-schema", JSON.stringify(schema)])
    expect(model.structuredOutput).toBe(true)
  })

  it("reads the verbose array output form", async () => {
    const response = await run(ClaudeCode.make({ bin, env: env() }).chat(ask("__array__")))
    expect(response.text).toBe("from array")
    expect(response.sessionId).toBe("arr")
  })

  it("LAMBDAGENT_CLAUDE_BIN names the binary", async () => {
    const model = ClaudeCode.make({ env: { ...env(), LAMBDAGENT_CLAUDE_BIN: bin } })
    expect((await run(model.chat(ask("via env")))).text).toBe("claude says: via env")
  })

  it("a missing binary → Unavailable naming the binary", async () => {
    const missing = path.join(dir, "no-such-claude")
    const error = await failure(ClaudeCode.make({ bin: missing, env: env() }).chat(ask("hi")))
    expect(error.reason).toBe("Unavailable")
    expect(error.message).toContain(missing)
    expect(error.message).toContain("LAMBDAGENT_CLAUDE_BIN")

    const onPath = await failure(ClaudeCode.make({ env: { PATH: path.join(dir, "empty") } }).chat(ask("hi")))
    expect(onPath.reason).toBe("Unavailable")
    expect(onPath.message).toContain('"claude"')
  })

  it("a non-zero exit → a typed error with the exit code and stderr", async () => {
    const error = await failure(ClaudeCode.make({ bin, env: env() }).chat(ask("__exit__")))
    expect(error._tag).toBe("ProviderError")
    expect(error.reason).toBe("Server")
    expect(error.message).toContain("exited with code 2")
    expect(error.message).toContain("something broke")
  })

  it("an is_error result → an error typed from its text", async () => {
    const error = await failure(ClaudeCode.make({ bin, env: env() }).chat(ask("__is_error__")))
    expect(error.reason).toBe("Auth")
    expect(error.message).toContain("Invalid API key")
  })

  it("output that is not JSON → BadResponse", async () => {
    const error = await failure(ClaudeCode.make({ bin, env: env() }).chat(ask("__garbage__")))
    expect(error.reason).toBe("BadResponse")
  })

  it("the timeout kills the child → Timeout", async () => {
    fs.rmSync(pidFile, { force: true })
    const error = await failure(ClaudeCode.make({ bin, env: env(), timeoutMs: 500 }).chat(ask("__hang__")))
    expect(error.reason).toBe("Timeout")
    const pid = Number(await waitForFile(pidFile))
    expect(isAlive(pid)).toBe(false)
  })

  it("interruption kills the child", async () => {
    fs.rmSync(pidFile, { force: true })
    let pid = 0
    const exit = await interruptWhen(ClaudeCode.make({ bin, env: env() }).chat(ask("__hang__")), async () => {
      pid = Number(await waitForFile(pidFile))
    })
    expect(isInterrupted(exit)).toBe(true)
    expect(pid).toBeGreaterThan(0)
    expect(isAlive(pid)).toBe(false)
  })

  it("stream yields the answer then Finish with usage", async () => {
    const chunks = await collect(ClaudeCode.make({ bin, env: env() }).stream(ask("streamed")))
    expect(chunks).toEqual([
      { _tag: "TextDelta", text: "claude says: streamed" },
      { _tag: "Finish", usage: { inputTokens: 15, outputTokens: 7 }, model: "claude-default" }
    ])
    const failed = await failure(Stream.runCollect(ClaudeCode.make({ bin, env: env() }).stream(ask("__exit__"))))
    expect(failed.reason).toBe("Server")
  })

  it("Providers.fromSpec builds Claude Code models", async () => {
    resetLog()
    const model = Providers.fromSpec("claude-code:opus", { claudeBin: bin, env: env() })
    expect(model.name).toBe("claude-code")
    await run(model.chat(ask("spec")))
    expect(calls()[0]).toContain("opus")
  })
})

languageModelConformance("Claude Code (fake CLI)", () => ClaudeCode.make({ bin, env: env() }), {
  request: ask("conformance"),
  expectedText: "claude says: conformance",
  slowRequest: ask("__hang__"),
  interruptAfterMs: 300,
  failing: { make: () => ClaudeCode.make({ bin: path.join(dir, "missing"), env: env() }), reason: "Unavailable" }
})
