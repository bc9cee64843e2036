/**
 * Plugins: how providers, stores, tools, services and CLI commands get into a runtime.
 *
 * A plugin is a plain value. First-party plugins (YAML, MCP, HTTP, Redis, SQLite, RAG) use
 * nothing a third-party plugin could not.
 *
 * @since 0.1.0
 * @module
 */
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as LanguageModel from "./LanguageModel.ts"
import type * as MemoryStore from "./MemoryStore.ts"
import type * as Term from "./Term.ts"
import type * as Tools from "./Tools.ts"

/**
 * Builds a model for an `llm` term whose settings name this provider.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Scripted, type Plugin } from "lambdagent"
 * const echo: Plugin.ProviderFactory = () => Scripted.echo()
 * ```
 */
export type ProviderFactory = (settings: Term.ModelSettings) => LanguageModel.LanguageModelShape

/**
 * Options a store factory receives (from `memory:` config or the host).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Plugin } from "lambdagent"
 * const o: Plugin.StoreOptions = { maxEntries: 100, path: "memory.db" }
 * ```
 */
export interface StoreOptions {
  readonly maxEntries?: number
  readonly [key: string]: unknown
}

/**
 * Builds a memory store: directly, after connecting (a Promise), or as a scoped Effect whose
 * resources (connections, files) are released when the runtime closes.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { MemoryStore, type Plugin } from "lambdagent"
 * const local: Plugin.StoreFactory = (o) => MemoryStore.makeLocal(o.maxEntries !== undefined ? { maxEntries: o.maxEntries } : {})
 * ```
 */
export type StoreFactory = (
  options: StoreOptions
) => MemoryStore.MemoryStoreShape | Promise<MemoryStore.MemoryStoreShape> | Effect.Effect<MemoryStore.MemoryStoreShape, unknown, Scope.Scope>

/**
 * A CLI command a plugin adds to `lambdagent`. `run` gets the arguments after the command name
 * and returns the exit code.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Plugin } from "lambdagent"
 * const hello: Plugin.PluginCommand = { name: "hello", description: "say hello", run: async () => (console.log("hello"), 0) }
 * ```
 */
export interface PluginCommand {
  readonly name: string
  readonly description: string
  /** Run the command with the arguments after its name; resolve with the exit code. */
  readonly run: (args: ReadonlyArray<string>) => Promise<number>
}

/**
 * A plugin: `{ name, layer?, tools?, providers?, stores?, commands? }`.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import * as z from "zod"
 * import { Scripted, Tools, type Plugin } from "lambdagent"
 * const plugin: Plugin.Plugin = {
 *   name: "weather",
 *   tools: [Tools.define({ name: "weather", description: "Weather for a city", input: z.object({ city: z.string() }), run: ({ city }) => `sunny in ${city}` })],
 *   providers: { offline: () => Scripted.fixed("It is sunny.") }
 * }
 * ```
 */
export interface Plugin {
  readonly name: string
  /** Extra services the plugin's tools or stores need. */
  readonly layer?: Layer.Layer<any, never, never>
  readonly tools?: ReadonlyArray<Tools.ToolDefinition>
  /** Model providers by name (the `provider` of an `llm` term's model settings). */
  readonly providers?: Readonly<Record<string, ProviderFactory>>
  /** Memory stores by name (a `memory.strategy` in YAML, or the runtime's `memory` option). */
  readonly stores?: Readonly<Record<string, StoreFactory>>
  readonly commands?: ReadonlyArray<PluginCommand>
}
