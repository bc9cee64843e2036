/**
 * Serving a {@link LambdaServer} over stdio or Streamable HTTP, with the SDK's transports.
 *
 * - **stdio**: newline-delimited JSON-RPC on standard input/output. Only protocol messages go to
 *   standard output (diagnostics, and `console.log` while serving, go to standard error). Lines that
 *   are not JSON, not JSON-RPC or too long are answered with a JSON-RPC error and skipped. At end
 *   of input the server answers what is in flight, closes, and the process can exit with code 0.
 *   Answers ready together go out in one write; while the client does not read them, its requests
 *   are not read either; a client that closes standard output closes the session.
 * - **HTTP**: the Streamable HTTP transport at `/mcp`, bound to 127.0.0.1 by default, one session
 *   per client (`Mcp-Session-Id`), `Host` and `Origin` checked against an allow-list (protection
 *   against DNS rebinding), an optional bearer token, request bodies size-limited, idle sessions
 *   closed. A request that fails affects no other.
 *
 * @since 0.1.0
 * @module
 */
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { type Readable, Writable } from "node:stream"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest, type JSONRPCMessage, JSONRPCMessageSchema, type ServerNotification } from "@modelcontextprotocol/sdk/types.js"
import { HostGuard } from "lambdagent"
import { directCallOf, type PlainToolCall, plainToolCall } from "./directCall.ts"
import { serveUntilClosed } from "./signals.ts"
import { createLambdaServer, type LambdaServer, type LambdaServerOptions } from "./server.ts"
import { resolveStore, type ToolRegistryStore } from "./store.ts"

/**
 * The largest JSON-RPC message accepted by default: 4 MiB.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { DEFAULT_MAX_MESSAGE_BYTES } from "lambdagent/mcp"
 * console.log(DEFAULT_MAX_MESSAGE_BYTES) // 4194304
 * ```
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024

/**
 * A server being served: where (for HTTP), how to stop it, and when it has stopped.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ServeHandle } from "lambdagent/mcp"
 * const stopLater = (h: ServeHandle) => setTimeout(() => void h.close(), 60_000)
 * ```
 */
export interface ServeHandle {
  readonly server: LambdaServer
  /** `http://host:port/mcp` for HTTP (with 127.0.0.1 or [::1] when the server listens on every interface). */
  readonly url?: string
  /** The bound port for HTTP (useful with port 0). */
  readonly port?: number
  /** Resolves once the server has stopped (end of input on stdio, or {@link ServeHandle.close}). */
  readonly closed: Promise<void>
  /** Stop the server; resolves once it has stopped. */
  readonly close: () => Promise<void>
}

const errorMessage = (code: number, message: string, id: string | number | null = null, data?: unknown) =>
  ({ jsonrpc: "2.0", id, error: { code, message, ...(data !== undefined ? { data } : {}) } }) as unknown as JSONRPCMessage

/** The error response to a request whose answer failed, as the SDK writes it. */
const errorResponse = (id: string | number, error: unknown): JSONRPCMessage => {
  const { code, message, data } = (typeof error === "object" && error !== null ? error : {}) as { code?: unknown; message?: unknown; data?: unknown }
  return errorMessage(
    typeof code === "number" && Number.isSafeInteger(code) ? code : -32603,
    typeof message === "string" ? message : "Internal error",
    id,
    data
  )
}

const idOf = (json: unknown): string | number | null => {
  if (typeof json !== "object" || json === null || !("id" in json)) return null
  const id = (json as { id: unknown }).id
  return typeof id === "string" || typeof id === "number" ? id : null
}

/**
 * Splits standard input into lines and hands on only well-formed JSON-RPC messages of at most
 * `limit` bytes, parsed and checked once; everything else is answered through `reject` and
 * dropped. A final line without a newline is processed at end of input.
 */
class LineGuard extends Writable {
  private parts: Array<Buffer> = []
  private length = 0
  private discarding = false
  private discarded = 0

  constructor(
    private readonly limit: number,
    private readonly reject: (response: JSONRPCMessage) => void,
    private readonly accepted: (message: JSONRPCMessage) => void,
    /** Calls back once the answers to what was read have gone out: input waits for them. */
    private readonly afterAnswers: (resume: () => void) => void,
    /** Answers a plain tool call directly; false when the call must go the SDK's way. */
    private readonly direct: (call: PlainToolCall) => boolean = () => false
  ) {
    super()
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    let start = 0
    for (;;) {
      const newline = chunk.indexOf(10, start)
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline)
      if (this.discarding) this.discarded += piece.length
      else if (this.length + piece.length > this.limit) {
        this.discarding = true
        this.discarded = this.length + piece.length
        this.parts = []
        this.length = 0
      } else if (piece.length > 0) {
        this.parts.push(piece)
        this.length += piece.length
      }
      if (newline === -1) break
      this.endLine()
      start = newline + 1
    }
    // The next chunk is read once the answers to this one have gone out: a client that does not
    // read its answers stops the reading of its requests, and memory stays bounded.
    this.afterAnswers(() => callback())
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.discarding || this.length > 0) this.endLine()
    callback()
  }

  private endLine() {
    if (this.discarding) {
      this.reject(errorMessage(-32600, `Invalid Request: message of more than ${this.limit} bytes (${this.discarded} bytes read)`))
      this.discarding = false
      this.discarded = 0
      return
    }
    const text = (this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.length)).toString("utf8")
    this.parts = []
    this.length = 0
    if (text.trim() === "") return
    let json: unknown
    try {
      json = JSON.parse(text) // JSON.parse ignores a trailing \r, as any whitespace
    } catch (error) {
      this.reject(errorMessage(-32700, `Parse error: ${error instanceof Error ? error.message : String(error)}`))
      return
    }
    if (Array.isArray(json)) {
      this.reject(errorMessage(-32600, "Invalid Request: JSON-RPC batches are not supported"))
      return
    }
    const call = plainToolCall(json)
    if (call !== undefined && this.direct(call)) return
    const parsed = JSONRPCMessageSchema.safeParse(json)
    if (!parsed.success) {
      this.reject(errorMessage(-32600, "Invalid Request: not a JSON-RPC 2.0 request, notification or response", idOf(json)))
      return
    }
    this.accepted(parsed.data)
  }
}

/**
 * Writes messages to standard output as lines, in the order they are sent. The first line of a
 * turn of the event loop goes out at once, the others of that turn together at its end: every
 * write to a pipe is a system call that wakes the client, and the answers to requests that
 * arrived together share one. While the output is backed up (the client reads slowly) lines wait
 * here, in order, and {@link LineWriter.afterAnswers} holds back the reading of input; once the
 * output has failed (the client went away) lines are dropped and everyone waiting is released.
 */
class LineWriter {
  private lines: Array<string> = []
  /** Called once the lines waiting in {@link LineWriter.lines} have been written. */
  private written: Array<() => void> = []
  /** Called once the lines waiting now have been written: paused input. */
  private afterFlush: Array<() => void> = []
  /** Called at the next `drain`: senders whose lines the stream buffered, then paused input. */
  private afterDrain: Array<() => void> = []
  private scheduled: NodeJS.Immediate | undefined
  private backedUp = false
  /** The output failed or the session closed: lines are dropped, senders released at once. */
  private failed = false

  constructor(private readonly out: Writable) {
    out.on("drain", this.drained)
    out.on("error", this.fail)
  }

  /** Queue one line (a newline is added); `written` is called once it is handed to the stream. */
  write(line: string, written: () => void): void {
    if (this.failed) {
      written()
      return
    }
    this.lines.push(line, "\n")
    this.written.push(written)
    if (this.scheduled !== undefined || this.backedUp) return
    // The first line of a turn goes out at once (the client can start on it); the lines after it
    // wait for the end of the turn and go out together.
    this.writeQueued()
    this.scheduled = setImmediate(this.flush)
  }

  /**
   * Calls `resume` at the end of this turn of the event loop (when the answers computed in it are
   * queued), once they have been written, and once the output has drained if it is backed up.
   */
  afterAnswers(resume: () => void): void {
    setImmediate(() => {
      if (this.failed) resume()
      else if (this.backedUp) this.afterDrain.push(resume)
      else if (this.lines.length > 0) this.afterFlush.push(resume)
      else resume()
    })
  }

  /** Write what is queued now, in one write (called at the end of the turn, and before closing). */
  readonly flush = (): void => {
    if (this.scheduled !== undefined) clearImmediate(this.scheduled)
    this.scheduled = undefined
    this.writeQueued()
  }

  private writeQueued(): void {
    if (this.failed || this.backedUp || this.lines.length === 0) return
    const text = this.lines.length === 2 ? this.lines[0]! + this.lines[1]! : this.lines.join("")
    const written = this.written
    const paused = this.afterFlush
    this.lines = []
    this.written = []
    this.afterFlush = []
    if (this.out.write(text)) {
      for (const done of written) done()
      for (const resume of paused) resume()
    } else {
      this.backedUp = true
      this.afterDrain.push(...written, ...paused)
    }
  }

  private readonly drained = (): void => {
    this.backedUp = false
    const waiting = this.afterDrain
    this.afterDrain = []
    for (const resume of waiting) resume()
    this.flush()
  }

  /**
   * The session is closing: what is queued goes to the stream even if it is backed up (the stream
   * keeps it until the client reads it), and the writer lets go of the stream.
   */
  close(): void {
    if (this.failed) return
    if (this.lines.length > 0) this.out.write(this.lines.join(""))
    this.lines = []
    this.fail()
    this.out.off("drain", this.drained)
    this.out.off("error", this.fail)
  }

  private readonly fail = (): void => {
    if (this.failed) return
    this.failed = true
    if (this.scheduled !== undefined) clearImmediate(this.scheduled)
    this.scheduled = undefined
    const waiting = [...this.written, ...this.afterFlush, ...this.afterDrain]
    this.lines = []
    this.written = []
    this.afterFlush = []
    this.afterDrain = []
    for (const release of waiting) release()
  }
}

/**
 * The stdio side of a session: messages arrive from the {@link LineGuard} already parsed and
 * checked (so they are not parsed a second time); each message goes out as one line through the
 * {@link LineWriter}.
 */
class LineTransport implements Transport {
  onmessage?: Transport["onmessage"]
  onclose?: Transport["onclose"]
  onerror?: Transport["onerror"]
  private closed = false

  constructor(
    private readonly writer: LineWriter,
    /** Called after a message was written (the drain accounting of {@link serveStdio}). */
    private readonly sent: (message: JSONRPCMessage) => void
  ) {}

  async start(): Promise<void> {}

  receive(message: JSONRPCMessage): void {
    if (!this.closed) this.onmessage?.(message)
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) {
      this.sent(message)
      return Promise.resolve()
    }
    return new Promise((resolve) =>
      this.writer.write(JSON.stringify(message), () => {
        this.sent(message)
        resolve()
      })
    )
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.writer.close() // what was sent before closing still goes out
    this.onclose?.()
  }
}

/**
 * Options of {@link serveStdio}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { StdioServeOptions } from "lambdagent/mcp"
 * const o: StdioServeOptions = { maxMessageBytes: 1024 * 1024 }
 * ```
 */
export interface StdioServeOptions {
  readonly stdin?: Readable
  readonly stdout?: Writable
  /** Lines longer than this are answered with an error and skipped. */
  readonly maxMessageBytes?: number
  /** Send `console.log`/`info`/`debug` to standard error while serving (default: when stdout is the process's). */
  readonly redirectConsole?: boolean
  /** How long to wait for in-flight requests after end of input (default: 60 s). */
  readonly drainTimeoutMs?: number
}

/**
 * Serve over stdio: newline-delimited JSON-RPC on standard input and output. Resolves once
 * connected; `closed` resolves after end of input (in-flight requests answered first) or `close()`.
 *
 * @since 0.1.0
 * @category transports
 * @example
 * ```ts
 * import { createLambdaServer, serveStdio } from "lambdagent/mcp"
 * const handle = await serveStdio(await createLambdaServer({ store: "./tools.json" }))
 * await handle.closed
 * ```
 */
export const serveStdio = async (server: LambdaServer, options: StdioServeOptions = {}): Promise<ServeHandle> => {
  const stdin = options.stdin ?? process.stdin
  const stdout = options.stdout ?? process.stdout
  const pending = new Set<string | number>()
  let drained: (() => void) | undefined
  const writer = new LineWriter(stdout)
  const transport = new LineTransport(writer, (message) => {
    if (!("method" in message) && "id" in message && message.id !== undefined) {
      pending.delete(message.id)
      if (pending.size === 0) drained?.()
    }
  })
  /** Direct calls being answered (see directCall.ts), to cancel by request id. */
  const direct = new Map<string | number, AbortController>()
  /**
   * Answer a plain call of the server's own tools without the SDK's request machinery; the same
   * response, cancellation (`notifications/cancelled`, closing) and order. It is taken only while
   * no request handed to the SDK waits for its answer: one request at a time, in arrival order,
   * holds across both paths.
   */
  const answerDirectly = (call: PlainToolCall): boolean => {
    const answer = session !== undefined ? directCallOf(session) : undefined
    if (answer === undefined || pending.size > direct.size || pending.has(call.id)) return false
    const controller = new AbortController()
    const notify = (notification: ServerNotification) =>
      controller.signal.aborted ? Promise.resolve() : session!.notification(notification, { relatedRequestId: call.id })
    const answered = answer(call, controller.signal, notify)
    if (answered === undefined) return false
    pending.add(call.id)
    direct.set(call.id, controller)
    const respond = (response: JSONRPCMessage) => {
      if (direct.get(call.id) === controller) direct.delete(call.id)
      // a cancelled request gets no response, as from the SDK
      if (!controller.signal.aborted) void transport.send(response)
    }
    answered.then(
      (result) => respond({ result, jsonrpc: "2.0", id: call.id } as JSONRPCMessage),
      (error: unknown) => respond(errorResponse(call.id, error))
    )
    return true
  }
  const guard = new LineGuard(
    options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    (response) => void transport.send(response).catch(() => undefined),
    (message) => {
      if ("method" in message && "id" in message) pending.add(message.id)
      else if ("method" in message && message.method === "notifications/cancelled") {
        // A cancelled request gets no response; stop waiting for it.
        const params = message.params as { requestId?: string | number; reason?: unknown } | undefined
        const id = params?.requestId
        if (id !== undefined) {
          pending.delete(id)
          const controller = direct.get(id)
          if (controller !== undefined) {
            // no longer waited for: it must not count as a request the SDK has not answered
            direct.delete(id)
            controller.abort(params?.reason)
          }
          if (pending.size === 0) drained?.()
        }
      }
      transport.receive(message)
    },
    (resume) => writer.afterAnswers(resume),
    answerDirectly
  )
  const restoreConsole = (options.redirectConsole ?? stdout === process.stdout) ? redirectConsole() : () => undefined
  let session: Server | undefined
  let resolveClosed!: () => void
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve))
  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= (async () => {
      stdin.unpipe(guard)
      if (stdin === process.stdin) process.stdin.pause()
      for (const controller of direct.values()) controller.abort()
      await session?.close().catch(() => undefined)
      restoreConsole()
      resolveClosed()
    })()
    return closing
  }

  guard.on("finish", () => {
    const waitMs = options.drainTimeoutMs ?? 60_000
    const done =
      pending.size === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            drained = resolve
            setTimeout(resolve, waitMs).unref()
          })
    void done.then(close)
  })
  stdout.on("error", () => void close()) // the client went away
  stdin.on("error", () => void close())
  session = await server.connect(transport)
  stdin.pipe(guard) // after connecting: every message finds the session listening
  return { server, closed, close }
}

const redirectConsole = (): (() => void) => {
  const saved = { log: console.log, info: console.info, debug: console.debug }
  console.log = console.error
  console.info = console.error
  console.debug = console.error
  return () => {
    console.log = saved.log
    console.info = saved.info
    console.debug = saved.debug
  }
}

/**
 * Options of {@link serveHttp}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { HttpServeOptions } from "lambdagent/mcp"
 * const o: HttpServeOptions = { port: 8765, host: "127.0.0.1" }
 * ```
 */
export interface HttpServeOptions extends HttpSecurityOptions {
  /** Port to listen on; 0 (the default) picks a free one (see {@link ServeHandle.port}). */
  readonly port?: number
  /** Interface to bind (default `127.0.0.1`: local clients only). */
  readonly host?: string
  /** Endpoint path (default `/mcp`). */
  readonly path?: string
  /** Largest request body (default {@link DEFAULT_MAX_MESSAGE_BYTES}). */
  readonly maxMessageBytes?: number
  /** Close sessions idle this long, in milliseconds (default: one hour). */
  readonly sessionIdleMs?: number
  /** Where diagnostics go (default: standard error). */
  readonly log?: (line: string) => void
}

/**
 * Who may use an HTTP endpoint: the `Host` and `Origin` headers it accepts (protection against
 * DNS rebinding) and an optional authorization check.
 *
 * Every request's `Host` header must be one of `127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT`
 * (PORT being the bound port), the bound address with the port when it is a specific address, or
 * an entry of `allowedHosts`. A request with an `Origin` header must come from one of those hosts
 * (any scheme) or from an entry of `allowedOrigins`. Refused requests get `403` with a JSON-RPC
 * error body, before anything else is read.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { bearerCheck } from "lambdagent/http"
 * import type { HttpSecurityOptions } from "lambdagent/mcp"
 * const security: HttpSecurityOptions = {
 *   allowedHosts: ["mcp.example.internal"],
 *   allowedOrigins: ["http://localhost:6274"],
 *   authorize: bearerCheck(process.env.LAMBDAGENT_TOKEN ?? "change me")
 * }
 * ```
 */
export interface HttpSecurityOptions extends HostGuard.HostPolicy {
  /**
   * Checks the `Authorization` header of every request (`undefined` when absent); throwing refuses
   * the request. The answer is `401` with the error's message in a JSON-RPC error body, and the
   * error's `status` and `headers` when it has them (such as the `WWW-Authenticate` challenge of
   * `bearerCheck` from `lambdagent/http`). May be async.
   */
  readonly authorize?: (authorization: string | undefined) => void | Promise<void>
}
interface HttpSession {
  readonly transport: StreamableHTTPServerTransport
  readonly session: Server
  lastSeen: number
}

const sendJsonError = (
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  id: string | number | null = null,
  headers: Readonly<Record<string, string>> = {}
) => {
  if (res.headersSent) {
    res.end()
    return
  }
  res.writeHead(status, { ...headers, "content-type": "application/json" })
  res.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }))
}

/** The status and headers of a refused authorization: those of the error when it has them. */
const refusal = (error: unknown): { status: number; headers: Record<string, string>; message: string } => {
  const fields = typeof error === "object" && error !== null ? (error as { status?: unknown; headers?: unknown }) : {}
  const status = typeof fields.status === "number" && fields.status >= 400 && fields.status < 500 ? fields.status : 401
  const headers: Record<string, string> = {}
  if (typeof fields.headers === "object" && fields.headers !== null) {
    for (const [key, value] of Object.entries(fields.headers)) if (typeof value === "string") headers[key] = value
  }
  if (status === 401 && !Object.keys(headers).some((k) => k.toLowerCase() === "www-authenticate")) headers["WWW-Authenticate"] = "Bearer"
  const message = error instanceof Error && error.message !== "" ? error.message : "the request is not authorized"
  return { status, headers, message }
}

class BodyTooLarge extends Error {}

const readBody = (req: IncomingMessage, limit: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"])
    if (Number.isFinite(declared) && declared > limit) {
      reject(new BodyTooLarge())
      req.resume()
      return
    }
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        reject(new BodyTooLarge())
        req.resume()
        chunks.length = 0
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/**
 * Serve over Streamable HTTP (the SDK's transport), one MCP session per client. Resolves once
 * listening.
 *
 * @since 0.1.0
 * @category transports
 * @example
 * ```ts
 * import { createLambdaServer, serveHttp } from "lambdagent/mcp"
 * const handle = await serveHttp(await createLambdaServer(), { port: 8765 })
 * console.log(handle.url) // http://127.0.0.1:8765/mcp
 * ```
 */
export const serveHttp = async (server: LambdaServer, options: HttpServeOptions = {}): Promise<ServeHandle> => {
  // loaded here, not with the module: a server on stdio never needs it (nor the web server it brings)
  const { StreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/streamableHttp.js")
  const host = options.host ?? "127.0.0.1"
  const path = options.path ?? "/mcp"
  const limit = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
  const idleMs = options.sessionIdleMs ?? 60 * 60 * 1000
  const log = options.log ?? ((line: string) => process.stderr.write(`[lambdagent mcp] ${line}\n`))
  const sessions = new Map<string, HttpSession>()
  const guardFor = HostGuard.hostGuard(host, options)
  let guard: HostGuard.HostCheck | undefined

  const closeSession = async (id: string) => {
    const entry = sessions.get(id)
    if (entry === undefined) return
    sessions.delete(id)
    await entry.session.close().catch(() => undefined)
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://localhost")
    if (url.pathname !== path) {
      sendJsonError(res, 404, -32000, `Not found: the MCP endpoint is ${path}`)
      return
    }
    const forbidden = guard!(req.headers.host, req.headers.origin)
    if (forbidden !== undefined) {
      sendJsonError(res, 403, -32000, forbidden)
      return
    }
    if (options.authorize !== undefined) {
      try {
        await options.authorize(req.headers.authorization)
      } catch (error) {
        const { headers, message, status } = refusal(error)
        sendJsonError(res, status, -32000, `Unauthorized: ${message}`, null, headers)
        return
      }
    }
    const header = req.headers["mcp-session-id"]
    const sessionId = Array.isArray(header) ? header[0] : header
    const existing = sessionId === undefined ? undefined : sessions.get(sessionId)
    if (sessionId !== undefined && existing === undefined) {
      sendJsonError(res, 404, -32001, "Session not found (it may have expired); initialize a new session")
      return
    }
    if (existing !== undefined) existing.lastSeen = Date.now()

    if (req.method === "POST") {
      let body: unknown
      try {
        const text = await readBody(req, limit)
        try {
          body = JSON.parse(text)
        } catch (error) {
          sendJsonError(res, 400, -32700, `Parse error: ${error instanceof Error ? error.message : String(error)}`)
          return
        }
      } catch (error) {
        if (error instanceof BodyTooLarge) sendJsonError(res, 413, -32600, `Invalid Request: body larger than ${limit} bytes`)
        else sendJsonError(res, 400, -32600, "Invalid Request: the body could not be read")
        return
      }
      if (Array.isArray(body) && body.length === 0) {
        // JSON-RPC 2.0: an empty batch is answered with one Invalid Request error, as over stdio
        sendJsonError(res, 400, -32600, "Invalid Request: an empty batch")
        return
      }
      if (!Array.isArray(body) && !JSONRPCMessageSchema.safeParse(body).success) {
        sendJsonError(res, 400, -32600, "Invalid Request: not a JSON-RPC 2.0 request, notification or response", idOf(body))
        return
      }
      if (existing !== undefined) {
        await existing.transport.handleRequest(req, res, body)
        return
      }
      const initializing = Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body)
      if (!initializing) {
        sendJsonError(res, 400, -32000, "Bad Request: send initialize first, then the Mcp-Session-Id header it returns", idOf(body))
        return
      }
      let entry: HttpSession | undefined
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          if (entry !== undefined) sessions.set(id, entry)
        },
        onsessionclosed: (id) => void closeSession(id)
      })
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
      }
      const session = await server.connect(transport)
      entry = { transport, session, lastSeen: Date.now() }
      await transport.handleRequest(req, res, body)
      if (transport.sessionId === undefined) await session.close().catch(() => undefined) // initialize failed
      return
    }
    if (req.method === "GET" || req.method === "DELETE") {
      if (existing === undefined) {
        sendJsonError(res, 400, -32000, "Bad Request: the Mcp-Session-Id header is required")
        return
      }
      await existing.transport.handleRequest(req, res)
      return
    }
    res.setHeader("allow", "GET, POST, DELETE")
    sendJsonError(res, 405, -32000, `Method ${req.method ?? ""} not allowed`)
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`HTTP request failed: ${error instanceof Error ? error.message : String(error)}`)
      sendJsonError(res, 500, -32603, "Internal error")
    })
  })
  http.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n")
  })

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject)
    http.listen(options.port ?? 0, host, () => {
      http.off("error", reject)
      resolve()
    })
  })
  http.on("error", (error) => log(`HTTP server error: ${error.message}`))
  const port = (http.address() as AddressInfo).port
  guard = guardFor(port)

  const sweep = setInterval(
    () => {
      const now = Date.now()
      for (const [id, entry] of sessions) if (now - entry.lastSeen > idleMs) void closeSession(id)
    },
    Math.max(1000, Math.min(idleMs / 2, 60_000))
  )
  sweep.unref()

  let resolveClosed!: () => void
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve))
  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= (async () => {
      clearInterval(sweep)
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()))
      await Promise.allSettled([...sessions.keys()].map(closeSession))
      http.closeAllConnections()
      await stopped
      resolveClosed()
    })()
    return closing
  }

  // every interface includes the loopback one, whose names the Host check accepts
  return { server, url: `http://${HostGuard.localUrlHost(host)}:${port}${path}`, port, closed, close }
}

/**
 * Options of {@link serve}: the server's options, a transport, and where tools persist.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ServeOptions } from "lambdagent/mcp"
 * const o: ServeOptions = { transport: { http: 8765 }, store: "./tools.json" }
 * ```
 */
export interface ServeOptions extends Omit<LambdaServerOptions, "store" | "registry"> {
  readonly transport: "stdio" | ({ readonly http: number } & Omit<HttpServeOptions, "port" | "log">)
  /** A store, a JSON file path, or `":memory:"`; default `~/.lambdagent/mcp-tools.json`. */
  readonly store?: string | ToolRegistryStore
  /** Largest message (stdio line or HTTP body). */
  readonly maxMessageBytes?: number
}

/**
 * Create a lambda server and serve it: the library entry behind `lambdagent mcp`.
 *
 * @since 0.1.0
 * @category transports
 * @example
 * ```ts
 * import { serve } from "lambdagent/mcp"
 * const handle = await serve({ transport: { http: 0 }, store: ":memory:" })
 * console.log(handle.url)
 * await handle.close()
 * ```
 */
export const serve = async (options: ServeOptions): Promise<ServeHandle> => {
  const { maxMessageBytes, store, transport, ...serverOptions } = options
  const server = await createLambdaServer({ ...serverOptions, store: resolveStore(store) })
  if (transport === "stdio") {
    const handle = await serveStdio(server, maxMessageBytes !== undefined ? { maxMessageBytes } : {})
    void handle.closed.then(() => server.close())
    return handle
  }
  const { http, ...httpOptions } = transport
  try {
    const handle = await serveHttp(server, {
      ...httpOptions,
      port: http,
      ...(maxMessageBytes !== undefined ? { maxMessageBytes } : {}),
      ...(options.log !== undefined ? { log: options.log } : {})
    })
    void handle.closed.then(() => server.close())
    return handle
  } catch (error) {
    await server.close()
    throw error
  }
}

/**
 * Options of {@link mcpCommand} (the `lambdagent mcp` command line).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { McpCommandOptions } from "lambdagent/mcp"
 * const o: McpCommandOptions = { http: "8765", store: "./tools.json" }
 * ```
 */
export interface McpCommandOptions extends Omit<ServeOptions, "transport">, HttpSecurityOptions {
  /** Serve Streamable HTTP on this port instead of stdio. */
  readonly http?: number | string
  /** Interface for HTTP (default 127.0.0.1). */
  readonly host?: string
  /** With `http`: close sessions idle this long, in milliseconds (default: one hour). */
  readonly sessionIdleMs?: number
}

/**
 * Warnings worth printing when an HTTP server starts: an address other machines can reach
 * without authorization, and a wildcard address whose names the `Host` check does not know.
 *
 * @since 0.1.0
 * @category transports
 * @example
 * ```ts
 * import { httpStartupWarnings } from "lambdagent/mcp"
 * httpStartupWarnings("127.0.0.1", {}) // []
 * httpStartupWarnings("0.0.0.0", {}).length // 2: no token, and no names for the Host check
 * ```
 */
export const httpStartupWarnings = (host: string, security: HttpSecurityOptions): Array<string> => {
  const warnings: Array<string> = []
  if (!HostGuard.isLoopbackAddress(host) && security.authorize === undefined) {
    warnings.push(`warning: listening on ${host} without a token; anyone who can reach this port can use the server (set --token or $LAMBDAGENT_TOKEN)`)
  }
  if (HostGuard.isWildcardAddress(host) && (security.allowedHosts ?? []).length === 0) {
    warnings.push(
      `note: listening on ${host}, but only requests addressed to 127.0.0.1, localhost or [::1] are accepted; add the names clients use with --allow-host`
    )
  }
  return warnings
}

/**
 * Run `lambdagent mcp [--http PORT] [--host HOST] [--store PATH]`: serve until end of input
 * (stdio) or SIGINT/SIGTERM, then resolve. Diagnostics go to standard error.
 *
 * @since 0.1.0
 * @category transports
 * @example
 * ```ts
 * import { mcpCommand } from "lambdagent/mcp"
 * await mcpCommand({ store: "./tools.json" }) // serves stdio until the client closes it
 * ```
 */
export const mcpCommand = async (options: McpCommandOptions = {}): Promise<void> => {
  const { allowedHosts, allowedOrigins, authorize, host, http, sessionIdleMs, ...rest } = options
  let port: number | undefined
  if (http !== undefined) {
    port = typeof http === "number" ? http : Number(http)
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`--http expects a port number (0-65535), got ${JSON.stringify(http)}`)
  }
  const log = options.log ?? ((line: string) => process.stderr.write(`[lambdagent mcp] ${line}\n`))
  const security: HttpSecurityOptions = {
    ...(allowedHosts !== undefined ? { allowedHosts } : {}),
    ...(allowedOrigins !== undefined ? { allowedOrigins } : {}),
    ...(authorize !== undefined ? { authorize } : {})
  }
  const handle = await serve({
    ...rest,
    log,
    transport:
      port === undefined
        ? "stdio"
        : { http: port, ...security, ...(host !== undefined ? { host } : {}), ...(sessionIdleMs !== undefined ? { sessionIdleMs } : {}) }
  })
  const { registry } = handle.server
  log(`serving ${port === undefined ? "stdio" : handle.url}; ${registry.size} tool${registry.size === 1 ? "" : "s"} from ${registry.store.description}`)
  if (port !== undefined) for (const warning of httpStartupWarnings(host ?? "127.0.0.1", security)) log(warning)
  await serveUntilClosed(handle)
}
