/**
 * A lean MCP client over stdio for the benchmarks: JSON-RPC lines written and read by hand, with
 * none of the SDK client's per-call work (schema checks of every message and result, a timeout
 * per request). On a machine of two cores the SDK client's own CPU time competes with the server
 * it measures; this one costs a few microseconds a call, so the figures are the server's.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"

interface Response {
  readonly id: number
  readonly result?: { readonly isError?: boolean; readonly content?: ReadonlyArray<{ readonly text?: string }> }
  readonly error?: unknown
}

export class LineClient {
  private readonly child: ChildProcess
  private readonly waiting = new Map<number, (response: Response) => void>()
  private nextId = 0
  private buffered = ""

  private constructor(command: string, args: ReadonlyArray<string>) {
    this.child = spawn(command, [...args], { stdio: ["pipe", "pipe", "ignore"] })
    this.child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      this.buffered += chunk
      let newline: number
      while ((newline = this.buffered.indexOf("\n")) !== -1) {
        const message = JSON.parse(this.buffered.slice(0, newline)) as Response
        this.buffered = this.buffered.slice(newline + 1)
        const resolve = this.waiting.get(message.id)
        if (resolve !== undefined) {
          this.waiting.delete(message.id)
          resolve(message)
        }
      }
    })
  }

  /** Spawn the server and initialise a session. */
  static async start(command: string, args: ReadonlyArray<string>): Promise<LineClient> {
    const client = new LineClient(command, args)
    await client.request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1.0.0" } })
    client.child.stdin!.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    return client
  }

  request(method: string, params: unknown): Promise<Response> {
    const id = ++this.nextId
    return new Promise((resolve) => {
      this.waiting.set(id, resolve)
      this.child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`)
    })
  }

  /** Call a tool; rejects when the call fails. */
  async call(name: string, args: Record<string, unknown>): Promise<void> {
    const response = await this.request("tools/call", { name, arguments: args })
    if (response.error !== undefined || response.result?.isError === true) throw new Error(`${name} failed: ${JSON.stringify(response)}`)
  }

  /** The server process's CPU time so far in ms (Linux: /proc), or `undefined` where it cannot be read. */
  serverCpuMs(): number | undefined {
    try {
      // fields 14 and 15 of /proc/PID/stat (after the parenthesised command name): utime and stime, in clock ticks of 10 ms
      const fields = readFileSync(`/proc/${this.child.pid}/stat`, "utf8").split(") ")[1]!.split(" ")
      return (Number(fields[11]) + Number(fields[12])) * 10
    } catch {
      return undefined
    }
  }

  /** Close standard input (the server exits) and wait for the process to end. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null) return
    const exited = new Promise((resolve) => this.child.once("exit", resolve))
    this.child.stdin!.end()
    await exited
  }
}
