/**
 * The Promise facade: run agents from any JavaScript host without touching Effect.
 *
 * `createRuntime(...)` builds one runtime holding the model, tools, memory store and trace sink
 * (over an Effect `ManagedRuntime` when some of them are layers to build); `run` returns a
 * Promise of the result, `stream` an `AsyncIterable` of trace events and model tokens, `close`
 * releases everything. Every call accepts an `AbortSignal`.
 *
 * @since 0.1.0
 * @module
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type * as Scope from "effect/Scope"
import * as z from "zod"
import * as Agent from "./Agent.ts"
import * as Checkpoint from "./Checkpoint.ts"
import { CheckpointError, EvalError } from "./Errors.ts"
import type * as Budget from "./Budget.ts"
import * as LanguageModel from "./LanguageModel.ts"
import * as MemoryStore from "./MemoryStore.ts"
import type * as Plugin from "./Plugin.ts"
import * as Providers from "./providers/resolve.ts"
import * as Telemetry from "./Telemetry.ts"
import { isExit } from "./internal/exits.ts"
import * as Structured from "./internal/structured.ts"
import * as Term from "./Term.ts"
import * as Tools from "./Tools.ts"
import type * as Trace from "./Trace.ts"
import * as TraceSink from "./TraceSink.ts"
import * as Value from "./Value.ts"

/**
 * What a runtime is made of. Everything is optional: without a model the runtime answers with
 * the offline scripted echo model (`scripted:echo`).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Runtime } from "lambdagent"
 * const o: Runtime.RuntimeOptions = { model: "openai:gpt-4o-mini", trace: "agent", budgets: { llmCalls: 20 } }
 * ```
 */
export interface RuntimeOptions {
  readonly plugins?: ReadonlyArray<Plugin.Plugin>
  /** The default model: a model object, or a spec such as `openai:gpt-4o-mini` or `scripted:echo`. */
  readonly model?: LanguageModel.LanguageModelShape | string
  readonly tools?: ReadonlyArray<Tools.ToolDefinition>
  /** A store, or the name of one a plugin provides (`local` is built in). */
  readonly memory?: MemoryStore.MemoryStoreShape | string
  /** Options for a named store. */
  readonly memoryOptions?: Plugin.StoreOptions
  /** Default trace level of runs (`agent`). */
  readonly trace?: Trace.TraceLevel
  /** Where trace events go as they happen; with `spans: true`, runs also open Effect spans. */
  readonly traceSink?: TraceSink.TraceSinkShape
  /**
   * Export the spans of every run (the run, its LLM and tool calls, `par` branches, memory) over
   * OTLP/HTTP to an OpenTelemetry collector, Jaeger or Tempo: `{ url: "http://127.0.0.1:4318" }`
   * (see `Telemetry.OtelOptions`, docs/observability.md). Off by default; `close()` flushes the
   * last spans. A `traceSink` given as well keeps receiving events.
   */
  readonly otel?: Telemetry.OtelOptions
  readonly budgets?: Partial<Budget.Budget>
  /**
   * Run the LLM calls whose provider cannot answer here (its API key is not set) on an offline
   * model instead of failing with `ProviderError` `Auth`: `"scripted"` for the scripted echo
   * model, or a {@link OfflineFallback}. This covers the default `model` and the providers that
   * terms name (a YAML config's `model:`); each replaced provider is announced once. Without it
   * such a call fails.
   */
  readonly offline?: "scripted" | OfflineFallback
  /**
   * Chooses the model of an `llm` term before plugins and `Providers.fromSpec` do; `undefined`
   * lets them choose. A command line uses it to send every call to `--model`.
   */
  readonly resolveModel?: (settings: Term.ModelSettings) => LanguageModel.LanguageModelShape | undefined
}

/**
 * The offline fallback of a runtime (see `RuntimeOptions.offline`): which model answers for a
 * provider whose API key is not set, and where the one-line notice of each replacement goes.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { createRuntime, Scripted } from "lambdagent"
 * const notices: Array<string> = []
 * const runtime = createRuntime({
 *   model: "openai:gpt-4o-mini",
 *   offline: { model: Scripted.fixed("offline answer"), onNotice: (line) => notices.push(line) }
 * })
 * await runtime.close()
 * ```
 */
export interface OfflineFallback {
  /** The model that answers instead: a model object or a spec; default `scripted:echo`. */
  readonly model?: LanguageModel.LanguageModelShape | string
  /** Told once per replaced provider, in one line; default: the line is written to stderr (`console.error`). */
  readonly onNotice?: (notice: string) => void
}

/**
 * Per-call options.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Runtime } from "lambdagent"
 * const controller = new AbortController()
 * const o: Runtime.CallOptions = { signal: controller.signal, session: "alice" }
 * ```
 */
export interface CallOptions {
  readonly signal?: AbortSignal
  /** Session id: memory and conversation history are kept per session. Default `default`. */
  readonly session?: string
  readonly user?: string
  readonly trace?: Trace.TraceLevel
  readonly budget?: Partial<Budget.Budget>
  /** Read the input as the tool protocol does (normalised, then a term). */
  readonly normalizeInput?: boolean
  /** Save a checkpoint before every oracle call (see `Checkpoint`, `docs/durable.md`). */
  readonly checkpoint?: Agent.CheckpointOptions
  /**
   * Answers the term's `ask` forms during the run. Without it, a run that reaches an `ask` rejects
   * with `Errors.RunPaused`, whose checkpoint {@link Runtime.resume} takes with the answer.
   */
  readonly ask?: (question: string, input: Value.Value) => unknown
  /** Resuming a paused run: the answer to the question it asks (`RunPaused.question`). */
  readonly answer?: unknown
  /** Told of every oracle answer, as an entry of a recording for replay (see `Replay`). */
  readonly record?: Agent.RunOptions["record"]
  /** Answer the run from a recording instead of the model, tools and memory (see `Replay`). */
  readonly replay?: Agent.ReplayOptions
}

/**
 * The outcome of `run`: the value and its JSON, the trace, and the counters.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Runtime } from "lambdagent"
 * const summary = (o: Runtime.RunOutput) => `${o.stats.llmCalls} LLM calls, ${o.stats.durationMs.toFixed(0)} ms`
 * ```
 */
export type RunOutput = Agent.RunResult

/**
 * What `stream` yields: trace events and tokens as they happen, then the result.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Runtime } from "lambdagent"
 * const isEnd = (e: Runtime.StreamEvent) => e.type === "result"
 * ```
 */
export type StreamEvent = Agent.RunEvent | { readonly type: "result"; readonly output: RunOutput }

/**
 * What {@link Runtime.generateObject} asks for: a JSON value matching `schema` (a zod schema, or a
 * JSON Schema), from `prompt`. `system` is the instruction (default: answer with the requested
 * value); `model` names a model other than the runtime's default (`{provider, name, temperature, …}`);
 * `name`, `description`, `strict` and `retries` are those of the `llm` term's output (see `Term.Output`).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import * as z from "zod"
 * import type { Runtime } from "lambdagent"
 * const o: Runtime.GenerateObjectOptions<z.ZodObject<{ city: z.ZodString }>> = {
 *   schema: z.object({ city: z.string() }),
 *   prompt: "Where is the Louvre?"
 * }
 * ```
 */
export interface GenerateObjectOptions<S extends z.ZodType | LanguageModel.JsonSchema>
  extends Omit<CallOptions, "normalizeInput" | "ask" | "answer" | "replay"> {
  readonly schema: S
  readonly prompt: string
  readonly system?: string
  readonly model?: Term.ModelSettings
  readonly name?: string
  readonly description?: string
  readonly strict?: boolean
  readonly retries?: number
}

/**
 * What {@link Runtime.generateObject} resolves with: the value, typed by the zod schema it was
 * asked for (`unknown` for a JSON Schema), the run's trace and counters (`stats.llmCalls` counts
 * the repairs).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Runtime } from "lambdagent"
 * const show = (r: Runtime.GeneratedObject<{ city: string }>) => `${r.object.city} (${r.stats.llmCalls} calls)`
 * ```
 */
export interface GeneratedObject<T> {
  readonly object: T
  readonly trace: ReadonlyArray<Trace.TraceEvent>
  readonly stats: Agent.Stats
}

/**
 * The system prompt of {@link Runtime.generateObject} when its options give none.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Runtime } from "lambdagent"
 * console.log(Runtime.defaultObjectSystem) // "Answer with the requested JSON value."
 * ```
 */
export const defaultObjectSystem = "Answer with the requested JSON value."

/**
 * One memory namespace of a runtime's store, read and cleared from Promise code.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { createRuntime } from "lambdagent"
 * const runtime = createRuntime()
 * const view = runtime.memory("alice")
 * console.log(view.namespace) // "session:alice"
 * console.log(await view.list()) // []
 * await runtime.close()
 * ```
 */
export interface MemoryView {
  /** The store namespace: `session:<id>`, `user:<id>` or `global`. */
  readonly namespace: string
  /** The most recent entries, newest first (at most `limit`, default 100). */
  readonly list: (limit?: number) => Promise<ReadonlyArray<MemoryStore.MemoryEntry>>
  /** Remove every entry of the namespace. */
  readonly clear: () => Promise<void>
}

/**
 * A runtime.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { createRuntime, Term } from "lambdagent"
 * const runtime = createRuntime()
 * const out = await runtime.run(Term.llm({ system: "Repeat the input." }), "hello")
 * console.log(out.value) // "hello" (the offline echo model)
 * await runtime.close()
 * ```
 */
export interface Runtime extends AsyncDisposable {
  /** Run a term (or its JSON) on an input. Rejects with the run's error, or the signal's reason when aborted. */
  readonly run: (term: Term.Term | Term.Json, input: unknown, options?: CallOptions) => Promise<RunOutput>
  /**
   * Run a term, yielding trace events, model tokens and native tool-call pieces as they happen,
   * then `{type: "result"}`. Breaking out cancels the run.
   */
  readonly stream: (term: Term.Term | Term.Json, input: unknown, options?: CallOptions) => AsyncIterable<StreamEvent>
  /**
   * Resume a run from a checkpoint (decoded, or JSON to decode): the result is the one the run
   * would have had uninterrupted; answers the checkpoint recorded are not asked again. Budget
   * and trace level are the checkpoint's. Rejects with a `CheckpointError` for a bad checkpoint.
   */
  readonly resume: (checkpoint: Checkpoint.Checkpoint | unknown, options?: Omit<CallOptions, "budget" | "trace" | "normalizeInput">) => Promise<RunOutput>
  /**
   * Ask the model for a JSON value matching a schema, as an `llm` term with an output schema does
   * (the provider's structured output where it has one; an answer that does not match is sent
   * back to be repaired, at most `retries` times). With a zod schema the object is typed by it and
   * parsed by it at the end (so its transforms apply). Rejects with an `EvalError` of kind
   * `ValidationError` naming what did not match when no attempt did.
   */
  readonly generateObject: {
    <S extends z.ZodType>(options: GenerateObjectOptions<S>): Promise<GeneratedObject<z.output<S>>>
    (options: GenerateObjectOptions<LanguageModel.JsonSchema>): Promise<GeneratedObject<unknown>>
  }
  /** Forget the conversation histories of a session (all sessions without an argument). */
  readonly resetConversation: (session?: string) => void
  /** The tools this runtime offers. */
  readonly tools: Tools.ToolsShape
  /**
   * The memory a session's runs read and write: a session id (the namespace of `session`-scoped
   * memory, default `default`) or an explicit scope (`user` and `global` memory).
   */
  readonly memory: (scope?: string | MemoryStore.MemoryScope) => MemoryView
  /** Release the model, store and sink. */
  readonly close: () => Promise<void>
}

const storeLayer = (options: RuntimeOptions, plugins: ReadonlyArray<Plugin.Plugin>): Layer.Layer<MemoryStore.MemoryStore, unknown> => {
  const memory = options.memory ?? "local"
  if (typeof memory !== "string") return Layer.succeed(MemoryStore.MemoryStore, memory)
  const storeOptions = options.memoryOptions ?? {}
  if (memory === "local") {
    return Layer.sync(MemoryStore.MemoryStore, () =>
      MemoryStore.makeLocal(storeOptions.maxEntries !== undefined ? { maxEntries: storeOptions.maxEntries } : {})
    )
  }
  const factory = plugins.map((p) => p.stores?.[memory]).find((f) => f !== undefined)
  if (factory === undefined) {
    const known = ["local", ...plugins.flatMap((p) => Object.keys(p.stores ?? {}))]
    throw new Error(`unknown memory store ${JSON.stringify(memory)}; known: ${known.join(", ")}`)
  }
  return Layer.effect(
    MemoryStore.MemoryStore,
    Effect.suspend(() => {
      const store = factory(storeOptions)
      return Effect.isEffect(store) ? (store as Effect.Effect<MemoryStore.MemoryStoreShape, unknown, Scope.Scope>) : Effect.promise(async () => store)
    })
  )
}

/** The services a runtime provides to the effects it runs (besides the references it sets: tools, trace sink). */
type Services = LanguageModel.LanguageModel | MemoryStore.MemoryStore

/** What runs a runtime's effects, and stops them when the runtime closes. */
interface Runner {
  readonly fork: <A, E>(effect: Effect.Effect<A, E, Services>, options?: Effect.RunOptions) => Fiber.Fiber<A, unknown>
  /**
   * Begin a program made from the runner's services: its exit when it completed at once, else the
   * fiber it goes on in. A runner whose services are values at hand begins it on the host's stack,
   * with no fiber until it has to wait.
   */
  readonly start: <A, E>(
    program: (context: Context.Context<Services>) => Effect.Effect<A, E, Services>,
    options?: Effect.RunOptions
  ) => Exit.Exit<A, unknown> | Fiber.Fiber<A, unknown>
  readonly close: () => Promise<void>
}

/**
 * The runner of a runtime. When every service is a value at hand (no telemetry, no plugin layer,
 * the local store or a given one), effects run on a context made of them at once; else on a
 * `ManagedRuntime` that builds the layers on first use and releases them on close. Building
 * layers is a process's first use of much of Effect, which a runtime with nothing to build need
 * not pay on its first run.
 */
const runnerOf = (options: RuntimeOptions, plugins: ReadonlyArray<Plugin.Plugin>, model: LanguageModel.LanguageModelShape, tools: Tools.ToolsShape): Runner => {
  const store = options.otel === undefined && plugins.every((p) => p.layer === undefined) ? storeOf(options) : undefined
  if (store !== undefined) {
    const context = Context.make(LanguageModel.LanguageModel, model).pipe(
      Context.add(Tools.Tools, tools),
      Context.add(MemoryStore.MemoryStore, store),
      Context.add(TraceSink.TraceSink, sinkOf(options))
    )
    return directRunner(context)
  }
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      Layer.succeed(LanguageModel.LanguageModel, model),
      Layer.succeed(Tools.Tools, tools),
      storeLayer(options, plugins),
      ...(options.otel !== undefined ? [Telemetry.layer(options.otel)] : []),
      Layer.succeed(TraceSink.TraceSink, sinkOf(options)),
      ...plugins.flatMap((p) => (p.layer === undefined ? [] : [p.layer]))
    )
  )
  const fork: Runner["fork"] = (effect, runOptions) => runtime.runFork(effect, runOptions)
  return {
    fork,
    start: (program, runOptions) => fork(Effect.contextWith(program), runOptions),
    close: () => runtime.dispose()
  }
}

/** The memory store when it is a value at hand (the local one, or one given), else `undefined`. */
const storeOf = (options: RuntimeOptions): MemoryStore.MemoryStoreShape | undefined => {
  const memory = options.memory ?? "local"
  if (typeof memory !== "string") return memory
  if (memory !== "local") return undefined
  const maxEntries = options.memoryOptions?.maxEntries
  return MemoryStore.makeLocal(maxEntries !== undefined ? { maxEntries } : {})
}

/** Runs effects on a context of plain services; closing interrupts the runs still going, and refuses new ones. */
const directRunner = (context: Context.Context<Services>): Runner => {
  const forkWith = Effect.runForkWith(context)
  const running = new Set<Fiber.Fiber<unknown, unknown>>()
  let closed = false
  const fork: Runner["fork"] = (effect, runOptions) => {
    const fiber = forkWith(closed ? Effect.die(new Error("the runtime is closed")) : effect, runOptions)
    if (fiber.pollUnsafe() === undefined) {
      running.add(fiber)
      fiber.addObserver(() => running.delete(fiber))
    }
    return fiber
  }
  return {
    fork,
    // a fiber costs a run that never waits more than the rest of its orchestration (a process's
    // first fiber, most of a millisecond): such a run is settled without one
    start: <A, E>(program: (context: Context.Context<Services>) => Effect.Effect<A, E, Services>, runOptions?: Effect.RunOptions) => {
      if (closed) return fork(Effect.contextWith(program), runOptions)
      let effect: Effect.Effect<A, E, Services>
      try {
        effect = program(context)
      } catch (defect) {
        return Exit.die(defect)
      }
      return isExit(effect) ? (effect as Exit.Exit<A, E>) : fork(effect, runOptions)
    },
    close: () => {
      closed = true
      return Effect.runPromise(Fiber.interruptAll([...running]))
    }
  }
}

/** A fiber's outcome as a Promise: its value, or its failure squashed to one error. */
const settled = <A>(fiber: Fiber.Fiber<A, unknown>): Promise<A> =>
  new Promise((resolve, reject) => fiber.addObserver((exit) => (Exit.isSuccess(exit) ? resolve(exit.value) : reject(Cause.squash(exit.cause)))))

const modelOf = (model: RuntimeOptions["model"]): LanguageModel.LanguageModelShape =>
  model === undefined ? Providers.fromSpec("scripted:echo") : typeof model === "string" ? Providers.fromSpec(model) : model

/** The provider a model spec names (`openai` for `openai:gpt-4o-mini`). */
const providerOf = (spec: string): string => spec.trim().split(":")[0]!

/**
 * The offline fallback of `options`, as a function from a provider to the model that replaces it
 * (`undefined` when the provider can answer), announcing each replacement once.
 */
const offlineFallback = (options: RuntimeOptions): ((provider: string) => LanguageModel.LanguageModelShape | undefined) => {
  if (options.offline === undefined) return () => undefined
  const fallback: OfflineFallback = options.offline === "scripted" ? {} : options.offline
  const spec = typeof fallback.model === "string" ? fallback.model : fallback.model === undefined ? "scripted:echo" : undefined
  const model = modelOf(fallback.model)
  const notify = fallback.onNotice ?? ((line: string) => console.error(line))
  const announced = new Set<string>()
  return (provider) => {
    const variable = Providers.missingKey(provider)
    if (variable === undefined) return undefined
    if (!announced.has(provider)) {
      announced.add(provider)
      const described = spec === undefined ? `the offline model ${model.name}` : `the offline model ${spec}`
      notify(`[${provider}: no ${variable} is set; running on ${described}. For a real model: export ${variable}=….]`)
    }
    return model
  }
}

/** The runtime's trace sink: with `otel`, one that asks for spans. */
const sinkOf = (options: RuntimeOptions): TraceSink.TraceSinkShape => {
  const sink = options.traceSink
  if (options.otel === undefined) return sink ?? TraceSink.none
  return sink === undefined || sink === TraceSink.none ? TraceSink.spansOnly : sink.spans ? sink : { record: sink.record, spans: true }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** Where a host called the runtime: the stack a run's error reports. */
type CallSite = { readonly stack?: string }

/** A function of the runtime's API: its caller is where a run it starts was called from. */
type Entry = (...args: never) => unknown

/** The stack of the code that called `fn`. */
const callSite = (fn: Entry): CallSite => {
  const site: { stack?: string } = {}
  Error.captureStackTrace(site, fn)
  return site
}

/**
 * A run's error, its stack pointing at the host's call that started the run (its frames inside
 * the Effect runtime say nothing about which call failed). Errors that are not `Error`s pass.
 */
const pointAt = (error: unknown, site: CallSite): unknown => {
  if (!(error instanceof Error) || site.stack === undefined) return error
  const header = (error.stack ?? "").split(/\n\s+at /)[0] || `${error.name}: ${error.message}`
  const frames = site.stack.slice(site.stack.indexOf("\n") + 1)
  try {
    Object.defineProperty(error, "stack", { value: `${header}\n${frames}`, configurable: true, writable: true })
  } catch {
    // a frozen error keeps its own stack
  }
  return error
}

/**
 * Build a runtime (see {@link Runtime}). Throws at once on a configuration mistake (an unknown
 * provider spec or store name, an `otel` URL that is not http(s)).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import * as z from "zod"
 * import { createRuntime, Scripted, Term, Tools } from "lambdagent"
 * const runtime = createRuntime({
 *   model: Scripted.sequence(['{"tool":"add","args":{"a":2,"b":3}}', '{"tool":"terminate","args":"5"}']),
 *   tools: [Tools.define({ name: "add", description: "Add", input: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => a + b })]
 * })
 * const out = await runtime.run(Term.react({ think: Term.llm({ system: "Use tools." }), tools: ["add", "terminate"], maxSteps: 5 }), "2+3?")
 * console.log(out.value) // "5"
 * ```
 */
export const createRuntime = (options: RuntimeOptions = {}): Runtime => {
  const plugins = options.plugins ?? []
  const tools = Tools.make([...plugins.flatMap((p) => p.tools ?? []), ...(options.tools ?? [])])
  const providers = new Map<string, Plugin.ProviderFactory>()
  for (const plugin of plugins) for (const [name, factory] of Object.entries(plugin.providers ?? {})) providers.set(name, factory)
  const pluginModels = new Map<string, LanguageModel.LanguageModelShape>()
  const builtinModels = Agent.makeModelResolver()
  const offline = offlineFallback(options)
  const models: Agent.ModelResolver = (settings) => {
    const chosen = options.resolveModel?.(settings)
    if (chosen !== undefined) return chosen
    const factory = settings.provider === undefined ? undefined : providers.get(settings.provider)
    if (factory === undefined) return (settings.provider === undefined ? undefined : offline(settings.provider)) ?? builtinModels(settings)
    const key = JSON.stringify(settings)
    let model = pluginModels.get(key)
    if (model === undefined) {
      model = factory(settings)
      pluginModels.set(key, model)
    }
    return model
  }
  const defaultModel = (typeof options.model === "string" ? offline(providerOf(options.model)) : undefined) ?? modelOf(options.model)
  const runtime = runnerOf(options, plugins, defaultModel, tools)
  const sessions = new Map<string, Agent.Conversations>()
  const conversationsOf = (session: string) => {
    let c = sessions.get(session)
    if (c === undefined) {
      c = Agent.makeConversations()
      sessions.set(session, c)
    }
    return c
  }

  const askWith = (ask: NonNullable<CallOptions["ask"]>) => (question: string, input: Value.Value) =>
    Effect.tryPromise({
      try: async () => ask(question, input),
      catch: (error) =>
        new EvalError({ kind: "OracleError", message: `the ask handler failed: ${error instanceof Error ? error.message : String(error)}`, steps: 0 })
    })

  const runWith = (
    from: { readonly term: Term.Term | Term.Json; readonly input: unknown } | { readonly checkpoint: unknown },
    call: CallOptions,
    /** Where the run was called from, or the entry it was called through (see {@link callSite}). */
    site: CallSite | Entry,
    onEvent?: (e: Agent.RunEvent) => void
  ): Promise<RunOutput> => {
    const session = call.session ?? "default"
    const budget = call.budget ?? options.budgets
    const trace = call.trace ?? options.trace
    // set field by field: this runs for every run, and most of the fields are usually absent
    const runOptions: Mutable<Agent.RunOptions> = { session, conversations: conversationsOf(session), models }
    if (call.user !== undefined) runOptions.user = call.user
    if (budget !== undefined) runOptions.budget = { ...options.budgets, ...budget }
    if (trace !== undefined) runOptions.trace = trace
    if (call.normalizeInput !== undefined) runOptions.normalizeInput = call.normalizeInput
    if (onEvent !== undefined) runOptions.onEvent = onEvent
    if (call.checkpoint !== undefined) runOptions.checkpoint = call.checkpoint
    if (call.ask !== undefined) runOptions.ask = askWith(call.ask)
    if ("answer" in call) runOptions.answer = call.answer
    if (call.record !== undefined) runOptions.record = call.record
    if (call.replay !== undefined) runOptions.replay = call.replay
    const signal = call.signal
    // a run asked for with an aborted signal is not begun: a run that never waits would finish before seeing it
    if (signal?.aborted === true) return Promise.reject(signal.reason)
    const forkOptions = signal !== undefined ? { signal } : undefined
    const begun =
      "checkpoint" in from
        ? runtime.fork(
            Effect.suspend(() => {
              try {
                return Agent.resume(Checkpoint.decode(from.checkpoint), runOptions)
              } catch (error) {
                if (error instanceof CheckpointError) return Effect.fail(error)
                throw error
              }
            }),
            forkOptions
          )
        : runtime.start((context) => Agent.runIn(context, from, runOptions), forkOptions)
    const failed = (cause: Cause.Cause<unknown>, at: CallSite) => (signal?.aborted === true ? signal.reason : pointAt(Cause.squash(cause), at))
    // a run that completed at once (a zero-latency model, synchronous tools) is settled here, while
    // the host's call is still on the stack: its call site is taken only if the run failed
    const settle = (exit: Exit.Exit<RunOutput, unknown>) =>
      Exit.isSuccess(exit) ? Promise.resolve(exit.value) : Promise.reject(failed(exit.cause, typeof site === "function" ? callSite(site) : site))
    if (Exit.isExit(begun)) return settle(begun)
    const exit = begun.pollUnsafe()
    if (exit !== undefined) return settle(exit)
    const at = typeof site === "function" ? callSite(site) : site
    return new Promise<RunOutput>((resolve, reject) =>
      begun.addObserver((exit) => (Exit.isSuccess(exit) ? resolve(exit.value) : reject(failed(exit.cause, at))))
    )
  }

  function stream(term: Term.Term | Term.Json, input: unknown, call: CallOptions = {}): AsyncIterable<StreamEvent> {
    const site = callSite(stream)
    return { [Symbol.asyncIterator]: () => events(term, input, call, site) }
  }

  async function* events(term: Term.Term | Term.Json, input: unknown, call: CallOptions, site: CallSite): AsyncGenerator<StreamEvent> {
    const queue: Array<StreamEvent> = []
    let wake: (() => void) | undefined
    let finished = false
    let failure: { error: unknown } | undefined
    const controller = new AbortController()
    const abort = () => controller.abort(call.signal?.reason)
    if (call.signal?.aborted === true) abort()
    else call.signal?.addEventListener("abort", abort, { once: true })
    const running = runWith({ term, input }, { ...call, signal: controller.signal }, site, (event) => {
      queue.push(event)
      wake?.()
    })
      .then(
        (output) => void queue.push({ type: "result", output }),
        (error: unknown) => void (failure = { error })
      )
      .finally(() => {
        finished = true
        wake?.()
      })
    try {
      for (;;) {
        while (queue.length > 0) yield queue.shift()!
        if (finished) {
          if (failure !== undefined) throw failure.error
          return
        }
        await new Promise<void>((resolve) => (wake = resolve))
        wake = undefined
      }
    } finally {
      call.signal?.removeEventListener("abort", abort)
      if (!finished) controller.abort(new Error("stream closed by the consumer"))
      await running
    }
  }

  const memory = (scope: string | MemoryStore.MemoryScope = "default"): MemoryView => {
    const namespace = MemoryStore.namespace(typeof scope === "string" ? { kind: "session", id: scope } : scope)
    return {
      namespace,
      list: (limit = 100) => settled(runtime.fork(MemoryStore.MemoryStore.use((store) => store.listRecent(namespace, limit)))),
      clear: () => settled(runtime.fork(MemoryStore.MemoryStore.use((store) => store.clear(namespace))))
    }
  }

  async function generateObject(options: GenerateObjectOptions<z.ZodType | LanguageModel.JsonSchema>): Promise<GeneratedObject<unknown>> {
    const site = callSite(generateObject)
    const { schema, prompt, system, model, name, description, strict, retries, record, ...call } = options
    const term = Term.llm({
      system: system ?? defaultObjectSystem,
      ...(model !== undefined ? { model } : {}),
      output: {
        schema,
        ...(name !== undefined ? { name } : {}),
        ...(description !== undefined ? { description } : {}),
        ...(strict !== undefined ? { strict } : {}),
        ...(retries !== undefined ? { retries } : {})
      }
    })
    // the object is read from the answer the schema check accepted: the last LLM answer
    let answer = ""
    const output = await runWith(
      { term, input: prompt },
      {
        ...call,
        record: (entry) => {
          if (entry.kind === "llm" && typeof entry.answer === "string") answer = entry.answer
          record?.(entry)
        }
      },
      site
    )
    const read = Structured.readJson(answer)
    const json = "json" in read ? read.json : Value.toJson(output.value)
    if (!(schema instanceof z.ZodType)) return { object: json, trace: output.trace, stats: output.stats }
    const parsed = schema.safeParse(json)
    if (!parsed.success) {
      const message = `the answer does not pass the schema's own checks: ${Structured.issuesText(parsed.error).replace(/\n/g, "; ")}`
      throw pointAt(new EvalError({ kind: "ValidationError", message, steps: output.stats.steps }), site)
    }
    return { object: parsed.data, trace: output.trace, stats: output.stats }
  }

  const close = () => runtime.close()
  function run(term: Term.Term | Term.Json, input: unknown, call: CallOptions = {}) {
    return runWith({ term, input }, call, run)
  }
  function resume(checkpoint: unknown, call: CallOptions = {}) {
    return runWith({ checkpoint }, call, resume)
  }
  return {
    run,
    resume,
    stream,
    generateObject: generateObject as Runtime["generateObject"],
    resetConversation: (session) => {
      if (session === undefined) sessions.clear()
      else sessions.delete(session)
    },
    tools,
    memory,
    close,
    [Symbol.asyncDispose]: close
  }
}
