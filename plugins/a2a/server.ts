/**
 * `serve`: an agent as an A2A server. `GET /.well-known/agent-card.json` answers the agent card,
 * `POST /` takes the JSON-RPC requests of A2A 1.0 (`SendMessage`, `SendStreamingMessage`,
 * `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`) and of A2A 0.3 (`message/send`,
 * `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`), told apart by the
 * `A2A-Version` header as the specification says (absent means 0.3); streamed answers are
 * server-sent events. `GET /health` says whether the server is up.
 *
 * The protocol is the A2A SDK's (`@a2a-js/sdk`): its request handler, task lifecycle and JSON-RPC
 * transports, mounted here on `node:http` with the same protections as `lambdagent/http`: the
 * `Host`/`Origin` check against DNS rebinding, an optional bearer token, and a limit on the size of
 * a request. Every failure of a request is answered as a JSON-RPC error; the server keeps serving.
 *
 * @since 0.2.0
 * @module
 */
import * as http from "node:http"
import { A2A_VERSION_HEADER, AGENT_CARD_PATH } from "@a2a-js/sdk"
import { A2A_ERROR_CODE, ContentTypeNotSupportedError } from "@a2a-js/sdk/errors"
import { JsonRpcTransportHandler, ServerCallContext, validateVersion } from "@a2a-js/sdk/server"
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server"
import { createRuntime, HostGuard } from "lambdagent"
import {
  agentOf,
  bearerCheck,
  checkIntegerOption,
  defaults as httpDefaults,
  HttpFailure,
  listen,
  readBody,
  type RequestLog as HttpRequestLog,
  type Server as HttpServer,
  type ServeOptions as HttpServeOptions,
  SseWriter
} from "lambdagent/http"
import { agentCard, agentCardJson, type CardSpec, legacyAgentCardJson, type SkillSpec } from "./card.ts"
import { RunExecutor, type RunExecutorOptions, RunStopped, sessionOf, streamingStateKey } from "./executor.ts"
import { RunRequestHandler } from "./handler.ts"
import { BoundedTaskStore } from "./tasks.ts"

/**
 * Options of {@link serve}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import type { ServeOptions } from "lambdagent/a2a"
 * const o: ServeOptions = {
 *   agent: Term.llm({ system: "You plan trips." }),
 *   runtimeOptions: { model: "openai:gpt-4o-mini" },
 *   name: "planner",
 *   skills: [{ name: "Plan a trip", examples: ["3 days in Rome"] }],
 *   port: 8000,
 *   token: process.env.LAMBDAGENT_TOKEN
 * }
 * ```
 */
export interface ServeOptions
  extends HostGuard.HostPolicy,
    Pick<HttpServeOptions, "agent" | "runtime" | "runtimeOptions" | "port" | "host" | "maxBodyBytes" | "graceMs" | "onError"> {
  /** The card's name; default `agent`. */
  readonly name?: string
  readonly description?: string
  /** The agent's version in the card; default `1.0.0`. */
  readonly version?: string
  /** The card's skills; default one skill, the agent itself. */
  readonly skills?: ReadonlyArray<SkillSpec>
  /**
   * The endpoint URL the card advertises, for a server behind a proxy or reached by another name;
   * default `http://<host>:<port>/`.
   */
  readonly publicUrl?: string
  /** When set, JSON-RPC requests need `Authorization: Bearer <token>` (the card says so). */
  readonly token?: string | undefined
  /** Milliseconds a task's run may take before it fails; default 120 000, 0 for none. */
  readonly timeoutMs?: number
  /** Tasks kept in memory (see `BoundedTaskStore`); default 1000. */
  readonly maxTasks?: number
  /**
   * Whether a finished run asks the client for more input: the question, or `undefined` when the
   * output is the answer. Such a task ends `input-required`; the client's next message on it is the
   * answer, run in the same session. Default: runs always answer.
   */
  readonly inputRequired?: RunExecutorOptions["inputRequired"]
  /** Told of every finished HTTP request. */
  readonly onRequest?: (entry: RequestLog) => void
}

/**
 * One finished HTTP request, for access logs.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { RequestLog } from "lambdagent/a2a"
 * const line = (e: RequestLog) => `${e.method} ${e.path} ${e.rpcMethod ?? ""} ${e.status}`
 * ```
 */
export interface RequestLog extends HttpRequestLog {
  /** The JSON-RPC method, when the request named one. */
  readonly rpcMethod?: string
}

/**
 * A running A2A server.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { serve } from "lambdagent/a2a"
 * const server = await serve({ agent: Term.llm({ system: "Repeat." }) })
 * console.log(server.cardUrl) // http://127.0.0.1:43127/.well-known/agent-card.json
 * await server.close()
 * ```
 */
export interface Server extends Pick<HttpServer, "port" | "host" | "inFlight"> {
  /** The JSON-RPC endpoint, as the card advertises it. */
  readonly url: string
  /** Where the agent card is. */
  readonly cardUrl: string
  /** Tasks kept. */
  readonly tasks: number
  /**
   * Shut down: refuse new requests, let runs in flight finish for up to `graceMs` (default the
   * server's), then cancel the rest, close the connections and the runtime if the server created
   * it. Calling again returns the same promise; `graceMs: 0` cancels the runs at once.
   */
  readonly close: (options?: { readonly graceMs?: number }) => Promise<void>
}

/**
 * Defaults of {@link ServeOptions}: those of `lambdagent/http`'s `serve`.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { defaults } from "lambdagent/a2a"
 * console.log(defaults.timeoutMs) // 120000
 * ```
 */
export const defaults = httpDefaults

/** After the runs are cancelled, how long connections get to finish writing before being cut. */
const flushMs = 2_000

const streamingMethods: ReadonlySet<string> = new Set(["message/stream", "tasks/resubscribe", "SendStreamingMessage", "SubscribeToTask"])

interface RpcError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

const sendJson = (res: http.ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void => {
  if (res.headersSent || res.writableEnded || res.destroyed) return
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(text)),
    "Cache-Control": "no-store",
    ...headers
  })
  res.end(text)
}

const sendRpcError = (res: http.ServerResponse, status: number, id: unknown, error: RpcError, headers: Readonly<Record<string, string>> = {}): void =>
  sendJson(res, status, { jsonrpc: "2.0", id: typeof id === "string" || typeof id === "number" ? id : null, error }, headers)

/** The JSON-RPC error of a refused request: 401 and 403 as server errors, a bad body as an invalid request. */
const refusalOf = (failure: HttpFailure): RpcError => ({
  code:
    failure.status === 401 || failure.status === 403 || failure.status === 503
      ? -32000
      : failure.kind === "InvalidJson"
        ? A2A_ERROR_CODE.PARSE_ERROR
        : A2A_ERROR_CODE.INVALID_REQUEST,
  message: failure.status === 401 ? `Unauthorized: ${failure.message}` : failure.status === 413 ? `Invalid Request: ${failure.message}` : failure.message
})

/** Deepest nesting of JSON a request may have: the SDK copies messages recursively. */
const maxJsonDepth = 200

/** Whether a parsed JSON value nests deeper than `limit` (walked without recursion). */
const nestsDeeperThan = (value: unknown, limit: number): boolean => {
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!
    if (typeof item !== "object" || item === null) continue
    if (depth >= limit) return true
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1])
  }
  return false
}

const headerValue = (value: string | ReadonlyArray<string> | undefined): string | undefined => (Array.isArray(value) ? value[0] : (value as string | undefined))

const isLegacyVersion = (version: string | undefined): boolean => version === undefined || /^0\.3(\.\d+)?$/.test(version)

const pathOf = (req: http.IncomingMessage): string => {
  const target = req.url ?? "/"
  const end = target.search(/[?#]/)
  return end === -1 ? target : target.slice(0, end)
}

const defaultOnError = (error: unknown): void => {
  process.stderr.write(`lambdagent a2a: internal error: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}\n`)
}

const delay = (ms: number): { readonly done: Promise<void>; readonly cancel: () => void } => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const done = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))
  return { done, cancel: () => clearTimeout(timer) }
}

/**
 * Serve an agent over A2A (see the module documentation and `docs/a2a.md`). Resolves once the
 * server listens; rejects when it cannot (for example, the port is taken).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Scripted, Term } from "lambdagent"
 * import { serve } from "lambdagent/a2a"
 * const server = await serve({
 *   agent: Term.llm({ system: "Be brief." }),
 *   runtimeOptions: { model: Scripted.echo() },
 *   name: "echo",
 *   port: 8000
 * })
 * const card = (await (await fetch(server.cardUrl)).json()) as { name: string }
 * console.log(card.name) // "echo"
 * await server.close()
 * ```
 */
export const serve = async (options: ServeOptions): Promise<Server> => {
  const termOf = agentOf(options.agent)
  if (options.runtime !== undefined && options.runtimeOptions !== undefined) throw new TypeError("serve: give either runtime or runtimeOptions, not both")
  checkIntegerOption("port", options.port, 0, 65_535)
  checkIntegerOption("maxBodyBytes", options.maxBodyBytes, 1)
  checkIntegerOption("timeoutMs", options.timeoutMs, 0)
  checkIntegerOption("graceMs", options.graceMs, 0)
  if (options.token !== undefined && options.token.length === 0) throw new TypeError("serve: token must not be empty")
  if (options.publicUrl !== undefined && !/^https?:\/\/[^/]/.test(options.publicUrl)) {
    throw new TypeError(`serve: publicUrl must be an http:// or https:// URL, got ${JSON.stringify(options.publicUrl)}`)
  }

  const host = options.host ?? defaults.host
  const maxBodyBytes = options.maxBodyBytes ?? defaults.maxBodyBytes
  const graceMs = options.graceMs ?? defaults.graceMs
  const report = options.onError ?? defaultOnError
  const authorize = options.token === undefined ? undefined : bearerCheck(options.token)
  const guardFor = HostGuard.hostGuard(host, options)
  const ownsRuntime = options.runtime === undefined
  const runtime = options.runtime ?? createRuntime(options.runtimeOptions ?? {})
  const executor = new RunExecutor({
    runtime,
    term: termOf,
    timeoutMs: options.timeoutMs ?? defaults.timeoutMs,
    onError: report,
    ...(options.inputRequired !== undefined ? { inputRequired: options.inputRequired } : {})
  })
  // a context's conversation lives as long as one of its tasks is kept
  const store = new BoundedTaskStore({
    ...(options.maxTasks !== undefined ? { maxTasks: options.maxTasks } : {}),
    onContextForgotten: (contextId) => runtime.resetConversation(sessionOf(contextId))
  })

  // set once the server listens and its port is known; no request arrives before
  let hostCheck: HostGuard.HostCheck = () => "Forbidden: the server is starting"
  let spec: CardSpec | undefined
  let transports: { readonly v1: JsonRpcTransportHandler; readonly v03: LegacyJsonRpcTransportHandler; readonly card: ReturnType<typeof agentCard> } | undefined
  let closing = false

  const admit = (req: http.IncomingMessage): void => {
    const refused = hostCheck(req.headers.host, req.headers.origin)
    if (refused !== undefined) throw new HttpFailure({ status: 403, kind: "Forbidden", message: refused })
  }

  const serveCard = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const version = headerValue(req.headers[A2A_VERSION_HEADER.toLowerCase()])
    sendJson(res, 200, isLegacyVersion(version) ? legacyAgentCardJson(spec!) : agentCardJson(spec!), { "Cache-Control": "no-cache", Vary: A2A_VERSION_HEADER })
  }

  const rpc = async (req: http.IncomingMessage, res: http.ServerResponse, noteMethod: (method: string) => void): Promise<void> => {
    try {
      if (closing) throw new HttpFailure({ status: 503, kind: "ShuttingDown", message: "the server is shutting down", headers: { "Retry-After": "5" } })
      authorize?.(req.headers.authorization)
    } catch (error) {
      if (!(error instanceof HttpFailure)) throw error
      req.resume()
      sendRpcError(res, error.status, null, refusalOf(error), { ...error.headers, Connection: "close" })
      return
    }
    const version = headerValue(req.headers[A2A_VERSION_HEADER.toLowerCase()])
    const legacy = isLegacyVersion(version)
    const mapError = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError
    const contentType = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
    if (contentType !== "" && contentType !== "application/json") {
      req.resume()
      sendRpcError(
        res,
        415,
        null,
        mapError(new ContentTypeNotSupportedError(`Content-Type ${JSON.stringify(req.headers["content-type"])} is not supported; send application/json`))
      )
      return
    }
    let text: string
    try {
      text = await readBody(req, maxBodyBytes)
    } catch (error) {
      if (!(error instanceof HttpFailure)) return // the client went away
      sendRpcError(res, error.status, null, refusalOf(error), error.status === 413 ? { Connection: "close" } : {})
      return
    }
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch (error) {
      sendRpcError(res, 400, null, { code: A2A_ERROR_CODE.PARSE_ERROR, message: `Parse error: ${(error as Error).message}` })
      return
    }
    if (nestsDeeperThan(body, maxJsonDepth)) {
      sendRpcError(res, 400, null, { code: A2A_ERROR_CODE.INVALID_REQUEST, message: `Invalid Request: the JSON is nested deeper than ${maxJsonDepth} levels` })
      return
    }
    if (Array.isArray(body)) {
      sendRpcError(res, 400, null, {
        code: A2A_ERROR_CODE.INVALID_REQUEST,
        message: "Invalid Request: batch requests are not supported; send one request at a time"
      })
      return
    }
    const request = typeof body === "object" && body !== null ? (body as { id?: unknown; method?: unknown }) : {}
    const method = typeof request.method === "string" ? request.method : undefined
    if (method !== undefined) noteMethod(method)
    const context = new ServerCallContext({
      requestedVersion: version ?? "0.3",
      state: new Map([[streamingStateKey, method !== undefined && streamingMethods.has(method)]])
    })
    try {
      validateVersion(context.requestedVersion, transports!.card, "JSONRPC")
    } catch (error) {
      sendRpcError(res, 400, request.id, mapError(error))
      return
    }
    const answer = await (legacy ? transports!.v03 : transports!.v1).handle(body as Record<string, unknown>, context)
    if (!(Symbol.asyncIterator in answer)) {
      sendJson(res, 200, answer)
      return
    }
    const events = answer[Symbol.asyncIterator]()
    // an error before the first event (an unknown task, a bad message) is a plain JSON answer
    let first: IteratorResult<unknown>
    try {
      first = await events.next()
    } catch (error) {
      sendRpcError(res, 200, request.id, mapError(error))
      return
    }
    const sse = new SseWriter(res)
    try {
      for (let next = first; next.done !== true; next = await events.next()) {
        if (!sse.open) break // the task goes on; the client may resubscribe
        await sse.send("message", JSON.stringify(next.value))
      }
    } catch (error) {
      await sse.send("error", JSON.stringify({ jsonrpc: "2.0", id: request.id ?? null, error: mapError(error) }))
    } finally {
      await events.return?.(undefined).catch(() => undefined)
      sse.end()
    }
  }

  const route = async (req: http.IncomingMessage, res: http.ServerResponse, path: string, noteMethod: (method: string) => void): Promise<void> => {
    const method = req.method ?? "GET"
    if (path === "/health") {
      if (method !== "GET") throw new HttpFailure({ status: 405, kind: "MethodNotAllowed", message: "use GET here", headers: { Allow: "GET" } })
      sendJson(res, closing ? 503 : 200, { status: closing ? "closing" : "ok", inFlight: executor.inFlight, tasks: store.size })
      return
    }
    if (path === "/") {
      try {
        admit(req)
      } catch (error) {
        req.resume()
        sendRpcError(res, 403, null, refusalOf(error as HttpFailure))
        return
      }
      if (method !== "POST") {
        throw new HttpFailure({
          status: 405,
          kind: "MethodNotAllowed",
          message: `POST JSON-RPC requests here; the agent card is at /${AGENT_CARD_PATH}`,
          headers: { Allow: "POST" }
        })
      }
      await rpc(req, res, noteMethod)
      return
    }
    admit(req)
    if (path === `/${AGENT_CARD_PATH}`) {
      if (method !== "GET" && method !== "HEAD")
        throw new HttpFailure({ status: 405, kind: "MethodNotAllowed", message: "use GET here", headers: { Allow: "GET, HEAD" } })
      serveCard(req, res)
      return
    }
    throw new HttpFailure({ status: 404, kind: "NotFound", message: `no endpoint ${method} ${path}; endpoints: POST /, GET /${AGENT_CARD_PATH}, GET /health` })
  }

  // responses not yet written; once none are left at shutdown, the remaining connections are idle
  let answering = 0
  let allAnswered: (() => void) | undefined
  const server = http.createServer((req, res) => {
    const started = performance.now()
    const path = pathOf(req)
    let rpcMethod: string | undefined
    answering++
    res.on("close", () => {
      answering--
      if (answering === 0) allAnswered?.()
    })
    res.on("close", () =>
      options.onRequest?.({
        method: req.method ?? "GET",
        path,
        ...(rpcMethod !== undefined ? { rpcMethod } : {}),
        status: res.writableFinished ? res.statusCode : 499,
        durationMs: performance.now() - started
      })
    )
    route(req, res, path, (m) => (rpcMethod = m)).catch((error: unknown) => {
      if (error instanceof HttpFailure) {
        req.resume()
        sendJson(res, error.status, error.body(), error.headers)
        return
      }
      report(error)
      if (path === "/") sendRpcError(res, 500, null, { code: A2A_ERROR_CODE.INTERNAL_ERROR, message: "Internal error" })
      else sendJson(res, 500, { error: { kind: "Internal", message: "internal server error" } })
    })
  })
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
  })

  let port: number
  try {
    port = await listen(server, options.port ?? 0, host)
  } catch (error) {
    if (ownsRuntime) await runtime.close()
    throw error
  }
  hostCheck = guardFor(port)
  const url = options.publicUrl ?? `http://${HostGuard.localUrlHost(host)}:${port}/`
  spec = {
    name: options.name ?? defaults.name,
    url,
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.version !== undefined ? { version: options.version } : {}),
    ...(options.skills !== undefined ? { skills: options.skills } : {}),
    bearer: options.token !== undefined
  }
  const card = agentCard(spec)
  const handler = new RunRequestHandler(card, store, executor)
  transports = { v1: new JsonRpcTransportHandler(handler), v03: new LegacyJsonRpcTransportHandler(handler), card }

  let shutdown: Promise<void> | undefined
  let graceTimer: ReturnType<typeof setTimeout> | undefined
  let endGrace: () => void = () => {}
  const setDeadline = (ms: number) => {
    clearTimeout(graceTimer)
    graceTimer = setTimeout(() => endGrace(), ms)
  }
  const close = async (): Promise<void> => {
    closing = true
    const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()))
    server.closeIdleConnections()
    // let runs in flight finish until the deadline…
    await Promise.race([executor.idle(), new Promise<void>((resolve) => (endGrace = resolve))])
    clearTimeout(graceTimer)
    // …then cancel the rest; their tasks end canceled
    executor.abortAll(new RunStopped({ reason: "ShuttingDown", message: "the server is shutting down" }))
    const flush = delay(flushMs)
    await Promise.race([executor.idle(), flush.done])
    const answered = answering === 0 ? Promise.resolve() : new Promise<void>((resolve) => (allAnswered = resolve))
    await Promise.race([answered, flush.done])
    flush.cancel()
    // what is left is idle keep-alive connections, and connections that never sent a request
    server.closeAllConnections()
    await serverClosed
    if (ownsRuntime) await runtime.close()
  }

  return {
    url,
    cardUrl: `http://${HostGuard.localUrlHost(host)}:${port}/${AGENT_CARD_PATH}`,
    port,
    host,
    get inFlight() {
      return executor.inFlight
    },
    get tasks() {
      return store.size
    },
    close: (closeOptions = {}) => {
      if (shutdown === undefined) {
        shutdown = close()
        setDeadline(closeOptions.graceMs ?? graceMs)
      } else if (closeOptions.graceMs !== undefined) setDeadline(closeOptions.graceMs)
      return shutdown
    }
  }
}
