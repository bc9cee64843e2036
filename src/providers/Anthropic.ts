/**
 * Claude models through the Anthropic Messages API, on the official `@anthropic-ai/sdk` package.
 *
 * System messages become the top-level `system` field; tool calls map to `tool_use` blocks and tool
 * results to `tool_result` blocks; streaming reads the SSE event stream (`message_start`,
 * `content_block_*`, `message_delta`, `message_stop`). Retries, timeouts and cancellation follow the
 * shared policy described in `docs/providers.md`.
 *
 * @since 0.1.0
 * @module
 */
import type {
  ContentBlockParam,
  Message,
  MessageCreateParamsBase,
  MessageCreateParamsNonStreaming,
  MessageParam,
  RawMessageStreamEvent,
  ToolResultBlockParam
} from "@anthropic-ai/sdk/resources/messages"
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
  type ResponseFormat,
  type ToolCall,
  type Usage
} from "../LanguageModel.ts"
import * as Resilience from "./internal/resilience.ts"

/**
 * The model used when neither the request nor the options name one.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { Anthropic } from "lambdagent"
 * console.log(Anthropic.defaultModel) // "claude-sonnet-5-5"
 * ```
 */
export const defaultModel = "claude-sonnet-5-5"

/**
 * `max_tokens` sent when the request has no `maxTokens` (the Messages API requires one).
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { Anthropic } from "lambdagent"
 * console.log(Anthropic.defaultMaxTokens) // 4096
 * ```
 */
export const defaultMaxTokens = 4096

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Anthropic } from "lambdagent"
 * const o: Anthropic.Options = { model: "claude-haiku-4-5", maxTokens: 1024, maxRetries: 5 }
 * ```
 */
export interface Options extends Resilience.ResilienceOptions {
  /** The API key; default `ANTHROPIC_API_KEY` from the environment. */
  readonly apiKey?: string
  /** Default `https://api.anthropic.com`. */
  readonly baseUrl?: string
  /** Default model when a request names none; default {@link defaultModel}. */
  readonly model?: string
  /** `max_tokens` when the request has none; default {@link defaultMaxTokens}. */
  readonly maxTokens?: number
  /** Provider name in errors and traces; default `anthropic`. */
  readonly name?: string
  /** Extra HTTP headers sent with every request (for example `anthropic-beta`). */
  readonly headers?: Readonly<Record<string, string>>
  /** Environment to read the key from; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
}

const parseArguments = (text: string): unknown => {
  if (text.trim() === "") return {}
  try {
    return JSON.parse(text)
  } catch {
    return { input: text }
  }
}

/**
 * How a request's `responseFormat` goes to the Messages API, which has no response format: as a
 * tool whose input is the answer, the tool the model must call when it has no others. A schema
 * that is not an object is wrapped as the `value` property (tool inputs are objects).
 */
interface OutputTool {
  readonly name: string
  readonly wrapped: boolean
  readonly tool: { readonly name: string; readonly description: string; readonly input_schema: { readonly type: "object" } & Record<string, unknown> }
}

const outputTool = (format: ResponseFormat): OutputTool => {
  const name = format.name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "output"
  const wrapped = format.schema.type !== "object"
  const input_schema = wrapped
    ? { type: "object" as const, properties: { value: format.schema }, required: ["value"] }
    : { ...format.schema, type: "object" as const }
  return { name, wrapped, tool: { name, description: format.description ?? "Give your answer as this tool's input.", input_schema } }
}

/** The answer an output tool's input holds, as JSON text. */
const outputText = (output: OutputTool, input: unknown): string =>
  JSON.stringify(output.wrapped && typeof input === "object" && input !== null ? ((input as { value?: unknown }).value ?? null) : (input ?? {}))

/** Split system messages off and fold consecutive tool results into one user turn. */
const toParams = (messages: ReadonlyArray<ChatMessage>): { readonly system: string; readonly messages: Array<MessageParam> } => {
  const system: Array<string> = []
  const out: Array<MessageParam> = []
  let toolResults: Array<ToolResultBlockParam> | undefined
  for (const message of messages) {
    if (message.role !== "tool") toolResults = undefined
    switch (message.role) {
      case "system":
        system.push(message.content)
        break
      case "user":
        out.push({ role: "user", content: message.content })
        break
      case "assistant": {
        const calls = message.toolCalls ?? []
        if (calls.length === 0) {
          out.push({ role: "assistant", content: message.content })
          break
        }
        const blocks: Array<ContentBlockParam> = []
        if (message.content !== "") blocks.push({ type: "text", text: message.content })
        for (const call of calls) {
          blocks.push({ type: "tool_use", id: call.id, name: call.name, input: parseArguments(call.arguments) })
        }
        out.push({ role: "assistant", content: blocks })
        break
      }
      case "tool": {
        const block: ToolResultBlockParam = { type: "tool_result", tool_use_id: message.toolCallId ?? "", content: message.content }
        if (toolResults === undefined) {
          toolResults = [block]
          out.push({ role: "user", content: toolResults })
        } else {
          toolResults.push(block)
        }
        break
      }
    }
  }
  return { system: system.join("\n\n"), messages: out }
}

/**
 * A Claude model over the Messages API.
 *
 * A missing `ANTHROPIC_API_KEY` is not an error here: every call then fails with a `ProviderError`
 * of reason `Auth` that names the variable. The Messages API no longer takes `temperature` or
 * `topP`, so requests' values for them are not sent.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Anthropic } from "lambdagent"
 * const model = Anthropic.make({ model: "claude-sonnet-5-5" })
 * const answer = model.chat({
 *   messages: [{ role: "system", content: "Answer in one word." }, { role: "user", content: "Capital of France?" }]
 * }).pipe(Effect.map((r) => r.text))
 * ```
 */
export const make = (options: Options = {}): LanguageModelShape => {
  const env = options.env ?? process.env
  const apiKey = options.apiKey ?? env["ANTHROPIC_API_KEY"]
  const name = options.name ?? "anthropic"
  let errors: Resilience.SdkErrors | undefined
  const caller: Resilience.Caller = {
    get errors() {
      return errors
    },
    provider: name,
    policy: Resilience.policy(options),
    secrets: apiKey === undefined || apiKey === "" ? [] : [apiKey],
    keyEnv: "ANTHROPIC_API_KEY"
  }
  // a new error for every call: each run's error is its own, with its own stack
  const missingKey = apiKey === undefined || apiKey === "" ? () => Resilience.fail(caller, "Auth", "no API key: set ANTHROPIC_API_KEY") : undefined
  const client =
    missingKey !== undefined
      ? undefined
      : Resilience.lazy(caller, "@anthropic-ai/sdk", async () => {
          const { default: Anthropic } = await import("@anthropic-ai/sdk")
          errors = Anthropic
          return new Anthropic({
            apiKey: apiKey!,
            baseURL: options.baseUrl ?? "https://api.anthropic.com",
            maxRetries: 0,
            timeout: caller.policy.timeoutMs,
            logLevel: "off",
            ...(options.headers !== undefined ? { defaultHeaders: { ...options.headers } } : {})
          })
        })

  const body = (request: ChatRequest, output: OutputTool | undefined): MessageCreateParamsBase => {
    const converted = toParams(request.messages)
    const params: MessageCreateParamsBase = {
      model: request.model ?? options.model ?? defaultModel,
      max_tokens: request.maxTokens ?? options.maxTokens ?? defaultMaxTokens,
      messages: converted.messages
    }
    if (converted.system !== "") params.system = converted.system
    if (request.stop !== undefined && request.stop.length > 0) params.stop_sequences = [...request.stop]
    if (request.tools !== undefined && request.tools.length > 0) {
      params.tools = request.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        input_schema: { type: "object" as const, ...tool.parameters }
      }))
      if (request.toolChoice !== undefined) params.tool_choice = { type: request.toolChoice === "required" ? "any" : request.toolChoice }
    }
    if (output !== undefined) {
      const others = params.tools ?? []
      params.tools = [...others, output.tool]
      // with no other tool, the answer must be the output tool's call
      if (others.length === 0) params.tool_choice = { type: "tool", name: output.name }
    }
    return params
  }

  const fromMessage = (message: Message, output: OutputTool | undefined): ChatResponse => {
    if (typeof message !== "object" || message === null || !Array.isArray(message.content)) {
      throw Resilience.fail(caller, "BadResponse", "the response is not a message")
    }
    let text = ""
    let answer: string | undefined
    const toolCalls: Array<ToolCall> = []
    for (const block of message.content) {
      if (block.type === "text") text += block.text
      else if (block.type === "tool_use") {
        if (output !== undefined && block.name === output.name) answer = outputText(output, block.input)
        else toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) })
      }
    }
    if (answer !== undefined) text = answer
    const usage: Usage | undefined =
      message.usage === undefined || message.usage === null
        ? undefined
        : { inputTokens: message.usage.input_tokens ?? 0, outputTokens: message.usage.output_tokens ?? 0 }
    return {
      text,
      ...(usage !== undefined ? { usage } : {}),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      ...(typeof message.model === "string" ? { model: message.model } : {}),
      ...(typeof message.stop_reason === "string" ? { finishReason: message.stop_reason } : {})
    }
  }

  const chat = (request: ChatRequest): Effect.Effect<ChatResponse, ProviderError> =>
    Effect.suspend(() => {
      if (client === undefined) return Effect.fail(missingKey!())
      const output = request.responseFormat === undefined ? undefined : outputTool(request.responseFormat)
      const params = body(request, output)
      return Resilience.request(caller, async (signal) =>
        fromMessage(await (await client()).messages.create(params as MessageCreateParamsNonStreaming, { signal }), output)
      )
    })

  const decoder = (output: OutputTool | undefined): Resilience.Decoder<RawMessageStreamEvent> => {
    let stopped = false
    // the content block of the output tool's call, whose input streams as the answer's text
    let outputBlock = -1
    let wrappedAnswer = ""
    let inputTokens = 0
    let outputTokens = 0
    let sawUsage = false
    let model: string | undefined
    let stopReason: string | undefined
    // content block index -> tool call ordinal, so tool calls are numbered 0, 1, … as in the OpenAI shape
    const toolIndex = new Map<number, number>()
    return {
      push: (event, out) => {
        if (typeof event !== "object" || event === null) {
          throw Resilience.fail(caller, "BadResponse", "a stream event is not an object")
        }
        switch (event.type) {
          case "message_start": {
            if (typeof event.message?.model === "string") model = event.message.model
            const usage = event.message?.usage
            if (usage !== undefined && usage !== null) {
              sawUsage = true
              inputTokens = usage.input_tokens ?? 0
              outputTokens = usage.output_tokens ?? 0
            }
            break
          }
          case "content_block_start": {
            const block = event.content_block
            if (block.type === "tool_use" && output !== undefined && block.name === output.name) {
              outputBlock = event.index
            } else if (block.type === "tool_use") {
              const ordinal = toolIndex.size
              toolIndex.set(event.index, ordinal)
              out.push({ _tag: "ToolCallDelta", index: ordinal, id: block.id, name: block.name, arguments: "" })
            } else if (block.type === "text" && block.text !== "") {
              out.push({ _tag: "TextDelta", text: block.text })
            }
            break
          }
          case "content_block_delta": {
            const delta = event.delta
            if (delta.type === "text_delta") {
              if (delta.text !== "") out.push({ _tag: "TextDelta", text: delta.text })
            } else if (delta.type === "input_json_delta" && event.index === outputBlock) {
              // a wrapped answer is unwrapped once complete; an object streams as it comes
              if (output!.wrapped) wrappedAnswer += delta.partial_json
              else if (delta.partial_json !== "") out.push({ _tag: "TextDelta", text: delta.partial_json })
            } else if (delta.type === "input_json_delta") {
              const ordinal = toolIndex.get(event.index)
              if (ordinal !== undefined && delta.partial_json !== "") {
                out.push({ _tag: "ToolCallDelta", index: ordinal, arguments: delta.partial_json })
              }
            }
            break
          }
          case "message_delta": {
            if (typeof event.delta?.stop_reason === "string") stopReason = event.delta.stop_reason
            const usage = event.usage
            if (usage !== undefined && usage !== null) {
              sawUsage = true
              if (typeof usage.input_tokens === "number") inputTokens = usage.input_tokens
              if (typeof usage.output_tokens === "number") outputTokens = usage.output_tokens
            }
            break
          }
          case "content_block_stop":
            if (event.index === outputBlock && output!.wrapped) {
              let input: unknown
              try {
                input = JSON.parse(wrappedAnswer)
              } catch {
                // not JSON: the answer as it came, for the schema check to report
                input = undefined
              }
              out.push({ _tag: "TextDelta", text: input === undefined ? wrappedAnswer : outputText(output!, input) })
            }
            break
          case "message_stop":
            stopped = true
            break
          default:
            break
        }
      },
      end: (out) => {
        if (!stopped) throw Resilience.fail(caller, "BadResponse", "the stream ended before message_stop")
        out.push({
          _tag: "Finish",
          ...(sawUsage ? { usage: { inputTokens, outputTokens } } : {}),
          ...(model !== undefined ? { model } : {}),
          ...(stopReason !== undefined ? { finishReason: stopReason } : {})
        })
      }
    }
  }

  const stream = (request: ChatRequest): Stream.Stream<ChatChunk, ProviderError> =>
    Stream.suspend(() => {
      if (client === undefined) return Stream.fail(missingKey!())
      const output = request.responseFormat === undefined ? undefined : outputTool(request.responseFormat)
      const params = body(request, output)
      return Resilience.stream(
        caller,
        async (signal) => (await client()).messages.create({ ...params, stream: true }, { signal }),
        () => decoder(output)
      )
    })

  return { name, chat, stream, nativeTools: true, structuredOutput: true }
}

/**
 * A layer providing {@link LanguageModel} with a Claude model; the key is read when the layer is built.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Anthropic, LanguageModel } from "lambdagent"
 * const program = LanguageModel.LanguageModel.use((m) => m.chat({ messages: [{ role: "user", content: "hi" }] }))
 * const runnable = program.pipe(Effect.provide(Anthropic.layer({ model: "claude-haiku-4-5" })))
 * ```
 */
export const layer = (options: Options = {}): Layer.Layer<LanguageModel> => Layer.sync(LanguageModel, () => make(options))
