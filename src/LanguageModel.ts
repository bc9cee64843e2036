/**
 * The `LanguageModel` service: one chat interface that every provider implements.
 *
 * A provider turns a {@link ChatRequest} into a {@link ChatResponse} (or a stream of
 * {@link ChatChunk}s) and reports every failure as a {@link ProviderError} with a stable `reason`.
 *
 * @since 0.1.0
 * @module
 */
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import { TaggedError } from "./Errors.ts"

/**
 * One message of a conversation.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LanguageModel } from "lambdagent"
 * const m: LanguageModel.ChatMessage = { role: "user", content: "hello" }
 * ```
 */
export interface ChatMessage {
  readonly role: "system" | "user" | "assistant" | "tool"
  readonly content: string
  /** For `role: "tool"`: the id of the tool call this message answers. */
  readonly toolCallId?: string
  /** For `role: "assistant"`: tool calls the model asked for. */
  readonly toolCalls?: ReadonlyArray<ToolCall>
}

/**
 * A tool the model may call, described by a JSON Schema of its arguments.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LanguageModel } from "lambdagent"
 * const spec: LanguageModel.ToolSpec = {
 *   name: "search",
 *   description: "Search the web",
 *   parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] }
 * }
 * ```
 */
export interface ToolSpec {
  readonly name: string
  readonly description: string
  readonly parameters: Readonly<Record<string, unknown>>
}

/**
 * A tool call requested by the model (native function calling).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LanguageModel } from "lambdagent"
 * const call: LanguageModel.ToolCall = { id: "call_1", name: "search", arguments: "{\"q\":\"effect\"}" }
 * ```
 */
export interface ToolCall {
  readonly id: string
  readonly name: string
  /** The arguments exactly as the model produced them (usually a JSON object text). */
  readonly arguments: string
}

/**
 * What to send to a model.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LanguageModel } from "lambdagent"
 * const req: LanguageModel.ChatRequest = {
 *   messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "2+2?" }],
 *   temperature: 0
 * }
 * ```
 */
export interface ChatRequest {
  readonly messages: ReadonlyArray<ChatMessage>
  /** Model name understood by the provider (for example `gpt-4o-mini`); the provider's default when absent. */
  readonly model?: string
  readonly temperature?: number
  readonly maxTokens?: number
  readonly topP?: number
  readonly stop?: ReadonlyArray<string>
  readonly tools?: ReadonlyArray<ToolSpec>
  /**
   * Whether the model must, may or must not call one of `tools`: sent as the provider's tool
   * choice (`auto` when absent lets the provider decide, as it does by default).
   */
  readonly toolChoice?: ToolChoice
  /**
   * Ask for an answer that is one JSON value matching a schema: sent as the provider's structured
   * output (OpenAI `response_format`, a forced tool call for Anthropic, Ollama's `format`) by a
   * model with {@link LanguageModelShape.structuredOutput}; other models ignore it.
   */
  readonly responseFormat?: ResponseFormat
  /**
   * The conversation the request continues, as an opaque key: the runtime sets it for an `llm`
   * term that keeps a conversation, one key per term and run session, and sets `null` for a call
   * that belongs to none (a ReAct step, a structured answer, `conversation: false`). A model with
   * sessions of its own (Claude Code in session mode) keeps one session per key and starts a fresh
   * one, kept nowhere, for `null`; other models ignore it.
   */
  readonly conversation?: string | null
}

/**
 * A JSON Schema, as data: tool parameters, structured output.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { LanguageModel } from "lambdagent"
 * const schema: LanguageModel.JsonSchema = { type: "array", items: { type: "string" } }
 * ```
 */
export type JsonSchema = Readonly<Record<string, unknown>>

/**
 * A JSON answer matching `schema` (a JSON Schema): what a request's `responseFormat` asks for.
 * `name` and `description` tell the model what the value is (OpenAI's `json_schema.name`, the
 * forced tool's name for Anthropic); `strict` asks for the provider's strict schema adherence
 * where it has one.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { LanguageModel } from "lambdagent"
 * const format: LanguageModel.ResponseFormat = {
 *   name: "person",
 *   schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false },
 *   strict: true
 * }
 * ```
 */
export interface ResponseFormat {
  readonly name: string
  readonly description?: string
  readonly schema: JsonSchema
  readonly strict?: boolean
}

/**
 * Whether a model must (`required`), may (`auto`) or must not (`none`) call a tool.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { LanguageModel } from "lambdagent"
 * const choice: LanguageModel.ToolChoice = "auto"
 * ```
 */
export type ToolChoice = "auto" | "required" | "none"

/**
 * Token counts reported by a provider.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LanguageModel } from "lambdagent"
 * const u: LanguageModel.Usage = { inputTokens: 12, outputTokens: 3 }
 * ```
 */
export interface Usage {
  readonly inputTokens: number
  readonly outputTokens: number
}

/**
 * A complete model answer.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LanguageModel } from "lambdagent"
 * const res: LanguageModel.ChatResponse = { text: "4", usage: { inputTokens: 9, outputTokens: 1 }, model: "scripted" }
 * ```
 */
export interface ChatResponse {
  readonly text: string
  readonly usage?: Usage
  readonly toolCalls?: ReadonlyArray<ToolCall>
  /** The model that answered, as the provider names it. */
  readonly model?: string
  /** Provider-specific session handle (for example a Claude Code session id) for session mode. */
  readonly sessionId?: string
  /**
   * Why the model stopped, in the provider's own words (`stop`, `tool_calls`, `length` for OpenAI;
   * `end_turn`, `tool_use`, `max_tokens` for Anthropic; Ollama's `done_reason`).
   */
  readonly finishReason?: string
}

/**
 * One piece of a streamed answer: text deltas, then a final chunk with usage.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LanguageModel } from "lambdagent"
 * const c: LanguageModel.ChatChunk = { _tag: "TextDelta", text: "Hel" }
 * ```
 */
export type ChatChunk =
  | { readonly _tag: "TextDelta"; readonly text: string }
  | { readonly _tag: "ToolCallDelta"; readonly index: number; readonly id?: string; readonly name?: string; readonly arguments: string }
  | { readonly _tag: "Finish"; readonly usage?: Usage; readonly model?: string; readonly finishReason?: string }

/**
 * Why a provider call failed. Stable strings: match on them, not on messages.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import type { LanguageModel } from "lambdagent"
 * const retryable = (r: LanguageModel.ProviderErrorReason) => r === "RateLimited" || r === "Server" || r === "Network"
 * ```
 */
export type ProviderErrorReason = typeof ProviderErrorReason.Type

/**
 * The reasons a provider call fails: `Auth` (401/403, a missing key), `RateLimited` (429),
 * `Timeout` (no answer in time), `BadResponse` (a malformed or truncated body), `Server` (5xx),
 * `Network` (connection refused or reset), `BadRequest` (another 4xx), `Unavailable` (the
 * provider cannot run here: a binary or package is missing).
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { LanguageModel } from "lambdagent"
 * LanguageModel.ProviderErrorReason.literals.includes("RateLimited") // true
 * ```
 */
export const ProviderErrorReason = Schema.Literals(["Auth", "RateLimited", "Timeout", "BadResponse", "Server", "Network", "BadRequest", "Unavailable"])

/**
 * A failed provider call.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { LanguageModel } from "lambdagent"
 * const e = new LanguageModel.ProviderError({ provider: "openai", reason: "Auth", message: "invalid API key" })
 * console.log(e.reason) // "Auth"
 * ```
 */
export class ProviderError extends TaggedError<ProviderError>()("ProviderError", {
  provider: Schema.String,
  reason: ProviderErrorReason,
  message: Schema.String,
  /** HTTP status when there was one. */
  status: Schema.optional(Schema.Number),
  /** Seconds the server asked us to wait (Retry-After). */
  retryAfter: Schema.optional(Schema.Number),
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * What a language model can do: answer a chat, or stream the answer.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import type { LanguageModel } from "lambdagent"
 * const fixed: LanguageModel.LanguageModelShape = {
 *   name: "fixed",
 *   chat: () => Effect.succeed({ text: "ok" }),
 *   stream: () => Stream.make({ _tag: "TextDelta", text: "ok" } as const)
 * }
 * ```
 */
export interface LanguageModelShape {
  /** Provider name used in traces and errors (`openai`, `anthropic`, `scripted`, …). */
  readonly name: string
  /** Answer a chat request with the whole response. */
  readonly chat: (request: ChatRequest) => Effect.Effect<ChatResponse, ProviderError>
  /** Answer a chat request as a stream of text deltas, tool-call deltas and one final chunk. */
  readonly stream: (request: ChatRequest) => Stream.Stream<ChatChunk, ProviderError>
  /**
   * Whether the model calls tools natively: it reads the request's `tools` and answers with
   * `toolCalls`. Absent means no: an agent then asks for tool calls in the text.
   */
  readonly nativeTools?: boolean
  /**
   * Whether the model reads the request's `responseFormat` and answers with JSON matching its
   * schema through the provider's own means. Absent means no: the schema is then put in the
   * system prompt. Either way the answer is validated against the schema.
   */
  readonly structuredOutput?: boolean
}

/**
 * The language model service: the model an `llm` term calls when it names none of its own.
 *
 * @since 0.1.0
 * @category services
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { LanguageModel } from "lambdagent"
 * const ask = Effect.gen(function*() {
 *   const model = yield* LanguageModel.LanguageModel
 *   return (yield* model.chat({ messages: [{ role: "user", content: "hi" }] })).text
 * })
 * ```
 */
export class LanguageModel extends Context.Service<LanguageModel, LanguageModelShape>()("lambdagent/LanguageModel") {}
