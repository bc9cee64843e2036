/**
 * Running agent terms: the `Driver` answering the evaluator's oracle requests with the
 * `LanguageModel`, `Tools`, `MemoryStore` and `TraceSink` services.
 *
 * {@link run} is the Effect API. The evaluator itself stays synchronous; the driver steps it,
 * and at each LLM call, tool call, memory access or parallel fork the handlers here perform the
 * effect (the driver checks budgets first and handles cancellation) and the machine resumes
 * with the answer.
 *
 * @since 0.1.0
 * @module
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as z from "zod"
import type * as Budget from "./Budget.ts"
import * as Checkpoint from "./Checkpoint.ts"
import * as Driver from "./Driver.ts"
import { CheckpointError, EvalError, isLambdaError, type LambdaError, type ReplayDivergence, ReplayError, RunPaused } from "./Errors.ts"
import * as Evaluator from "./Evaluator.ts"
import { isExit } from "./internal/exits.ts"
import { journaled } from "./internal/journal.ts"
import { InputProblem, type NativeTools, nativeInput, nativeTools } from "./internal/nativeTools.ts"
import * as Oracle from "./Oracle.ts"
import * as LanguageModel from "./LanguageModel.ts"
import * as MemoryStore from "./MemoryStore.ts"
import * as Providers from "./providers/resolve.ts"
import * as Replay from "./Replay.ts"
import * as Spans from "./internal/spans.ts"
import * as Structured from "./internal/structured.ts"
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
export type AgentError = LambdaError | LanguageModel.ProviderError | MemoryStore.MemoryError | CheckpointError | RunPaused | ReplayDivergence | ReplayError

/**
 * Something that happens during a run, as streamed by a runtime: a trace event, a piece of an
 * LLM's answer as it arrives, or a piece of a tool call the LLM is making natively
 * ({@link ToolCallDelta}).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Agent } from "lambdagent"
 * const show = (e: Agent.RunEvent) => (e.type === "token" ? e.text : e.type === "tool-call" ? e.arguments : `[${e.event.kind}]`)
 * ```
 */
export type RunEvent =
  | { readonly type: "trace"; readonly event: Trace.TraceEvent }
  | { readonly type: "token"; readonly name: string; readonly text: string }
  | ToolCallDelta

/**
 * A piece of a native tool call, as the model streams it: `name` is the `llm` term's, `index`
 * numbers the calls of one answer from 0; the first piece of a call carries its `callId` and
 * `tool` (the tool's name), and every piece a part of its `arguments` (JSON text: join the pieces
 * of one index). A provider that sends a call whole sends it as one piece.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Agent } from "lambdagent"
 * const d: Agent.ToolCallDelta = { type: "tool-call", name: "think", index: 0, callId: "call_1", tool: "add", arguments: '{"a":' }
 * ```
 */
export interface ToolCallDelta {
  readonly type: "tool-call"
  readonly name: string
  readonly index: number
  readonly callId?: string
  readonly tool?: string
  readonly arguments: string
}

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
  /** Resolves `llm` terms' model settings (default: a {@link makeModelResolver} for this run). */
  readonly models?: ModelResolver
  /** Told of every trace event and, when set, LLM answers are streamed token by token. */
  readonly onEvent?: (event: RunEvent) => void
  /** Id of this run in trace sinks; default a random id. */
  readonly runId?: string
  /** Read the input as the tool protocol does (normalised, then a term); default false: the input is data. */
  readonly normalizeInput?: boolean
  /** Save a checkpoint of the run before every oracle call (see `Checkpoint.recorder`). */
  readonly checkpoint?: CheckpointOptions
  /**
   * Answers the term's `ask` forms at once (a prompt on a terminal, a chat message). Without it, a
   * run that reaches an `ask` fails with `RunPaused`, carrying the checkpoint to resume it with
   * the answer.
   */
  readonly ask?: (question: string, input: Value.Value) => Effect.Effect<unknown, AgentError>
  /** Resuming a paused run (`RunPaused`): the person's answer to its question. */
  readonly answer?: unknown
  /** Told of every oracle answer, as an entry of a recording for replay (see `Replay.recorder`). */
  readonly record?: (entry: Replay.Entry) => void
  /** Answer the run from a recording instead of the services (see `Replay.player`). */
  readonly replay?: ReplayOptions
  /**
   * Pass every call that reaches the services (model, tools, memory, a person's answer) through a
   * durable journal: see {@link Journal}. A durable workflow makes each call an activity.
   */
  readonly journal?: Journal
}

/**
 * A durable journal of a run's oracle calls. It is given each call's key (unique in the run and
 * the same in every execution of it: `Execution.requestKey`), the request, and `call`, which
 * makes the call and yields its recording entry; it runs `call` and keeps the entry, or gives
 * back the entry it kept when an earlier execution of the same run made the call. The run takes
 * a given-back answer as a replayed one: its events and tokens count again, so the trace and the
 * budgets are the whole run's, and the call is not made twice.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Agent, Replay } from "lambdagent"
 * const kept = new Map<string, Replay.Entry>()
 * const journal: Agent.Journal = (key, _request, call) =>
 *   kept.has(key) ? Effect.succeed(kept.get(key)!) : Effect.tap(call, (entry) => Effect.sync(() => kept.set(key, entry)))
 * ```
 */
export type Journal = (key: string, request: Oracle.Request, call: Effect.Effect<Replay.Entry, AgentError>) => Effect.Effect<Replay.Entry, AgentError>

/**
 * A run replayed from a recording: with `live`, the requests from the first divergence on are
 * answered by the runtime's services; without, the run fails there with `ReplayDivergence`.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Agent, Replay } from "lambdagent"
 * const offline = (recording: Replay.Recording): Agent.ReplayOptions => ({ recording })
 * ```
 */
export interface ReplayOptions {
  /** The recorded answers (`Replay.parse`, `Replay.decode`). */
  readonly recording: Replay.Recording
  /** Go on live after the first divergence (default false: fail there). */
  readonly live?: boolean
  /** Told of the first divergence. */
  readonly onDivergence?: (divergence: ReplayDivergence) => void
}

/**
 * Checkpointing of a run: where each checkpoint goes, and what the host keeps with it.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Agent } from "lambdagent"
 * const o: Agent.CheckpointOptions = { save: (entry) => Effect.sync(() => console.log(entry._tag)) }
 * ```
 */
export interface CheckpointOptions {
  /**
   * Store a checkpoint entry (a whole checkpoint, or what changed since the last one: see
   * `Checkpoint.Entry`); one is handed on before each oracle call, and the call waits for the save.
   * `CheckpointStore.open` gives one for a directory, Redis or SQLite, `Checkpoint.journal` one in memory.
   */
  readonly save: (entry: Checkpoint.Entry) => Effect.Effect<void, CheckpointError>
  readonly meta?: Readonly<Record<string, unknown>>
  /** Also save one during long pure evaluation, every this many steps (`Checkpoint.RecorderOptions.everySteps`). */
  readonly everySteps?: number
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

/**
 * A model resolver that builds each named provider once and keeps it: settings naming a
 * `provider` become `Providers.fromSpec("<provider>:<name>")` (with their `baseUrl` and
 * `timeout`); settings without one mean the default model. A runtime makes one for its lifetime.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Agent } from "lambdagent"
 * const models = Agent.makeModelResolver()
 * const model = models({ provider: "scripted", name: "echo" })
 * ```
 */
export const makeModelResolver = (): ModelResolver => {
  const cache = new Map<string, LanguageModel.LanguageModelShape>()
  return (settings) => {
    if (settings.provider === undefined) return undefined
    const spec = settings.name === undefined ? settings.provider : `${settings.provider}:${settings.name}`
    const key = `${spec}\u0000${settings.baseUrl ?? ""}\u0000${settings.timeout ?? ""}\u0000${settings.session === true}`
    let model = cache.get(key)
    if (model === undefined) {
      model = Providers.fromSpec(spec, {
        ...(settings.baseUrl !== undefined ? { baseUrl: settings.baseUrl } : {}),
        ...(settings.timeout !== undefined ? { timeoutMs: settings.timeout * 1000 } : {}),
        ...(settings.session === true ? { session: true } : {})
      })
      cache.set(key, model)
    }
    return model
  }
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
    'To use a tool, answer with one JSON object: {"tool": "<name>", "args": <arguments>}.',
    "When you are done, call terminate with your final answer as args.",
    ...lines
  ].join("\n")
}

// ---------------------------------------------------------------------------------------------
// The handlers the driver calls
// ---------------------------------------------------------------------------------------------

interface Services {
  readonly model: LanguageModel.LanguageModelShape
  readonly tools: Tools.ToolsShape
  /** Absent when the host provided no store: a `memory` node then fails the run, saying so. */
  readonly memory: MemoryStore.MemoryStoreShape | undefined
  readonly sink: TraceSink.TraceSinkShape
  readonly models: ModelResolver
  readonly conversations: Conversations
  readonly session: string
  readonly user: string
  /** The run's id, drawn the first time it is asked for. */
  readonly runId: () => string
  readonly onEvent: ((event: RunEvent) => void) | undefined
}

const now = () => performance.now()

const tracing = (run: Driver.RunState) => run.execution.traceLevel !== "off"

/**
 * The model's answer; streamed to `onEvent` when the run has a listener, token by token and tool
 * call piece by piece (`toolName` gives a tool's name from the one it goes by on the wire).
 */
const callModel = (
  services: Services,
  model: LanguageModel.LanguageModelShape,
  request: LanguageModel.ChatRequest,
  name: string,
  toolName: ((wire: string) => string) | undefined
): Effect.Effect<LanguageModel.ChatResponse, LanguageModel.ProviderError> => {
  const onEvent = services.onEvent
  if (onEvent === undefined) return model.chat(request)
  return Effect.suspend(() => {
    let text = ""
    let usage: LanguageModel.Usage | undefined
    let answeredBy: string | undefined
    let finishReason: string | undefined
    // tool calls arrive in pieces, by index: the id and name once, the arguments text in parts
    const calls: Array<{ id: string; name: string; arguments: string }> = []
    return model.stream(request).pipe(
      Stream.runForEach((chunk) =>
        Effect.sync(() => {
          if (chunk._tag === "TextDelta") {
            text += chunk.text
            onEvent({ type: "token", name, text: chunk.text })
          } else if (chunk._tag === "ToolCallDelta") {
            const call = (calls[chunk.index] ??= { id: "", name: "", arguments: "" })
            if (chunk.id !== undefined) call.id = chunk.id
            // a name comes once (OpenAI) or in pieces; a server repeating it whole does not double it
            const named = chunk.name !== undefined && chunk.name !== call.name
            if (named) call.name += chunk.name
            call.arguments += chunk.arguments
            onEvent({
              type: "tool-call",
              name,
              index: chunk.index,
              ...(chunk.id !== undefined ? { callId: chunk.id } : {}),
              ...(named ? { tool: toolName === undefined ? chunk.name! : toolName(chunk.name!) } : {}),
              arguments: chunk.arguments
            })
          } else {
            usage = chunk.usage
            answeredBy = chunk.model
            finishReason = chunk.finishReason
          }
        })
      ),
      Effect.map((): LanguageModel.ChatResponse => {
        const toolCalls = calls.filter((c) => c !== undefined).map((c, i) => (c.id === "" ? { ...c, id: `call_${i}` } : c))
        return {
          text,
          ...(usage !== undefined ? { usage } : {}),
          ...(toolCalls.length > 0 ? { toolCalls } : {}),
          ...(answeredBy !== undefined ? { model: answeredBy } : {}),
          ...(finishReason !== undefined ? { finishReason } : {})
        }
      })
    )
  })
}

/** `Effect.map`, but an already-completed effect is mapped at once, staying completed. */
const mapNow = <A, B, E>(effect: Effect.Effect<A, E>, f: (a: A) => B): Effect.Effect<B, E> => {
  if (!isExit(effect)) return Effect.map(effect, f)
  const done = effect as Exit.Exit<A, E>
  return Exit.isSuccess(done) ? Effect.succeed(f(done.value)) : (done as unknown as Effect.Effect<B, E>)
}

/** What an `llm` term sends besides its messages, worked out once per term. */
interface Prepared {
  readonly options: Omit<LanguageModel.ChatRequest, "messages"> | undefined
  /** The system prompt with the tool docs of the last tool names and registry it was asked for. */
  withTools?: { readonly names: ReadonlyArray<string>; readonly tools: Tools.ToolsShape; readonly system: string }
  /** For an output schema: the response format, and the system prompt asking for it in words. */
  withOutput?: { readonly format: LanguageModel.ResponseFormat; readonly system: string }
  /** The last system message a conversation was sent with, kept so that each call sends the same one. */
  systemMessage?: LanguageModel.ChatMessage
}

const preparedTerms = new WeakMap<Term.Of<"Llm">, Prepared>()

const preparedOf = (term: Term.Of<"Llm">): Prepared => {
  let prepared = preparedTerms.get(term)
  if (prepared === undefined) {
    const settings = term.model ?? {}
    const options = {
      ...(settings.name !== undefined && settings.provider === undefined ? { model: settings.name } : {}),
      ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
      ...(settings.maxTokens !== undefined ? { maxTokens: settings.maxTokens } : {}),
      ...(settings.topP !== undefined ? { topP: settings.topP } : {}),
      ...(settings.stop !== undefined ? { stop: settings.stop } : {})
    }
    prepared = { options: Object.keys(options).length === 0 ? undefined : options }
    preparedTerms.set(term, prepared)
  }
  return prepared
}

/**
 * The system message of a conversation (a ReAct loop's): the same object at every call while the
 * prompt stays the same, so that a model can tell the conversation's start is unchanged.
 */
const systemMessage = (prepared: Prepared, system: string): LanguageModel.ChatMessage => {
  const last = prepared.systemMessage
  if (last !== undefined && last.content === system) return last
  return (prepared.systemMessage = { role: "system", content: system })
}

const systemWithTools = (term: Term.Of<"Llm">, prepared: Prepared, names: ReadonlyArray<string>, tools: Tools.ToolsShape): string => {
  const last = prepared.withTools
  if (last !== undefined && last.names === names && last.tools === tools) return last.system
  const system = `${term.system}\n\n${toolDocs(names, tools)}`
  prepared.withTools = { names, tools, system }
  return system
}

const outputOf = (prepared: Prepared, term: Term.Of<"Llm">, output: Term.Output): NonNullable<Prepared["withOutput"]> => {
  if (prepared.withOutput === undefined) {
    const format: LanguageModel.ResponseFormat = {
      name: output.name ?? "output",
      ...(output.description !== undefined ? { description: output.description } : {}),
      schema: output.schema,
      strict: output.strict ?? Structured.isStrictCompatible(output.schema)
    }
    prepared.withOutput = { format, system: `${term.system}\n\n${Structured.instructions(output.schema)}` }
  }
  return prepared.withOutput
}

/**
 * The conversation an LLM request continues, when its term keeps one: not a ReAct step, and not
 * a structured answer (one call on the input, repaired as needed).
 */
const historyOf = (services: Services, request: Oracle.LlmRequest): History | undefined =>
  request.term.conversation !== false && request.tools === undefined && request.term.output === undefined ? services.conversations.get(request.term) : undefined

/** Each conversation's key for the model (see `ChatRequest.conversation`): one per history, so per term and session. */
const conversationKeys = new WeakMap<History, string>()
let conversationCount = 0

const conversationKey = (history: History): string => {
  let key = conversationKeys.get(history)
  if (key === undefined) {
    key = `conversation-${++conversationCount}`
    conversationKeys.set(history, key)
  }
  return key
}

/** A replayed LLM answer joins its term's conversation, as a live one does. */
const rememberReplayed = (services: Services, request: Oracle.Request, answer: Value.Value): void => {
  if (request.kind !== "llm") return
  const history = historyOf(services, request)
  if (history !== undefined) remember(history, Value.toText(request.input), Value.toText(answer), request.term.maxHistoryTokens ?? 80_000)
}

/** A transcript with its tool calls under the names the model was offered them by. */
const onTheWire = (transcript: ReadonlyArray<LanguageModel.ChatMessage>, native: NativeTools): Array<LanguageModel.ChatMessage> =>
  transcript.map((m) => (m.toolCalls === undefined ? m : { ...m, toolCalls: m.toolCalls.map((c) => ({ ...c, name: native.wireOf(c.name) })) }))

/** An answer's text and tool calls, as a trace shows them: the text, then each call as `name(arguments)`, one a line. */
const answerText = (text: string, calls: ReadonlyArray<LanguageModel.ToolCall>): string => {
  let out = text
  for (let i = 0; i < calls.length; i++) out += `${out === "" ? "" : "\n"}${calls[i]!.name}(${calls[i]!.arguments})`
  return out
}

const answerLlm = (services: Services, request: Oracle.LlmRequest, run: Driver.RunState): Effect.Effect<Value.Value, AgentError> => {
  const term = request.term
  const settings = term.model ?? {}
  let model: LanguageModel.LanguageModelShape
  try {
    model = (term.model === undefined ? undefined : services.models(settings)) ?? services.model
  } catch (cause) {
    return Effect.fail(new EvalError({ kind: "OracleError", message: cause instanceof Error ? cause.message : String(cause), steps: run.execution.steps }))
  }
  if (request.toolCalling === "native" && model.nativeTools !== true) {
    const message = `the model ${model.name} does not call tools natively (toolCalling: native); use toolCalling: auto or text`
    return Effect.fail(new EvalError({ kind: "OracleError", message, steps: run.execution.steps }))
  }
  const native =
    request.tools !== undefined && request.toolCalling !== undefined && model.nativeTools === true ? nativeTools(request.tools, services.tools) : undefined
  const history = historyOf(services, request)
  const prepared = preparedOf(term)
  const output = request.output === undefined ? undefined : outputOf(prepared, term, request.output)
  const system =
    request.tools !== undefined && native === undefined
      ? systemWithTools(term, prepared, request.tools, services.tools)
      : output !== undefined && model.structuredOutput !== true
        ? output.system
        : term.system
  const user = Value.toText(request.input)
  const transcript = request.transcript !== undefined && native !== undefined && !native.sameNames ? onTheWire(request.transcript, native) : request.transcript
  const messages = transcript !== undefined ? [systemMessage(prepared, system)].concat(transcript) : messagesOf(system, history, user)
  if (request.repair !== undefined) messages.push(...request.repair)
  const conversation = history !== undefined ? conversationKey(history) : null
  const chat: LanguageModel.ChatRequest =
    native !== undefined
      ? { messages, ...prepared.options, tools: native.specs, toolChoice: request.toolChoice ?? "auto", conversation }
      : output !== undefined
        ? { messages, ...prepared.options, responseFormat: output.format, conversation }
        : { messages, ...prepared.options, conversation }
  const name = term.name ?? "llm"
  const started = tracing(run) ? now() : 0
  const called = callModel(services, model, chat, name, native === undefined || native.sameNames ? undefined : native.nameOf)
  const spanned = services.sink.spans ? Spans.llm(called, { name, provider: model.name, request: chat, step: run.execution.steps }) : called
  return mapNow(spanned, (response): Value.Value => {
    const calls =
      native === undefined
        ? undefined
        : native.sameNames
          ? (response.toolCalls ?? [])
          : (response.toolCalls ?? []).map((c) => ({ ...c, name: native.nameOf(c.name) }))
    const tokensIn = response.usage?.inputTokens ?? 0
    const tokensOut = response.usage?.outputTokens ?? 0
    run.execution.usage.tokens += tokensIn + tokensOut
    if (history !== undefined) remember(history, user, response.text, term.maxHistoryTokens ?? 80_000)
    if (tracing(run)) {
      run.execution.record({
        step: run.execution.steps,
        kind: "llm",
        name,
        input: Trace.preview(user),
        output: Trace.preview(calls === undefined ? response.text : answerText(response.text, calls)),
        durationMs: now() - started,
        tokens: { input: tokensIn, output: tokensOut },
        model: response.model ?? model.name
      })
    }
    return calls === undefined ? response.text : Oracle.toolCallAnswer(response.text, calls)
  })
}

const toolFailure = (error: Tools.ToolError): string => (error.reason === "Timeout" ? error.message : `[TOOL_ERROR] ${error.tool}: ${error.message}`)

/** The observation of a tool call that failed synchronously. */
const failureOf = (exit: Exit.Exit<unknown, Tools.ToolError>): string => {
  const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : Option.none()
  return Option.isSome(error) ? toolFailure(error.value) : "[TOOL_ERROR] the tool failed"
}

const answerTool = (services: Services, request: Oracle.ToolRequest, run: Driver.RunState): Effect.Effect<unknown, AgentError> => {
  const tool = services.tools.get(request.name)
  if (tool === undefined) {
    const message = `unknown tool ${JSON.stringify(request.name)}; available: ${
      services.tools
        .list()
        .map((t) => t.name)
        .join(", ") || "none"
    }`
    return request.observe
      ? Effect.succeed(`[TOOL_ERROR] ${message}`)
      : Effect.fail(new EvalError({ kind: "OracleError", message, steps: run.execution.steps }))
  }
  const started = tracing(run) ? now() : 0
  const definition = request.timeoutMs === undefined ? tool : { ...tool, timeoutMs: request.timeoutMs }
  const observe = (output: unknown): unknown => {
    if (tracing(run)) {
      run.execution.record({
        step: run.execution.steps,
        kind: "tool",
        name: request.name,
        input: Trace.preview(Value.toText(request.input)),
        output: Trace.preview(typeof output === "string" ? output : Value.toText(Oracle.toValue(output))),
        durationMs: now() - started
      })
    }
    return output
  }
  let input: unknown = request.args !== undefined ? request.args : Value.toJson(request.input)
  if (request.callId !== undefined) {
    input = nativeInput(tool, input)
    if (input instanceof InputProblem) return Effect.succeed(observe(`[TOOL_ERROR] ${tool.name}: ${input.message}`))
  }
  const invoked = Tools.invoke(definition, input)
  const done = isExit(invoked) ? (invoked as Exit.Exit<unknown, Tools.ToolError>) : undefined
  const call: Effect.Effect<unknown, never> =
    done !== undefined
      ? Exit.isSuccess(done)
        ? (observe(done.value), done as unknown as Effect.Effect<unknown>)
        : Effect.succeed(observe(failureOf(done)))
      : invoked.pipe(
          Effect.catchTag("ToolError", (error) => Effect.succeed<unknown>(toolFailure(error))),
          Effect.map(observe)
        )
  return services.sink.spans ? Spans.tool(call, { name: request.name, description: tool.description, kind: tool.kind, step: run.execution.steps }) : call
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

const answerMemory = (services: Services, request: Oracle.MemoryRequest, run: Driver.RunState): Effect.Effect<Value.Value, AgentError> => {
  const store = services.memory
  const exec = run.execution
  if (store === undefined) {
    return Effect.fail(
      new EvalError({
        kind: "OracleError",
        message: "the term uses memory, and no MemoryStore was provided (provide one, e.g. MemoryStore.layerLocal())",
        steps: exec.steps
      })
    )
  }
  const term = request.term
  const namespace = namespaceOf(services, term.scope)
  const started = now()
  const note = (name: string, output: string) => {
    if (tracing(run)) exec.record({ step: exec.steps, kind: "memory", name, output: Trace.preview(output), durationMs: now() - started })
  }
  if (request.kind === "memory-read") {
    const input = Value.toText(request.input)
    if (term.size === 0) return Effect.succeed(input)
    const listed = store.listRecent(namespace, term.size)
    return mapNow(services.sink.spans ? Spans.memory(listed, "read", namespace, exec.steps) : listed, (entries): Value.Value => {
      note("read", `${entries.length} entr${entries.length === 1 ? "y" : "ies"} from ${namespace}`)
      return withMemoryContext(input, entries, Date.now())
    })
  }
  // unique within the run (branches have their own request numbers) and across runs
  const key = `${Date.now().toString(36)}-${services.runId()}-${exec.branchPath ?? "r"}.${request.id}`
  const value = JSON.stringify({ input: Value.toText(request.input), output: Value.toText(request.output) })
  const put = store.put(namespace, key, value, term.ttl > 0 ? { ttlMs: term.ttl * 1000 } : {})
  return mapNow(services.sink.spans ? Spans.memory(put, "write", namespace, exec.steps) : put, () => {
    note("write", `${namespace} ← ${key}`)
    return request.output
  })
}

const askingTerms = new WeakMap<Term.Term, boolean>()

/** Whether a term has an `ask` form (remembered per term: a server runs the same term often). */
const asks = (term: Term.Term): boolean => {
  let known = askingTerms.get(term)
  if (known === undefined) askingTerms.set(term, (known = Term.capabilities(term).ask))
  return known
}

const paused = (latest: Checkpoint.Checkpoint | undefined, key: string, request: Oracle.AskRequest): AgentError => {
  const input = Value.toText(request.input)
  if (latest === undefined) {
    // only an `ask` built while the run ran (by `eval`) gets here: nothing saved the run before it
    return new EvalError({ kind: "OracleError", message: `nothing answers ${Oracle.describe(request)}: give the run an ask handler`, steps: 0 })
  }
  return new RunPaused({
    message: `the run is waiting for an answer to ${JSON.stringify(request.question)}`,
    question: request.question,
    input,
    checkpoint: Checkpoint.awaiting(latest, { key, question: request.question, input })
  })
}

/** The trace event of a question answered: the question, what it was asked about, the answer. */
const askEvent = (exec: Evaluator.Execution, question: string, input: string, answer: Value.Value): Trace.TraceEvent => ({
  step: exec.steps,
  kind: "ask",
  name: question,
  input: Trace.preview(input),
  output: Trace.preview(Value.toText(answer))
})

/** The answer given to a paused run's question, as the run records it. */
const answerOf = (exec: Evaluator.Execution, asking: Checkpoint.Asking, answer: unknown): Checkpoint.Answer => {
  const value = Oracle.toValue(answer)
  const events: ReadonlyArray<Trace.TraceEvent> = exec.traceLevel === "off" ? [] : [askEvent(exec, asking.question, asking.input, value)]
  return { key: asking.key, kind: "ask", value, events, tokens: 0 }
}

const handlersOf = (services: Services): Driver.Handlers<AgentError, never> => ({
  llm: (request, run) => answerLlm(services, request, run),
  tool: (request, run) => answerTool(services, request, run),
  memory: (request, run) => answerMemory(services, request, run)
})

/** A player of the recording in front of the services' handlers. */
const playerOf = (live: Driver.Handlers<AgentError, never>, services: Services, replay: ReplayOptions): Replay.Player<AgentError, never> =>
  Replay.player(replay.recording, {
    ...(replay.live === true ? { live } : {}),
    ...(replay.onDivergence !== undefined ? { onDivergence: replay.onDivergence } : {}),
    onReplayed: (request, answer) => rememberReplayed(services, request, answer)
  })

/**
 * A replayed run that ended before the recording did is a divergence too: the run fails with it,
 * or with `live` is told of it.
 */
const checkEnded = (
  player: Replay.Player<AgentError, never> | undefined,
  replay: ReplayOptions | undefined,
  steps: number
): Effect.Effect<void, ReplayDivergence> => {
  const left = player?.leftover(steps)
  if (left === undefined) return Effect.void
  if (replay?.live === true) {
    replay.onDivergence?.(left)
    return Effect.void
  }
  return Effect.fail(left)
}

type Hooks = Pick<Driver.Handlers<AgentError, never>, "suspended" | "answered">

/** Several recorders' hooks as one: each is told, in order. */
const hooksOf = (hooks: ReadonlyArray<Required<Hooks>>): Hooks => {
  if (hooks.length === 0) return {}
  if (hooks.length === 1) return hooks[0]!
  return {
    suspended: (request, run) => {
      const effects = hooks.map((h) => h.suspended(request, run))
      // hooks that are already done keep a complete answer complete
      return effects.every((e) => isExit(e) && Exit.isSuccess(e)) ? Effect.void : Effect.forEach(effects, (e) => e, { discard: true })
    },
    answered: (request, value, run, recorded, message) => {
      for (const h of hooks) h.answered(request, value, run, recorded, message)
    }
  }
}

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
export const run = (term: Term.Term | Term.Json, input: unknown, options: RunOptions = {}): Effect.Effect<RunResult, AgentError, LanguageModel.LanguageModel> =>
  runFrom({ term, input }, options)

/**
 * Resume a run from a checkpoint (`Checkpoint.decode`): the machine is restored and driven on
 * with the runtime's services, from the request it was waiting on; answers the checkpoint
 * recorded are not asked again. The result is the one the run would have had uninterrupted.
 *
 * @since 0.2.0
 * @category running
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Checkpoint } from "lambdagent"
 * const resumeText = (text: string) => Agent.resume(Checkpoint.parse(text))
 * ```
 */
export const resume = (
  checkpoint: Checkpoint.Checkpoint,
  options: Omit<RunOptions, "budget" | "trace" | "normalizeInput"> = {}
): Effect.Effect<RunResult, AgentError, LanguageModel.LanguageModel> => runFrom({ checkpoint }, options)

/** Where a run starts: a term and its input, or a checkpoint. */
type RunFrom = { readonly term: Term.Term | Term.Json; readonly input: unknown } | { readonly checkpoint: Checkpoint.Checkpoint }

const runFrom = (from: RunFrom, options: RunOptions): Effect.Effect<RunResult, AgentError, LanguageModel.LanguageModel> =>
  Effect.contextWith((context: Context.Context<LanguageModel.LanguageModel>) => runIn(context, from, options))

/**
 * @internal A run on the services of `context`, begun at once: a run whose answers all complete
 * at once (an in-process model, synchronous tools) is already done on return (an `Exit`), with
 * no fiber; one that waits returns the effect that goes on from where it waits. What `run` does
 * inside a fiber, for a host that holds its services as values (the Promise runtime).
 */
export const runIn = (context: Context.Context<LanguageModel.LanguageModel>, from: RunFrom, options: RunOptions): Effect.Effect<RunResult, AgentError> => {
  const sink = Context.get(context, TraceSink.TraceSink)
  // drawn when something asks for it: a run that records nowhere and remembers nothing needs none
  let runId = options.runId
  const runIdOf = () => (runId ??= randomId())
  const onEvent = options.onEvent
  const session = options.session ?? "default"
  const services: Services = {
    model: Context.get(context, LanguageModel.LanguageModel),
    tools: Context.get(context, Tools.Tools),
    memory: Context.getOrUndefined(context, MemoryStore.MemoryStore),
    sink,
    models: options.models ?? makeModelResolver(),
    conversations: options.conversations ?? makeConversations(),
    session,
    user: options.user ?? session,
    runId: runIdOf,
    onEvent
  }
  const started = now()
  const listening = (sink !== TraceSink.none && sink !== TraceSink.spansOnly) || onEvent !== undefined
  const evaluation: Evaluator.RunOptions = {
    ...(options.budget !== undefined ? { budget: options.budget } : {}),
    trace: options.trace ?? "agent",
    ...(listening
      ? {
          onEvent: (event: Trace.TraceEvent) => {
            if (sink !== TraceSink.none) sink.record({ ...event, runId: runIdOf() })
            onEvent?.({ type: "trace", event })
          }
        }
      : {})
  }
  let exec: Evaluator.Execution
  let drive: Driver.DriveOptions = {}
  let answers: ReadonlyArray<Checkpoint.Answer> = []
  try {
    if ("checkpoint" in from) {
      // a run recording its answers for replay goes on from its start, so that it records them all
      const restored = Checkpoint.restore(from.checkpoint, {
        ...(options.record !== undefined ? { from: "origin" } : {}),
        ...(evaluation.onEvent !== undefined ? { onEvent: evaluation.onEvent } : {})
      })
      exec = restored.execution
      answers = restored.answers
      const asking = from.checkpoint.asking
      if (asking !== undefined && "answer" in options) {
        answers = [...answers, answerOf(exec, asking, options.answer)]
      }
      drive = {
        recorded: answers === restored.answers ? restored.recorded : new Map(answers.map((a) => [a.key, a])),
        ...(restored.pending !== undefined ? { first: { _tag: "Suspended", request: restored.pending } } : {})
      }
    } else {
      exec =
        options.normalizeInput === true
          ? Evaluator.startRun(parseTerm(from.term), from.input, evaluation)
          : Evaluator.startApply(parseTerm(from.term), Oracle.toValue(from.input), evaluation)
    }
  } catch (error) {
    if (isLambdaError(error) || error instanceof CheckpointError) return Effect.fail(error)
    throw error
  }
  const checkpoint = options.checkpoint
  const ask = options.ask
  // a run that may pause keeps a checkpoint before each call, to hand over when it does
  const pausable = ask === undefined && asks(exec.machine.root)
  const recorder =
    checkpoint === undefined && !pausable
      ? undefined
      : Checkpoint.recorder(exec, {
          ...(checkpoint !== undefined ? { save: checkpoint.save } : {}),
          ...(checkpoint?.meta !== undefined ? { meta: checkpoint.meta } : {}),
          ...(checkpoint?.everySteps !== undefined ? { everySteps: checkpoint.everySteps } : {}),
          ...("checkpoint" in from ? { resumed: { checkpoint: from.checkpoint, answers } } : {})
        })
  const direct: Driver.Handlers<AgentError, never> = {
    ...handlersOf(services),
    ask:
      ask !== undefined
        ? // traced as a paused run's answer is when it is resumed
          (request, run) =>
            Effect.map(ask(request.question, request.input), (answer) => {
              if (tracing(run)) run.execution.record(askEvent(run.execution, request.question, Value.toText(request.input), Oracle.toValue(answer)))
              return answer
            })
        : (request, run) => Effect.fail(paused(recorder?.latest(), run.execution.requestKey(request), request))
  }
  const live = options.journal === undefined ? direct : journaled(direct, options.journal, (request, answer) => rememberReplayed(services, request, answer))
  const hooks = [...(recorder === undefined ? [] : [recorder]), ...(options.record === undefined ? [] : [Replay.recorder(options.record)])]
  const replay = options.replay
  const player = replay === undefined ? undefined : playerOf(live, services, replay)
  if (player !== undefined) {
    // the recorded messages give each channels scope what its channels held
    let messages: ReadonlyMap<string, Driver.RecordedAnswer>
    try {
      messages = player.messages()
    } catch (error) {
      if (error instanceof ReplayError) return Effect.fail(error)
      throw error
    }
    if (messages.size > 0) drive = { ...drive, recorded: drive.recorded === undefined ? messages : new Map([...messages, ...drive.recorded]) }
  }
  const handlers: Driver.Handlers<AgentError, never> = {
    ...(player?.handlers ?? live),
    ...hooksOf(hooks),
    ...(recorder?.sliced !== undefined ? { sliced: recorder.sliced } : {})
  }
  const usage = () => ({ steps: exec.steps, llmCalls: exec.usage.llmCalls, toolCalls: exec.usage.toolCalls, tokens: exec.usage.tokens })
  const result = (value: Value.Value): RunResult => ({
    value,
    result: Value.toJson(value),
    trace: exec.events,
    stats: { ...usage(), durationMs: now() - started }
  })
  // the driver holds the run to its time budget. Without spans or a replay to check at the
  // end, the run begins here (this is already being run): one that never waits is done on return
  if (!sink.spans && player === undefined) return mapNow(Driver.driveNow(exec, handlers, drive), result)
  const checked = Effect.flatMap(Driver.drive(exec, handlers, sink.spans ? { ...drive, spans: true } : drive), (value) =>
    Effect.as(checkEnded(player, replay, exec.steps), value)
  )
  const driven = sink.spans
    ? Spans.run(checked, { runId: runIdOf(), session, term: exec.machine.root._tag.toLowerCase(), resumed: "checkpoint" in from }, usage)
    : checked
  return Effect.map(driven, result)
}
