/**
 * The wire protocol of `lambdagent serve`: reading run requests, encoding results and stream
 * events as JSON, and turning every failure into an `{ error: { kind, message } }` body with a
 * status code.
 *
 * @since 0.1.0
 * @module
 */
import * as Schema from "effect/Schema"
import { type Agent, Errors, type Trace } from "lambdagent"

/**
 * A run request, as sent in the body of `POST /run` and `POST /stream` or as a WebSocket message.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { RunRequest } from "lambdagent/http"
 * const r: RunRequest = { input: "hello", session: "alice", trace: "agent" }
 * ```
 */
export interface RunRequest {
  /** The agent's input: any JSON value. */
  readonly input: unknown
  /** Session id: memory and conversation histories are kept per session. Default `default`. */
  readonly session?: string
  /** Trace level of this run; default the runtime's. */
  readonly trace?: Trace.TraceLevel
  /** WebSocket only: the client's name for this run, repeated in every message about it. */
  readonly id?: string | number
}

/**
 * What a failed request answers: the `kind` names the failure (stable, for programs), the
 * `message` explains it (for people).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ErrorBody } from "lambdagent/http"
 * const body: ErrorBody = { error: { kind: "InvalidJson", message: "the body is not JSON: Unexpected token" } }
 * ```
 */
export interface ErrorBody {
  readonly error: {
    readonly kind: string
    readonly message: string
    readonly [detail: string]: unknown
  }
}

/**
 * A message the server sends on `/ws`: the events of `POST /stream` as JSON objects, each with
 * the `id` of its run.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { SocketMessage } from "lambdagent/http"
 * const show = (m: SocketMessage) => (m.type === "token" ? m.text : m.type)
 * ```
 */
export type SocketMessage =
  | { readonly type: "trace"; readonly id: string | number; readonly event: Trace.TraceEvent }
  | { readonly type: "token"; readonly id: string | number; readonly name: string; readonly text: string }
  | (Agent.ToolCallDelta & { readonly id: string | number })
  | {
      readonly type: "result"
      readonly id: string | number
      readonly result: unknown
      readonly trace: ReadonlyArray<Trace.TraceEvent>
      readonly stats: unknown
    }
  | {
      readonly type: "error"
      readonly id?: string | number
      readonly error: { readonly kind: string; readonly message: string; readonly status: number; readonly [detail: string]: unknown }
    }

/**
 * A request the server refuses or a run that failed, with the HTTP status it answers with.
 * `details` are added to the error body, `headers` to the response (for example
 * `WWW-Authenticate` on 401). A Schema-backed lambdagent error: it encodes as JSON and
 * `Errors.isLambdagentError` recognises it.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { HttpFailure } from "lambdagent/http"
 * const f = new HttpFailure({ status: 400, kind: "InvalidRequest", message: "input is required" })
 * console.log(f.status, f.body()) // 400 { error: { kind: "InvalidRequest", message: "input is required" } }
 * ```
 */
export class HttpFailure extends Errors.TaggedError<HttpFailure>()("HttpFailure", {
  status: Schema.Number,
  kind: Schema.String,
  message: Schema.String,
  /** Fields added to the error body (`{ limit }` for a body too large). */
  details: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
  /** Headers added to the response. */
  headers: Schema.optional(Schema.Record(Schema.String, Schema.String))
}) {
  /** The JSON body of this failure. */
  body(): ErrorBody {
    return { error: { kind: this.kind, message: this.message, ...this.details } }
  }
}

/**
 * Why the server cancelled a run: its time ran out, its client went away (or cancelled it), or
 * the server is shutting down. Used as the reason of the run's `AbortSignal`; a Schema-backed
 * lambdagent error.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { RunAborted } from "lambdagent/http"
 * const controller = new AbortController()
 * controller.abort(new RunAborted({ reason: "Timeout", message: "the run took longer than 30000 ms" }))
 * ```
 */
export class RunAborted extends Errors.TaggedError<RunAborted>()("RunAborted", {
  reason: Schema.Literals(["Timeout", "ClientClosed", "Cancelled", "ShuttingDown"]),
  message: Schema.String
}) {}

const traceLevels: ReadonlyArray<string> = ["off", "agent", "beta"]

/** Longest accepted session id. */
const maxSessionLength = 256

const describeType = (u: unknown): string => (u === null ? "null" : Array.isArray(u) ? "an array" : typeof u === "object" ? "an object" : `a ${typeof u}`)

const invalid = (message: string) => new HttpFailure({ status: 400, kind: "InvalidRequest", message })

/**
 * Check the shape of a run request: an object with `input`, and optionally a non-empty `session`
 * string and a `trace` level (`id` too when `allowId`). Unknown keys are refused, so a misspelt
 * field is an error rather than silently ignored. Fails with a 400 `InvalidRequest`.
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import { parseRunRequest } from "lambdagent/http"
 * parseRunRequest({ input: "hi", session: "alice" }) // { input: "hi", session: "alice" }
 * ```
 */
export const parseRunRequest = (body: unknown, options: { readonly allowId?: boolean } = {}): RunRequest => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalid(`expected a JSON object such as {"input": "hello"}, found ${describeType(body)}`)
  }
  const record = body as Record<string, unknown>
  const allowed = options.allowId === true ? ["input", "session", "trace", "id"] : ["input", "session", "trace"]
  const unknown = Object.keys(record).filter((key) => !allowed.includes(key))
  if (unknown.length > 0) {
    throw invalid(`unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k)).join(", ")}; accepted: ${allowed.join(", ")}`)
  }
  if (!("input" in record) || record.input === undefined) throw invalid('the field "input" is required (any JSON value)')
  const session = record.session
  if (session !== undefined) {
    if (typeof session !== "string") throw invalid(`"session" must be a string, found ${describeType(session)}`)
    if (session.length === 0 || session.length > maxSessionLength) {
      throw invalid(`"session" must be 1 to ${maxSessionLength} characters long`)
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    if (/[\u0000-\u001f\u007f]/.test(session)) throw invalid('"session" must not contain control characters')
  }
  const trace = record.trace
  if (trace !== undefined && (typeof trace !== "string" || !traceLevels.includes(trace))) {
    throw invalid(`"trace" must be one of ${traceLevels.map((l) => JSON.stringify(l)).join(", ")}`)
  }
  const id = record.id
  if (id !== undefined && typeof id !== "string" && !(typeof id === "number" && Number.isFinite(id))) {
    throw invalid(`"id" must be a string or a number, found ${describeType(id)}`)
  }
  return {
    input: record.input,
    ...(session !== undefined ? { session } : {}),
    ...(trace !== undefined ? { trace: trace as Trace.TraceLevel } : {}),
    ...(id !== undefined ? { id } : {})
  }
}

/**
 * Check the body of `POST /runs/:id/resume`: an object with the `answer` (any JSON value) to the
 * paused run's question, and nothing else. Fails with a 400 `InvalidRequest`.
 *
 * @since 0.2.0
 * @category parsing
 * @example
 * ```ts
 * import { parseResumeRequest } from "lambdagent/http"
 * parseResumeRequest({ answer: "yes" }) // { answer: "yes" }
 * ```
 */
export const parseResumeRequest = (body: unknown): { readonly answer: unknown } => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalid(`expected a JSON object such as {"answer": "yes"}, found ${describeType(body)}`)
  }
  const unknown = Object.keys(body).filter((key) => key !== "answer")
  if (unknown.length > 0) throw invalid(`unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k)).join(", ")}; accepted: answer`)
  if (!("answer" in body) || body.answer === undefined) throw invalid('the field "answer" is required (any JSON value): the answer to the run\'s question')
  return { answer: body.answer }
}

const tagOf = (u: unknown): string | undefined => (typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" ? u._tag : undefined)

const messageOf = (u: unknown): string => (typeof u === "object" && u !== null && "message" in u && typeof u.message === "string" ? u.message : String(u))

/**
 * The failure a thrown value answers with:
 *
 * - a refused request ({@link HttpFailure}) as itself;
 * - a cancelled run: `Timeout` 504, `ShuttingDown` 503, `Cancelled`/`ClientClosed` 499;
 * - a term-language error (`EvalError`, `BudgetExceeded`, `TermParseError`) 422, with the core's
 *   kind (`DivisionByZero`, `OracleError`, `BudgetExceeded`, …);
 * - a failed model provider (`ProviderError`, with its `reason`) or memory store (`MemoryError`)
 *   502, since the server's upstream failed;
 * - anything else 500 `Internal`, without its message (a bug; the caller logs it).
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { Errors } from "lambdagent"
 * import { failureOf } from "lambdagent/http"
 * const f = failureOf(new Errors.EvalError({ kind: "DivisionByZero", message: "division by zero", steps: 3 }))
 * console.log(f.status, f.kind) // 422 "DivisionByZero"
 * ```
 */
export const failureOf = (error: unknown): HttpFailure => {
  if (error instanceof HttpFailure) return error
  if (error instanceof RunAborted) {
    switch (error.reason) {
      case "Timeout":
        return new HttpFailure({ status: 504, kind: "Timeout", message: error.message })
      case "ShuttingDown":
        return new HttpFailure({ status: 503, kind: "ShuttingDown", message: error.message, headers: { "Retry-After": "5" } })
      case "Cancelled":
      case "ClientClosed":
        return new HttpFailure({ status: 499, kind: error.reason, message: error.message })
    }
  }
  if (Errors.isLambdaError(error)) {
    const { kind, message, ...details } = Errors.toJson(error)
    return new HttpFailure({ status: 422, kind, message, details })
  }
  switch (tagOf(error)) {
    case "ProviderError": {
      const reason = (error as { reason?: unknown }).reason
      return new HttpFailure({ status: 502, kind: "ProviderError", message: messageOf(error), details: typeof reason === "string" ? { reason } : {} })
    }
    case "MemoryError":
      return new HttpFailure({ status: 502, kind: "MemoryError", message: messageOf(error) })
  }
  return new HttpFailure({ status: 500, kind: "Internal", message: "internal server error" })
}
