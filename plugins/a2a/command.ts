/**
 * The work behind `lambdagent serve <config> --a2a`: start the A2A server, print where it listens
 * (the line a supervisor waits for) and one line per request, and shut down gracefully on SIGTERM
 * or SIGINT (a second signal cancels the runs still in flight).
 *
 * @since 0.2.0
 * @module
 */
import { isLoopbackAddress, isWildcardAddress } from "lambdagent/http"
import { defaults, type RequestLog, serve, type ServeOptions } from "./server.ts"

/**
 * Options of {@link serveCommand}: those of `serve`, plus where to print and when to stop.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import type { ServeCommandOptions } from "lambdagent/a2a"
 * const o: ServeCommandOptions = { agent: Term.llm({ system: "Hi." }), port: 8000, accessLog: false }
 * ```
 */
export interface ServeCommandOptions extends ServeOptions {
  /** Status lines; default standard output. */
  readonly out?: (line: string) => void
  /** Warnings; default standard error. */
  readonly err?: (line: string) => void
  /** Print one line per request; default true. */
  readonly accessLog?: boolean
  /** Shut down on SIGTERM and SIGINT; default true. */
  readonly handleSignals?: boolean
  /** Shut down when this signal aborts. */
  readonly signal?: AbortSignal
}

/**
 * Port of `lambdagent serve --a2a` when neither `--port` nor `a2a.server.port` gives one.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { defaultCommandPort } from "lambdagent/a2a"
 * console.log(defaultCommandPort) // 8000
 * ```
 */
export const defaultCommandPort = 8000

const accessLine = (e: RequestLog): string => `${e.method} ${e.path}${e.rpcMethod !== undefined ? ` ${e.rpcMethod}` : ""} ${e.status} ${Math.round(e.durationMs)} ms`

/**
 * Serve an agent over A2A until SIGTERM or SIGINT (or `signal`), then shut down gracefully.
 * Resolves once the server has stopped; rejects if it cannot start. The first line on `out` is
 * `lambdagent serve: "<name>" A2A agent listening on <endpoint>`.
 *
 * @since 0.2.0
 * @category commands
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { serveCommand } from "lambdagent/a2a"
 * await serveCommand({ agent: Term.llm({ system: "You plan trips." }), name: "planner", port: 8000 })
 * // lambdagent serve: "planner" A2A agent listening on http://127.0.0.1:8000/
 * ```
 */
export const serveCommand = async (options: ServeCommandOptions): Promise<void> => {
  const out = options.out ?? ((line: string) => void process.stdout.write(`${line}\n`))
  const err = options.err ?? ((line: string) => void process.stderr.write(`${line}\n`))
  const { out: _out, err: _err, accessLog, handleSignals, signal, ...serveOptions } = options
  const server = await serve({
    ...serveOptions,
    port: options.port ?? defaultCommandPort,
    ...(accessLog !== false ? { onRequest: (e: RequestLog) => out(accessLine(e)) } : {}),
    onError: options.onError ?? ((error) => err(`lambdagent serve: internal error: ${error instanceof Error ? error.message : String(error)}`))
  })
  out(`lambdagent serve: ${JSON.stringify(options.name ?? defaults.name)} A2A agent listening on ${server.url}`)
  out(`  agent card ${server.cardUrl}   JSON-RPC POST ${server.url} (A2A 1.0 and 0.3)`)
  if (options.token === undefined && !isLoopbackAddress(server.host)) {
    err(`lambdagent serve: warning: listening on ${server.host} without a token; anyone who can reach this port can run the agent`)
  }
  if (isWildcardAddress(server.host) && (options.allowedHosts ?? []).length === 0) {
    err(`lambdagent serve: note: listening on ${server.host}, but only requests addressed to 127.0.0.1, localhost or [::1] are accepted; add the names clients use with --allow-host (and the card's URL with a2a.server.url)`)
  }

  const graceMs = options.graceMs ?? defaults.graceMs
  let signals = 0
  let stopping!: () => void
  const stopRequested = new Promise<void>((resolve) => (stopping = resolve))
  const stop = (why: string): void => {
    signals++
    if (signals === 1) {
      const n = server.inFlight
      out(`lambdagent serve: ${why}; shutting down${n > 0 ? `, letting ${n} run${n === 1 ? "" : "s"} finish (up to ${graceMs} ms)` : ""}`)
      stopping()
    } else if (signals === 2) {
      out(`lambdagent serve: ${why} again; cancelling the runs in flight`)
      void server.close({ graceMs: 0 })
    }
  }
  const onTerm = () => stop("SIGTERM")
  const onInt = () => stop("SIGINT")
  const onAbort = () => stop("stop requested")
  if (handleSignals !== false) {
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
