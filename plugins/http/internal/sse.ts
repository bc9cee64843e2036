/**
 * Server-sent events over a Node response: the headers, one `event:`/`data:` frame per message,
 * heartbeat comments, and back-pressure (a write waits while the client's buffer is full).
 *
 * @since 0.1.0
 * @module
 */
import type { ServerResponse } from "node:http"

/**
 * How often an idle event stream gets a `: ping` comment, so proxies keep it open.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { sseHeartbeatMs } from "./sse.ts"
 * console.log(sseHeartbeatMs) // 15000
 * ```
 */
export const sseHeartbeatMs = 15_000

/**
 * One SSE frame: `event: <name>` and one `data:` line per line of `data`, then a blank line.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { sseFrame } from "./sse.ts"
 * sseFrame("result", '{"result":"hi"}') // 'event: result\ndata: {"result":"hi"}\n\n'
 * ```
 */
export const sseFrame = (event: string, data: string): string =>
  `event: ${event}\n${data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join("")}\n`

/**
 * Writes an event stream to a response. Writes after the client went away are dropped. Exported
 * for the other HTTP servers (the A2A plugin streams its task updates with it).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { createServer } from "node:http"
 * import { SseWriter } from "lambdagent/http"
 * createServer(async (_req, res) => {
 *   const sse = new SseWriter(res)
 *   await sse.send("result", JSON.stringify({ result: "hi" }))
 *   sse.end()
 * })
 * ```
 */
export class SseWriter {
  private readonly heartbeat: ReturnType<typeof setInterval>

  constructor(
    private readonly res: ServerResponse,
    headers: Readonly<Record<string, string>> = {}
  ) {
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      "X-Accel-Buffering": "no",
      ...headers
    })
    res.flushHeaders()
    this.heartbeat = setInterval(() => {
      if (this.open) res.write(": ping\n\n")
    }, sseHeartbeatMs)
    this.heartbeat.unref()
  }

  /** Whether the client can still receive events. */
  get open(): boolean {
    return !this.res.writableEnded && !this.res.destroyed
  }

  /** Write one event; resolves once the client's buffer has room again (or the client is gone). */
  send(event: string, data: string): Promise<void> {
    if (!this.open) return Promise.resolve()
    if (this.res.write(sseFrame(event, data))) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        this.res.off("drain", done)
        this.res.off("close", done)
        resolve()
      }
      this.res.on("drain", done)
      this.res.on("close", done)
    })
  }

  /** Finish the stream. */
  end(): void {
    clearInterval(this.heartbeat)
    if (this.open) this.res.end()
  }
}
