/**
 * The work behind `lambdagent serve <config> --a2a`: start the A2A server, print where it listens
 * (the line a supervisor waits for) and one line per request, and shut down gracefully on SIGTERM
 * or SIGINT (a second signal cancels the runs still in flight).
 *
 * @since 0.2.0
 * @module
 */
import { HostGuard } from "lambdagent"
import { type CommandControl, serveUntilStopped, startupWarnings } from "lambdagent/http"
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
export interface ServeCommandOptions extends ServeOptions, CommandControl {}

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

const accessLine = (e: RequestLog): string =>
  `${e.method} ${e.path}${e.rpcMethod !== undefined ? ` ${e.rpcMethod}` : ""} ${e.status} ${Math.round(e.durationMs)} ms`

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
  const { out: _out, err: _err, accessLog, handleSignals: _signals, signal: _signal, ...serveOptions } = options
  const server = await serve({
    ...serveOptions,
    port: options.port ?? defaultCommandPort,
    ...(accessLog !== false ? { onRequest: (e: RequestLog) => out(accessLine(e)) } : {}),
    onError: options.onError ?? ((error) => err(`lambdagent serve: internal error: ${error instanceof Error ? error.message : String(error)}`))
  })
  out(`lambdagent serve: ${JSON.stringify(options.name ?? defaults.name)} A2A agent listening on ${server.url}`)
  out(`  agent card ${server.cardUrl}   JSON-RPC POST ${server.url} (A2A 1.0 and 0.3)`)
  for (const warning of startupWarnings(server.host, options)) err(`lambdagent serve: ${warning}`)
  if (options.publicUrl === undefined && HostGuard.isWildcardAddress(server.host)) {
    err(`lambdagent serve: note: the agent card names the endpoint ${server.url}; set a2a.server.url (publicUrl) to the URL other machines use`)
  }
  await serveUntilStopped(server, { ...options, out, graceMs: options.graceMs ?? defaults.graceMs })
}
