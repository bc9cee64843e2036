/**
 * The work behind `lambdagent serve <config>`: start the server, print where it listens and one
 * line per request, and shut down gracefully on SIGTERM or SIGINT (a second signal cancels the
 * runs still in flight).
 *
 * @since 0.1.0
 * @module
 */
import { type CommandControl, serveUntilStopped, startupWarnings } from "./hosting.ts"
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
export interface ServeCommandOptions extends ServeOptions, CommandControl {}

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
  const { out: _out, err: _err, accessLog, handleSignals: _signals, signal: _signal, ...serveOptions } = options
  const logRequest = (e: RequestLog) => out(`${e.method} ${e.path} ${e.status} ${Math.round(e.durationMs)} ms`)
  const server = await serve({
    ...serveOptions,
    port: options.port ?? defaultCommandPort,
    ...(accessLog !== false ? { onRequest: logRequest } : {}),
    onError: options.onError ?? ((error) => err(`lambdagent serve: internal error: ${error instanceof Error ? error.message : String(error)}`))
  })
  const name = options.name ?? defaults.name
  out(`lambdagent serve: ${JSON.stringify(name)} listening on ${server.url}`)
  const ws = options.webSocket === false ? "" : `   ws://${server.url.slice("http://".length)}/ws`
  out(`  POST ${server.url}/run   POST ${server.url}/stream${ws}   GET ${server.url}/health`)
  for (const warning of startupWarnings(server.host, options)) err(`lambdagent serve: ${warning}`)
  await serveUntilStopped(server, { ...options, out, graceMs: options.graceMs ?? defaults.graceMs })
}
