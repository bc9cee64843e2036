/**
 * OpenAI-compatible chat models, on the official `openai` package.
 *
 * One implementation covers OpenAI itself and every server that speaks the Chat Completions wire
 * protocol: the presets below (Ollama, DeepSeek, Moonshot, Zhipu, DashScope) or any `baseUrl`.
 * Non-streaming and SSE-streaming chat, native tool calls and token usage are supported; retries,
 * timeouts and cancellation follow the shared policy described in `docs/providers.md`.
 *
 * @since 0.1.0
 * @module
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type OpenAIClient from "openai"
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsBase,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool
} from "openai/resources/chat/completions"
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
import { instructions } from "../internal/structured.ts"
import * as Resilience from "./internal/resilience.ts"

/**
 * The names of the built-in endpoint presets.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { OpenAI } from "lambdagent"
 * const p: OpenAI.PresetName = "deepseek"
 * ```
 */
export type PresetName = "openai" | "ollama" | "deepseek" | "moonshot" | "zhipu" | "dashscope"

/**
 * Where a preset sends requests, which environment variable holds its key, and its default model.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { OpenAI } from "lambdagent"
 * const local: OpenAI.Preset = { baseUrl: "http://localhost:8080/v1", defaultModel: "my-model" }
 * ```
 */
export interface Preset {
  readonly baseUrl: string
  /** Absent: the endpoint needs no key (a local server). */
  readonly apiKeyEnv?: string
  readonly defaultModel: string
  /** How the endpoint is asked for a JSON answer (default `json_schema`); see {@link JsonMode}. */
  readonly jsonMode?: JsonMode
}

/**
 * How an endpoint is asked for a JSON answer matching a schema: `json_schema` sends the schema as
 * `response_format: {type: "json_schema", json_schema: {name, schema, strict}}`; `json_object`
 * (for servers that only know JSON mode) sends `response_format: {type: "json_object"}` and the
 * schema in a system message.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { OpenAI } from "lambdagent"
 * const mode: OpenAI.JsonMode = "json_object"
 * ```
 */
export type JsonMode = "json_schema" | "json_object"

/**
 * The built-in presets.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { OpenAI } from "lambdagent"
 * console.log(OpenAI.presets.deepseek.baseUrl) // "https://api.deepseek.com/v1"
 * ```
 */
export const presets: { readonly [K in PresetName]: Preset } = {
  openai: { baseUrl: "https://api.openai.com/v1", apiKeyEnv: "OPENAI_API_KEY", defaultModel: "gpt-4o-mini" },
  ollama: { baseUrl: "http://localhost:11434/v1", defaultModel: "llama3.2" },
  deepseek: { baseUrl: "https://api.deepseek.com/v1", apiKeyEnv: "DEEPSEEK_API_KEY", defaultModel: "deepseek-chat", jsonMode: "json_object" },
  moonshot: { baseUrl: "https://api.moonshot.cn/v1", apiKeyEnv: "MOONSHOT_API_KEY", defaultModel: "moonshot-v1-8k", jsonMode: "json_object" },
  zhipu: { baseUrl: "https://open.bigmodel.cn/api/paas/v4", apiKeyEnv: "ZHIPU_API_KEY", defaultModel: "glm-4-flash", jsonMode: "json_object" },
  dashscope: {
    baseUrl: "https://dashscope.aliyuncs.com/compatible-mode/v1",
    apiKeyEnv: "DASHSCOPE_API_KEY",
    defaultModel: "qwen-plus",
    jsonMode: "json_object"
  }
}

/**
 * Options of {@link make}. Without `preset` and `baseUrl`, the `openai` preset is used; with only a
 * `baseUrl`, the endpoint is a custom one and the key is optional.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { OpenAI } from "lambdagent"
 * const o: OpenAI.Options = { preset: "ollama", model: "llama3", timeoutMs: 120_000 }
 * ```
 */
export interface Options extends Resilience.ResilienceOptions {
  readonly preset?: PresetName
  /** Overrides the preset's URL (for proxies, gateways, test servers). */
  readonly baseUrl?: string
  /** The API key; default: the preset's environment variable. */
  readonly apiKey?: string
  /** Read the key from this environment variable instead of the preset's. */
  readonly apiKeyEnv?: string
  /** Default model when a request names none; default: the preset's. */
  readonly model?: string
  /** Provider name in errors and traces; default: the preset name or `openai-compatible`. */
  readonly name?: string
  /** Extra HTTP headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>>
  /** Environment to read keys from; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** How the endpoint is asked for a JSON answer; default: the preset's, else `json_schema`. */
  readonly jsonMode?: JsonMode
}

/** A `json_schema` name: letters, digits, `_` and `-`, at most 64. */
const schemaName = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "output"

const toMessage = (message: ChatMessage): ChatCompletionMessageParam => {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content }
    case "user":
      return { role: "user", content: message.content }
    case "tool":
      return { role: "tool", content: message.content, tool_call_id: message.toolCallId ?? "" }
    case "assistant": {
      const calls = message.toolCalls
      if (calls === undefined || calls.length === 0) return { role: "assistant", content: message.content }
      return {
        role: "assistant",
        content: message.content === "" ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: "function" as const,
          function: { name: call.name, arguments: call.arguments }
        }))
      }
    }
  }
}

const toTool = (tool: { readonly name: string; readonly description: string; readonly parameters: Readonly<Record<string, unknown>> }): ChatCompletionTool => ({
  type: "function",
  function: { name: tool.name, description: tool.description, parameters: { ...tool.parameters } }
})

const toUsage = (usage: { readonly prompt_tokens?: number; readonly completion_tokens?: number } | null | undefined): Usage | undefined =>
  usage === null || usage === undefined ? undefined : { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 }

/**
 * An OpenAI-compatible model.
 *
 * A missing key for a preset that needs one is not an error here: every call then fails with a
 * `ProviderError` of reason `Auth` that names the environment variable.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { OpenAI } from "lambdagent"
 * const model = OpenAI.make({ preset: "deepseek", model: "deepseek-chat" })
 * const answer = model.chat({ messages: [{ role: "user", content: "Hello" }] }).pipe(Effect.map((r) => r.text))
 * ```
 */
export const make = (options: Options = {}): LanguageModelShape => {
  const presetName: PresetName | undefined = options.preset ?? (options.baseUrl === undefined ? "openai" : undefined)
  const preset: Preset | undefined = presetName === undefined ? undefined : presets[presetName]
  const env = options.env ?? process.env
  const apiKeyEnv = options.apiKeyEnv ?? preset?.apiKeyEnv
  const apiKey = options.apiKey ?? (apiKeyEnv === undefined ? undefined : env[apiKeyEnv])
  const keyRequired = options.apiKeyEnv !== undefined || preset?.apiKeyEnv !== undefined
  const name = options.name ?? presetName ?? "openai-compatible"
  const baseURL = options.baseUrl ?? preset?.baseUrl ?? presets.openai.baseUrl
  const defaultModel = options.model ?? preset?.defaultModel
  const jsonMode = options.jsonMode ?? preset?.jsonMode ?? "json_schema"
  let errors: Resilience.SdkErrors | undefined
  const caller: Resilience.Caller = {
    get errors() {
      return errors
    },
    provider: name,
    policy: Resilience.policy(options),
    secrets: apiKey === undefined || apiKey === "" ? [] : [apiKey],
    ...(apiKeyEnv !== undefined ? { keyEnv: apiKeyEnv } : {})
  }
  // a new error for every call: each run's error is its own, with its own stack
  const missingKey =
    keyRequired && (apiKey === undefined || apiKey === "")
      ? () => Resilience.fail(caller, "Auth", `no API key: set ${apiKeyEnv ?? "the apiKey option"}`)
      : undefined

  const client =
    missingKey !== undefined
      ? undefined
      : Resilience.lazy(caller, "openai", async () => {
          const { default: OpenAI } = await import("openai")
          errors = OpenAI
          return new OpenAI({
            apiKey: apiKey !== undefined && apiKey !== "" ? apiKey : "no-key",
            baseURL,
            maxRetries: 0,
            timeout: caller.policy.timeoutMs,
            logLevel: "off",
            organization: null,
            project: null,
            ...(options.headers !== undefined ? { defaultHeaders: { ...options.headers } } : {})
          })
        })

  const body = (request: ChatRequest, model: string): ChatCompletionCreateParamsBase => {
    const format = request.responseFormat
    const messages = request.messages.map(toMessage)
    const params: ChatCompletionCreateParamsBase = { model, messages }
    if (format !== undefined) {
      if (jsonMode === "json_object") {
        // JSON mode constrains the answer to JSON only: the schema goes in words
        messages.unshift({ role: "system", content: instructions(format.schema) })
        params.response_format = { type: "json_object" }
      } else {
        params.response_format = {
          type: "json_schema",
          json_schema: {
            name: schemaName(format.name),
            ...(format.description !== undefined ? { description: format.description } : {}),
            schema: { ...format.schema },
            strict: format.strict ?? false
          }
        }
      }
    }
    if (request.temperature !== undefined) params.temperature = request.temperature
    if (request.topP !== undefined) params.top_p = request.topP
    if (request.maxTokens !== undefined) {
      // OpenAI deprecated `max_tokens`; compatible servers mostly only know it.
      if (presetName === "openai") params.max_completion_tokens = request.maxTokens
      else params.max_tokens = request.maxTokens
    }
    if (request.stop !== undefined && request.stop.length > 0) params.stop = [...request.stop]
    if (request.tools !== undefined && request.tools.length > 0) {
      params.tools = request.tools.map(toTool)
      if (request.toolChoice !== undefined) params.tool_choice = request.toolChoice
    }
    return params
  }

  const prepare = (request: ChatRequest): { readonly client: () => Promise<OpenAIClient>; readonly model: string } | ProviderError => {
    if (missingKey !== undefined || client === undefined) return missingKey!()
    const model = request.model ?? defaultModel
    if (model === undefined) return Resilience.fail(caller, "BadRequest", "no model: pass `model` in the request or the options")
    return { client, model }
  }

  const fromCompletion = (completion: ChatCompletion): ChatResponse => {
    if (typeof completion !== "object" || completion === null || !Array.isArray(completion.choices)) {
      throw Resilience.fail(caller, "BadResponse", "the response is not a chat completion")
    }
    const choice = completion.choices[0]
    const message = choice?.message
    if (message === undefined) throw Resilience.fail(caller, "BadResponse", "the response has no choices")
    const toolCalls: Array<ToolCall> = []
    for (const call of message.tool_calls ?? []) {
      if (call.type === "function") toolCalls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments })
    }
    const usage = toUsage(completion.usage)
    return {
      // a model that declines a structured answer says why in `refusal`
      text: message.content ?? (typeof message.refusal === "string" ? message.refusal : ""),
      ...(usage !== undefined ? { usage } : {}),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      ...(typeof completion.model === "string" ? { model: completion.model } : {}),
      ...(typeof choice?.finish_reason === "string" ? { finishReason: choice.finish_reason } : {})
    }
  }

  const chat = (request: ChatRequest): Effect.Effect<ChatResponse, ProviderError> =>
    Effect.suspend(() => {
      const ready = prepare(request)
      if (!("client" in ready)) return Effect.fail(ready)
      const params = body(request, ready.model)
      return Resilience.request(caller, async (signal) => {
        const client = await ready.client()
        return fromCompletion(await client.chat.completions.create(params as ChatCompletionCreateParamsNonStreaming, { signal }))
      })
    })

  const decoder = (): Resilience.Decoder<ChatCompletionChunk> => {
    let finished: string | undefined
    let usage: Usage | undefined
    let model: string | undefined
    return {
      push: (chunk, out) => {
        if (typeof chunk !== "object" || chunk === null) {
          throw Resilience.fail(caller, "BadResponse", "a stream event is not a chat completion chunk")
        }
        if (typeof chunk.model === "string" && chunk.model !== "") model = chunk.model
        const u = toUsage(chunk.usage)
        if (u !== undefined) usage = u
        const choice = chunk.choices?.[0]
        if (choice === undefined) return
        const delta = choice.delta
        if (typeof delta?.content === "string" && delta.content !== "") out.push({ _tag: "TextDelta", text: delta.content })
        for (const call of delta?.tool_calls ?? []) {
          out.push({
            _tag: "ToolCallDelta",
            index: call.index,
            ...(call.id !== undefined && call.id !== null ? { id: call.id } : {}),
            ...(call.function?.name !== undefined && call.function.name !== null ? { name: call.function.name } : {}),
            arguments: call.function?.arguments ?? ""
          })
        }
        if (choice.finish_reason !== null && choice.finish_reason !== undefined) finished = choice.finish_reason
      },
      end: (out) => {
        if (finished === undefined) throw Resilience.fail(caller, "BadResponse", "the stream ended before the model finished")
        out.push({
          _tag: "Finish",
          ...(usage !== undefined ? { usage } : {}),
          ...(model !== undefined ? { model } : {}),
          finishReason: finished
        })
      }
    }
  }

  const stream = (request: ChatRequest): Stream.Stream<ChatChunk, ProviderError> =>
    Stream.suspend(() => {
      const ready = prepare(request)
      if (!("client" in ready)) return Stream.fail(ready)
      const params = body(request, ready.model)
      return Resilience.stream(
        caller,
        async (signal) => {
          const client = await ready.client()
          return client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }, { signal })
        },
        decoder
      )
    })

  return { name, chat, stream, nativeTools: true, structuredOutput: true }
}

/**
 * A layer providing {@link LanguageModel} with an OpenAI-compatible model; the key is read when the
 * layer is built.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { LanguageModel, OpenAI } from "lambdagent"
 * const program = LanguageModel.LanguageModel.use((m) => m.chat({ messages: [{ role: "user", content: "hi" }] }))
 * const runnable = program.pipe(Effect.provide(OpenAI.layer({ preset: "ollama", model: "llama3" })))
 * ```
 */
export const layer = (options: Options = {}): Layer.Layer<LanguageModel> => Layer.sync(LanguageModel, () => make(options))
