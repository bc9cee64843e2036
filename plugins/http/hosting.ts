/**
 * What every agent server on `node:http` needs besides its protocol, shared by `lambdagent serve`
 * over HTTP and over A2A: checking the agent and the numeric options, listening with a clear error,
 * the warnings worth printing at start, and a command's life until SIGTERM or SIGINT.
 *
 * @since 0.2.0
 * @module
 */
import type * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Schema from "effect/Schema"
import { Errors, HostGuard, type Term } from "lambdagent"

const isTerm = (u: unknown): u is Term.Term => typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string"

/**
 * The agent of a server as a function called for every run; throws a `TypeError` at once when it is
 * neither a term nor a function, and at the call when the function returns no term.
 *
 * @since 0.2.0
 * @category hosting
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { agentOf } from "lambdagent/http"
 * const term = agentOf(Term.llm({ system: "Hi." }))()
 * ```
 */
export const agentOf = (agent: Term.Term | (() => Term.Term)): (() => Term.Term) => {
  if (typeof agent !== "function") {
    if (!isTerm(agent)) throw new TypeError("serve: agent must be a term or a function returning one")
    return () => agent
  }
  return () => {
    const term = agent()
    if (!isTerm(term)) throw new TypeError("serve: the agent function did not return a term")
    return term
  }
}

/**
 * Check an integer option of a server (`TypeError` when it is not an integer from `min` to `max`).
 *
 * @since 0.2.0
 * @category hosting
 * @example
 * ```ts
 * import { checkIntegerOption } from "lambdagent/http"
 * checkIntegerOption("port", 8080, 0, 65_535) // passes
 * ```
 */
export const checkIntegerOption = (name: string, value: number | undefined, min: number, max = Number.MAX_SAFE_INTEGER): void => {
  if (value !== undefined && (!Number.isInteger(value) || value < min || value > max)) {
    throw new TypeError(`serve: ${name} must be an integer from ${min} to ${max}, got ${String(value)}`)
  }
}

/**
 * A server could not listen: the address is taken, the port needs privileges, the host is not an
 * address of this machine. Its `_tag` names it in the command line's one-line errors; the
 * operating system's error is its `cause`.
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { ListenError } from "lambdagent/http"
 * const e = new ListenError({ message: "cannot listen on 127.0.0.1:8080: the address is already in use" })
 * console.log(e._tag) // "ListenError"
 * ```
 */
export class ListenError extends Errors.TaggedError<ListenError>()("ListenError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * Listen on `host:port` (0: a free port) and resolve with the port; a failure rejects with a
 * {@link ListenError} saying why (`cannot listen on 127.0.0.1:8080: the address is already in use`).
 *
 * @since 0.2.0
 * @category hosting
 * @example
 * ```ts
 * import { createServer } from "node:http"
 * import { listen } from "lambdagent/http"
 * const port = await listen(createServer(), 0, "127.0.0.1")
 * ```
 */
export const listen = async (server: http.Server, port: number, host: string): Promise<number> => {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(port, host, () => {
        server.off("error", reject)
        resolve()
      })
    })
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code
    const why = code === "EADDRINUSE" ? "the address is already in use" : code === "EACCES" ? "permission denied" : (cause as Error).message
    throw new ListenError({ message: `cannot listen on ${host}:${port}: ${why}`, cause })
  }
  return (server.address() as AddressInfo).port
}

/**
 * The warnings worth printing when a server starts: an address other machines reach without a
 * token, and a wildcard address whose names the `Host` check does not know.
 *
 * @since 0.2.0
 * @category hosting
 * @example
 * ```ts
 * import { startupWarnings } from "lambdagent/http"
 * startupWarnings("0.0.0.0", {}).length // 2
 * ```
 */
export const startupWarnings = (
  host: string,
  options: { readonly token?: string | undefined; readonly allowedHosts?: ReadonlyArray<string> | undefined }
): Array<string> => [
  ...(options.token === undefined && !HostGuard.isLoopbackAddress(host)
    ? [`warning: listening on ${host} without a token; anyone who can reach this port can run the agent`]
    : []),
  ...(HostGuard.isWildcardAddress(host) && (options.allowedHosts ?? []).length === 0
    ? [`note: listening on ${host}, but only requests addressed to 127.0.0.1, localhost or [::1] are accepted; add the names clients use with --allow-host`]
    : [])
]

/**
 * Where a server command prints and when it stops.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CommandControl } from "lambdagent/http"
 * const c: CommandControl = { out: (line) => console.log(line), handleSignals: false }
 * ```
 */
export interface CommandControl {
  /** Status lines; default standard output. */
  readonly out?: (line: string) => void
  /** Warnings and errors; default standard error. */
  readonly err?: (line: string) => void
  /** Print one line per request; default true. */
  readonly accessLog?: boolean
  /** Shut down on SIGTERM and SIGINT; default true. */
  readonly handleSignals?: boolean
  /** Shut down when this signal aborts. */
  readonly signal?: AbortSignal
}

/**
 * Keep a server until SIGTERM or SIGINT (or `signal`), then close it gracefully, letting the runs
 * in flight finish for `graceMs`; a second signal cancels them at once. Prints what it does on
 * `out` (`lambdagent serve: SIGTERM; shutting down…`, then `lambdagent serve: stopped`).
 *
 * @since 0.2.0
 * @category hosting
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { serve, serveUntilStopped } from "lambdagent/http"
 * const server = await serve({ agent: Term.llm({ system: "Hi." }) })
 * await serveUntilStopped(server, { graceMs: 10_000, out: (line) => console.log(line) })
 * ```
 */
export const serveUntilStopped = async (
  server: { readonly inFlight: number; readonly close: (options?: { readonly graceMs?: number }) => Promise<void> },
  options: Omit<CommandControl, "err" | "accessLog"> & { readonly graceMs: number; readonly out: (line: string) => void }
): Promise<void> => {
  const { graceMs, out, signal } = options
  let stops = 0
  let stopping!: () => void
  const stopRequested = new Promise<void>((resolve) => (stopping = resolve))
  const stop = (why: string) => {
    stops++
    if (stops === 1) {
      const n = server.inFlight
      out(`lambdagent serve: ${why}; shutting down${n > 0 ? `, letting ${n} run${n === 1 ? "" : "s"} finish (up to ${graceMs} ms)` : ""}`)
      stopping()
    } else if (stops === 2) {
      out(`lambdagent serve: ${why} again; cancelling the runs in flight`)
      void server.close({ graceMs: 0 })
    }
  }
  const onTerm = () => stop("SIGTERM")
  const onInt = () => stop("SIGINT")
  const onAbort = () => stop("stop requested")
  if (options.handleSignals !== false) {
    process.on("SIGTERM", onTerm)
    process.on("SIGINT", onInt)
  }
  if (signal?.aborted === true) onAbort()
  else signal?.addEventListener("abort", onAbort, { once: true })
  try {
    await stopRequested
    await server.close()
  } finally {
    process.off("SIGTERM", onTerm)
    process.off("SIGINT", onInt)
    signal?.removeEventListener("abort", onAbort)
  }
  out("lambdagent serve: stopped")
}
