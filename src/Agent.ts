/**
 * Running agent terms: the driver that answers the evaluator's oracle requests with the
 * `LanguageModel`, `Tools`, `MemoryStore` and `TraceSink` services.
 *
 * {@link run} is the Effect API. The evaluator itself stays synchronous; the driver steps it,
 * and at each LLM call, tool call, memory access or parallel fork it performs the effect (with
 * budgets checked first, timeouts, cancellation and tracing) and resumes the machine with the
 * answer. `par` branches run as concurrent fibers.
 *
 * @since 0.1.0
 * @module
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as z from "zod"
import type * as Budget from "./Budget.ts"
import { BudgetExceeded, EvalError, isLambdaError, type LambdaError } from "./Errors.ts"
import * as Evaluator from "./Evaluator.ts"
import * as LanguageModel from "./LanguageModel.ts"
import * as MemoryStore from "./MemoryStore.ts"
import * as Providers from "./providers/resolve.ts"
import * as Term from "./Term.ts"
import * as Tools from "./Tools.ts"
import * as Trace from "./Trace.ts"
import * as TraceSink from "./TraceSink.ts"
import * as Value from "./Value.ts"

/**
 * Everything a run can fail with: term-language errors (parse, evaluation, budgets), provider
 * errors (auth, rate limit, timeout, bad response) and memory store errors.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import type { Agent } from "lambdagent"
 * const describe = (e: Agent.AgentError) => `${e._tag}: ${e.message}`
 * ```
 */
export type AgentError = LambdaError | LanguageModel.ProviderError | MemoryStore.MemoryError

/**
 * Something that happens during a run, as streamed by a runtime: a trace event, or a piece of
 * an LLM's answer as it arrives.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Agent } from "lambdagent"
 * const show = (e: Agent.RunEvent) => (e.type === "token" ? e.text : `[${e.event.kind}]`)
 * ```
 */
export type RunEvent =
  | { readonly type: "trace"; readonly event: Trace.TraceEvent }
  | { readonly type: "token"; readonly name: string; readonly text: string }

/**
 * One LLM term's conversation: the user and assistant turns after the system prompt.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Agent } from "lambdagent"
 * const h: Agent.History = { summary: undefined, turns: [], tokens: 0 }
 * ```
 */
export interface History {
  summary: string | undefined
  turns: Array<LanguageModel.ChatMessage>
  /** Estimated tokens of the summary and turns. */
  tokens: number
}

/**
 * Where conversations live between runs: one history per LLM term (keyed by the term node).
 * A runtime keeps one per session; a fresh one makes every run start from scratch.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Agent } from "lambdagent"
 * const conversations = Agent.makeConversations()
 * ```
 */
export interface Conversations {
  /** The history of one `llm` term (created empty on first use). */
  readonly get: (term: Term.Term) => History
  /** Forget every history. */
  readonly clear: () => void
}

/**
 * A fresh, empty conversation store.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Agent } from "lambdagent"
 * const c = Agent.makeConversations()
 * c.clear()
 * ```
 */
export const makeConversations = (): Conversations => {
  let histories = new WeakMap<Term.Term, History>()
  return {
    get: (term) => {
      let h = histories.get(term)
      if (h === undefined) {
        h = { summary: undefined, turns: [], tokens: 0 }
        histories.set(term, h)
      }
      return h
    },
    clear: () => {
      histories = new WeakMap()
    }
  }
}

/**
 * Turns an `llm` term's model settings into a model; `undefined` means "the default model".
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Agent, Scripted } from "lambdagent"
 * const resolve: Agent.ModelResolver = (s) => (s.provider === "test" ? Scripted.echo() : undefined)
 * ```
 */
export type ModelResolver = (settings: Term.ModelSettings) => LanguageModel.LanguageModelShape | undefined

/**
 * Options of {@link run}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Agent } from "lambdagent"
 * const o: Agent.RunOptions = { session: "alice", trace: "agent", budget: { llmCalls: 10 } }
 * ```
 */
export interface RunOptions {
  readonly budget?: Partial<Budget.Budget>
  /** Default `agent`. */
  readonly trace?: Trace.TraceLevel
  /** Session id: the memory namespace of `session`-scoped memory. Default `default`. */
  readonly session?: string
  /** User id: the namespace of `user`-scoped memory. Default the session id. */
  readonly user?: string
  /** Conversation histories; default a fresh store (every run starts a new conversation). */
  readonly conversations?: Conversations
  /** Resolves `llm` terms' model settings (default: `Providers.fromSpec` for a named provider). */
  readonly models?: ModelResolver
  /** Told of every trace event and, when set, LLM answers are streamed token by token. */
  readonly onEvent?: (event: RunEvent) => void
  /** Id of this run in trace sinks; default a random id. */
  readonly runId?: string
  /** Read the input as the tool protocol does (normalised, then a term); default false: the input is data. */
  readonly normalizeInput?: boolean
}

/**
 * Counters of a finished run.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Agent } from "lambdagent"
 * const s: Agent.Stats = { steps: 10, llmCalls: 1, toolCalls: 0, tokens: 42, durationMs: 3 }
 * ```
 */
export interface Stats {
  readonly steps: number
  readonly llmCalls: number
  readonly toolCalls: number
  readonly tokens: number
  readonly durationMs: number
}

/**
 * The outcome of a run.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Agent } from "lambdagent"
 * const text = (r: Agent.RunResult) => (typeof r.value === "string" ? r.value : JSON.stringify(r.result))
 * ```
 */
export interface RunResult {
  /** The value the term evaluated to. */
  readonly value: Value.Value
  /** Its JSON encoding. */
  readonly result: Term.Json
  readonly trace: ReadonlyArray<Trace.TraceEvent>
  readonly stats: Stats
}

const modelCache = new Map<string, LanguageModel.LanguageModelShape>()

/**
 * The default model resolver: a settings object naming a `provider` becomes
 * `Providers.fromSpec("<provider>:<name>")` (cached); without a provider, the default model.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Agent } from "lambdagent"
 * const model = Agent.defaultModels({ provider: "scripted", name: "echo" })
 * ```
 */
export const defaultModels: ModelResolver = (settings) => {
  if (settings.provider === undefined) return undefined
  const spec = settings.name === undefined ? settings.provider : `${settings.provider}:${settings.name}`
  const key = `${spec}\u0000${settings.baseUrl ?? ""}\u0000${settings.timeout ?? ""}`
  let model = modelCache.get(key)
  if (model === undefined) {
    model = Providers.fromSpec(spec, {
      ...(settings.baseUrl !== undefined ? { baseUrl: settings.baseUrl } : {}),
      ...(settings.timeout !== undefined ? { timeoutMs: settings.timeout * 1000 } : {})
    })
    modelCache.set(key, model)
  }
  return model
}

// ---------------------------------------------------------------------------------------------
// Conversation history
// ---------------------------------------------------------------------------------------------

const estimateTokens = (text: string) => Math.ceil(text.length / 4)
const KEEP_TURNS = 20

/** Append a turn; past `maxTokens`, fold everything but the last 20 turns into the summary. */
const remember = (history: History, user: string, assistant: string, maxTokens: number) => {
  history.turns.push({ role: "user", content: user }, { role: "assistant", content: assistant })
  history.tokens += estimateTokens(user) + estimateTokens(assistant)
  if (history.tokens <= maxTokens || history.turns.length <= KEEP_TURNS) return
  const folded = history.turns.splice(0, history.turns.length - KEEP_TURNS)
  const lines = folded.map((t) => `[${t.role}] ${t.content.length > 150 ? t.content.slice(0, 150) + "…" : t.content}`)
  history.summary = [history.summary, ...lines].filter((l) => l !== undefined).join("\n")
  history.tokens = estimateTokens(history.summary)
  for (const turn of history.turns) history.tokens += estimateTokens(turn.content)
}

const messagesOf = (system: string, history: History | undefined, user: string): Array<LanguageModel.ChatMessage> => {
  const messages: Array<LanguageModel.ChatMessage> = [{ role: "system", content: system }]
  if (history !== undefined) {
    if (history.summary !== undefined) messages.push({ role: "system", content: `[Conversation summary]\n${history.summary}` })
    for (const turn of history.turns) messages.push(turn)
  }
  messages.push({ role: "user", content: user })
  return messages
}

/**
 * The tool documentation appended to a ReAct agent's system prompt: how to call a tool, then each
 * tool with its description and argument schema.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Agent, Tools } from "lambdagent"
 * const docs = Agent.toolDocs(["echo", "terminate"], Tools.make([Tools.define({ name: "echo", description: "Echo text", run: (s: string) => s })]))
 * ```
 */
export const toolDocs = (names: ReadonlyArray<string>, tools: Tools.ToolsShape): string => {
  let cache = toolDocsCache.get(tools)
  if (cache === undefined) {
    cache = new Map()
    toolDocsCache.set(tools, cache)
  }
  const key = names.join("\u0000")
  let docs = cache.get(key)
  if (docs === undefined) {
    docs = renderToolDocs(names, tools)
    cache.set(key, docs)
  }
  return docs
}

/** Tool docs depend only on the registry and the names; rendering schemas is costly, so keep them. */
const toolDocsCache = new WeakMap<Tools.ToolsShape, Map<string, string>>()

const renderToolDocs = (names: ReadonlyArray<string>, tools: Tools.ToolsShape): string => {
  const lines = names.map((name) => {
    if (name === "terminate") return "- terminate: finish; its args are your final answer"
    const tool = tools.get(name)
    if (tool === undefined) return `- ${name}`
    const schema = tool.input === undefined ? "text" : JSON.stringify(z.toJSONSchema(tool.input))
    return `- ${name}: ${tool.description} Arguments: ${schema}`
  })
  return [
    "## Tools",
    "To use a tool, answer with one JSON object: {\"tool\": \"<name>\", \"args\": <arguments>}.",
    "When you are done, call terminate with your final answer as args.",
    ...lines
  ].join("\n")
}

// ---------------------------------------------------------------------------------------------
// Values from tool outputs
// ---------------------------------------------------------------------------------------------

/**
 * Host data as a value: strings, safe integers, booleans and null as themselves, arrays as lists,
 * anything else (objects, fractions) as its JSON text.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Agent } from "lambdagent"
 * Agent.toValue({ a: 1 }) // '{"a":1}'
 * ```
 */
export const toValue = (output: unknown): Value.Value => {
  if (output === null || output === undefined) return null
  switch (typeof output) {
    case "string":
    case "boolean":
      return output
    case "bigint":
      return output
    case "number":
      return Number.isSafeInteger(output) ? output : String(output)
  }
  if (Array.isArray(output)) return Value.fromArray(output.map(toValue))
  try {
    return JSON.stringify(output)
  } catch {
    return String(output)
  }
}

// ---------------------------------------------------------------------------------------------
// The driver
// ---------------------------------------------------------------------------------------------

interface Services {
  readonly model: LanguageModel.LanguageModelShape
  readonly tools: Tools.ToolsShape
  readonly memory: MemoryStore.MemoryStoreShape
  readonly sink: TraceSink.TraceSinkShape
  readonly models: ModelResolver
  readonly conversations: Conversations
  readonly session: string
  readonly user: string
  readonly runId: string
  readonly onEvent: ((event: RunEvent) => void) | undefined
}

type Step = Evaluator.Step | { readonly _tag: "Failed"; readonly error: LambdaError }

/** Run one machine step, turning thrown term-language errors into values. */
const attempt = (f: () => Evaluator.Step): Step => {
  try {
    return f()
  } catch (error) {
    if (isLambdaError(error)) return { _tag: "Failed", error }
    throw error
  }
}

const budgetError = (exec: Evaluator.Execution, budget: "llmCalls" | "toolCalls" | "tokens", limit: number) =>
  new BudgetExceeded({
    budget,
    limit,
    steps: exec.steps,
    message: `${budget} budget of ${limit} exhausted`,
    trace: exec.events
  })

const now = () => performance.now()

/** `Effect.map`, but an already-completed effect is mapped at once, staying completed. */
const mapNow = <A, B, E>(effect: Effect.Effect<A, E>, f: (a: A) => B): Effect.Effect<B, E> => {
  const done = completed(effect)
  if (done === undefined) return Effect.map(effect, f)
  return Exit.isSuccess(done) ? Effect.succeed(f(done.value)) : (done as unknown as Effect.Effect<B, E>)
}

/** The result of an effect that is already complete (an `Exit`), else `undefined`. */
const completed = <A, E>(effect: Effect.Effect<A, E>): Exit.Exit<A, E> | undefined =>
  Exit.isExit(effect) ? (effect as Exit.Exit<A, E>) : undefined

const callModel = (
  services: Services,
  model: LanguageModel.LanguageModelShape,
  request: LanguageModel.ChatRequest,
  name: string
): Effect.Effect<LanguageModel.ChatResponse, LanguageModel.ProviderError> => {
  const onEvent = services.onEvent
  if (onEvent === undefined) return model.chat(request)
  return Effect.suspend(() => {
    let text = ""
    let usage: LanguageModel.Usage | undefined
    let answeredBy: string | undefined
    return model.stream(request).pipe(
      Stream.runForEach((chunk) =>
        Effect.sync(() => {
          if (chunk._tag === "TextDelta") {
            text += chunk.text
            onEvent({ type: "token", name, text: chunk.text })
          } else if (chunk._tag === "Finish") {
            usage = chunk.usage
            answeredBy = chunk.model
          }
        })
      ),
      Effect.map((): LanguageModel.ChatResponse => ({
        text,
        ...(usage !== undefined ? { usage } : {}),
        ...(answeredBy !== undefined ? { model: answeredBy } : {})
      }))
    )
  })
}

const answerLlm = (
  services: Services,
  exec: Evaluator.Execution,
  request: Extract<Evaluator.OracleRequest, { kind: "llm" }>
): Effect.Effect<Value.Value, AgentError> => {
  const usage = exec.usage
  const budget = exec.budget
  if (usage.llmCalls >= budget.llmCalls) return Effect.fail(budgetError(exec, "llmCalls", budget.llmCalls))
  if (usage.tokens >= budget.tokens) return Effect.fail(budgetError(exec, "tokens", budget.tokens))
  usage.llmCalls++
  const term = request.term
  const settings = term.model ?? {}
  let model: LanguageModel.LanguageModelShape
  try {
    model = (term.model === undefined ? undefined : services.models(settings)) ?? services.model
  } catch (cause) {
    return Effect.fail(new EvalError({ kind: "OracleError", message: cause instanceof Error ? cause.message : String(cause), steps: exec.steps }))
  }
  const stateful = term.conversation !== false && request.tools === undefined
  const history = stateful ? services.conversations.get(request.fn.term) : undefined
  const system = request.tools === undefined ? term.system : `${term.system}\n\n${toolDocs(request.tools, services.tools)}`
  const user = Value.toText(request.input)
  const chat: LanguageModel.ChatRequest = {
    messages: messagesOf(system, history, user),
    ...(settings.name !== undefined && term.model?.provider === undefined ? { model: settings.name } : {}),
    ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
    ...(settings.maxTokens !== undefined ? { maxTokens: settings.maxTokens } : {}),
    ...(settings.topP !== undefined ? { topP: settings.topP } : {}),
    ...(settings.stop !== undefined ? { stop: settings.stop } : {})
  }
  const name = term.name ?? "llm"
  const started = now()
  const call = mapNow(callModel(services, model, chat, name), (response) => {
      const tokensIn = response.usage?.inputTokens ?? 0
      const tokensOut = response.usage?.outputTokens ?? 0
      usage.tokens += tokensIn + tokensOut
      if (history !== undefined) remember(history, user, response.text, term.maxHistoryTokens ?? 80_000)
      const event: Trace.TraceEvent = {
        step: exec.steps,
        kind: "llm",
        name,
        input: Trace.preview(user),
        output: Trace.preview(response.text),
        durationMs: now() - started,
        tokens: { input: tokensIn, output: tokensOut },
        model: response.model ?? model.name
      }
      record(services, exec, event)
      return response.text as Value.Value
  })
  return services.sink.spans ? call.pipe(Effect.withSpan("lambdagent.llm", { attributes: { name, provider: model.name } })) : call
}

const record = (services: Services, exec: Evaluator.Execution, event: Trace.TraceEvent) => {
  exec.record(event)
}

const toolFailure = (error: Tools.ToolError): string =>
  error.reason === "Timeout" ? error.message : `[TOOL_ERROR] ${error.tool}: ${error.message}`

/** The observation of a tool call that failed synchronously. */
const failureOf = (exit: Exit.Exit<unknown, Tools.ToolError>): string => {
  const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : Option.none()
  return Option.isSome(error) ? toolFailure(error.value) : "[TOOL_ERROR] the tool failed"
}

const answerTool = (
  services: Services,
  exec: Evaluator.Execution,
  request: Extract<Evaluator.OracleRequest, { kind: "tool" }>
): Effect.Effect<Value.Value, AgentError> => {
  if (request.name === "terminate") return Effect.succeed(request.input)
  const tool = services.tools.get(request.name)
  if (tool === undefined) {
    const message = `unknown tool ${JSON.stringify(request.name)}; available: ${services.tools.list().map((t) => t.name).join(", ") || "none"}`
    return request.observe
      ? Effect.succeed(`[TOOL_ERROR] ${message}`)
      : Effect.fail(new EvalError({ kind: "OracleError", message, steps: exec.steps }))
  }
  const usage = exec.usage
  if (usage.toolCalls >= exec.budget.toolCalls) return Effect.fail(budgetError(exec, "toolCalls", exec.budget.toolCalls))
  usage.toolCalls++
  const started = now()
  const input = Value.toJson(request.input)
  const definition = request.timeoutMs === undefined ? tool : { ...tool, timeoutMs: request.timeoutMs }
  const observe = (output: Value.Value): Value.Value => {
    record(services, exec, {
      step: exec.steps,
      kind: "tool",
      name: request.name,
      input: Trace.preview(Value.toText(request.input)),
      output: Trace.preview(Value.toText(output)),
      durationMs: now() - started
    })
    return output
  }
  const invoked = Tools.invoke(definition, input)
  const done = completed(invoked)
  const call: Effect.Effect<Value.Value, never> = done !== undefined
    ? Effect.succeed(observe(Exit.isSuccess(done) ? toValue(done.value) : failureOf(done)))
    : invoked.pipe(
      Effect.map(toValue),
      Effect.catchTag("ToolError", (error) => Effect.succeed<Value.Value>(toolFailure(error))),
      Effect.map(observe)
    )
  return services.sink.spans ? call.pipe(Effect.withSpan("lambdagent.tool", { attributes: { name: request.name } })) : call
}

const namespaceOf = (services: Services, scope: Term.Of<"Memory">["scope"]) =>
  MemoryStore.namespace(
    scope === "global" ? { kind: "global" } : scope === "user" ? { kind: "user", id: services.user } : { kind: "session", id: services.session }
  )

const age = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.round(s / 60)}m`
  if (s < 86_400) return `${Math.round(s / 3600)}h`
  return `${Math.round(s / 86_400)}d`
}

/**
 * The input a `memory` agent sees: the recent exchanges (oldest first, with their age), then the
 * current input. With no memories the input is unchanged.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Agent } from "lambdagent"
 * Agent.withMemoryContext("and now?", [{ key: "k", value: JSON.stringify({ input: "hi", output: "hello" }), createdAt: Date.now() }], Date.now())
 * // "[Memory Context]\n(0s ago) user: hi\n(0s ago) assistant: hello\n\n[Current Input]\nand now?"
 * ```
 */
export const withMemoryContext = (input: string, entries: ReadonlyArray<MemoryStore.MemoryEntry>, at: number): string => {
  if (entries.length === 0) return input
  const lines: Array<string> = []
  for (const entry of [...entries].reverse()) {
    const when = `(${age(at - entry.createdAt)} ago)`
    let exchange: { input?: unknown; output?: unknown } | undefined
    try {
      exchange = JSON.parse(entry.value)
    } catch {
      exchange = undefined
    }
    if (exchange !== undefined && typeof exchange === "object" && exchange !== null && "input" in exchange) {
      lines.push(`${when} user: ${String(exchange.input)}`, `${when} assistant: ${String(exchange.output)}`)
    } else lines.push(`${when} ${entry.key}: ${entry.value}`)
  }
  return `[Memory Context]\n${lines.join("\n")}\n\n[Current Input]\n${input}`
}

let memorySequence = 0

const answerMemory = (
  services: Services,
  exec: Evaluator.Execution,
  request: Extract<Evaluator.OracleRequest, { kind: "memory-read" | "memory-write" }>
): Effect.Effect<Value.Value, AgentError> => {
  const term = request.term
  const namespace = namespaceOf(services, term.scope)
  const started = now()
  const note = (name: string, output: string) =>
    record(services, exec, { step: exec.steps, kind: "memory", name, output: Trace.preview(output), durationMs: now() - started })
  if (request.kind === "memory-read") {
    const input = Value.toText(request.input)
    if (term.size === 0) return Effect.succeed(input)
    return mapNow(services.memory.listRecent(namespace, term.size), (entries): Value.Value => {
      note("read", `${entries.length} entr${entries.length === 1 ? "y" : "ies"} from ${namespace}`)
      return withMemoryContext(input, entries, Date.now())
    })
  }
  const key = `${Date.now().toString(36)}-${(memorySequence++).toString(36)}`
  const value = JSON.stringify({ input: Value.toText(request.input), output: Value.toText(request.output) })
  return mapNow(services.memory.put(namespace, key, value, term.ttl > 0 ? { ttlMs: term.ttl * 1000 } : {}), () => {
    note("write", `${namespace} ← ${key}`)
    return request.output
  })
}

const answerPar = (
  services: Services,
  exec: Evaluator.Execution,
  request: Extract<Evaluator.OracleRequest, { kind: "par" }>
): Effect.Effect<Value.Value, AgentError> => {
  const branches = request.term.branches.map((_, i) => exec.branch(request, i))
  const started = now()
  return Effect.forEach(branches, (branch) => drive(services, branch), { concurrency: "unbounded" }).pipe(
    Effect.map((results) => {
      for (const branch of branches) exec.events.push(...branch.events)
      record(services, exec, { step: exec.steps, kind: "par", name: `${branches.length} branches`, durationMs: now() - started })
      return Value.fromArray(results)
    })
  )
}

const answer = (services: Services, exec: Evaluator.Execution, request: Evaluator.OracleRequest): Effect.Effect<Value.Value, AgentError> => {
  switch (request.kind) {
    case "llm":
      return answerLlm(services, exec, request)
    case "tool":
      return answerTool(services, exec, request)
    case "memory-read":
    case "memory-write":
      return answerMemory(services, exec, request)
    case "par":
      return answerPar(services, exec, request)
  }
}

/**
 * Step the machine, answering each oracle request, until it is done. Answers that are already
 * complete (a zero-latency model, a synchronous tool) resume the machine at once, without going
 * through the Effect scheduler; only pending work suspends the loop.
 */
const drive = (services: Services, exec: Evaluator.Execution): Effect.Effect<Value.Value, AgentError> =>
  Effect.suspend(() => {
    const loop = (step: Step): Effect.Effect<Value.Value, AgentError> => {
      for (;;) {
        if (step._tag === "Done") return Effect.succeed(step.value)
        if (step._tag === "Failed") return Effect.fail(step.error)
        const answered = answer(services, exec, step.request)
        const done = completed(answered)
        if (done === undefined) return Effect.flatMap(answered, (value) => loop(attempt(() => exec.resume(value))))
        if (Exit.isFailure(done)) return done
        const value = done.value
        step = attempt(() => exec.resume(value))
      }
    }
    return loop(attempt(() => exec.next()))
  })

const randomId = () => Math.random().toString(36).slice(2, 10)

const parseTerm = (term: Term.Term | Term.Json): Term.Term =>
  typeof term === "object" && term !== null && !Array.isArray(term) && "_tag" in term ? (term as Term.Term) : Term.parse(term)

/**
 * Run an agent term on an input with the runtime's services. The term is applied to the input
 * when it evaluates to a function (every agent form does). Budgets for LLM calls, tool calls and
 * tokens are checked before each call; exhaustion fails with `BudgetExceeded` carrying the trace.
 * Interrupting the effect cancels the run and its in-flight LLM and tool calls.
 *
 * @since 0.1.0
 * @category running
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Agent, LanguageModel, MemoryStore, Scripted, Term, Tools, TraceSink } from "lambdagent"
 * const layer = Layer.mergeAll(
 *   Layer.succeed(LanguageModel.LanguageModel, Scripted.echo()),
 *   Tools.layer([]),
 *   MemoryStore.layerLocal(),
 *   TraceSink.layerNone
 * )
 * const result = await Effect.runPromise(Agent.run(Term.llm({ system: "Repeat." }), "hello").pipe(Effect.provide(layer)))
 * console.log(result.value) // "hello"
 * ```
 */
export const run = (
  term: Term.Term | Term.Json,
  input: unknown,
  options: RunOptions = {}
): Effect.Effect<RunResult, AgentError, LanguageModel.LanguageModel> =>
  Effect.gen(function*() {
    const model = yield* LanguageModel.LanguageModel
    const tools = Option.getOrElse(yield* Effect.serviceOption(Tools.Tools), () => Tools.make([]))
    const memory = Option.getOrElse(yield* Effect.serviceOption(MemoryStore.MemoryStore), () => MemoryStore.makeLocal())
    const sink = Option.getOrElse(yield* Effect.serviceOption(TraceSink.TraceSink), () => TraceSink.none)
    const runId = options.runId ?? randomId()
    const onEvent = options.onEvent
    const session = options.session ?? "default"
    const services: Services = {
      model,
      tools,
      memory,
      sink,
      models: options.models ?? defaultModels,
      conversations: options.conversations ?? makeConversations(),
      session,
      user: options.user ?? session,
      runId,
      onEvent
    }
    const started = now()
    const evaluation: Evaluator.RunOptions = {
      ...(options.budget !== undefined ? { budget: options.budget } : {}),
      trace: options.trace ?? "agent",
      onEvent: (event) => {
        if (sink !== TraceSink.none) sink.record({ ...event, runId })
        onEvent?.({ type: "trace", event })
      }
    }
    let exec: Evaluator.Execution
    try {
      exec = options.normalizeInput === true
        ? Evaluator.startRun(parseTerm(term), input, evaluation)
        : Evaluator.startApply(parseTerm(term), toValue(input), evaluation)
    } catch (error) {
      if (isLambdaError(error)) return yield* Effect.fail(error)
      throw error
    }
    const timeMs = exec.budget.timeMs
    const value = yield* drive(services, exec).pipe(
      Effect.timeoutOrElse({
        duration: timeMs,
        orElse: () =>
          Effect.fail(
            new BudgetExceeded({ budget: "time", limit: timeMs, steps: exec.steps, message: `time budget of ${timeMs} ms exhausted`, trace: exec.events })
          )
      })
    )
    return {
      value,
      result: Value.toJson(value),
      trace: exec.events,
      stats: {
        steps: exec.steps,
        llmCalls: exec.usage.llmCalls,
        toolCalls: exec.usage.toolCalls,
        tokens: exec.usage.tokens,
        durationMs: now() - started
      }
    }
  })

