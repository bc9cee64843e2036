/**
 * The one retry, timeout, cancellation and error-mapping policy shared by every provider.
 *
 * Providers hand this module a function that starts one attempt (given an `AbortSignal`); it adds a
 * per-attempt timeout, retries transient failures with exponential backoff (honouring `Retry-After`),
 * aborts the request when the calling fiber is interrupted, and maps whatever the SDK threw to a
 * {@link ProviderError} with a stable `reason` and a message that never contains a secret.
 *
 * @since 0.1.0
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type ChatChunk, ProviderError, type ProviderErrorReason } from "../../LanguageModel.ts"

/**
 * Timeout and retry settings accepted by every network provider.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Providers } from "lambdagent"
 * const fast: Providers.ResilienceOptions = { timeoutMs: 10_000, maxRetries: 1 }
 * ```
 */
export interface ResilienceOptions {
  /** Milliseconds one attempt may take (for streams: to connect, and between two chunks). Default 60 000. */
  readonly timeoutMs?: number
  /** Retries after the first attempt, for `RateLimited`, `Server` and `Network` failures only. Default 3. */
  readonly maxRetries?: number
  /** First backoff delay in milliseconds; doubles on every retry. Default 500. */
  readonly backoffBaseMs?: number
  /** Upper bound of any single delay, `Retry-After` included. Default 30 000. */
  readonly backoffMaxMs?: number
}

/**
 * {@link ResilienceOptions} with every default filled in.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import * as Resilience from "./resilience.ts"
 * const p: Resilience.Policy = { timeoutMs: 1_000, maxRetries: 0, backoffBaseMs: 10, backoffMaxMs: 100 }
 * ```
 */
export interface Policy {
  readonly timeoutMs: number
  readonly maxRetries: number
  readonly backoffBaseMs: number
  readonly backoffMaxMs: number
}

/**
 * The defaults documented on {@link ResilienceOptions}: 60 s timeout, 3 retries, 500 ms base, 30 s cap.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import * as Resilience from "./resilience.ts"
 * console.log(Resilience.defaultPolicy.maxRetries) // 3
 * ```
 */
export const defaultPolicy: Policy = { timeoutMs: 60_000, maxRetries: 3, backoffBaseMs: 500, backoffMaxMs: 30_000 }

const nonNegative = (value: number | undefined, fallback: number): number => (value === undefined || !Number.isFinite(value) || value < 0 ? fallback : value)

/**
 * Fill in defaults; negative or non-finite values fall back to the default.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import * as Resilience from "./resilience.ts"
 * const p = Resilience.policy({ timeoutMs: 5_000 }) // other fields from defaultPolicy
 * const cli = Resilience.policy({}, { ...Resilience.defaultPolicy, maxRetries: 0 }) // other defaults
 * ```
 */
export const policy = (options: ResilienceOptions | undefined, defaults: Policy = defaultPolicy): Policy => ({
  timeoutMs: nonNegative(options?.timeoutMs, defaults.timeoutMs),
  maxRetries: Math.floor(nonNegative(options?.maxRetries, defaults.maxRetries)),
  backoffBaseMs: nonNegative(options?.backoffBaseMs, defaults.backoffBaseMs),
  backoffMaxMs: nonNegative(options?.backoffMaxMs, defaults.backoffMaxMs)
})

/**
 * Whether a failure is worth another attempt: only `RateLimited`, `Server` and `Network` are.
 *
 * @since 0.1.0
 * @category predicates
 * @example
 * ```ts
 * import { LanguageModel } from "lambdagent"
 * import * as Resilience from "./resilience.ts"
 * Resilience.isRetryable(new LanguageModel.ProviderError({ provider: "p", reason: "Auth", message: "" })) // false
 * ```
 */
export const isRetryable = (error: ProviderError): boolean => error.reason === "RateLimited" || error.reason === "Server" || error.reason === "Network"

/**
 * Delay before retry number `attempt + 1` (`attempt` counts from 0): the server's `Retry-After` when it
 * sent one, otherwise `backoffBaseMs * 2^attempt`; either way at most `backoffMaxMs`.
 *
 * @since 0.1.0
 * @category utils
 * @example
 * ```ts
 * import { LanguageModel } from "lambdagent"
 * import * as Resilience from "./resilience.ts"
 * const e = new LanguageModel.ProviderError({ provider: "p", reason: "Server", message: "" })
 * Resilience.retryDelayMs(Resilience.defaultPolicy, 2, e) // 2000
 * ```
 */
export const retryDelayMs = (p: Policy, attempt: number, error: ProviderError): number => {
  const wanted = error.retryAfter !== undefined ? error.retryAfter * 1000 : p.backoffBaseMs * 2 ** attempt
  return Math.min(p.backoffMaxMs, Math.max(0, wanted))
}

/**
 * Seconds to wait from `retry-after-ms` (OpenAI) or `retry-after` (seconds or an HTTP date);
 * `undefined` when absent or unreadable.
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import * as Resilience from "./resilience.ts"
 * Resilience.parseRetryAfter(new Headers({ "retry-after": "3" })) // 3
 * ```
 */
export const parseRetryAfter = (headers: { readonly get: (name: string) => string | null } | undefined, now: number = Date.now()): number | undefined => {
  if (headers === undefined) return undefined
  const ms = headers.get("retry-after-ms")
  if (ms !== null && ms.trim() !== "") {
    const n = Number(ms)
    if (Number.isFinite(n) && n >= 0) return n / 1000
  }
  const value = headers.get("retry-after")
  if (value === null || value.trim() === "") return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds : undefined
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000)
}

/**
 * What a provider call needs to know to apply the policy and describe its failures.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import * as Resilience from "./resilience.ts"
 * const caller: Resilience.Caller = { provider: "openai", policy: Resilience.policy({}), secrets: ["sk-…"], keyEnv: "OPENAI_API_KEY" }
 * ```
 */
export interface Caller {
  readonly provider: string
  readonly policy: Policy
  /** Strings that must never appear in an error message (API keys). */
  readonly secrets: ReadonlyArray<string>
  /** The environment variable holding the key, named in `Auth` messages. */
  readonly keyEnv?: string
  /** The SDK's error classes, to recognise its errors with `instanceof` (their `name` is just "Error"). */
  readonly errors?: SdkErrors | undefined
}

type ErrorClass = abstract new (...args: Array<any>) => Error

/**
 * The error classes both official SDKs (Stainless-generated) export as statics of their client.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import OpenAI from "openai"
 * import type * as Resilience from "./resilience.ts"
 * const errors: Resilience.SdkErrors = OpenAI
 * ```
 */
export interface SdkErrors {
  readonly APIError: ErrorClass
  readonly APIConnectionError: ErrorClass
  readonly APIConnectionTimeoutError: ErrorClass
  readonly APIUserAbortError: ErrorClass
}

const isInstance = (u: unknown, c: ErrorClass): boolean => u instanceof c

type SdkKind = "timeout" | "connection" | "abort" | "api" | undefined

/** Which SDK error this is, by class when the caller gave the classes, else by name. */
const sdkKind = (caller: Caller, error: unknown): SdkKind => {
  const classes = caller.errors
  if (classes !== undefined) {
    if (isInstance(error, classes.APIConnectionTimeoutError)) return "timeout"
    if (isInstance(error, classes.APIConnectionError)) return "connection"
    if (isInstance(error, classes.APIUserAbortError)) return "abort"
    if (isInstance(error, classes.APIError)) return "api"
  }
  switch (errorName(error)) {
    case "APIConnectionTimeoutError":
      return "timeout"
    case "APIConnectionError":
      return "connection"
    case "APIUserAbortError":
    case "AbortError":
      return "abort"
    case "APIError":
      return "api"
    default:
      return undefined
  }
}

const secretPatterns: ReadonlyArray<RegExp> = [/\b(Bearer)\s+[A-Za-z0-9._~+/=-]{6,}/g, /\bsk-[A-Za-z0-9_*-]{6,}/g]

/**
 * Remove the caller's secrets, bearer tokens and `sk-…` keys from a text.
 *
 * @since 0.1.0
 * @category utils
 * @example
 * ```ts
 * import * as Resilience from "./resilience.ts"
 * Resilience.redact("key abc123 rejected", ["abc123"]) // "key [redacted] rejected"
 * ```
 */
export const redact = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = text
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join("[redacted]")
  }
  for (const pattern of secretPatterns) {
    out = out.replace(pattern, (_match, bearer?: string) => (bearer === "Bearer" ? "Bearer [redacted]" : "[redacted]"))
  }
  return out
}

/**
 * Build a {@link ProviderError} whose message starts with the provider name, names the key's
 * environment variable for `Auth`, and is redacted.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import * as Resilience from "./resilience.ts"
 * const caller: Resilience.Caller = { provider: "deepseek", policy: Resilience.defaultPolicy, secrets: [], keyEnv: "DEEPSEEK_API_KEY" }
 * Resilience.fail(caller, "Auth", "rejected").message // "deepseek: rejected (check DEEPSEEK_API_KEY)"
 * ```
 */
export const fail = (
  caller: Caller,
  reason: ProviderErrorReason,
  message: string,
  extra?: { readonly status?: number; readonly retryAfter?: number; readonly cause?: unknown }
): ProviderError => {
  const hint = reason === "Auth" && caller.keyEnv !== undefined && !message.includes(caller.keyEnv) ? ` (check ${caller.keyEnv})` : ""
  return new ProviderError({
    provider: caller.provider,
    reason,
    message: redact(`${caller.provider}: ${message}${hint}`, caller.secrets),
    ...(extra?.status !== undefined ? { status: extra.status } : {}),
    ...(extra?.retryAfter !== undefined ? { retryAfter: extra.retryAfter } : {}),
    ...(extra?.cause !== undefined ? { cause: extra.cause } : {})
  })
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const errorName = (u: unknown): string => (isObject(u) && typeof u["name"] === "string" ? u["name"] : "")

const errorMessage = (u: unknown): string => (u instanceof Error ? u.message : isObject(u) && typeof u["message"] === "string" ? u["message"] : String(u))

/** The messages of an error and its causes, most specific last: "fetch failed: connect ECONNREFUSED …". */
const causeChain = (error: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = error
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const message = errorMessage(current).trim()
    if (message !== "" && !parts.includes(message) && message !== "Connection error.") parts.push(message)
    current = isObject(current) ? current["cause"] : undefined
  }
  return parts.length === 0 ? "connection error" : parts.join(": ")
}

/** A copy of a foreign error that keeps its name and (redacted) message but nothing else. */
const sanitizedCause = (error: unknown, secrets: ReadonlyArray<string>): Error => {
  const copy = new Error(redact(errorMessage(error), secrets))
  const name = errorName(error)
  if (name !== "") copy.name = name
  return copy
}

/** Does this error (or one of its causes) look like a connection cut off while reading a body? */
const isTruncation = (error: unknown): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 4 && isObject(current); depth++) {
    const code = current["code"]
    const message = errorMessage(current)
    if (
      code === "UND_ERR_SOCKET" ||
      code === "ECONNRESET" ||
      code === "UND_ERR_BODY_TIMEOUT" ||
      message === "terminated" ||
      /premature close|other side closed/i.test(message)
    )
      return true
    current = current["cause"]
  }
  return false
}

/** In-stream `error` events carry an error type but no HTTP status. */
const reasonOfErrorType = (type: string): ProviderErrorReason | undefined => {
  switch (type) {
    case "overloaded_error":
    case "api_error":
    case "server_error":
      return "Server"
    case "rate_limit_error":
      return "RateLimited"
    case "authentication_error":
    case "permission_error":
      return "Auth"
    case "invalid_request_error":
      return "BadRequest"
    default:
      return undefined
  }
}

const errorTypeOf = (error: Record<string, unknown>): string => {
  if (typeof error["type"] === "string") return error["type"]
  const body = error["error"]
  if (isObject(body)) {
    if (typeof body["type"] === "string") return body["type"]
    const inner = body["error"]
    if (isObject(inner) && typeof inner["type"] === "string") return inner["type"]
  }
  return ""
}

/** The server's own words for an HTTP error, if it sent any. */
const apiMessageOf = (error: Record<string, unknown>): string => {
  const body = error["error"]
  if (isObject(body)) {
    if (typeof body["message"] === "string") return body["message"]
    const inner = body["error"]
    if (isObject(inner) && typeof inner["message"] === "string") return inner["message"]
  }
  return errorMessage(error)
}

/**
 * Map anything an SDK (or our own parsing) threw to a {@link ProviderError}: 401/403 → `Auth`,
 * 429 → `RateLimited` (with `retryAfter`), 5xx → `Server`, other 4xx → `BadRequest`, connection
 * errors → `Network`, malformed or cut-off bodies → `BadResponse`. Works on the Stainless error
 * classes both official SDKs use (by class when `caller.errors` is set, else by shape).
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import * as Resilience from "./resilience.ts"
 * const caller: Resilience.Caller = { provider: "p", policy: Resilience.defaultPolicy, secrets: [] }
 * Resilience.toProviderError(caller, new SyntaxError("Unexpected end of JSON input")).reason // "BadResponse"
 * ```
 */
export const toProviderError = (caller: Caller, error: unknown): ProviderError => {
  if (error instanceof ProviderError) return error
  const cause = sanitizedCause(error, caller.secrets)
  const kind = sdkKind(caller, error)
  if (kind === "timeout") {
    return fail(caller, "Timeout", "the request timed out", { cause })
  }
  if (kind === "connection") {
    return fail(caller, "Network", `connection failed: ${causeChain(error)}`, { cause })
  }
  if (kind === "abort") {
    return fail(caller, "Network", "the request was aborted", { cause })
  }
  if (isObject(error) && typeof error["status"] === "number") {
    const status = error["status"]
    const detail = apiMessageOf(error)
    const headers = error["headers"]
    const retryAfter =
      isObject(headers) && typeof headers["get"] === "function" ? parseRetryAfter(headers as unknown as { get: (name: string) => string | null }) : undefined
    const extra = { status, cause, ...(retryAfter !== undefined ? { retryAfter } : {}) }
    if (status === 401 || status === 403) return fail(caller, "Auth", `authentication failed (HTTP ${status}): ${detail}`, extra)
    if (status === 429) return fail(caller, "RateLimited", `rate limited (HTTP 429): ${detail}`, extra)
    if (status >= 500) return fail(caller, "Server", `server error (HTTP ${status}): ${detail}`, extra)
    if (status >= 400) return fail(caller, "BadRequest", `request rejected (HTTP ${status}): ${detail}`, extra)
    return fail(caller, "BadResponse", `unexpected HTTP status ${status}: ${detail}`, extra)
  }
  if (kind === "api" && isObject(error)) {
    const type = errorTypeOf(error)
    const reason = reasonOfErrorType(type) ?? "BadResponse"
    return fail(caller, reason, `error event in the response${type !== "" ? ` (${type})` : ""}: ${apiMessageOf(error)}`, { cause })
  }
  if (error instanceof SyntaxError) {
    return fail(caller, "BadResponse", `malformed response body: ${error.message}`, { cause })
  }
  if (isTruncation(error)) {
    return fail(caller, "BadResponse", "the response was cut off before it was complete", { cause })
  }
  if (/authentication|api key|apikey/i.test(errorMessage(error))) {
    return fail(caller, "Auth", errorMessage(error), { cause })
  }
  if (isObject(error) && typeof error["code"] === "string" && /^E(CONNREFUSED|NOTFOUND|AI_AGAIN|HOSTUNREACH|NETUNREACH)$/.test(error["code"])) {
    return fail(caller, "Network", `connection failed: ${errorMessage(error)}`, { cause })
  }
  return fail(caller, "BadResponse", `unexpected failure: ${errorMessage(error)}`, { cause })
}

/**
 * Create an SDK client on first use, importing the SDK only then (so that importing lambdagent does
 * not load every SDK). The promise is kept; a package that cannot be loaded is reason `Unavailable`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import * as Resilience from "./resilience.ts"
 * const caller: Resilience.Caller = { provider: "openai", policy: Resilience.defaultPolicy, secrets: [] }
 * const client = Resilience.lazy(caller, "openai", async () => new (await import("openai")).default({ apiKey: "k" }))
 * ```
 */
export const lazy = <A>(caller: Caller, packageName: string, create: () => Promise<A>): (() => Promise<A>) => {
  let promise: Promise<A> | undefined
  return () =>
    (promise ??= create().catch((error: unknown) => {
      throw fail(caller, "Unavailable", `cannot load the "${packageName}" package: ${errorMessage(error)}`, {
        cause: sanitizedCause(error, caller.secrets)
      })
    }))
}

const timeoutError = (caller: Caller): ProviderError => fail(caller, "Timeout", `no answer within ${caller.policy.timeoutMs} ms`)

/**
 * Apply the per-attempt timeout: the attempt is interrupted when it fires, and the call fails with
 * reason `Timeout`.
 *
 * @since 0.1.0
 * @category combinators
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import * as Resilience from "./resilience.ts"
 * const caller: Resilience.Caller = { provider: "p", policy: Resilience.policy({ timeoutMs: 10 }), secrets: [] }
 * const timedOut = Resilience.withTimeout(caller, Effect.never) // fails with reason "Timeout"
 * ```
 */
export const withTimeout = <A>(caller: Caller, attempt: Effect.Effect<A, ProviderError>): Effect.Effect<A, ProviderError> =>
  Effect.timeoutOrElse(attempt, {
    duration: caller.policy.timeoutMs,
    orElse: () => Effect.fail(timeoutError(caller))
  })

/**
 * Retry `RateLimited`, `Server` and `Network` failures with backoff (see {@link retryDelayMs}), up to
 * `maxRetries` times; other failures are returned at once.
 *
 * @since 0.1.0
 * @category combinators
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import * as Resilience from "./resilience.ts"
 * const caller: Resilience.Caller = { provider: "p", policy: Resilience.defaultPolicy, secrets: [] }
 * const retried = Resilience.withRetry(caller.policy, Effect.fail(Resilience.fail(caller, "Server", "503")))
 * ```
 */
export const withRetry = <A>(p: Policy, attempt: Effect.Effect<A, ProviderError>): Effect.Effect<A, ProviderError> => {
  const loop = (n: number): Effect.Effect<A, ProviderError> =>
    Effect.catch(attempt, (error) =>
      n < p.maxRetries && isRetryable(error) ? Effect.flatMap(Effect.sleep(retryDelayMs(p, n, error)), () => loop(n + 1)) : Effect.fail(error)
    )
  return loop(0)
}

/**
 * The whole policy around an Effect: timeout each attempt, then retry.
 *
 * @since 0.1.0
 * @category combinators
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import * as Resilience from "./resilience.ts"
 * const caller: Resilience.Caller = { provider: "p", policy: Resilience.defaultPolicy, secrets: [] }
 * const call = Resilience.resilient(caller, Effect.succeed("ok"))
 * ```
 */
export const resilient = <A>(caller: Caller, attempt: Effect.Effect<A, ProviderError>): Effect.Effect<A, ProviderError> =>
  withRetry(caller.policy, withTimeout(caller, attempt))

/**
 * One resilient request: `run` receives an `AbortSignal` that fires when the attempt times out or the
 * calling fiber is interrupted; pass it to the SDK so the HTTP request is aborted. Whatever `run`
 * throws is mapped by {@link toProviderError}.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import * as Resilience from "./resilience.ts"
 * const caller: Resilience.Caller = { provider: "p", policy: Resilience.defaultPolicy, secrets: [] }
 * const get = Resilience.request(caller, (signal) => fetch("http://127.0.0.1:8080/", { signal }).then((r) => r.text()))
 * ```
 */
export const request = <A>(caller: Caller, run: (signal: AbortSignal) => Promise<A>): Effect.Effect<A, ProviderError> =>
  resilient(caller, Effect.tryPromise({ try: run, catch: (error) => toProviderError(caller, error) }))

/**
 * Turns a provider's raw stream events into chunks. `push` appends zero or more chunks for one event;
 * `end` runs when the body ends and must append the final `Finish` chunk, or throw a
 * {@link ProviderError} (reason `BadResponse`) when the stream stopped before the model finished.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type * as Resilience from "./resilience.ts"
 * const lines: Resilience.Decoder<string> = {
 *   push: (line, out) => void out.push({ _tag: "TextDelta", text: line }),
 *   end: (out) => void out.push({ _tag: "Finish" })
 * }
 * ```
 */
export interface Decoder<Event> {
  readonly push: (event: Event, out: Array<ChatChunk>) => void
  readonly end: (out: Array<ChatChunk>) => void
}

/**
 * A resilient streamed request. Connecting (until the response headers arrive) is retried like
 * {@link request}; once chunks flow, nothing is retried. The timeout also bounds the wait for each
 * next event. Interrupting the stream, or stopping to consume it, aborts the HTTP request.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import * as Resilience from "./resilience.ts"
 * const caller: Resilience.Caller = { provider: "p", policy: Resilience.defaultPolicy, secrets: [] }
 * const chunks = Resilience.stream(
 *   caller,
 *   async () => (async function*() { yield "Hello" })(),
 *   () => ({ push: (t, out) => void out.push({ _tag: "TextDelta", text: t }), end: (out) => void out.push({ _tag: "Finish" }) })
 * )
 * ```
 */
export const stream = <Event>(
  caller: Caller,
  connect: (signal: AbortSignal) => Promise<AsyncIterable<Event>>,
  makeDecoder: () => Decoder<Event>
): Stream.Stream<ChatChunk, ProviderError> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const controller = yield* Effect.acquireRelease(
        Effect.sync(() => new AbortController()),
        (c) => Effect.sync(() => c.abort())
      )
      const events = yield* request(caller, (signal) => connect(AbortSignal.any([signal, controller.signal])))
      const iterator = events[Symbol.asyncIterator]()
      const decoder = makeDecoder()
      let ended = false
      const next = Effect.tryPromise({
        try: async (): Promise<Array<ChatChunk>> => {
          const out: Array<ChatChunk> = []
          while (out.length === 0 && !ended) {
            const result = await iterator.next()
            if (controller.signal.aborted) break
            if (result.done === true) {
              ended = true
              decoder.end(out)
            } else {
              decoder.push(result.value, out)
            }
          }
          return out
        },
        catch: (error) => toProviderError(caller, error)
      })
      const pull = Effect.flatMap(
        Effect.timeoutOrElse(next, {
          duration: caller.policy.timeoutMs,
          orElse: () =>
            Effect.andThen(
              Effect.sync(() => controller.abort()),
              Effect.fail(timeoutError(caller))
            )
        }),
        (out) => (out.length === 0 ? Cause.done() : Effect.succeed(out as unknown as readonly [ChatChunk, ...Array<ChatChunk>]))
      )
      return Stream.fromPull(Effect.succeed(pull))
    })
  )
