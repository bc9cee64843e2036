/**
 * Why a call to a remote A2A agent failed, as one tagged error with a stable `reason`, and the
 * observation an agent reads instead of the answer: `[A2A_TIMEOUT: name: …]` for a timeout,
 * `[A2A_ERROR: name: …]` for everything else (the style of the MCP client's `[MCP_ERROR: …]`).
 *
 * @since 0.2.0
 * @module
 */
import * as Schema from "effect/Schema"
import { Errors } from "lambdagent"

/**
 * The kinds of failure of a remote call:
 *
 * - `Timeout`: no answer within the client's `timeout`;
 * - `Unreachable`: the card's server or the card's endpoint refused the connection, or the name
 *   does not resolve;
 * - `HttpStatus`: an HTTP error status (`status` says which);
 * - `MalformedCard`: the card is not JSON, or not an agent card, or names no endpoint this client
 *   speaks (JSON-RPC or HTTP+JSON);
 * - `Protocol`: the endpoint answered, but not as A2A, or with a JSON-RPC error;
 * - `TaskFailed`: the remote agent ran the task and it failed, was rejected or canceled;
 * - `Configuration`: the client's own settings are wrong (a header names an unset variable).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { A2AFailure } from "lambdagent/a2a"
 * const retryable = (r: A2AFailure) => r === "Timeout" || r === "Unreachable"
 * ```
 */
export type A2AFailure = typeof A2AFailure.Type

/**
 * The kinds of failure of a remote call, as a schema (see {@link A2AFailure} for what each means).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { A2AFailure } from "lambdagent/a2a"
 * A2AFailure.literals.includes("Timeout") // true
 * ```
 */
export const A2AFailure = Schema.Literals(["Timeout", "Unreachable", "HttpStatus", "MalformedCard", "Protocol", "TaskFailed", "Configuration"])

/**
 * A failed call to a remote A2A agent: a Schema-backed lambdagent error, so it encodes as JSON
 * and `Errors.isLambdagentError` recognises it.
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { A2AClientError } from "lambdagent/a2a"
 * const e = new A2AClientError({ agent: "planner", reason: "HttpStatus", status: 503, message: "the endpoint answered HTTP 503" })
 * ```
 */
export class A2AClientError extends Errors.TaggedError<A2AClientError>()("A2AClientError", {
  /** The client's name (the tool's name). */
  agent: Schema.String,
  reason: A2AFailure,
  message: Schema.String,
  /** For `HttpStatus`: the status. */
  status: Schema.optional(Schema.Number),
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * Whether another attempt may succeed: timeouts, unreachable servers, HTTP 408, 429 and 5xx.
 *
 * @since 0.2.0
 * @category predicates
 * @example
 * ```ts
 * import { A2AClientError, isRetryable } from "lambdagent/a2a"
 * isRetryable(new A2AClientError({ agent: "a", reason: "HttpStatus", status: 503, message: "HTTP 503" })) // true
 * isRetryable(new A2AClientError({ agent: "a", reason: "HttpStatus", status: 404, message: "HTTP 404" })) // false
 * ```
 */
export const isRetryable = (error: A2AClientError): boolean =>
  error.reason === "Timeout" ||
  error.reason === "Unreachable" ||
  (error.reason === "HttpStatus" && error.status !== undefined && (error.status >= 500 || error.status === 408 || error.status === 429))

/**
 * The observation an agent reads for a failed call.
 *
 * @since 0.2.0
 * @category encoding
 * @example
 * ```ts
 * import { A2AClientError, observationOf } from "lambdagent/a2a"
 * observationOf(new A2AClientError({ agent: "planner", reason: "Timeout", message: "no answer in 60s" }))
 * // "[A2A_TIMEOUT: planner: no answer in 60s]"
 * ```
 */
export const observationOf = (error: A2AClientError): string =>
  `[${error.reason === "Timeout" ? "A2A_TIMEOUT" : "A2A_ERROR"}: ${error.agent}: ${error.message}]`
