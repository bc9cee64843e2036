/**
 * Remote A2A agents as agent tools. {@link a2aTool} turns one client entry (`a2a.clients` in YAML:
 * a name, a URL, a timeout, headers) into a `Tools.ToolDefinition` of kind `a2a`: a call sends the
 * input as a message with the SDK's client, follows the task's progress on its event stream (when
 * the card offers streaming) and answers the task's artifacts as text.
 *
 * The card is fetched at the first call and kept; a failure to reach the agent drops it, so the
 * next call fetches it again. A call never throws: a timeout becomes `[A2A_TIMEOUT: name: …]` and
 * every other failure `[A2A_ERROR: name: …]` (see `A2AClientError`), after the configured retries
 * with exponential backoff. A task that needs more input answers `[A2A_INPUT_REQUIRED: …]` with the
 * ids to answer it with.
 *
 * @since 0.2.0
 * @module
 */
import { randomUUID } from "node:crypto"
import type { Artifact, Message, SendMessageRequest, StreamResponse, Task } from "@a2a-js/sdk"
import { TaskState } from "@a2a-js/sdk"
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from "@a2a-js/sdk/client"
import { A2AError } from "@a2a-js/sdk/errors"
import type { Tools } from "lambdagent"
import * as z from "zod"
import { fetchCard, networkDetail, type RemoteCard } from "./discovery.ts"
import { A2AClientError, isRetryable, observationOf } from "./errors.ts"
import { artifactsText, dataPart, message, partsText, textPart } from "./parts.ts"
import { isFinalState } from "./tasks.ts"

/**
 * One remote agent, as `a2a.clients` lists it.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { A2AClientConfig } from "lambdagent/a2a"
 * const c: A2AClientConfig = { name: "planner", url: "http://127.0.0.1:8000", timeout: 30, headers: { Authorization: "Bearer ${PLANNER_TOKEN}" } }
 * ```
 */
export interface A2AClientConfig {
  /** The tool's name, as the model calls it. */
  readonly name: string
  /** The agent's base URL (its card is at `<url>/.well-known/agent-card.json`) or its card's URL. */
  readonly url: string
  /** Seconds one attempt may take, card included (default 60). */
  readonly timeout?: number | undefined
  /** Headers of every request; `${VAR}` is replaced by the environment variable `VAR`. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Retries of a failed attempt (timeouts, unreachable, HTTP 5xx/429); default 0. */
  readonly retryOnFail?: number | undefined
  /** What the model is told the tool does; default a sentence naming the agent and its URL. */
  readonly description?: string | undefined
}

/**
 * Something a remote task did on the way to its answer: a status update or an artifact chunk.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { A2AProgress } from "lambdagent/a2a"
 * const line = (p: A2AProgress) => `[a2a ${p.agent}] ${p.state ?? p.kind}: ${p.text}`
 * ```
 */
export interface A2AProgress {
  /** The client's name. */
  readonly agent: string
  readonly kind: "status" | "artifact"
  readonly taskId: string
  /** For a status update: the task's state (`working`, `input-required`, …). */
  readonly state?: string
  /** The update's text (the status message, or the artifact chunk). */
  readonly text: string
}

/**
 * Options of {@link a2aTool}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { A2AToolOptions } from "lambdagent/a2a"
 * const o: A2AToolOptions = { backoffMs: 500, onProgress: (p) => console.error(p.text) }
 * ```
 */
export interface A2AToolOptions {
  /** First retry delay in milliseconds (default 1000); doubles each retry. */
  readonly backoffMs?: number
  /** Longest retry delay in milliseconds (default 30 000). */
  readonly maxBackoffMs?: number
  /** Where `${VAR}` in headers is looked up; default `process.env`. */
  readonly env?: NodeJS.ProcessEnv
  /** Told of the remote task's progress. */
  readonly onProgress?: (progress: A2AProgress) => void
  /** The `fetch` to send requests with; default the global one. */
  readonly fetch?: typeof fetch
}

const DEFAULT_TIMEOUT_S = 60

/**
 * A tool input that answers a task waiting for input: the answer and the task's ids.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { TaskReply } from "lambdagent/a2a"
 * const r: TaskReply = { text: "Rome, in May", taskId: "t-1", contextId: "c-1" }
 * ```
 */
export interface TaskReply {
  readonly text: string
  readonly taskId?: string
  readonly contextId?: string
}

const TaskReplySchema = z
  .strictObject({ text: z.string(), taskId: z.string().min(1).optional(), contextId: z.string().min(1).optional() })
  .refine((r) => r.taskId !== undefined || r.contextId !== undefined)

/** The message a tool input becomes: text as text, a {@link TaskReply} as its text and ids, other JSON as data. */
const messageOf = (input: unknown): Message => {
  if (typeof input === "string") return message("user", [textPart(input)])
  const reply = TaskReplySchema.safeParse(input)
  if (reply.success) {
    return message("user", [textPart(reply.data.text)], {
      ...(reply.data.taskId !== undefined ? { taskId: reply.data.taskId } : {}),
      ...(reply.data.contextId !== undefined ? { contextId: reply.data.contextId } : {})
    })
  }
  return message("user", [dataPart(input ?? null)])
}

/** `${VAR}` in header values, from `env`; an unset variable is a `Configuration` error. */
const expandHeaders = (agent: string, headers: Readonly<Record<string, string>>, env: NodeJS.ProcessEnv): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(headers)) {
    out[key] = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const found = env[name]
      if (found === undefined) throw new A2AClientError({ agent, reason: "Configuration", message: `the header ${key} uses \${${name}}, which is not set` })
      return found
    })
  }
  return out
}

const stateName = (state: TaskState | undefined): string =>
  state === undefined
    ? "unknown"
    : (TaskState[state]
        ?.replace(/^TASK_STATE_/, "")
        .toLowerCase()
        .replace(/_/g, "-") ?? String(state))

/** What one attempt learned about the HTTP exchange of its call (the SDK's errors do not carry it). */
interface Exchange {
  url?: string
  status?: number
  networkError?: unknown
}

/** The outcome of a call: the task (or message) the remote agent ended with. */
type Outcome = { readonly task: Task } | { readonly message: Message }

/** Follows a task's events to its end: the latest task state and its artifacts, chunks appended. */
class TaskFollower {
  task: Task | undefined
  message: Message | undefined
  private readonly artifacts = new Map<string, Artifact>()

  constructor(
    private readonly agent: string,
    private readonly onProgress: ((p: A2AProgress) => void) | undefined
  ) {}

  get taskId(): string | undefined {
    return this.task?.id
  }

  /** Whether the task reached an end the client can answer with (final, or waiting for input). */
  get ended(): boolean {
    const state = this.task?.status?.state
    return this.message !== undefined || isFinalState(state) || state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED
  }

  take(event: StreamResponse): void {
    const payload = event.payload
    switch (payload?.$case) {
      case "message":
        this.message = payload.value
        break
      case "task":
        this.task = payload.value
        for (const artifact of payload.value.artifacts ?? []) this.artifacts.set(artifact.artifactId, artifact)
        break
      case "statusUpdate": {
        const update = payload.value
        if (this.task !== undefined) this.task = { ...this.task, status: update.status }
        else this.task = { id: update.taskId, contextId: update.contextId, status: update.status, artifacts: [], history: [], metadata: undefined }
        const parts = update.status?.message?.parts ?? []
        // a line of text says what happened; data beside it is for programs
        const text = partsText(parts.some((p) => p.content?.$case === "text") ? parts.filter((p) => p.content?.$case === "text") : parts)
        this.onProgress?.({ agent: this.agent, kind: "status", taskId: update.taskId, state: stateName(update.status?.state), text })
        break
      }
      case "artifactUpdate": {
        const { artifact, append, taskId } = payload.value
        if (artifact === undefined) break
        const known = this.artifacts.get(artifact.artifactId)
        this.artifacts.set(artifact.artifactId, append && known !== undefined ? { ...known, parts: [...known.parts, ...artifact.parts] } : artifact)
        this.onProgress?.({ agent: this.agent, kind: "artifact", taskId, text: partsText(artifact.parts) })
        break
      }
    }
  }

  outcome(): Outcome | undefined {
    if (this.message !== undefined) return { message: this.message }
    return this.task === undefined ? undefined : { task: { ...this.task, artifacts: [...this.artifacts.values()] } }
  }
}

/** The text an agent reads for an outcome. */
const answerOf = (agent: string, outcome: Outcome): string => {
  if ("message" in outcome) return partsText(outcome.message.parts)
  const task = outcome.task
  const state = task.status?.state
  const note = partsText(task.status?.message?.parts ?? [])
  switch (state) {
    case TaskState.TASK_STATE_COMPLETED: {
      const text = artifactsText(task.artifacts)
      return text !== "" ? text : note
    }
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return `[A2A_INPUT_REQUIRED: ${agent}: ${note !== "" ? note : "the agent needs more input"} (to answer, call ${agent} with ${JSON.stringify({ text: "…", taskId: task.id, contextId: task.contextId })})]`
    default:
      throw new A2AClientError({
        agent,
        reason: "TaskFailed",
        message: `the remote task ${task.id} ended ${stateName(state)}${note !== "" ? `: ${note}` : ""}`
      })
  }
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener("abort", done, { once: true })
  })

/**
 * Fetch the card of a client's agent as its calls would (the same headers, `${VAR}` expanded):
 * whether the agent can be reached and what it says it can do. Throws an `A2AClientError`.
 *
 * @since 0.2.0
 * @category client
 * @example
 * ```ts
 * import { probe } from "lambdagent/a2a"
 * const card = await probe({ name: "planner", url: "http://127.0.0.1:8000" }, { timeoutMs: 2000 })
 * console.log(card.skills.map((s) => s.name))
 * ```
 */
export const probe = (
  config: A2AClientConfig,
  options: { readonly timeoutMs?: number; readonly env?: NodeJS.ProcessEnv; readonly fetch?: typeof fetch } = {}
): Promise<RemoteCard> =>
  Promise.resolve().then(() =>
    fetchCard(config.url, {
      agent: config.name,
      headers: expandHeaders(config.name, config.headers ?? {}, options.env ?? process.env),
      timeoutMs: options.timeoutMs ?? (config.timeout ?? DEFAULT_TIMEOUT_S) * 1000,
      ...(options.fetch !== undefined ? { fetch: options.fetch } : {})
    })
  )

/**
 * A remote A2A agent as a tool (see the module documentation). The input is text (sent as a text
 * part), a {@link TaskReply} (an answer to a task waiting for input), or any other JSON (sent as a
 * data part); the output is the text of the task's artifacts.
 *
 * @since 0.2.0
 * @category client
 * @example
 * ```ts
 * import { createRuntime, Term } from "lambdagent"
 * import { a2aTool } from "lambdagent/a2a"
 * const planner = a2aTool({ name: "planner", url: "http://127.0.0.1:8000", timeout: 30, retryOnFail: 1 })
 * const runtime = createRuntime({ tools: [planner] })
 * const out = await runtime.run(Term.tool("planner"), "3 days in Rome")
 * console.log(out.value) // the remote agent's answer, or "[A2A_ERROR: planner: …]"
 * await runtime.close()
 * ```
 */
export const a2aTool = (config: A2AClientConfig, options: A2AToolOptions = {}): Tools.ToolDefinition<unknown> => {
  const agent = config.name
  const timeoutMs = (config.timeout ?? DEFAULT_TIMEOUT_S) * 1000
  const retries = Math.max(0, Math.floor(config.retryOnFail ?? 0))
  const baseBackoff = options.backoffMs ?? 1000
  const maxBackoff = options.maxBackoffMs ?? 30_000
  const delays = Array.from({ length: retries }, (_, i) => Math.min(baseBackoff * 2 ** i, maxBackoff))
  const baseFetch = options.fetch ?? fetch
  const exchanges = new WeakMap<AbortSignal, Exchange>()
  // the SDK hands each call's signal to fetch: the exchange of a call is found by its signal
  const observingFetch: typeof fetch = async (input, init) => {
    const exchange = init?.signal != null ? exchanges.get(init.signal) : undefined
    if (exchange !== undefined) exchange.url = input instanceof Request ? input.url : String(input)
    try {
      const response = await baseFetch(input, init)
      if (exchange !== undefined) exchange.status = response.status
      return response
    } catch (error) {
      if (exchange !== undefined) exchange.networkError = error
      throw error
    }
  }
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        new JsonRpcTransportFactory({ fetchImpl: observingFetch, legacyCompat: { enabled: true } }),
        new RestTransportFactory({ fetchImpl: observingFetch, legacyCompat: { enabled: true } })
      ]
    })
  )
  let connection: Promise<{ readonly card: RemoteCard; readonly client: Client }> | undefined

  const connect = (headers: Record<string, string>, signal: AbortSignal) => {
    connection ??= (async () => {
      const card = await fetchCard(config.url, { agent, headers, timeoutMs, signal, fetch: baseFetch })
      return { card, client: await factory.createFromAgentCard(card.card) }
    })()
    const pending = connection
    pending.catch(() => {
      if (connection === pending) connection = undefined
    })
    return pending
  }

  /** The typed error of a failed exchange with the card's endpoint. */
  const failureOf = (error: unknown, exchange: Exchange, endpoint: string, timedOut: boolean): A2AClientError => {
    if (error instanceof A2AClientError) return error
    const where = `the endpoint ${exchange.url ?? endpoint}`
    if (timedOut) return new A2AClientError({ agent, reason: "Timeout", message: `no answer in ${timeoutMs / 1000}s` })
    if (exchange.networkError !== undefined) {
      return new A2AClientError({
        agent,
        reason: "Unreachable",
        message: `${where} (named by the agent card) cannot be reached: ${networkDetail(exchange.networkError)}`,
        cause: error
      })
    }
    if (exchange.status !== undefined && exchange.status >= 400) {
      return new A2AClientError({
        agent,
        reason: "HttpStatus",
        status: exchange.status,
        message: `${where} answered HTTP ${exchange.status}${error instanceof A2AError ? `: ${error.message}` : ""}`,
        cause: error
      })
    }
    if (error instanceof A2AError)
      return new A2AClientError({ agent, reason: "Protocol", message: `the agent refused the request: ${error.message}`, cause: error })
    const detail = error instanceof Error ? error.message : String(error)
    return new A2AClientError({ agent, reason: "Protocol", message: `${where} did not answer as an A2A agent: ${detail.slice(0, 200)}`, cause: error })
  }

  const attempt = async (request: SendMessageRequest, headers: Record<string, string>, signal: AbortSignal): Promise<string> => {
    const timeout = AbortSignal.timeout(timeoutMs)
    const callSignal = AbortSignal.any([signal, timeout])
    const exchange: Exchange = {}
    exchanges.set(callSignal, exchange)
    const follower = new TaskFollower(agent, options.onProgress)
    let endpoint = config.url
    let client: Client | undefined
    try {
      const connected = await connect(headers, callSignal)
      endpoint = connected.card.endpoint
      client = connected.client
      for await (const event of client.sendMessageStream(request, { signal: callSignal, serviceParameters: headers })) {
        follower.take(event)
        if (follower.ended) break
      }
      const outcome = follower.outcome()
      if (outcome === undefined)
        throw new A2AClientError({ agent, reason: "Protocol", message: `the endpoint ${endpoint} ended the stream without a task or message` })
      if (!follower.ended) {
        throw new A2AClientError({
          agent,
          reason: "Protocol",
          message: `the stream ended with the task still ${stateName("task" in outcome ? outcome.task.status?.state : undefined)}`
        })
      }
      return answerOf(agent, outcome)
    } catch (error) {
      if (signal.aborted) throw signal.reason
      const failure = failureOf(error, exchange, endpoint, timeout.aborted)
      if (failure.reason === "Unreachable" || failure.reason === "HttpStatus") connection = undefined
      const taskId = follower.taskId
      if (failure.reason === "Timeout" && client !== undefined && taskId !== undefined && !follower.ended) {
        // do not leave the remote agent working on an answer nobody waits for
        await client
          .cancelTask({ tenant: "", id: taskId, metadata: undefined }, { signal: AbortSignal.timeout(2000), serviceParameters: headers })
          .catch(() => undefined)
      }
      throw failure
    }
  }

  const call = async (input: unknown, signal: AbortSignal): Promise<string> => {
    let headers: Record<string, string>
    try {
      headers = expandHeaders(agent, config.headers ?? {}, options.env ?? process.env)
    } catch (error) {
      return observationOf(error as A2AClientError)
    }
    const request: SendMessageRequest = { tenant: "", message: messageOf(input), configuration: undefined, metadata: undefined }
    let last: A2AClientError | undefined
    for (let i = 0; i <= retries; i++) {
      if (i > 0) {
        await sleep(delays[i - 1]!, signal)
        if (signal.aborted) break
      }
      try {
        // every attempt is a new message: the remote side sees one task per attempt
        return await attempt(i === 0 ? request : { ...request, message: { ...request.message!, messageId: randomUUID() } }, headers, signal)
      } catch (error) {
        if (!(error instanceof A2AClientError)) throw error
        last = error
        if (!isRetryable(error)) break
      }
    }
    return last === undefined ? `[A2A_ERROR: ${agent}: cancelled]` : observationOf(last)
  }

  return {
    name: agent,
    kind: "a2a",
    description: config.description ?? `The remote A2A agent ${agent} (${config.url}): give it a task as text; it answers with its result.`,
    source: `A2A ${config.url}`,
    input: z.unknown(),
    // the agent-side timeout must not cut a call short of its retries
    timeoutMs: (retries + 1) * timeoutMs + delays.reduce((a, b) => a + b, 0) + 5_000,
    run: (input, context) => call(input, context.signal)
  }
}
