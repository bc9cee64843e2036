/**
 * The Claude Code CLI as a language model: each call runs
 * `claude -p <prompt> --output-format json [--system-prompt …] [--model …] [--resume <session>]`
 * and reads the JSON result (`result`, `session_id`, `usage`).
 *
 * The binary is `claude` on the `PATH` unless the `bin` option or `LAMBDAGENT_CLAUDE_BIN` names
 * another. In session mode the model remembers the CLI's session id and resumes it on the next call,
 * sending only the new turn. Interrupting a call, or its timeout, kills the child process.
 *
 * @since 0.1.0
 * @module
 */
import type { ChildProcess } from "node:child_process"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import {
  type ChatChunk,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  LanguageModel,
  type LanguageModelShape,
  type ProviderError,
  type ProviderErrorReason,
  type Usage
} from "../LanguageModel.ts"
import * as Resilience from "./internal/resilience.ts"

/**
 * Options of {@link make}.
 *
 * Defaults differ from the HTTP providers: a CLI run is an agentic loop that may take minutes and may
 * have side effects, so the timeout is 10 minutes and failed runs are not retried unless you set
 * `maxRetries`.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ClaudeCode } from "lambdagent"
 * const o: ClaudeCode.Options = { model: "sonnet", session: true, args: ["--max-turns", "3"] }
 * ```
 */
export interface Options extends Resilience.ResilienceOptions {
  /** The executable; default `LAMBDAGENT_CLAUDE_BIN`, else `claude`. */
  readonly bin?: string
  /** `--model` when the request names none. */
  readonly model?: string
  /** A system prompt placed before the request's own system messages. */
  readonly systemPrompt?: string
  /** Pass the system prompt with `--append-system-prompt` (keep Claude Code's own) instead of `--system-prompt`. */
  readonly appendSystemPrompt?: boolean
  /**
   * Session mode: remember the session id of each answer and `--resume` it on the next call. A
   * request naming a `conversation` resumes that conversation's own session, one with
   * `conversation: null` starts a fresh session; the others share one.
   */
  readonly session?: boolean
  /** Resume this session id on the first call (implies session mode). */
  readonly resume?: string
  /** Extra command-line arguments, appended as given. */
  readonly args?: ReadonlyArray<string>
  /** Working directory of the child process. */
  readonly cwd?: string
  /** Environment of the child process (and where `LAMBDAGENT_CLAUDE_BIN` is read); default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Provider name in errors and traces; default `claude-code`. */
  readonly name?: string
}

/**
 * A Claude Code model: a {@link LanguageModelShape} that also tells its current session id.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { ClaudeCode } from "lambdagent"
 * const model: ClaudeCode.ClaudeCodeModel = ClaudeCode.make({ session: true })
 * console.log(model.sessionId()) // undefined until the first answer
 * ```
 */
export interface ClaudeCodeModel extends LanguageModelShape {
  /** The last session id an answer reported (in session mode, without a `conversation`, the one the next call resumes). */
  readonly sessionId: () => string | undefined
}

/** What the child process left behind. */
interface RunResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const stderrLimit = 8_192
/** Conversations whose sessions a model remembers; the least recently used is forgotten first. */
const maxConversations = 10_000
const killGraceMs = 2_000

const roleLabel = (message: ChatMessage): string => {
  switch (message.role) {
    case "user":
      return "User"
    case "assistant":
      return "Assistant"
    case "tool":
      return `Tool result${message.toolCallId !== undefined ? ` (${message.toolCallId})` : ""}`
    case "system":
      return "System"
  }
}

/** The prompt text: the single user turn as is, or a transcript of several turns. */
const renderPrompt = (turns: ReadonlyArray<ChatMessage>): string => {
  if (turns.length === 1 && turns[0]!.role === "user") return turns[0]!.content
  return turns.map((m) => `${roleLabel(m)}: ${m.content}`).join("\n\n")
}

/** Classify the text of a failed run. */
const reasonOf = (text: string): ProviderErrorReason => {
  if (/\b(401|403)\b|authenticat|\/login|api key|unauthori[sz]ed/i.test(text)) return "Auth"
  if (/\b429\b|rate.?limit/i.test(text)) return "RateLimited"
  return "Server"
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/** Find the `result` object in the CLI's JSON output (an object, or an array of messages). */
const parseOutput = (stdout: string): Record<string, unknown> | undefined => {
  const candidates = [stdout.trim()]
  const lines = stdout.trim().split("\n")
  if (lines.length > 1) candidates.push(lines[lines.length - 1]!.trim())
  for (const candidate of candidates) {
    if (candidate === "") continue
    let parsed: unknown
    try {
      parsed = JSON.parse(candidate)
    } catch {
      continue
    }
    if (Array.isArray(parsed)) {
      for (let i = parsed.length - 1; i >= 0; i--) {
        const item: unknown = parsed[i]
        if (isObject(item) && item["type"] === "result") return item
      }
      return undefined
    }
    if (isObject(parsed)) return parsed
  }
  return undefined
}

const usageOf = (u: unknown): Usage | undefined => {
  if (!isObject(u)) return undefined
  const n = (key: string): number => (typeof u[key] === "number" && Number.isFinite(u[key]) ? (u[key] as number) : 0)
  return {
    inputTokens: n("input_tokens") + n("cache_creation_input_tokens") + n("cache_read_input_tokens"),
    outputTokens: n("output_tokens")
  }
}

/**
 * A model backed by the Claude Code CLI.
 *
 * A missing binary fails each call with `ProviderError` reason `Unavailable` naming the binary;
 * a non-zero exit or an `is_error` result fails with a reason read from the CLI's message
 * (`Auth`, `RateLimited`, otherwise `Server`); output that is not the expected JSON is `BadResponse`.
 * Request `tools` are ignored: Claude Code runs its own tools. A request's `responseFormat` goes
 * to `--json-schema`, and the answer is the CLI's `structured_output`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ClaudeCode } from "lambdagent"
 * const model = ClaudeCode.make({ session: true })
 * const twoTurns = Effect.gen(function*() {
 *   yield* model.chat({ messages: [{ role: "user", content: "Remember the number 7." }] })
 *   return yield* model.chat({ messages: [{ role: "user", content: "Which number?" }] }) // --resume
 * })
 * ```
 */
export const make = (options: Options = {}): ClaudeCodeModel => {
  const env = options.env ?? process.env
  const bin = options.bin ?? env["LAMBDAGENT_CLAUDE_BIN"] ?? "claude"
  const name = options.name ?? "claude-code"
  const sessionMode = options.session === true || options.resume !== undefined
  let session: string | undefined = options.resume
  // each conversation's session, oldest first (a Map keeps insertion order), at most maxConversations
  const sessions = new Map<string, string>()
  const sessionOf = (request: ChatRequest): string | undefined => {
    const key = request.conversation
    if (!sessionMode || key === null) return undefined
    return key === undefined ? session : (sessions.get(key) ?? options.resume)
  }
  let last: string | undefined = options.resume
  const keep = (request: ChatRequest, id: string) => {
    last = id
    const key = request.conversation
    if (key === undefined) session = id
    if (!sessionMode || key === undefined || key === null) return
    sessions.delete(key)
    sessions.set(key, id)
    if (sessions.size > maxConversations) sessions.delete(sessions.keys().next().value!)
  }
  const caller: Resilience.Caller = {
    provider: name,
    policy: Resilience.policy(options, { ...Resilience.defaultPolicy, timeoutMs: 600_000, maxRetries: 0 }),
    secrets: [env["ANTHROPIC_API_KEY"] ?? ""].filter((s) => s !== "")
  }
  const childEnv: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) if (value !== undefined) childEnv[key] = value

  const argsFor = (request: ChatRequest, resumeId: string | undefined): Array<string> => {
    const system: Array<string> = []
    if (options.systemPrompt !== undefined && options.systemPrompt !== "") system.push(options.systemPrompt)
    const turns: Array<ChatMessage> = []
    for (const message of request.messages) {
      if (message.role === "system") system.push(message.content)
      else turns.push(message)
    }
    // When resuming, the CLI holds the history: send only what came after the last assistant turn.
    let start = 0
    if (resumeId !== undefined) {
      for (let i = turns.length - 1; i >= 0; i--) {
        if (turns[i]!.role === "assistant") {
          start = i + 1
          break
        }
      }
    }
    // The prompt is a positional argument: keep one that starts with "-" from being read as an option.
    const prompt = renderPrompt(turns.slice(start))
    const args = ["-p", prompt.startsWith("-") ? ` ${prompt}` : prompt, "--output-format", "json"]
    if (system.length > 0) args.push(options.appendSystemPrompt === true ? "--append-system-prompt" : "--system-prompt", system.join("\n\n"))
    const model = request.model ?? options.model
    if (model !== undefined) args.push("--model", model)
    if (resumeId !== undefined) args.push("--resume", resumeId)
    // the CLI validates its final answer against the schema and prints it as `structured_output`
    if (request.responseFormat !== undefined) args.push("--json-schema", JSON.stringify(request.responseFormat.schema))
    if (options.args !== undefined) args.push(...options.args)
    return args
  }

  /** Run the binary once; interruption (and so the timeout) kills the child and waits for it to exit. */
  const run = (args: ReadonlyArray<string>): Effect.Effect<RunResult, ProviderError> =>
    Effect.callback<RunResult, ProviderError>((resume) => {
      let stdout = ""
      let stderr = ""
      let exited = false
      let child: ChildProcess
      try {
        // loaded with the first call, not with the module (see internal/process.ts)
        child = process.getBuiltinModule("node:child_process").spawn(bin, args, {
          stdio: ["ignore", "pipe", "pipe"],
          env: childEnv,
          ...(options.cwd !== undefined ? { cwd: options.cwd } : {})
        })
      } catch (error) {
        resume(Effect.fail(Resilience.fail(caller, "Unavailable", `cannot run "${bin}": ${error instanceof Error ? error.message : String(error)}`)))
        return
      }
      child.stdout!.setEncoding("utf8")
      child.stderr!.setEncoding("utf8")
      child.stdout!.on("data", (data: string) => {
        stdout += data
      })
      child.stderr!.on("data", (data: string) => {
        stderr = (stderr + data).slice(-stderrLimit)
      })
      child.on("error", (error: NodeJS.ErrnoException) => {
        exited = true
        if (error.code === "ENOENT" || error.code === "EACCES") {
          resume(
            Effect.fail(
              Resilience.fail(
                caller,
                "Unavailable",
                `cannot run the Claude Code CLI "${bin}" (${error.code === "ENOENT" ? "not found" : "not executable"}); install it or point the \`bin\` option or LAMBDAGENT_CLAUDE_BIN at it`
              )
            )
          )
        } else {
          resume(Effect.fail(Resilience.fail(caller, "Unavailable", `cannot run "${bin}": ${error.message}`)))
        }
      })
      child.on("close", (code, signal) => {
        exited = true
        resume(Effect.succeed({ code, signal, stdout, stderr }))
      })
      return Effect.callback<void>((done) => {
        if (exited || child.pid === undefined) return done(Effect.void)
        const force = setTimeout(() => child.kill("SIGKILL"), killGraceMs)
        child.once("close", () => {
          clearTimeout(force)
          done(Effect.void)
        })
        child.kill("SIGTERM")
      })
    })

  const interpret = (result: RunResult): ChatResponse | ProviderError => {
    const output = parseOutput(result.stdout)
    if (output !== undefined && output["is_error"] === true) {
      const text = typeof output["result"] === "string" && output["result"] !== "" ? output["result"] : String(output["subtype"] ?? "unknown error")
      return Resilience.fail(caller, reasonOf(text), `the CLI reported an error: ${text}`)
    }
    if (result.code !== 0) {
      const detail = result.stderr.trim() !== "" ? result.stderr.trim() : result.stdout.trim().slice(-stderrLimit)
      const how = result.code === null ? `was killed by ${result.signal ?? "a signal"}` : `exited with code ${result.code}`
      return Resilience.fail(caller, reasonOf(detail), `"${bin}" ${how}${detail !== "" ? `: ${detail}` : ""}`)
    }
    if (output === undefined || typeof output["result"] !== "string") {
      return Resilience.fail(caller, "BadResponse", `"${bin}" did not print a JSON result: ${result.stdout.trim().slice(0, 200)}`)
    }
    const usage = usageOf(output["usage"])
    const sessionId = typeof output["session_id"] === "string" ? output["session_id"] : undefined
    const model = isObject(output["modelUsage"]) ? Object.keys(output["modelUsage"])[0] : undefined
    const structured = output["structured_output"]
    return {
      text: structured !== undefined && structured !== null ? JSON.stringify(structured) : output["result"],
      ...(usage !== undefined ? { usage } : {}),
      ...(model !== undefined ? { model } : {}),
      ...(sessionId !== undefined ? { sessionId } : {})
    }
  }

  const chat = (request: ChatRequest): Effect.Effect<ChatResponse, ProviderError> =>
    Effect.suspend(() => {
      const args = argsFor(request, sessionOf(request))
      const attempt = Effect.flatMap(run(args), (result) => {
        const response = interpret(result)
        return "text" in response ? Effect.succeed(response) : Effect.fail(response)
      })
      return Effect.tap(Resilience.resilient(caller, attempt), (response) =>
        Effect.sync(() => {
          if (response.sessionId !== undefined) keep(request, response.sessionId)
        })
      )
    })

  const stream = (request: ChatRequest): Stream.Stream<ChatChunk, ProviderError> =>
    Stream.flatMap(Stream.fromEffect(chat(request)), (response) => {
      const chunks: Array<ChatChunk> = []
      if (response.text !== "") chunks.push({ _tag: "TextDelta", text: response.text })
      chunks.push({
        _tag: "Finish",
        ...(response.usage !== undefined ? { usage: response.usage } : {}),
        ...(response.model !== undefined ? { model: response.model } : {})
      })
      return Stream.fromArray(chunks)
    })

  return { name, chat, stream, structuredOutput: true, sessionId: () => last }
}

/**
 * A layer providing {@link LanguageModel} with a Claude Code model.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ClaudeCode, LanguageModel } from "lambdagent"
 * const program = LanguageModel.LanguageModel.use((m) => m.chat({ messages: [{ role: "user", content: "hi" }] }))
 * const runnable = program.pipe(Effect.provide(ClaudeCode.layer({ model: "sonnet" })))
 * ```
 */
export const layer = (options: Options = {}): Layer.Layer<LanguageModel> => Layer.sync(LanguageModel, () => make(options))
