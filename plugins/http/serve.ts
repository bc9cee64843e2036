/**
 * `serve`: an agent as an HTTP service. `POST /run` answers with the result, `POST /stream` (or
 * `POST /run` with `Accept: text/event-stream`) streams it as server-sent events, `/ws` streams
 * it over a WebSocket; `GET /health` and `GET /` describe the server. A run that stops at an
 * `ask` answers 202 with its run id, and `POST /runs/:id/resume` goes on with the answer.
 *
 * Built on `node:http` and `ws`. Every run gets its own `AbortSignal`, aborted on timeout, when
 * its client goes away, or when shutdown's grace period ends; the runtime cancels the model and
 * tool calls in flight.
 *
 * @since 0.1.0
 * @module
 */
import * as http from "node:http"
import type { Duplex } from "node:stream"
import { Checkpoint, createRuntime, Errors, HostGuard, type Runtime, Term } from "lambdagent"
import { WebSocketServer } from "ws"
import { agentOf, checkIntegerOption, listen } from "./hosting.ts"
import type { HandoffOutcome, HandoffRequest, RunHandoff } from "./handoff.ts"
import { parseJson, runBody, toJsonText } from "./internal/json.ts"
import { bearerCheck, readBody, wantsEventStream } from "./internal/request.ts"
import { directoryPausedRuns, isRunId, memoryPausedRuns, newRunId, type PausedRuns } from "./internal/paused.ts"
import { RunTracker } from "./internal/runs.ts"
import { SseWriter } from "./internal/sse.ts"
import { SocketConnection } from "./internal/websocket.ts"
import { failureOf, HttpFailure, parseResumeRequest, parseRunRequest, RunAborted, type RunRequest } from "./protocol.ts"

/**
 * Options of {@link serve}.
 *
 * Every endpoint but `/health` answers only requests addressed to `127.0.0.1`, `localhost` or
 * `[::1]` on the bound port (and to the bound address when it is a specific one) and, from a
 * browser, only pages of those origins; `allowedHosts` and `allowedOrigins` (`HostGuard.HostPolicy`)
 * add more. Others get 403 `Forbidden`: a web page cannot reach the server through DNS rebinding.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import type { ServeOptions } from "lambdagent/http"
 * const o: ServeOptions = {
 *   agent: Term.llm({ system: "You are helpful." }),
 *   runtimeOptions: { model: "openai:gpt-4o-mini" },
 *   port: 8080,
 *   token: process.env.AGENT_TOKEN,
 *   timeoutMs: 60_000
 * }
 * ```
 */
export interface ServeOptions extends HostGuard.HostPolicy {
  /**
   * The agent, or a function returning it, called for every run. Conversation histories of `llm`
   * terms are kept per term object: return the same term to keep them across requests. Memory
   * (`memory` terms) is kept per session either way.
   */
  readonly agent: Term.Term | (() => Term.Term)
  /** A runtime to run on; the caller keeps ownership (`close` does not close it). */
  readonly runtime?: Runtime.Runtime
  /**
   * Hand every run to another executor instead of this process's runtime — a cluster of runners
   * (`handoff` of `lambdagent/cluster`). `POST /run`, `POST /stream` (its result only) and
   * `POST /runs/:id/resume` go through it; WebSocket is off (turning it on is refused).
   */
  readonly handoff?: RunHandoff
  /** Options of a runtime the server creates, and closes on `close` (used when `runtime` is not given). */
  readonly runtimeOptions?: Runtime.RuntimeOptions
  /** Port; default 0, a free port (read it from the server's `port`). */
  readonly port?: number
  /** Interface to listen on; default `127.0.0.1` (this machine only). `0.0.0.0` for every interface. */
  readonly host?: string
  /** When set, every endpoint but `/health` requires `Authorization: Bearer <token>`. */
  readonly token?: string | undefined
  /** Largest request body (and WebSocket message), in bytes; default 1 MiB. */
  readonly maxBodyBytes?: number
  /** Milliseconds a run may take before it is cancelled (504 `Timeout`); default 120 000, 0 for none. */
  readonly timeoutMs?: number
  /** Most runs at once; more are refused with 503 `Overloaded`. Default unlimited. */
  readonly maxConcurrent?: number
  /** Milliseconds `close` lets runs in flight finish before cancelling them; default 10 000. */
  readonly graceMs?: number
  /** Name shown by `GET /`; default `agent`. */
  readonly name?: string
  /** The agent's lambda expression shown by `GET /`; default the term pretty-printed. */
  readonly lambda?: string
  /** Told of every finished request (and each WebSocket connection when it closes). */
  readonly onRequest?: (entry: RequestLog) => void
  /** Told of unexpected errors (answered 500 `Internal`); default one line on stderr. */
  readonly onError?: (error: unknown) => void
  /**
   * Where runs paused at an `ask` wait for `POST /runs/:id/resume`: default this process's
   * memory; `pausedRunsDirectory` keeps them on disk instead, across restarts.
   */
  readonly pausedRunsDirectory?: string
  /**
   * Whether `/ws` accepts WebSocket connections; default `true`. With `false` an upgrade is refused
   * with 404 `NotFound` and `GET /` does not list `/ws` (`lambdagent serve` turns it on with `--ws`).
   */
  readonly webSocket?: boolean
}

/**
 * One finished request, for access logs.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { RequestLog } from "lambdagent/http"
 * const line = (e: RequestLog) => `${e.method} ${e.path} ${e.status} ${e.durationMs.toFixed(0)} ms`
 * ```
 */
export interface RequestLog {
  readonly method: string
  readonly path: string
  /** The status answered; 499 when the client went away first, 101 for a WebSocket. */
  readonly status: number
  readonly durationMs: number
}

/**
 * A running server.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { serve } from "lambdagent/http"
 * const server = await serve({ agent: Term.llm({ system: "Repeat." }) })
 * console.log(server.url) // http://127.0.0.1:43127
 * await server.close()
 * ```
 */
export interface Server {
  /** Base URL, such as `http://127.0.0.1:8080`. */
  readonly url: string
  readonly port: number
  readonly host: string
  /** Runs in flight. */
  readonly inFlight: number
  /**
   * Shut down: stop accepting connections and runs, let runs in flight finish for up to `graceMs`
   * (default the server's), then cancel the rest (their clients get 503 `ShuttingDown`), close
   * every connection once its last answer is written, and close the runtime if the server created
   * it. Calling again returns the same promise; with `graceMs` it also sets a new deadline for
   * the runs in flight (`0` cancels them at once).
   */
  readonly close: (options?: { readonly graceMs?: number }) => Promise<void>
}

/**
 * Defaults of {@link ServeOptions}.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { defaults } from "lambdagent/http"
 * console.log(defaults.maxBodyBytes) // 1048576
 * ```
 */
export const defaults = {
  host: "127.0.0.1",
  maxBodyBytes: 1024 * 1024,
  timeoutMs: 120_000,
  graceMs: 10_000,
  name: "agent"
} as const

/** How often WebSocket clients are pinged; one that missed the previous ping is dropped. */
const pingIntervalMs = 30_000
/** After the runs are cancelled, how long connections get to finish writing before being cut. */
const flushMs = 2_000

const allEndpoints = ["POST /run", "POST /stream", "POST /runs/:id/resume", "GET /ws", "GET /health", "GET /"] as const

/** Told to a client of `/ws` on a server that does not serve WebSocket. */
const webSocketOff = () =>
  new HttpFailure({
    status: 404,
    kind: "NotFound",
    message: "this server does not serve WebSocket (lambdagent serve --ws, or serve({ webSocket: true }), turns it on)"
  })

const sendJson = (res: http.ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>>, closing: boolean): void => {
  if (res.headersSent || res.writableEnded || res.destroyed) return
  const text = toJsonText(body)
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(text)),
    "Cache-Control": "no-store",
    ...(closing ? { Connection: "close" } : {}),
    ...headers
  })
  res.end(text)
}

const rejectUpgrade = (socket: Duplex, failure: HttpFailure): void => {
  const text = toJsonText(failure.body())
  const headers = {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(text)),
    Connection: "close",
    ...failure.headers
  }
  const head = [`HTTP/1.1 ${failure.status} ${http.STATUS_CODES[failure.status] ?? ""}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
  socket.end(`${head.join("\r\n")}\r\n\r\n${text}`)
}

const formatUrl = (host: string, port: number): string => `http://${HostGuard.localUrlHost(host)}:${port}`

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    signal.addEventListener("abort", done, { once: true })
  })

const defaultOnError = (error: unknown): void => {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  process.stderr.write(`lambdagent serve: internal error: ${text}\n`)
}

/**
 * Serve an agent over HTTP (see the module documentation and `docs/http.md`). Resolves once the
 * server listens; rejects when it cannot (for example, the port is taken).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Scripted, Term } from "lambdagent"
 * import { serve } from "lambdagent/http"
 * const server = await serve({
 *   agent: Term.memory({ agent: Term.llm({ system: "Be brief." }), size: 10, ttl: 0, scope: "session" }),
 *   runtimeOptions: { model: Scripted.echo() },
 *   port: 8080
 * })
 * const res = await fetch(`${server.url}/run`, { method: "POST", body: JSON.stringify({ input: "hi", session: "alice" }) })
 * console.log(await res.json()) // { result: "hi", trace: [...], stats: {...} }
 * await server.close()
 * ```
 */
export const serve = async (options: ServeOptions): Promise<Server> => {
  const termOf = agentOf(options.agent)
  if (options.runtime !== undefined && options.runtimeOptions !== undefined) {
    throw new TypeError("serve: give either runtime or runtimeOptions, not both")
  }
  checkIntegerOption("port", options.port, 0, 65_535)
  checkIntegerOption("maxBodyBytes", options.maxBodyBytes, 1)
  checkIntegerOption("timeoutMs", options.timeoutMs, 0)
  checkIntegerOption("maxConcurrent", options.maxConcurrent, 1)
  checkIntegerOption("graceMs", options.graceMs, 0)
  if (options.token !== undefined && options.token.length === 0) throw new TypeError("serve: token must not be empty")

  const host = options.host ?? defaults.host
  const maxBodyBytes = options.maxBodyBytes ?? defaults.maxBodyBytes
  const graceMs = options.graceMs ?? defaults.graceMs
  const name = options.name ?? defaults.name
  const handoff = options.handoff
  if (handoff !== undefined && options.webSocket === true) throw new TypeError("serve: runs handed off (handoff) are not served over WebSocket")
  const webSocket = options.webSocket ?? handoff === undefined
  const endpoints = webSocket ? allEndpoints : allEndpoints.filter((e) => e !== "GET /ws")
  const report = options.onError ?? defaultOnError
  const authorize = options.token === undefined ? undefined : bearerCheck(options.token)
  const guardFor = HostGuard.hostGuard(host, options)
  // set once the server listens and its port is known; no request arrives before
  let hostCheck: HostGuard.HostCheck = () => "Forbidden: the server is starting"
  const admit = (req: http.IncomingMessage) => {
    const refused = hostCheck(req.headers.host, req.headers.origin)
    if (refused !== undefined) throw new HttpFailure({ status: 403, kind: "Forbidden", message: refused })
    authorize?.(req.headers.authorization)
  }
  const runs = new RunTracker({
    timeoutMs: options.timeoutMs ?? defaults.timeoutMs,
    ...(options.maxConcurrent !== undefined ? { maxConcurrent: options.maxConcurrent } : {})
  })
  const paused: PausedRuns = options.pausedRunsDirectory !== undefined ? directoryPausedRuns(options.pausedRunsDirectory) : memoryPausedRuns()
  const resuming = new Set<string>()
  const ownsRuntime = options.runtime === undefined
  const runtime = options.runtime ?? createRuntime(options.runtimeOptions ?? {})
  const startedAt = performance.now()

  let lambdaText = options.lambda
  const lambdaOf = (): string => (lambdaText ??= Term.pretty(termOf()))
  const callOptions = (request: RunRequest, signal: AbortSignal): Runtime.CallOptions => ({
    signal,
    ...(request.session !== undefined ? { session: request.session } : {}),
    ...(request.trace !== undefined ? { trace: request.trace } : {})
  })
  const stream = (request: RunRequest, signal: AbortSignal): AsyncIterable<Runtime.StreamEvent> =>
    runtime.stream(termOf(), request.input, callOptions(request, signal))
  const handoffRequest = (request: RunRequest, signal: AbortSignal): HandoffRequest => ({
    input: request.input,
    signal,
    ...(request.session !== undefined ? { session: request.session } : {}),
    ...(request.trace !== undefined ? { trace: request.trace } : {})
  })
  /** The body of a handed-off run (200 with its result, 202 when it waits on an answer), or its failure thrown. */
  const handedOff = (outcome: HandoffOutcome): readonly [200 | 202, object] => {
    switch (outcome._tag) {
      case "Done":
        return [200, { result: outcome.result, trace: outcome.trace, stats: outcome.stats }]
      case "Waiting":
        return [
          202,
          {
            status: "paused",
            runId: outcome.runId,
            question: outcome.question,
            ...(outcome.input !== undefined ? { input: outcome.input } : {}),
            resume: `/runs/${encodeURIComponent(outcome.runId)}/resume`
          }
        ]
      case "Failed":
        throw new HttpFailure({ status: outcome.status, kind: outcome.kind, message: outcome.message })
    }
  }

  // ---------------------------------------------------------------------------------------------
  // HTTP
  // ---------------------------------------------------------------------------------------------

  const respondFailure = (res: http.ServerResponse, error: unknown): void => {
    const failure = failureOf(error)
    if (failure.kind === "Internal") report(error)
    if (failure.status === 413) {
      // the rest of the body is not read: close the connection once the answer is out
      sendJson(res, 413, failure.body(), { ...failure.headers, Connection: "close" }, runs.closing)
    } else sendJson(res, failure.status, failure.body(), failure.headers ?? {}, runs.closing)
  }

  /** Abort the run when the client goes away before its answer is written. */
  const cancelOnDisconnect = (res: http.ServerResponse, abort: (reason: RunAborted) => void) => {
    const onClose = () => {
      if (!res.writableEnded) abort(new RunAborted({ reason: "ClientClosed", message: "the client went away" }))
    }
    res.on("close", onClose)
    return () => res.off("close", onClose)
  }

  const readRunRequest = async (req: http.IncomingMessage): Promise<RunRequest> => parseRunRequest(parseJson(await readBody(req, maxBodyBytes)))

  /** Keep a paused run for `POST /runs/:id/resume`; the body that says so (answered 202). */
  const pause = async (error: Errors.RunPaused, session: string | undefined, id = newRunId()) => {
    await paused.save(id, { checkpoint: error.checkpoint, ...(session !== undefined ? { session } : {}) })
    return { status: "paused", runId: id, question: error.question, input: error.input, resume: `/runs/${id}/resume` }
  }

  const runJson = async (res: http.ServerResponse, request: RunRequest): Promise<void> => {
    const term = termOf()
    const slot = runs.acquire()
    const detach = cancelOnDisconnect(res, slot.abort)
    try {
      if (handoff !== undefined) {
        const [status, body] = handedOff(await handoff.run(term, handoffRequest(request, slot.signal)))
        return sendJson(res, status, body, {}, runs.closing)
      }
      const output = await runtime.run(term, request.input, callOptions(request, slot.signal))
      sendJson(res, 200, runBody(output), {}, runs.closing)
    } catch (error) {
      if (error instanceof Errors.RunPaused) sendJson(res, 202, await pause(error, request.session), {}, runs.closing)
      else respondFailure(res, error)
    } finally {
      detach()
      slot.end()
    }
  }

  const resumeJson = async (req: http.IncomingMessage, res: http.ServerResponse, id: string): Promise<void> => {
    const { answer } = parseResumeRequest(parseJson(await readBody(req, maxBodyBytes)))
    if (handoff !== undefined) return resumeHandedOff(res, id, answer)
    const known = isRunId(id) ? await paused.load(id) : undefined
    if (known === undefined)
      throw new HttpFailure({ status: 404, kind: "NotFound", message: `no paused run ${JSON.stringify(id)} (it finished, or never paused here)` })
    if (resuming.has(id)) throw new HttpFailure({ status: 409, kind: "Conflict", message: `run ${id} is being resumed already` })
    let checkpoint: Checkpoint.Checkpoint
    try {
      checkpoint = Checkpoint.decode(known.checkpoint, { term: termOf() })
    } catch (error) {
      throw new HttpFailure({ status: 409, kind: "Conflict", message: `run ${id} cannot be resumed by this server: ${(error as Error).message}` })
    }
    resuming.add(id)
    const slot = runs.acquire()
    const detach = cancelOnDisconnect(res, slot.abort)
    try {
      const session = known.session
      const output = await runtime.resume(checkpoint, {
        signal: slot.signal,
        answer,
        ...(session !== undefined ? { session } : {})
      })
      await paused.remove(id)
      sendJson(res, 200, runBody(output), {}, runs.closing)
    } catch (error) {
      if (error instanceof Errors.RunPaused) sendJson(res, 202, await pause(error, known.session, id), {}, runs.closing)
      else respondFailure(res, error)
    } finally {
      resuming.delete(id)
      detach()
      slot.end()
    }
  }

  const resumeHandedOff = async (res: http.ServerResponse, id: string, answer: unknown): Promise<void> => {
    const slot = runs.acquire()
    const detach = cancelOnDisconnect(res, slot.abort)
    try {
      const [status, body] = handedOff(await handoff!.answer(id, answer, slot.signal))
      sendJson(res, status, body, {}, runs.closing)
    } catch (error) {
      respondFailure(res, error)
    } finally {
      detach()
      slot.end()
    }
  }

  const runEventStream = async (res: http.ServerResponse, request: RunRequest): Promise<void> => {
    const term = termOf()
    const slot = runs.acquire()
    const detach = cancelOnDisconnect(res, slot.abort)
    const sse = new SseWriter(res)
    try {
      if (handoff !== undefined) {
        const [status, body] = handedOff(await handoff.run(term, handoffRequest(request, slot.signal)))
        return void (await sse.send(status === 200 ? "result" : "paused", toJsonText(body)))
      }
      for await (const event of runtime.stream(term, request.input, callOptions(request, slot.signal))) {
        switch (event.type) {
          case "trace":
            await sse.send("trace", toJsonText(event.event))
            break
          case "token":
            await sse.send("token", toJsonText({ name: event.name, text: event.text }))
            break
          case "tool-call": {
            const { type: _, ...delta } = event
            await sse.send("tool-call", toJsonText(delta))
            break
          }
          case "result":
            await sse.send("result", toJsonText(runBody(event.output)))
            break
        }
      }
    } catch (error) {
      if (error instanceof Errors.RunPaused) return void (await sse.send("paused", toJsonText(await pause(error, request.session))))
      const failure = failureOf(error)
      if (failure.kind === "Internal") report(error)
      await sse.send("error", toJsonText({ error: { ...failure.body().error, status: failure.status } }))
    } finally {
      detach()
      sse.end()
      slot.end()
    }
  }

  const methodNotAllowed = (allow: string) =>
    new HttpFailure({ status: 405, kind: "MethodNotAllowed", message: `use ${allow} here`, headers: { Allow: allow } })

  const route = async (req: http.IncomingMessage, res: http.ServerResponse, path: string): Promise<void> => {
    const method = req.method ?? "GET"
    if (path === "/health") {
      if (method !== "GET") throw methodNotAllowed("GET")
      const closing = runs.closing
      sendJson(
        res,
        closing ? 503 : 200,
        {
          status: closing ? "closing" : "ok",
          uptime: (performance.now() - startedAt) / 1000,
          inFlight: runs.size
        },
        {},
        closing
      )
      return
    }
    admit(req)
    switch (path) {
      case "/": {
        if (method !== "GET") throw methodNotAllowed("GET")
        sendJson(res, 200, { name, lambda: lambdaOf(), endpoints }, {}, runs.closing)
        return
      }
      case "/run":
      case "/stream": {
        if (method !== "POST") throw methodNotAllowed("POST")
        const request = await readRunRequest(req)
        if (path === "/stream" || wantsEventStream(req)) await runEventStream(res, request)
        else await runJson(res, request)
        return
      }
      case "/ws":
        if (!webSocket) throw webSocketOff()
        throw new HttpFailure({
          status: 426,
          kind: "UpgradeRequired",
          message: "/ws is a WebSocket endpoint: connect with a WebSocket client",
          headers: {
            Upgrade: "websocket"
          }
        })
      default: {
        const resume = /^\/runs\/([^/]+)\/resume$/.exec(path)
        if (resume !== null) {
          if (method !== "POST") throw methodNotAllowed("POST")
          return resumeJson(req, res, resume[1]!)
        }
        throw new HttpFailure({ status: 404, kind: "NotFound", message: `no endpoint ${method} ${path}; endpoints: ${endpoints.join(", ")}` })
      }
    }
  }

  const pathOf = (req: http.IncomingMessage): string => {
    const target = req.url ?? "/"
    const end = target.search(/[?#]/)
    return end === -1 ? target : target.slice(0, end)
  }

  const server = http.createServer((req, res) => {
    const started = performance.now()
    const path = pathOf(req)
    res.on("close", () =>
      options.onRequest?.({
        method: req.method ?? "GET",
        path,
        status: res.writableFinished ? res.statusCode : 499,
        durationMs: performance.now() - started
      })
    )
    route(req, res, path).catch((error: unknown) => respondFailure(res, error))
  })

  // ---------------------------------------------------------------------------------------------
  // WebSocket
  // ---------------------------------------------------------------------------------------------

  const wss = new WebSocketServer({ noServer: true, maxPayload: maxBodyBytes })
  const connections = new Set<SocketConnection>()
  const socketHost = { runs, stream, report }

  server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => {})
    const path = pathOf(req)
    try {
      if (!webSocket) throw webSocketOff()
      if (path !== "/ws") throw new HttpFailure({ status: 404, kind: "NotFound", message: `no WebSocket endpoint at ${path}; use /ws` })
      if (runs.closing) throw new HttpFailure({ status: 503, kind: "ShuttingDown", message: "the server is shutting down", headers: { "Retry-After": "5" } })
      admit(req)
    } catch (error) {
      rejectUpgrade(socket, failureOf(error))
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const started = performance.now()
      const connection = new SocketConnection(ws, socketHost)
      connections.add(connection)
      ws.on("close", () => {
        connections.delete(connection)
        options.onRequest?.({ method: "GET", path, status: 101, durationMs: performance.now() - started })
      })
      if (runs.closing) connection.drain()
    })
  })

  const heartbeat = setInterval(() => {
    for (const connection of connections) {
      if (!connection.alive) connection.socket.terminate()
      else {
        connection.alive = false
        connection.socket.ping()
      }
    }
  }, pingIntervalMs)
  heartbeat.unref()

  // ---------------------------------------------------------------------------------------------
  // Listening and shutdown
  // ---------------------------------------------------------------------------------------------

  let port: number
  try {
    port = await listen(server, options.port ?? 0, host)
  } catch (error) {
    clearInterval(heartbeat)
    if (ownsRuntime) await runtime.close()
    throw error
  }
  hostCheck = guardFor(port)

  let closing: Promise<void> | undefined
  const graceOver = new AbortController()
  let graceTimer: ReturnType<typeof setTimeout> | undefined
  const shortenGrace = (ms: number) => {
    clearTimeout(graceTimer)
    graceTimer = setTimeout(() => graceOver.abort(), ms)
  }

  const shutdown = async (): Promise<void> => {
    runs.refuseNew()
    const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()))
    server.closeIdleConnections()
    for (const connection of connections) connection.drain()
    // let runs in flight finish…
    await Promise.race([runs.idle(), new Promise<void>((resolve) => graceOver.signal.addEventListener("abort", () => resolve(), { once: true }))])
    clearTimeout(graceTimer)
    // …then cancel the rest; each answers 503 ShuttingDown (or an SSE/WebSocket error event)
    if (runs.size > 0) runs.abortAll(new RunAborted({ reason: "ShuttingDown", message: "the server is shutting down" }))
    const flushed = new AbortController()
    const flushTimer = setTimeout(() => flushed.abort(), flushMs)
    await Promise.race([runs.idle(), sleep(flushMs, flushed.signal)])
    // connections whose answers are written are idle now (keep-alive) or closing (WebSocket 1001)
    server.closeIdleConnections()
    await Promise.race([serverClosed, sleep(flushMs, flushed.signal)])
    clearTimeout(flushTimer)
    server.closeAllConnections()
    for (const connection of connections) connection.socket.terminate()
    await serverClosed
    clearInterval(heartbeat)
    await new Promise<void>((resolve) => wss.close(() => resolve()))
    if (ownsRuntime) await runtime.close()
  }

  return {
    url: formatUrl(host, port),
    port,
    host,
    get inFlight() {
      return runs.size
    },
    close: (closeOptions = {}) => {
      const ms = closeOptions.graceMs ?? graceMs
      if (closing === undefined) {
        shortenGrace(ms)
        closing = shutdown()
      } else if (closeOptions.graceMs !== undefined) shortenGrace(ms)
      return closing
    }
  }
}
