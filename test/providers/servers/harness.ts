/**
 * A scriptable local HTTP server for provider tests: each request takes the next queued behaviour
 * (or the protocol's default), and the server records requests and sockets closed before the
 * response finished (how cancellation shows up on the wire).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface Recorded {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
}

export type Behaviour =
  /** A JSON body. */
  | { readonly kind: "json"; readonly status?: number; readonly body: unknown; readonly headers?: Record<string, string> }
  /** Any text body, as is (for malformed JSON). */
  | { readonly kind: "raw"; readonly status?: number; readonly body: string; readonly headers?: Record<string, string> }
  /**
   * An SSE body made of pre-formatted frames. `end`: "close" ends the response normally (default),
   * "destroy" cuts the socket after the frames, "hang" keeps the response open forever.
   */
  | { readonly kind: "sse"; readonly frames: ReadonlyArray<string>; readonly end?: "close" | "destroy" | "hang"; readonly frameDelayMs?: number }
  /**
   * An NDJSON body (`application/x-ndjson`, one JSON object a line, as Ollama streams). `end`:
   * "close" ends the response normally (default), "destroy" cuts the socket after the lines.
   */
  | { readonly kind: "ndjson"; readonly lines: ReadonlyArray<unknown>; readonly end?: "close" | "destroy" }
  /** A JSON body announced with a larger Content-Length, then the socket is destroyed. */
  | { readonly kind: "truncated"; readonly body: string }
  /** Never answer. */
  | { readonly kind: "hang" }

export class TestServer {
  readonly requests: Array<Recorded> = []
  /** Requests whose connection closed before their response was complete. */
  earlyCloses = 0
  private readonly queue: Array<Behaviour> = []
  private readonly closeWaiters: Array<{ readonly n: number; readonly resolve: () => void }> = []
  private readonly requestWaiters: Array<{ readonly n: number; readonly resolve: () => void }> = []

  private constructor(
    private readonly server: http.Server,
    readonly url: string
  ) {}

  static async start(fallback: (request: Recorded) => Behaviour): Promise<TestServer> {
    let self: TestServer | undefined
    const server = http.createServer((req, res) => {
      const parts: Array<Buffer> = []
      req.on("data", (part: Buffer) => parts.push(part))
      req.on("end", () => {
        const text = Buffer.concat(parts).toString("utf8")
        let body: unknown = text
        try {
          body = text === "" ? undefined : JSON.parse(text)
        } catch {
          // keep the text
        }
        const recorded: Recorded = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body }
        self!.record(recorded)
        res.on("close", () => {
          if (!res.writableFinished) self!.noteEarlyClose()
        })
        void self!.respond(self!.queue.shift() ?? fallback(recorded), res)
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    self = new TestServer(server, `http://127.0.0.1:${port}`)
    return self
  }

  /** Queue behaviours for the next requests, in order. */
  enqueue(...behaviours: Array<Behaviour>): void {
    this.queue.push(...behaviours)
  }

  /** Forget queued behaviours and recorded requests. */
  reset(): void {
    this.queue.length = 0
    this.requests.length = 0
    this.earlyCloses = 0
  }

  /** Resolves once `n` connections in total closed before their response finished; rejects after `ms`. */
  waitForEarlyCloses(n: number, ms = 5_000): Promise<void> {
    if (this.earlyCloses >= n) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server saw ${this.earlyCloses} early closes, expected ${n}`)), ms)
      this.closeWaiters.push({
        n,
        resolve: () => {
          clearTimeout(timer)
          resolve()
        }
      })
    })
  }

  /** Resolves once `n` requests have arrived in total. */
  waitForRequests(n: number): Promise<void> {
    if (this.requests.length >= n) return Promise.resolve()
    return new Promise((resolve) => this.requestWaiters.push({ n, resolve }))
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private record(request: Recorded): void {
    this.requests.push(request)
    for (let i = this.requestWaiters.length - 1; i >= 0; i--) {
      const waiter = this.requestWaiters[i]!
      if (this.requests.length >= waiter.n) {
        this.requestWaiters.splice(i, 1)
        waiter.resolve()
      }
    }
  }

  private noteEarlyClose(): void {
    this.earlyCloses++
    for (let i = this.closeWaiters.length - 1; i >= 0; i--) {
      const waiter = this.closeWaiters[i]!
      if (this.earlyCloses >= waiter.n) {
        this.closeWaiters.splice(i, 1)
        waiter.resolve()
      }
    }
  }

  private async respond(behaviour: Behaviour, res: http.ServerResponse): Promise<void> {
    switch (behaviour.kind) {
      case "json": {
        res.writeHead(behaviour.status ?? 200, { "content-type": "application/json", ...behaviour.headers })
        res.end(JSON.stringify(behaviour.body))
        return
      }
      case "raw": {
        res.writeHead(behaviour.status ?? 200, { "content-type": "application/json", ...behaviour.headers })
        res.end(behaviour.body)
        return
      }
      case "truncated": {
        res.writeHead(200, { "content-type": "application/json", "content-length": String(behaviour.body.length * 2) })
        res.write(behaviour.body.slice(0, Math.floor(behaviour.body.length / 2)))
        setTimeout(() => res.socket?.destroy(), 20)
        return
      }
      case "sse": {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        for (const frame of behaviour.frames) {
          if (res.destroyed) return
          res.write(frame)
          if (behaviour.frameDelayMs !== undefined) await new Promise((r) => setTimeout(r, behaviour.frameDelayMs))
        }
        const end = behaviour.end ?? "close"
        if (end === "close") res.end()
        else if (end === "destroy") setTimeout(() => res.socket?.destroy(), 20)
        return
      }
      case "ndjson": {
        res.writeHead(200, { "content-type": "application/x-ndjson" })
        for (const line of behaviour.lines) res.write(`${JSON.stringify(line)}\n`)
        if (behaviour.end === "destroy") setTimeout(() => res.socket?.destroy(), 20)
        else res.end()
        return
      }
      case "hang":
        return
    }
  }
}
