/**
 * Serving an agent over the command line, as a config's `cli.server` block says (seed §17.3):
 * one request per line, one answer per line, on standard input and output (`mode: pipe`), on
 * each connection to a Unix socket (`socket`) or a TCP port (`tcp`). With `format: text` a line
 * is the input and the answer is the result's text; with `json` or `jsonl` (the same here: a line
 * is one JSON value) a line is `{"input": …}` or a JSON string, and the answer is `{"result": …}`
 * or `{"error": {"kind", "message"}}`. Lines are answered in order; the runs of one connection
 * share its session.
 */
import { randomUUID } from "node:crypto"
import { existsSync, unlinkSync } from "node:fs"
import { createServer, type Socket } from "node:net"
import { resolve } from "node:path"
import { createInterface } from "node:readline"
import type { Readable, Writable } from "node:stream"
import { type Runtime, type Term, Value } from "lambdagent"

/** The `cli.server` block. */
export interface CliServerSettings {
  readonly mode?: "pipe" | "socket" | "tcp" | undefined
  readonly format?: "text" | "json" | "jsonl" | undefined
  readonly socketPath?: string | undefined
  readonly port?: number | undefined
}

const errorOf = (error: unknown): { kind: string; message: string } => ({
  kind: (error as { _tag?: string })._tag ?? (error instanceof Error ? error.name : "Error"),
  message: error instanceof Error ? error.message : String(error)
})

/** The input a request line holds, or why it holds none. */
const inputOf = (line: string, format: "text" | "json" | "jsonl"): { input: unknown } | { error: string } => {
  if (format === "text") return { input: line }
  let json: unknown
  try {
    json = JSON.parse(line)
  } catch {
    return { error: 'a request line must be JSON: {"input": …} or a JSON string' }
  }
  if (typeof json === "string") return { input: json }
  if (typeof json === "object" && json !== null && !Array.isArray(json) && "input" in json) return { input: (json as { input: unknown }).input }
  return { error: 'a request line must be {"input": …} or a JSON string' }
}

/** Answer every line of `input` on `output`, in order, until `input` ends. */
const serveLines = async (input: Readable, output: Writable, run: (input: unknown, session: string) => Promise<string>, format: "text" | "json" | "jsonl") => {
  const session = randomUUID()
  const lines = createInterface({ input, crlfDelay: Infinity })
  for await (const line of lines) {
    if (line.trim() === "") continue
    const request = inputOf(line, format)
    let answer: string
    if ("error" in request) answer = format === "text" ? `[ERROR: ${request.error}]` : JSON.stringify({ error: { kind: "BadRequest", message: request.error } })
    else {
      try {
        const result = await run(request.input, session)
        answer = format === "text" ? result : JSON.stringify({ result })
      } catch (error) {
        const e = errorOf(error)
        answer = format === "text" ? `[ERROR: ${e.kind}: ${e.message}]` : JSON.stringify({ error: e })
      }
    }
    if (!output.writable) break
    output.write(`${answer}\n`)
  }
}

const stopped = () =>
  new Promise<void>((done) => {
    process.once("SIGINT", done)
    process.once("SIGTERM", done)
  })

/**
 * Serve `term` as `settings` say until standard input ends (`pipe`) or the process is stopped
 * with SIGINT/SIGTERM (`socket`, `tcp`). `socketPath` is relative to `baseDir`.
 */
export const serveCli = async (
  term: Term.Term,
  runtime: Runtime.Runtime,
  settings: CliServerSettings,
  options: { readonly baseDir: string; readonly host?: string; readonly port?: number; readonly log: (line: string) => void }
): Promise<void> => {
  const format = settings.format ?? "text"
  const run = async (input: unknown, session: string) => Value.toText((await runtime.run(term, input, { session })).value)
  const mode = settings.mode ?? "pipe"
  if (mode === "pipe") {
    await serveLines(process.stdin, process.stdout, run, format)
    return
  }
  const connections = new Set<Socket>()
  const server = createServer((socket) => {
    connections.add(socket)
    socket.on("close", () => connections.delete(socket))
    socket.on("error", () => socket.destroy())
    void serveLines(socket, socket, run, format).finally(() => socket.end())
  })
  const listening = new Promise<void>((done, fail) => {
    server.once("error", fail)
    server.once("listening", done)
  })
  let socketPath: string | undefined
  if (mode === "socket") {
    socketPath = resolve(options.baseDir, settings.socketPath ?? `lambdagent-${process.pid}.sock`)
    // a socket file left by a server that is gone would refuse the address
    if (existsSync(socketPath)) unlinkSync(socketPath)
    server.listen(socketPath)
    await listening
    options.log(`listening on ${socketPath} (cli.server, ${format})`)
  } else {
    server.listen(options.port ?? settings.port ?? 0, options.host ?? "127.0.0.1")
    await listening
    const address = server.address() as { address: string; port: number }
    options.log(`listening on ${address.address}:${address.port} (cli.server, ${format})`)
  }
  await stopped()
  for (const socket of connections) socket.destroy()
  await new Promise<void>((done) => server.close(() => done()))
  if (socketPath !== undefined && existsSync(socketPath)) unlinkSync(socketPath)
}
