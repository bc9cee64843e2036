/**
 * The `/ws` endpoint: one WebSocket connection carries any number of runs, each named by an `id`
 * that every message about it repeats. A closed socket cancels its runs.
 *
 * @since 0.1.0
 * @module
 */
import type { Runtime } from "lambdagent"
import { type RawData, WebSocket } from "ws"
import { failureOf, HttpFailure, parseRunRequest, RunAborted, type RunRequest, type SocketMessage } from "../protocol.ts"
import { parseJson, toJsonText } from "./json.ts"
import type { RunSlot, RunTracker } from "./runs.ts"

/**
 * What a connection needs from its server.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { SocketHost } from "./websocket.ts"
 * const describe = (host: SocketHost) => `${host.runs.size} runs in flight`
 * ```
 */
export interface SocketHost {
  readonly runs: RunTracker
  /** Start a run of the agent, streaming its events. */
  readonly stream: (request: RunRequest, signal: AbortSignal) => AsyncIterable<Runtime.StreamEvent>
  /** Told of unexpected errors (bugs). */
  readonly report: (error: unknown) => void
}

const textOf = (data: RawData): string => (Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString("utf8")

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const validId = (u: unknown): u is string | number => typeof u === "string" || (typeof u === "number" && Number.isFinite(u))

/**
 * One WebSocket client. A text message `{input, session?, trace?, id?}` starts a run (runs on one
 * connection run concurrently); `{cancel: id}` cancels one. The server answers with
 * {@link SocketMessage}s; a malformed message gets an `error` message and the connection stays
 * open.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import type { WebSocket } from "ws"
 * import { SocketConnection, type SocketHost } from "./websocket.ts"
 * declare const ws: WebSocket, host: SocketHost
 * const connection = new SocketConnection(ws, host)
 * connection.drain() // at shutdown: refuse new runs, close once the current ones are done
 * ```
 */
export class SocketConnection {
  private readonly inFlight = new Map<string | number, RunSlot>()
  private lastId = 0
  private draining = false
  /** Whether the client answered the last ping. */
  alive = true

  constructor(
    readonly socket: WebSocket,
    private readonly host: SocketHost
  ) {
    socket.on("message", (data) => this.receive(data))
    socket.on("pong", () => {
      this.alive = true
    })
    socket.on("close", () => {
      for (const slot of this.inFlight.values()) slot.abort(new RunAborted({ reason: "ClientClosed", message: "the WebSocket closed" }))
    })
    // a socket error is followed by "close"; without a listener it would be thrown
    socket.on("error", () => {})
  }

  /** How many runs this connection has in flight. */
  get size(): number {
    return this.inFlight.size
  }

  /** Refuse new runs; close the socket (1001) once the runs in flight have answered. */
  drain(): void {
    this.draining = true
    if (this.inFlight.size === 0) this.socket.close(1001, "server shutting down")
  }

  private send(message: SocketMessage): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(toJsonText(message))
  }

  private fail(id: string | number | undefined, error: unknown): void {
    const failure = failureOf(error)
    if (failure.kind === "Internal") this.host.report(error)
    this.send({ type: "error", ...(id !== undefined ? { id } : {}), error: { ...failure.body().error, status: failure.status } })
  }

  private nextId(): number {
    do this.lastId++
    while (this.inFlight.has(this.lastId))
    return this.lastId
  }

  private receive(data: RawData): void {
    let body: unknown
    try {
      body = parseJson(textOf(data))
    } catch (error) {
      this.fail(undefined, error)
      return
    }
    if (isRecord(body) && "cancel" in body) {
      const id = body.cancel
      const slot = validId(id) ? this.inFlight.get(id) : undefined
      if (slot === undefined)
        this.fail(
          validId(id) ? id : undefined,
          new HttpFailure({ status: 404, kind: "UnknownRun", message: `no run ${JSON.stringify(id)} is in flight on this connection` })
        )
      else slot.abort(new RunAborted({ reason: "Cancelled", message: "cancelled by the client" }))
      return
    }
    let request: RunRequest
    try {
      request = parseRunRequest(body, { allowId: true })
    } catch (error) {
      this.fail(isRecord(body) && validId(body.id) ? body.id : undefined, error)
      return
    }
    const id = request.id ?? this.nextId()
    if (this.inFlight.has(id)) {
      this.fail(
        id,
        new HttpFailure({ status: 409, kind: "DuplicateId", message: `a run with id ${JSON.stringify(id)} is already in flight on this connection` })
      )
      return
    }
    let slot: RunSlot
    try {
      if (this.draining) throw new HttpFailure({ status: 503, kind: "ShuttingDown", message: "the server is shutting down" })
      slot = this.host.runs.acquire()
    } catch (error) {
      this.fail(id, error)
      return
    }
    this.inFlight.set(id, slot)
    void this.run(id, request, slot)
  }

  private async run(id: string | number, request: RunRequest, slot: RunSlot): Promise<void> {
    try {
      for await (const event of this.host.stream(request, slot.signal)) {
        switch (event.type) {
          case "trace":
            this.send({ type: "trace", id, event: event.event })
            break
          case "token":
            this.send({ type: "token", id, name: event.name, text: event.text })
            break
          case "tool-call":
            this.send({ ...event, id })
            break
          case "result":
            this.send({ type: "result", id, result: event.output.result, trace: event.output.trace, stats: event.output.stats })
            break
        }
      }
    } catch (error) {
      this.fail(id, error)
    } finally {
      this.inFlight.delete(id)
      slot.end()
      if (this.draining && this.inFlight.size === 0) this.socket.close(1001, "server shutting down")
    }
  }
}
