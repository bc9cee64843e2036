/**
 * Shared pieces of the HTTP plugin's tests: servers closed after each test, requests that cannot
 * hang, an SSE reader, WebSocket helpers and a tool that records its cancellation.
 */
import { Tools } from "lambdagent"
import { afterEach, expect } from "vitest"
import { WebSocket } from "ws"
import { waitFor } from "../../../test/fixtures/waitFor.ts"
import { serve, type ServeOptions, type Server } from "../serve.ts"

/**
 * How long a wait for an event (a request, a run starting, a socket closing) may last before the
 * test fails naming it: far longer than any loaded machine takes, and shorter than the test's own
 * timeout, so a hang is reported as the event that never came. Not a speed check.
 */
export const hangMs = 30_000

const open = new Set<Server>()

afterEach(async () => {
  const servers = [...open]
  open.clear()
  await Promise.all(servers.map((s) => s.close({ graceMs: 0 })))
})

/** A server on a free port, closed after the test. */
export const start = async (options: ServeOptions): Promise<Server> => {
  const server = await serve({ port: 0, onError: () => {}, ...options })
  open.add(server)
  return server
}

/** Forget a server the test closes itself. */
export const forget = (server: Server): void => {
  open.delete(server)
}

/** POST a JSON body (or raw text) with a 5 s limit. */
export const post = (
  server: Server,
  path: string,
  body: unknown,
  init: { headers?: Record<string, string>; raw?: boolean; signal?: AbortSignal } = {}
): Promise<Response> =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: init.raw === true ? (body as string) : JSON.stringify(body),
    signal: init.signal ?? AbortSignal.timeout(hangMs)
  })

export const get = (server: Server, path: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${server.url}${path}`, { headers, signal: AbortSignal.timeout(hangMs) })

export interface Health {
  status: string
  uptime: number
  inFlight: number
}

export const health = async (server: Server): Promise<Health> => (await (await get(server, "/health")).json()) as Health

/** The server answers a fresh run with the expected echo, and reports nothing in flight. */
export const expectAlive = async (server: Server, headers: Record<string, string> = {}): Promise<void> => {
  const res = await post(server, "/run", { input: "still here" }, { headers })
  expect(res.status).toBe(200)
  expect(((await res.json()) as { result: unknown }).result).toBe("still here")
  await waitFor(async () => (await health(server)).inFlight === 0, "no run in flight")
}

export interface Deferred<A> {
  readonly promise: Promise<A>
  readonly resolve: (a: A) => void
}

export const deferred = <A = void>(): Deferred<A> => {
  let resolve!: (a: A) => void
  const promise = new Promise<A>((r) => (resolve = r))
  return { promise, resolve }
}

/** Wait for `promise`, failing with `what` if it never settles (a hang: see {@link hangMs}). */
export const waitForEvent = <A>(promise: Promise<A>, what: string): Promise<A> =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: never happened`)), hangMs).unref())])

/**
 * A tool `wait` that blocks until its call is cancelled (or `release` is called), recording both.
 * The agent `Term.tool("wait")` calls it on its input.
 */
export const waitTool = () => {
  let started = deferred()
  let cancelled = deferred()
  const pending = new Set<() => void>()
  const state = { calls: 0, cancellations: 0 }
  const tool = Tools.define({
    name: "wait",
    description: "Blocks until cancelled",
    timeoutMs: 60_000,
    run: (input: string, { signal }) =>
      new Promise<string>((resolve) => {
        state.calls++
        const release = () => resolve(`released ${input}`)
        pending.add(release)
        signal.addEventListener(
          "abort",
          () => {
            pending.delete(release)
            state.cancellations++
            cancelled.resolve()
            resolve("cancelled")
          },
          { once: true }
        )
        started.resolve()
      })
  })
  return {
    tool,
    state,
    get started() {
      return started.promise
    },
    get cancelled() {
      return cancelled.promise
    },
    /** Let every blocked call return. */
    release: () => {
      for (const release of pending) release()
      pending.clear()
    },
    reset: () => {
      started = deferred()
      cancelled = deferred()
    }
  }
}

export interface SseEvent {
  event: string
  data: unknown
}

/** Read a whole event stream. */
export const readSse = async (res: Response): Promise<Array<SseEvent>> => {
  const text = await res.text()
  const events: Array<SseEvent> = []
  for (const block of text.split("\n\n")) {
    let event = "message"
    const data: Array<string> = []
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7)
      else if (line.startsWith("data: ")) data.push(line.slice(6))
    }
    if (data.length > 0) events.push({ event, data: JSON.parse(data.join("\n")) })
  }
  return events
}

/** A connected WebSocket client that collects the server's messages. */
export const connect = async (server: Server, headers: Record<string, string> = {}) => {
  const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/ws`, { headers })
  const messages: Array<Record<string, unknown> & { type: string }> = []
  const waiters: Array<() => void> = []
  ws.on("message", (data) => {
    messages.push(JSON.parse(String(data)))
    for (const w of waiters.splice(0)) w()
  })
  await waitForEvent(
    new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve())
      ws.once("error", reject)
    }),
    "WebSocket open"
  )
  /** Wait for the first message (from `from` on) matching `match`. */
  const next = async (match: (m: Record<string, unknown> & { type: string }) => boolean) => {
    const deadline = Date.now() + hangMs
    for (;;) {
      const found = messages.find(match)
      if (found !== undefined) return found
      if (Date.now() > deadline) throw new Error(`no matching WebSocket message came; got ${JSON.stringify(messages)}`)
      await new Promise<void>((resolve) => {
        waiters.push(resolve)
        setTimeout(resolve, 50)
      })
    }
  }
  const send = (message: unknown) => ws.send(typeof message === "string" ? message : JSON.stringify(message))
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: String(reason) })))
  return { ws, messages, next, send, closed }
}

/** After a failure, the server still runs the `wait` agent (over `path`) to completion. */
export const expectWaitServing = async (server: Server, wait: ReturnType<typeof waitTool>, path: "/run" | "/stream" = "/run") => {
  wait.reset()
  const pending = post(server, path, { input: "again" })
  await waitForEvent(wait.started, "next run started")
  wait.release()
  const res = await pending
  expect(res.status).toBe(200)
  if (path === "/run") expect(((await res.json()) as { result: unknown }).result).toBe("released again")
  else expect((await readSse(res)).at(-1)).toMatchObject({ event: "result", data: { result: "released again" } })
}
