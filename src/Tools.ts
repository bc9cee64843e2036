/**
 * The `Tools` service: the registry of named tools an agent can call.
 *
 * A tool is a host function, a shell command, another program, an MCP tool, a remote A2A agent or
 * a retriever. It declares its input with a zod schema (absent: it takes text) and may return
 * anything JSON can carry. {@link call} validates the input, applies the timeout and turns every
 * failure into a {@link ToolError}; the agent layer turns those into observations, never crashed
 * runs.
 *
 * @since 0.1.0
 * @module
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as z from "zod"
import { TaggedError } from "./Errors.ts"
import { isEffect } from "./internal/exits.ts"
import { writeJson } from "./internal/json.ts"

/**
 * Where a tool comes from; shown by `lambdagent tools`. The built-in kinds are listed; a plugin
 * gives its tools a kind of its own (any other string).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Tools } from "lambdagent"
 * const k: Tools.ToolKind = "host"
 * ```
 */
export type ToolKind = "host" | "shell" | "cli" | "mcp" | "a2a" | "rag" | "term" | (string & {})

/**
 * What a running tool receives besides its input.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Tools } from "lambdagent"
 * const run = async (q: string, ctx: Tools.ToolContext) => fetch(`http://127.0.0.1:9/?q=${q}`, { signal: ctx.signal })
 * ```
 */
export interface ToolContext {
  /** Aborted when the run is cancelled or the tool's timeout passes. */
  readonly signal: AbortSignal
}

/**
 * A named tool.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import * as z from "zod"
 * import { Tools } from "lambdagent"
 * const add: Tools.ToolDefinition = Tools.define({
 *   name: "add",
 *   description: "Add two numbers",
 *   input: z.object({ a: z.number(), b: z.number() }),
 *   run: ({ a, b }) => a + b
 * })
 * ```
 */
export interface ToolDefinition<I = any> {
  readonly name: string
  readonly description: string
  readonly kind: ToolKind
  /** zod schema of the input; absent means the tool takes text. */
  readonly input?: z.ZodType<I>
  /**
   * JSON Schema of the input, for a tool whose schema is not a zod one (an MCP tool's): what a
   * model calling tools natively is shown instead of the zod schema's JSON Schema.
   */
  readonly parameters?: Readonly<Record<string, unknown>>
  /** Milliseconds before the call is abandoned; default {@link defaultTimeoutMs}. */
  readonly timeoutMs?: number
  /** Where it comes from (a command, an MCP server, a file), for listings. */
  readonly source?: string
  /** Do the work: return a value, a Promise or an Effect; throw or fail to report an error. */
  readonly run: (input: I, context: ToolContext) => unknown
}

/**
 * Default tool timeout: 30 seconds.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { Tools } from "lambdagent"
 * console.log(Tools.defaultTimeoutMs) // 30000
 * ```
 */
export const defaultTimeoutMs = 30_000

/**
 * Why a tool call failed.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { Tools } from "lambdagent"
 * const e = new Tools.ToolError({ tool: "add", reason: "InvalidInput", message: "a: expected number" })
 * ```
 */
export class ToolError extends TaggedError<ToolError>()("ToolError", {
  tool: Schema.String,
  reason: Schema.Literals(["NotFound", "InvalidInput", "Failed", "Timeout"]),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * Define a tool with an inferred input type; `kind` defaults to `host`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import * as z from "zod"
 * import { Tools } from "lambdagent"
 * const upper = Tools.define({ name: "upper", description: "Upper-case text", run: (s: string) => s.toUpperCase() })
 * const sq = Tools.define({ name: "square", description: "n²", input: z.number(), run: (n) => n * n })
 * ```
 */
export const define = <I = string>(tool: Omit<ToolDefinition<I>, "kind"> & { readonly kind?: ToolKind }): ToolDefinition<I> => ({ kind: "host", ...tool })

/**
 * What the tools service offers: look a tool up, list them all.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Tools } from "lambdagent"
 * const registry: Tools.ToolsShape = Tools.make([])
 * console.log(registry.list().length) // 0
 * ```
 */
export interface ToolsShape {
  /** The tool of that name, if there is one. */
  readonly get: (name: string) => ToolDefinition | undefined
  /** Every tool, in registration order. */
  readonly list: () => ReadonlyArray<ToolDefinition>
}

/**
 * The tools service. Its default, when a host provides none, is an empty registry: a run that
 * calls a tool then fails with "unknown tool".
 *
 * @since 0.1.0
 * @category services
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tools } from "lambdagent"
 * const names = Tools.Tools.use((t) => Effect.succeed(t.list().map((d) => d.name)))
 * ```
 */
export const Tools: Context.Reference<ToolsShape> = Context.Reference<ToolsShape>("lambdagent/Tools", {
  defaultValue: () => make([])
})

/**
 * A registry over a list of tools; a later tool of the same name replaces an earlier one.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Tools } from "lambdagent"
 * const tools = Tools.make([Tools.define({ name: "echo", description: "echo", run: (s: string) => s })])
 * console.log(tools.get("echo")?.description) // "echo"
 * ```
 */
export const make = (tools: Iterable<ToolDefinition>): ToolsShape => {
  const byName = new Map<string, ToolDefinition>()
  for (const tool of tools) byName.set(tool.name, tool)
  const all = [...byName.values()]
  return { get: (name) => byName.get(name), list: () => all }
}

/**
 * A layer providing a registry over the given tools.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { Tools } from "lambdagent"
 * const layer = Tools.layer([Tools.define({ name: "echo", description: "echo", run: (s: string) => s })])
 * ```
 */
export const layer = (tools: Iterable<ToolDefinition>): Layer.Layer<never> => Layer.succeed(Tools, make(tools))

/**
 * Shape a value for a tool: text tools get text (objects as JSON), schema tools get JSON parsed
 * from text when the text is JSON.
 */
const adaptInput = (tool: ToolDefinition, input: unknown): unknown => {
  if (tool.input === undefined) return typeof input === "string" ? input : writeJson(input)
  if (typeof input === "string") {
    try {
      return JSON.parse(input)
    } catch {
      return input
    }
  }
  return input
}

/**
 * Call a tool: validate the input, run it under its timeout, and report failures as {@link ToolError}.
 * The tool's `AbortSignal` fires on timeout and when the calling fiber is interrupted.
 *
 * @since 0.1.0
 * @category combinators
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tools } from "lambdagent"
 * const echo = Tools.define({ name: "echo", description: "echo", run: (s: string) => s })
 * const out = await Effect.runPromise(Tools.call(echo, "hi")) // "hi"
 * ```
 */
export const call = (tool: ToolDefinition, input: unknown): Effect.Effect<unknown, ToolError> => Effect.suspend(() => invoke(tool, input))

/**
 * Start a tool call now (unlike {@link call}, which starts when run). A tool that answers
 * synchronously gives an already-completed effect (an `Exit`), so a driver can use the answer
 * without scheduling; pending work is raced against the timeout.
 *
 * @since 0.1.0
 * @category combinators
 * @example
 * ```ts
 * import { Exit } from "effect"
 * import { Tools } from "lambdagent"
 * const echo = Tools.define({ name: "echo", description: "echo", run: (s: string) => s })
 * const done = Tools.invoke(echo, "hi")
 * console.log(Exit.isExit(done)) // true: it answered synchronously
 * ```
 */
export const invoke = (tool: ToolDefinition, input: unknown): Effect.Effect<unknown, ToolError> => {
  const adapted = adaptInput(tool, input)
  let value: unknown = adapted
  if (tool.input !== undefined) {
    const parsed = tool.input.safeParse(adapted)
    if (!parsed.success) {
      const message = parsed.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join(".") + ": " : ""}${issue.message}`).join("; ")
      return Effect.fail(new ToolError({ tool: tool.name, reason: "InvalidInput", message }))
    }
    value = parsed.data
  }
  const failed = (cause: unknown) =>
    new ToolError({ tool: tool.name, reason: "Failed", message: cause instanceof Error ? cause.message : String(cause), cause })
  const context = new CallContext()
  let result: unknown
  try {
    result = tool.run(value, context)
  } catch (cause) {
    return Effect.fail(failed(cause))
  }
  if (typeof result !== "object" || result === null || (!isEffect(result) && !isPromiseLike(result))) {
    return Effect.succeed(result)
  }
  const timeoutMs = tool.timeoutMs ?? defaultTimeoutMs
  const pending: Effect.Effect<unknown, ToolError> = isEffect(result)
    ? (result as Effect.Effect<unknown, unknown>).pipe(Effect.mapError(failed))
    : Effect.tryPromise({ try: () => result as PromiseLike<unknown>, catch: failed })
  return pending.pipe(
    Effect.timeoutOrElse({
      duration: Duration.millis(timeoutMs),
      orElse: () => Effect.fail(new ToolError({ tool: tool.name, reason: "Timeout", message: `[TIMEOUT after ${formatSeconds(timeoutMs)}]` }))
    }),
    Effect.onExit(() => Effect.sync(() => context.end()))
  )
}

/** A call's context; most tools never look at the signal, so its controller is made on first use. */
class CallContext implements ToolContext {
  private controller: AbortController | undefined
  private ended = false
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController()
      if (this.ended) this.controller.abort()
    }
    return this.controller.signal
  }
  /** The call is over: abort whatever is still listening. */
  end(): void {
    this.ended = true
    this.controller?.abort()
  }
}

const isPromiseLike = (u: unknown): u is PromiseLike<unknown> => typeof u === "object" && u !== null && typeof (u as { then?: unknown }).then === "function"

const formatSeconds = (ms: number): string => `${Number.isInteger(ms / 1000) ? ms / 1000 : (ms / 1000).toFixed(1)}s`
