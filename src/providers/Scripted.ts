/**
 * The offline scripted model: deterministic replies with no network, for tests, demos, benchmarks
 * and the CLI's default.
 *
 * A script is one of five rules: `Echo` (answer with the last user message), `Fixed` (always the
 * same text), `Sequence` (the given replies in order), `Plan` (replies in order that may quote the
 * last tool result, to replay what a real model did in an agent loop while the tools run for real)
 * or `Respond` (a function of the request). When a sequence or a plan runs out, a call fails with
 * `ProviderError` reason `Unavailable` — an agent that asks more often than its script expects is a
 * bug worth seeing; pass `exhausted: "repeat-last"` to keep answering with the last reply instead.
 *
 * Usage is estimated as characters / 4, rounded up; the finish reason is `tool_calls` for a reply
 * with tool calls and `stop` for any other, unless the reply gives its own. Streaming splits the reply into word chunks
 * (each word with its trailing whitespace), so the concatenated text equals the `chat` text.
 * With `latencyMs: 0` (the default) a call is a plain synchronous computation wrapped in
 * `Effect.succeed`: no timers, no fibers, nothing allocated besides the response.
 *
 * @since 0.1.0
 * @module
 */
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
  ProviderError
} from "../LanguageModel.ts"
import { SpecError } from "./internal/spec.ts"

/**
 * One scripted reply: plain text, or a full response (to script tool calls or exact usage).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Scripted } from "lambdagent"
 * const call: Scripted.Reply = { text: "", toolCalls: [{ id: "1", name: "search", arguments: "{\"q\":\"x\"}" }] }
 * ```
 */
export type Reply = string | ChatResponse

/**
 * What the scripted model answers.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Scripted } from "lambdagent"
 * const rule: Scripted.Rule = { _tag: "Sequence", replies: ["first", "second"] }
 * ```
 */
export type Rule =
  | { readonly _tag: "Echo" }
  | { readonly _tag: "Fixed"; readonly text: string }
  | { readonly _tag: "Sequence"; readonly replies: ReadonlyArray<Reply> }
  | { readonly _tag: "Plan"; readonly steps: ReadonlyArray<string> }
  | {
      readonly _tag: "Respond"
      /** The reply to a request; a throw becomes a `ProviderError` of reason `BadResponse`. */
      readonly respond: (request: ChatRequest) => Reply
    }

/**
 * Options of the scripted model.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Scripted } from "lambdagent"
 * const o: Scripted.Options = { latencyMs: 20, exhausted: "repeat-last" }
 * ```
 */
export interface Options {
  /** Provider name; default `scripted`. */
  readonly name?: string
  /** The `model` reported in responses; default `scripted`. */
  readonly model?: string
  /** Simulated latency per reply, in milliseconds (uses `Effect.sleep`, so `TestClock` drives it). Default 0. */
  readonly latencyMs?: number
  /** What a `Sequence` or a `Plan` does once every reply was used: fail (default) or repeat the last reply. */
  readonly exhausted?: "fail" | "repeat-last"
  /**
   * Whether the model says it calls tools natively (default true): a ReAct agent with
   * `toolCalling: auto` then sends it the tools, and replies with `toolCalls` are its calls.
   */
  readonly nativeTools?: boolean
  /**
   * Whether the model says it answers a request's `responseFormat` by itself (default true): an
   * `llm` term with an output schema then sends it no schema instructions in the system prompt,
   * and its replies are checked against the schema as they are.
   */
  readonly structuredOutput?: boolean
}

/**
 * Token estimate used for usage: characters / 4, rounded up.
 *
 * @since 0.1.0
 * @category utils
 * @example
 * ```ts
 * import { Scripted } from "lambdagent"
 * console.log(Scripted.estimateTokens("hello")) // 2
 * ```
 */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/**
 * The characters of the messages of each request, for the token estimate. A conversation grows by
 * a turn or two a call and is sent whole every time, so the count of the last request's messages
 * is kept, message by message: the messages a request shares with it (the same objects, from the
 * start) are not read again. The arrays are overwritten in place, never shortened (setting an
 * array's length is a call into V8's runtime): `size` says how much of them is the last request's.
 */
const makeCharCounter = () => {
  const counted: Array<ChatMessage | undefined> = []
  /** `through[i]`: the characters of `counted[0..i)`. */
  const through: Array<number> = [0]
  let size = 0
  return (messages: ReadonlyArray<ChatMessage>): number => {
    const length = messages.length
    const shared = Math.min(length, size)
    let same = 0
    while (same < shared && messages[same] === counted[same]) same++
    for (let i = same; i < length; i++) {
      const message = messages[i]!
      counted[i] = message
      through[i + 1] = through[i]! + message.content.length
    }
    // what the last request had beyond this one is let go
    for (let i = length; i < size; i++) counted[i] = undefined
    size = length
    return through[length]!
  }
}

const lastUserText = (messages: ReadonlyArray<ChatMessage>): string => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role === "user") return message.content
  }
  return ""
}

/**
 * The last tool result a model was shown: the content of a trailing `tool` message, else what
 * follows the last `Observation:` of the last user message (how the ReAct loop writes its state),
 * else the empty string.
 *
 * @since 0.2.0
 * @category utils
 * @example
 * ```ts
 * import { Scripted } from "lambdagent"
 * Scripted.lastObservation([{ role: "user", content: "Q?\nAction: run\nObservation: 42" }]) // "42"
 * ```
 */
export const lastObservation = (messages: ReadonlyArray<ChatMessage>): string => {
  const last = messages[messages.length - 1]
  if (last?.role === "tool") return last.content
  const text = lastUserText(messages)
  const marker = /(?:^|\n)Observation:[ \t]?/g
  let start = -1
  for (let match = marker.exec(text); match !== null; match = marker.exec(text)) start = match.index + match[0].length
  return start < 0 ? "" : text.slice(start).trim()
}

/** A plan step with the observation in place: quoted (`"{{observation}}"`) as a JSON string, else as it is. */
const fillObservation = (step: string, observation: string): string =>
  step.replaceAll('"{{observation}}"', JSON.stringify(observation)).replaceAll("{{observation}}", observation)

/**
 * Split a text into word chunks whose concatenation is the text: every word keeps its trailing
 * whitespace; leading whitespace is a chunk of its own.
 *
 * @since 0.1.0
 * @category utils
 * @example
 * ```ts
 * import { Scripted } from "lambdagent"
 * console.log(Scripted.words("Hello big world")) // ["Hello ", "big ", "world"]
 * ```
 */
export const words = (text: string): Array<string> => text.match(/\S+\s*|\s+/g) ?? []

const isRule = (u: unknown): u is Rule => typeof u === "object" && u !== null && !Array.isArray(u) && typeof (u as { _tag?: unknown })._tag === "string"

/**
 * A scripted model from a rule, a list of replies (a `Sequence`) or a function (`Respond`).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Scripted } from "lambdagent"
 * const model = Scripted.make(["Paris", "Berlin"])
 * const first = Effect.runSync(model.chat({ messages: [{ role: "user", content: "Capital of France?" }] }))
 * console.log(first.text) // "Paris"
 * ```
 */
export const make = (script: Rule | ReadonlyArray<Reply> | ((request: ChatRequest) => Reply), options: Options = {}): LanguageModelShape => {
  const rule: Rule =
    typeof script === "function"
      ? { _tag: "Respond", respond: script }
      : isRule(script)
        ? script
        : { _tag: "Sequence", replies: script as ReadonlyArray<Reply> }
  const exhausted = (what: "script" | "plan", used: number, one: string, many: string) =>
    new ProviderError({ provider: name, reason: "Unavailable", message: `${name}: the ${what} is exhausted (${used} ${used === 1 ? one : many} used)` })
  const name = options.name ?? "scripted"
  const model = options.model ?? "scripted"
  const latencyMs = options.latencyMs !== undefined && options.latencyMs > 0 ? options.latencyMs : 0
  const repeatLast = options.exhausted === "repeat-last"
  let cursor = 0
  const countChars = makeCharCounter()
  const inputTokens = (messages: ReadonlyArray<ChatMessage>): number => Math.ceil(countChars(messages) / 4)

  /** The next reply, or a ProviderError. Plain code: this is the hot path. */
  const next = (request: ChatRequest): ChatResponse | ProviderError => {
    let reply: Reply
    switch (rule._tag) {
      case "Echo":
        reply = lastUserText(request.messages)
        break
      case "Fixed":
        reply = rule.text
        break
      case "Sequence": {
        const replies = rule.replies
        if (cursor < replies.length) reply = replies[cursor++]!
        else if (repeatLast && replies.length > 0) reply = replies[replies.length - 1]!
        else return exhausted("script", replies.length, "reply", "replies")
        break
      }
      case "Plan": {
        const steps = rule.steps
        const step = cursor < steps.length ? steps[cursor++] : repeatLast ? steps[steps.length - 1] : undefined
        if (step === undefined) return exhausted("plan", steps.length, "step", "steps")
        reply = step.includes("{{observation}}") ? fillObservation(step, lastObservation(request.messages)) : step
        break
      }
      case "Respond":
        try {
          reply = rule.respond(request)
        } catch (cause) {
          return new ProviderError({
            provider: name,
            reason: "BadResponse",
            message: `${name}: the respond function threw: ${cause instanceof Error ? cause.message : String(cause)}`,
            cause
          })
        }
        break
    }
    if (typeof reply === "string") {
      return { text: reply, usage: { inputTokens: inputTokens(request.messages), outputTokens: estimateTokens(reply) }, model, finishReason: "stop" }
    }
    return reply.usage !== undefined && reply.finishReason !== undefined
      ? reply
      : {
          ...reply,
          usage: reply.usage ?? { inputTokens: inputTokens(request.messages), outputTokens: estimateTokens(reply.text) },
          finishReason: reply.finishReason ?? (reply.toolCalls !== undefined && reply.toolCalls.length > 0 ? "tool_calls" : "stop")
        }
  }

  const chat = (request: ChatRequest): Effect.Effect<ChatResponse, ProviderError> => {
    const result = next(request)
    if (result instanceof ProviderError) return Effect.fail(result)
    return latencyMs === 0 ? Effect.succeed(result) : Effect.as(Effect.sleep(latencyMs), result)
  }

  const stream = (request: ChatRequest): Stream.Stream<ChatChunk, ProviderError> =>
    Stream.suspend(() => {
      const result = next(request)
      if (result instanceof ProviderError) return Stream.fail(result)
      const chunks: Array<ChatChunk> = []
      for (const word of words(result.text)) chunks.push({ _tag: "TextDelta", text: word })
      const calls = result.toolCalls ?? []
      for (let i = 0; i < calls.length; i++) {
        const call = calls[i]!
        chunks.push({ _tag: "ToolCallDelta", index: i, id: call.id, name: call.name, arguments: call.arguments })
      }
      chunks.push({
        _tag: "Finish",
        ...(result.usage !== undefined ? { usage: result.usage } : {}),
        ...(result.model !== undefined ? { model: result.model } : {}),
        ...(result.finishReason !== undefined ? { finishReason: result.finishReason } : {})
      })
      const body = Stream.fromArray(chunks)
      return latencyMs === 0 ? body : Stream.concat(Stream.fromEffectDrain(Effect.sleep(latencyMs)), body)
    })

  return { name, chat, stream, nativeTools: options.nativeTools ?? true, structuredOutput: options.structuredOutput ?? true }
}

/**
 * A model that answers with the last user message.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Scripted } from "lambdagent"
 * const r = Effect.runSync(Scripted.echo().chat({ messages: [{ role: "user", content: "ping" }] }))
 * console.log(r.text) // "ping"
 * ```
 */
export const echo = (options?: Options): LanguageModelShape => make({ _tag: "Echo" }, options)

/**
 * A model that always answers with the same text.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Scripted } from "lambdagent"
 * const r = Effect.runSync(Scripted.fixed("Hello").chat({ messages: [{ role: "user", content: "hi" }] }))
 * console.log(r.text) // "Hello"
 * ```
 */
export const fixed = (text: string, options?: Options): LanguageModelShape => make({ _tag: "Fixed", text }, options)

/**
 * A model that answers with the given replies in order (see {@link Options} `exhausted`).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Scripted } from "lambdagent"
 * const model = Scripted.sequence(["a", "b"], { exhausted: "repeat-last" }) // a, b, b, b, …
 * ```
 */
export const sequence = (replies: ReadonlyArray<Reply>, options?: Options): LanguageModelShape => make({ _tag: "Sequence", replies }, options)

/**
 * A model that follows a recorded plan: the given replies in order, each with `{{observation}}`
 * replaced by the last tool result it was shown (see {@link lastObservation}); written with its
 * quotes, `"{{observation}}"` becomes that result as a JSON string, so a reply that is a JSON tool
 * call stays valid JSON whatever the tool said. It replays what a real model answered in an agent
 * loop, while the tools compute for real: a deterministic demo of an agent with no provider to
 * reach. Runs out as a sequence does (see {@link Options} `exhausted`).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Scripted } from "lambdagent"
 * const model = Scripted.plan(['{"tool": "add", "args": [19, 23]}', "The sum is {{observation}}."])
 * Effect.runSync(model.chat({ messages: [{ role: "user", content: "What is 19 + 23?" }] })) // the tool call
 * const answer = Effect.runSync(model.chat({ messages: [{ role: "user", content: "…\nObservation: 42" }] }))
 * console.log(answer.text) // "The sum is 42."
 * ```
 */
export const plan = (steps: ReadonlyArray<string>, options?: Options): LanguageModelShape => make({ _tag: "Plan", steps }, options)

/**
 * A model that answers with a function of the request.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Scripted } from "lambdagent"
 * const counter = Scripted.respond((req) => `you sent ${req.messages.length} messages`)
 * ```
 */
export const respond = (f: (request: ChatRequest) => Reply, options?: Options): LanguageModelShape => make({ _tag: "Respond", respond: f }, options)

const specHelp = "expected scripted:echo, scripted:fixed:<text>, scripted:sequence:<JSON array of strings> or scripted:plan:<JSON array of strings>"

/**
 * Parse a scripted spec: `scripted:echo`, `scripted:fixed:Hello`, `scripted:sequence:["a","b"]`,
 * `scripted:plan:["…","{{observation}}"]` (see {@link plan}).
 * The `scripted:` prefix is optional, and `scripted` alone means `echo`. Everything after
 * `fixed:` is the text (colons included). Throws `SpecError` for anything else.
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import { Scripted } from "lambdagent"
 * console.log(Scripted.parseSpec("scripted:fixed:Hi: there")) // { _tag: "Fixed", text: "Hi: there" }
 * console.log(Scripted.parseSpec('scripted:sequence:["a","b"]')) // { _tag: "Sequence", replies: ["a", "b"] }
 * ```
 */
export const parseSpec = (spec: string): Rule => {
  const body = spec === "scripted" ? "" : spec.startsWith("scripted:") ? spec.slice("scripted:".length) : spec
  if (body === "" || body === "echo") return { _tag: "Echo" }
  if (body.startsWith("fixed:")) return { _tag: "Fixed", text: body.slice("fixed:".length) }
  const list = /^(sequence|plan):/.exec(body)?.[1]
  if (list !== undefined) {
    const json = body.slice(list.length + 1)
    let parsed: unknown
    try {
      parsed = JSON.parse(json)
    } catch {
      throw new SpecError({ spec, message: `invalid scripted spec "${spec}": the ${list} is not valid JSON (${specHelp})` })
    }
    if (!Array.isArray(parsed) || !parsed.every((x): x is string => typeof x === "string")) {
      throw new SpecError({ spec, message: `invalid scripted spec "${spec}": the ${list} must be a JSON array of strings` })
    }
    return list === "plan" ? { _tag: "Plan", steps: parsed } : { _tag: "Sequence", replies: parsed }
  }
  throw new SpecError({ spec, message: `invalid scripted spec "${spec}": ${specHelp}` })
}

/**
 * A scripted model from a spec string (see {@link parseSpec}).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Scripted } from "lambdagent"
 * const model = Scripted.fromSpec('scripted:sequence:["Thinking…","Done"]')
 * ```
 */
export const fromSpec = (spec: string, options?: Options): LanguageModelShape => make(parseSpec(spec), options)

/**
 * A layer providing {@link LanguageModel} with a scripted model (a fresh script state per layer build).
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { LanguageModel, Scripted } from "lambdagent"
 * const program = LanguageModel.LanguageModel.use((m) => m.chat({ messages: [{ role: "user", content: "hi" }] }))
 * const text = Effect.runSync(program.pipe(Effect.provide(Scripted.layer(["hello"])), Effect.map((r) => r.text)))
 * ```
 */
export const layer = (script: Rule | ReadonlyArray<Reply> | ((request: ChatRequest) => Reply), options?: Options): Layer.Layer<LanguageModel> =>
  Layer.sync(LanguageModel, () => make(script, options))
