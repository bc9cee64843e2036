/**
 * Local models through Ollama's native API (`POST /api/chat`), over `fetch`: no SDK.
 *
 * The native API is what Ollama documents first: tools as `function` tools whose calls come back
 * with their arguments as objects, a JSON Schema as `format` for structured output, sampling
 * options under `options`, and streaming as NDJSON (one JSON object a line, the last with
 * `done: true`, the finish reason and the token counts). Retries, timeouts and cancellation follow
 * the shared policy described in `docs/providers.md`. (The `ollama` spec reaches the same server
 * through its OpenAI-compatible `/v1` endpoint instead.)
 *
 * @since 0.2.0
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
  type ProviderError,
  type ToolCall,
  type Usage
} from "../LanguageModel.ts"
import * as Resilience from "./internal/resilience.ts"

/**
 * The server an Ollama model talks to when the options name none.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Ollama } from "lambdagent"
 * console.log(Ollama.defaultBaseUrl) // "http://localhost:11434"
 * ```
 */
export const defaultBaseUrl = "http://localhost:11434"

/**
 * The model used when neither the request nor the options name one.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Ollama } from "lambdagent"
 * console.log(Ollama.defaultModel) // "llama3.2"
 * ```
 */
export const defaultModel = "llama3.2"

/**
 * Options of {@link make}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Ollama } from "lambdagent"
 * const o: Ollama.Options = { model: "qwen3", keepAlive: "10m", options: { num_ctx: 8192 } }
 * ```
 */
export interface Options extends Resilience.ResilienceOptions {
  /** The server's root URL (not `/v1`); default {@link defaultBaseUrl}. */
  readonly baseUrl?: string
  /** Default model when a request names none; default {@link defaultModel}. */
  readonly model?: string
  /** How long the server keeps the model loaded after a call (`keep_alive`: `"5m"`, `0`, `-1`). */
  readonly keepAlive?: string | number
  /** More of the native `options` (`num_ctx`, `seed`, `repeat_penalty`, …), under the request's own. */
  readonly options?: Readonly<Record<string, unknown>>
  /** Provider name in errors and traces; default `ollama-native`. */
  readonly name?: string
  /** Extra HTTP headers sent with every request (a proxy's authorization). */
  readonly headers?: Readonly<Record<string, string>>
}

/** One message of the native chat API. */
interface WireMessage {
  readonly role: "system" | "user" | "assistant" | "tool"
  readonly content: string
  readonly tool_calls?: ReadonlyArray<{ readonly function: { readonly name: string; readonly arguments: unknown } }>
  readonly tool_name?: string
}

/** The answer object of the native chat API (a whole answer, or one line of a stream). */
interface WireChunk {
  readonly model?: string
  readonly message?: {
    readonly content?: string
    readonly tool_calls?: ReadonlyArray<{ readonly id?: string; readonly function?: { readonly name?: string; readonly arguments?: unknown } }>
  }
  readonly done?: boolean
  readonly done_reason?: string
  readonly prompt_eval_count?: number
  readonly eval_count?: number
  readonly error?: string
}

/** A call's arguments as the object the native API takes (a model wrote them as one). */
const argumentsObject = (text: string): unknown => {
  if (text.trim() === "") return {}
  try {
    return JSON.parse(text)
  } catch {
    return { input: text }
  }
}

/** Messages in the native shape; a tool result carries the name of the tool it answers. */
const toWire = (messages: ReadonlyArray<ChatMessage>): Array<WireMessage> => {
  const names = new Map<string, string>()
  return messages.map((m): WireMessage => {
    if (m.role === "assistant" && m.toolCalls !== undefined && m.toolCalls.length > 0) {
      for (const call of m.toolCalls) names.set(call.id, call.name)
      return {
        role: "assistant",
        content: m.content,
        tool_calls: m.toolCalls.map((c) => ({ function: { name: c.name, arguments: argumentsObject(c.arguments) } }))
      }
    }
    if (m.role === "tool") {
      const name = m.toolCallId === undefined ? undefined : names.get(m.toolCallId)
      return name === undefined ? { role: "tool", content: m.content } : { role: "tool", content: m.content, tool_name: name }
    }
    return { role: m.role, content: m.content }
  })
}

const usageOf = (chunk: WireChunk): Usage | undefined =>
  chunk.prompt_eval_count === undefined && chunk.eval_count === undefined
    ? undefined
    : { inputTokens: chunk.prompt_eval_count ?? 0, outputTokens: chunk.eval_count ?? 0 }

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** An HTTP answer that is not a success, as the shared policy reads errors (`status`, `headers`, `message`). */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly headers: Headers,
    message: string
  ) {
    super(message)
  }
}

/** The text of an error body: the native API's `{"error": "…"}`, else the body itself. */
const errorText = (body: string): string => {
  try {
    const parsed: unknown = JSON.parse(body)
    if (isObject(parsed) && typeof parsed.error === "string") return parsed.error
  } catch {
    // not JSON: the body as it came
  }
  return body.trim().slice(0, 500)
}

/** The lines of an NDJSON body, each parsed. */
async function* ndjson(body: ReadableStream<Uint8Array>): AsyncGenerator<WireChunk> {
  const decoder = new TextDecoder()
  let buffered = ""
  for await (const bytes of body) {
    buffered += decoder.decode(bytes, { stream: true })
    for (let newline = buffered.indexOf("\n"); newline >= 0; newline = buffered.indexOf("\n")) {
      const line = buffered.slice(0, newline).trim()
      buffered = buffered.slice(newline + 1)
      if (line !== "") yield JSON.parse(line) as WireChunk
    }
  }
  const rest = (buffered + decoder.decode()).trim()
  if (rest !== "") yield JSON.parse(rest) as WireChunk
}

/**
 * A model served by Ollama, over its native chat API.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Ollama } from "lambdagent"
 * const model = Ollama.make({ model: "qwen3" })
 * const answer = model.chat({ messages: [{ role: "user", content: "Hello" }] }).pipe(Effect.map((r) => r.text))
 * ```
 */
export const make = (options: Options = {}): LanguageModelShape => {
  const name = options.name ?? "ollama-native"
  const url = `${(options.baseUrl ?? defaultBaseUrl).replace(/\/+$/, "")}/api/chat`
  const caller: Resilience.Caller = { provider: name, policy: Resilience.policy(options), secrets: [] }

  const body = (request: ChatRequest, stream: boolean): Record<string, unknown> => {
    const sampling: Record<string, unknown> = { ...options.options }
    if (request.temperature !== undefined) sampling.temperature = request.temperature
    if (request.topP !== undefined) sampling.top_p = request.topP
    if (request.maxTokens !== undefined) sampling.num_predict = request.maxTokens
    if (request.stop !== undefined && request.stop.length > 0) sampling.stop = [...request.stop]
    const params: Record<string, unknown> = { model: request.model ?? options.model ?? defaultModel, messages: toWire(request.messages), stream }
    // the native API has no tool choice: `none` sends no tools, `required` is the model's to honour
    if (request.tools !== undefined && request.tools.length > 0 && request.toolChoice !== "none") {
      params.tools = request.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }))
    }
    if (request.responseFormat !== undefined) params.format = request.responseFormat.schema
    if (Object.keys(sampling).length > 0) params.options = sampling
    if (options.keepAlive !== undefined) params.keep_alive = options.keepAlive
    return params
  }

  const post = async (params: Record<string, unknown>, signal: AbortSignal): Promise<Response> => {
    let response: Response
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...options.headers },
        body: JSON.stringify(params),
        signal
      })
    } catch (error) {
      // fetch wraps the system error (ECONNREFUSED, ENOTFOUND) in a TypeError
      const cause = isObject(error) ? error.cause : undefined
      throw isObject(cause) && typeof cause.code === "string" ? cause : error
    }
    if (!response.ok) throw new HttpError(response.status, response.headers, errorText(await response.text()))
    return response
  }

  /** The tool calls of an answer, with ids (the native API gives none before 0.12). */
  const callsOf = (chunk: WireChunk, first: number): Array<ToolCall> => {
    const calls: Array<ToolCall> = []
    for (const call of chunk.message?.tool_calls ?? []) {
      const fn = call.function
      if (fn === undefined || typeof fn.name !== "string") throw Resilience.fail(caller, "BadResponse", "a tool call has no function name")
      const args = fn.arguments
      calls.push({
        id: typeof call.id === "string" && call.id !== "" ? call.id : `call_${first + calls.length}`,
        name: fn.name,
        arguments: typeof args === "string" ? args : JSON.stringify(args ?? {})
      })
    }
    return calls
  }

  const checked = (chunk: unknown): WireChunk => {
    if (!isObject(chunk)) throw Resilience.fail(caller, "BadResponse", "the answer is not a JSON object")
    if (typeof chunk.error === "string") throw Resilience.fail(caller, "Server", `the server reported an error: ${chunk.error}`)
    return chunk as WireChunk
  }

  const chat = (request: ChatRequest): Effect.Effect<ChatResponse, ProviderError> =>
    Effect.suspend(() => {
      const params = body(request, false)
      return Resilience.request(caller, async (signal) => {
        const answer = checked(JSON.parse(await (await post(params, signal)).text()))
        if (answer.message === undefined) throw Resilience.fail(caller, "BadResponse", "the answer has no message")
        const toolCalls = callsOf(answer, 0)
        const usage = usageOf(answer)
        return {
          text: answer.message.content ?? "",
          ...(usage !== undefined ? { usage } : {}),
          ...(toolCalls.length > 0 ? { toolCalls } : {}),
          ...(typeof answer.model === "string" ? { model: answer.model } : {}),
          ...(typeof answer.done_reason === "string" ? { finishReason: answer.done_reason } : {})
        }
      })
    })

  const decoder = (): Resilience.Decoder<unknown> => {
    let done = false
    let calls = 0
    let usage: Usage | undefined
    let model: string | undefined
    let finishReason: string | undefined
    return {
      push: (line, out) => {
        const chunk = checked(line)
        if (typeof chunk.model === "string") model = chunk.model
        const text = chunk.message?.content
        if (typeof text === "string" && text !== "") out.push({ _tag: "TextDelta", text })
        // a tool call arrives whole, in one line
        for (const call of callsOf(chunk, calls)) out.push({ _tag: "ToolCallDelta", index: calls++, id: call.id, name: call.name, arguments: call.arguments })
        if (chunk.done === true) {
          done = true
          usage = usageOf(chunk)
          if (typeof chunk.done_reason === "string") finishReason = chunk.done_reason
        }
      },
      end: (out) => {
        if (!done) throw Resilience.fail(caller, "BadResponse", "the stream ended before the model finished")
        out.push({
          _tag: "Finish",
          ...(usage !== undefined ? { usage } : {}),
          ...(model !== undefined ? { model } : {}),
          ...(finishReason !== undefined ? { finishReason } : {})
        })
      }
    }
  }

  const stream = (request: ChatRequest): Stream.Stream<ChatChunk, ProviderError> =>
    Stream.suspend(() => {
      const params = body(request, true)
      return Resilience.stream(
        caller,
        async (signal) => {
          const response = await post(params, signal)
          if (response.body === null) throw Resilience.fail(caller, "BadResponse", "the streamed answer has no body")
          return ndjson(response.body)
        },
        decoder
      )
    })

  return { name, chat, stream, nativeTools: true, structuredOutput: true }
}

/**
 * A layer providing {@link LanguageModel} with an Ollama model over the native API.
 *
 * @since 0.2.0
 * @category layers
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { LanguageModel, Ollama } from "lambdagent"
 * const program = LanguageModel.LanguageModel.use((m) => m.chat({ messages: [{ role: "user", content: "hi" }] }))
 * const runnable = program.pipe(Effect.provide(Ollama.layer({ model: "qwen3" })))
 * ```
 */
export const layer = (options: Options = {}): Layer.Layer<LanguageModel> => Layer.sync(LanguageModel, () => make(options))
