/**
 * The work behind `lambdagent serve <config>`: start the server, print where it listens and one
 * line per request, and shut down gracefully on SIGTERM or SIGINT (a second signal cancels the
 * runs still in flight).
 *
 * @since 0.1.0
 * @module
 */
import { isLoopbackAddress, isWildcardAddress } from "./internal/hosts.ts"
import { defaults, type RequestLog, serve, type ServeOptions } from "./serve.ts"

/**
 * Options of {@link serveCommand}: those of `serve`, plus where to print and when to stop.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import type { ServeCommandOptions } from "lambdagent/http"
 * const o: ServeCommandOptions = { agent: Term.llm({ system: "Hi." }), port: 8080, accessLog: false }
 * ```
 */
export interface ServeCommandOptions extends ServeOptions {
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
 * Port of `lambdagent serve` when `--port` is not given.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { defaultCommandPort } from "lambdagent/http"
 * console.log(defaultCommandPort) // 8080
 * ```
 */
export const defaultCommandPort = 8080


/**
 * Serve an agent until SIGTERM or SIGINT (or `signal`), then shut down gracefully: stop
 * accepting, let runs in flight finish for `graceMs`, cancel the rest. A second signal cancels
 * them at once. Resolves once the server has stopped; rejects if it cannot start.
 *
 * @since 0.1.0
 * @category commands
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { serveCommand } from "lambdagent/http"
 * // lambdagent serve agent.yml --port 8080, once the config is compiled to a term:
 * await serveCommand({ agent: Term.llm({ system: "You are helpful." }), name: "helper", port: 8080 })
 * // lambdagent serve: "helper" listening on http://127.0.0.1:8080
 * ```
 */
export const serveCommand = async (options: ServeCommandOptions): Promise<void> => {
  const out = options.out ?? ((line: string) => void process.stdout.write(`${line}\n`))
  const err = options.err ?? ((line: string) => void process.stderr.write(`${line}\n`))
  const { out: _out, err: _err, accessLog, handleSignals, signal, ...serveOptions } = options
  const logRequest = (e: RequestLog) => out(`${e.method} ${e.path} ${e.status} ${Math.round(e.durationMs)} ms`)
  const server = await serve({
    ...serveOptions,
    port: options.port ?? defaultCommandPort,
    ...(accessLog !== false ? { onRequest: logRequest } : {}),
    onError: options.onError ?? ((error) => err(`lambdagent serve: internal error: ${error instanceof Error ? error.message : String(error)}`))
  })
  const name = options.name ?? defaults.name
  const graceMs = options.graceMs ?? defaults.graceMs
  out(`lambdagent serve: ${JSON.stringify(name)} listening on ${server.url}`)
  out(`  POST ${server.url}/run   POST ${server.url}/stream   ws://${server.url.slice("http://".length)}/ws   GET ${server.url}/health`)
  if (options.token === undefined && !isLoopbackAddress(server.host)) {
    err(`lambdagent serve: warning: listening on ${server.host} without a token; anyone who can reach this port can run the agent`)
  }
  if (isWildcardAddress(server.host) && (options.allowedHosts ?? []).length === 0) {
    err(`lambdagent serve: note: listening on ${server.host}, but only requests addressed to 127.0.0.1, localhost or [::1] are accepted; add the names clients use with --allow-host`)
  }

  let stops = 0
  let settle: { resolve: () => void; reject: (error: unknown) => void } | undefined
  const stopped = new Promise<void>((resolve, reject) => (settle = { resolve, reject }))
  const stop = (why: string) => {
    stops++
    if (stops === 1) {
      const n = server.inFlight
      out(`lambdagent serve: ${why}; shutting down${n > 0 ? `, letting ${n} run${n === 1 ? "" : "s"} finish (up to ${graceMs} ms)` : ""}`)
      server.close().then(settle!.resolve, settle!.reject)
    } else if (stops === 2) {
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
    await stopped
  } finally {
    process.off("SIGTERM", onTerm)
    process.off("SIGINT", onInt)
    signal?.removeEventListener("abort", onAbort)
  }
  out("lambdagent serve: stopped")
}
