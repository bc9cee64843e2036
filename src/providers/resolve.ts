/**
 * Pick a language model from a spec string, as the CLI's `--model` does:
 * `<provider>[:<model>]`, for example `openai:gpt-4o-mini`, `ollama:llama3` (or `ollama-native:llama3`
 * for Ollama's native API),
 * `anthropic:claude-sonnet-5-5`, `claude-code`, `scripted:echo`. `claude-code+session[:<model>]` is
 * Claude Code in session mode: each conversation resumes its own Claude Code session.
 *
 * @since 0.1.0
 * @module
 */
import type { LanguageModelShape } from "../LanguageModel.ts"
import * as Anthropic from "./Anthropic.ts"
import * as ClaudeCode from "./ClaudeCode.ts"
import * as Ollama from "./Ollama.ts"
import type { ResilienceOptions } from "./internal/resilience.ts"
import { SpecError } from "./internal/spec.ts"
import * as OpenAI from "./OpenAI.ts"
import * as Scripted from "./Scripted.ts"

/**
 * Timeout and retry settings shared by the network providers (see `docs/providers.md`).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Providers } from "lambdagent"
 * const o: Providers.ResilienceOptions = { timeoutMs: 30_000, maxRetries: 5, backoffBaseMs: 250 }
 * ```
 */
export type { ResilienceOptions } from "./internal/resilience.ts"

/**
 * The error thrown for an unknown or malformed model spec.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { Providers } from "lambdagent"
 * try { Providers.fromSpec("nope") } catch (e) { console.log(e instanceof Providers.SpecError) } // true
 * ```
 */
export { SpecError } from "./internal/spec.ts"

/**
 * The provider names a spec may start with.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { Providers } from "lambdagent"
 * console.log(Providers.providerNames.includes("deepseek")) // true
 * ```
 */
export const providerNames: ReadonlyArray<string> = [
  "openai",
  "ollama",
  "ollama-native",
  "deepseek",
  "moonshot",
  "zhipu",
  "dashscope",
  "openai-compatible",
  "anthropic",
  "claude-code",
  "claude-code+session",
  "scripted"
]

/**
 * Options of {@link fromSpec}; each applies to the providers that understand it.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Providers } from "lambdagent"
 * const o: Providers.Options = { timeoutMs: 30_000, baseUrl: "http://127.0.0.1:8080/v1" }
 * ```
 */
export interface Options extends ResilienceOptions {
  /** Environment to read keys (and `LAMBDAGENT_CLAUDE_BIN`) from; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** API key, instead of the provider's environment variable. */
  readonly apiKey?: string
  /** Endpoint override (OpenAI-compatible and Anthropic); required by `openai-compatible`. */
  readonly baseUrl?: string
  /** Claude Code executable. */
  readonly claudeBin?: string
  /** Claude Code session mode. */
  readonly session?: boolean
  /** Scripted model latency per reply in milliseconds. */
  readonly latencyMs?: number
}

const openAIPresets: ReadonlySet<string> = new Set<OpenAI.PresetName>(["openai", "ollama", "deepseek", "moonshot", "zhipu", "dashscope"])

/**
 * The environment variable holding `provider`'s API key when that provider needs one and it is
 * not set (or empty) in `env`, else `undefined`. This is what the offline fallbacks check (the
 * command line's and `createRuntime({ offline })`): a provider without its key cannot answer.
 *
 * @since 0.2.0
 * @category utils
 * @example
 * ```ts
 * import { Providers } from "lambdagent"
 * console.log(Providers.missingKey("openai", {})) // "OPENAI_API_KEY"
 * console.log(Providers.missingKey("openai", { OPENAI_API_KEY: "sk-…" })) // undefined
 * console.log(Providers.missingKey("ollama", {})) // undefined: no key needed
 * ```
 */
export const missingKey = (provider: string, env: Readonly<Record<string, string | undefined>> = process.env): string | undefined => {
  const variable = provider === "anthropic" ? "ANTHROPIC_API_KEY" : (OpenAI.presets as Readonly<Record<string, OpenAI.Preset | undefined>>)[provider]?.apiKeyEnv
  return variable !== undefined && (env[variable] ?? "") === "" ? variable : undefined
}

/**
 * Build a model from a spec string. The part after the first `:` is the model name (the provider's
 * default when absent); for `scripted` it is the script (see `Scripted.parseSpec`).
 *
 * Throws {@link SpecError} for an unknown provider or a malformed spec. A missing API key does not
 * throw: the model's calls fail with `ProviderError` reason `Auth`, naming the environment variable.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Providers } from "lambdagent"
 * const model = Providers.fromSpec("scripted:fixed:Hello")
 * console.log(Effect.runSync(model.chat({ messages: [{ role: "user", content: "hi" }] })).text) // "Hello"
 * const gpt = Providers.fromSpec("openai:gpt-4o-mini", { timeoutMs: 20_000 })
 * ```
 */
export const fromSpec = (spec: string, options: Options = {}): LanguageModelShape => {
  const trimmed = spec.trim()
  const colon = trimmed.indexOf(":")
  const provider = colon === -1 ? trimmed : trimmed.slice(0, colon)
  const model = colon === -1 ? undefined : trimmed.slice(colon + 1)
  const resilience: ResilienceOptions = {
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    ...(options.backoffBaseMs !== undefined ? { backoffBaseMs: options.backoffBaseMs } : {}),
    ...(options.backoffMaxMs !== undefined ? { backoffMaxMs: options.backoffMaxMs } : {})
  }
  const common = {
    ...resilience,
    ...(options.env !== undefined ? { env: options.env } : {}),
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
    ...(model !== undefined && model !== "" ? { model } : {})
  }
  if (openAIPresets.has(provider)) return OpenAI.make({ ...common, preset: provider as OpenAI.PresetName })
  switch (provider) {
    case "openai-compatible":
      if (options.baseUrl === undefined) {
        throw new SpecError({ spec, message: `"${spec}": openai-compatible needs the baseUrl option` })
      }
      return OpenAI.make(common)
    case "anthropic":
      return Anthropic.make(common)
    case "ollama-native":
      return Ollama.make({
        ...resilience,
        ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
        ...(model !== undefined && model !== "" ? { model } : {})
      })
    case "claude-code":
    case "claude-code+session":
      return ClaudeCode.make({
        ...resilience,
        ...(options.env !== undefined ? { env: options.env } : {}),
        ...(options.claudeBin !== undefined ? { bin: options.claudeBin } : {}),
        ...(provider === "claude-code+session" ? { session: true } : options.session !== undefined ? { session: options.session } : {}),
        ...(model !== undefined && model !== "" ? { model } : {})
      })
    case "scripted":
      return Scripted.fromSpec(trimmed, options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {})
    default:
      throw new SpecError({
        spec,
        message: `unknown model spec "${spec}": expected <provider>[:<model>] with provider one of ${providerNames.join(", ")}`
      })
  }
}
