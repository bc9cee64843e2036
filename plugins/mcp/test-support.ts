/**
 * Shared helpers of the MCP plugin's tests: starting the server in a child process (stdio or
 * HTTP), connecting the official SDK client, and the reference's example programs.
 */
import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { type CallToolResult, CallToolResultSchema, LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js"

/** The repository root (the tests spawn the server from there). */
export const root = fileURLToPath(new URL("../..", import.meta.url))

/** Arguments for `node` that start the test server script. */
export const serverArgs = (extra: ReadonlyArray<string> = []): Array<string> => ["--import", "tsx", "plugins/mcp/bin-for-tests.ts", ...extra]

/** The command line that starts the test server, for client configurations. */
export const serverCommand = (extra: ReadonlyArray<string> = []) => ({ command: process.execPath, args: serverArgs(extra), cwd: root })

/** Per-request timeout of the tests' clients: nothing may hang. */
export const REQUEST_TIMEOUT_MS = 20_000

/** A connected SDK client and what the test needs to inspect or stop. */
export interface Connected {
  readonly client: Client
  readonly transport: Transport
  /** Standard error of the server process so far (stdio only). */
  readonly stderr: () => string
  /** `notifications/tools/list_changed` received so far. */
  readonly toolListChanges: () => number
  readonly close: () => Promise<void>
}

const connect = async (transport: Transport, stderr: () => string): Promise<Connected> => {
  const client = new Client({ name: "lambdagent-tests", version: "0.0.0" }, { capabilities: {} })
  let changes = 0
  client.fallbackNotificationHandler = async (notification) => {
    if (notification.method === "notifications/tools/list_changed") changes++
  }
  await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS })
  return { client, transport, stderr, toolListChanges: () => changes, close: () => client.close() }
}

/** Start the server over stdio with the official client. */
export const connectStdio = async (extra: ReadonlyArray<string> = []): Promise<Connected> => {
  const transport = new StdioClientTransport({ ...serverCommand(extra), stderr: "pipe" })
  let stderr = ""
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  return connect(transport, () => stderr)
}

/** Connect the official client to a Streamable HTTP endpoint. */
export const connectHttp = async (url: string): Promise<Connected & { readonly notificationStream: Promise<void> }> => {
  let opened = () => {}
  const notificationStream = new Promise<void>((resolve) => (opened = resolve))
  // The client opens its notification stream (a GET) after initializing; its answer means the
  // server now pushes notifications to this session.
  const watching: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    if ((init?.method ?? "GET") === "GET" && response.ok) opened()
    return response
  }
  const connected = await connect(new StreamableHTTPClientTransport(new URL(url), { fetch: watching }), () => "")
  return { ...connected, notificationStream }
}

/** A server process started with `--http PORT`, with the URL it printed. */
export interface HttpProcess {
  readonly child: ChildProcess
  readonly url: string
  readonly stderr: () => string
  readonly stop: () => Promise<number | null>
}

/** Start the server over HTTP in a child process (port 0: any free port) and wait for its URL. */
export const startHttpProcess = (extra: ReadonlyArray<string> = [], port = "0"): Promise<HttpProcess> => spawnHttpServer(serverArgs(["--http", port, ...extra]))

/** The built `lambdagent` binary (`npx tsup` first), for end-to-end tests. */
export const cliPath = join(root, "dist", "cli", "main.js")

/**
 * Start an HTTP server process (`node ARGS`) and wait until its standard error names its URL
 * (`http://…/mcp`). Provider keys are removed from its environment, so that agents run on the
 * offline model.
 */
export const spawnHttpServer = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}): Promise<HttpProcess> =>
  new Promise((resolve, reject) => {
    const environment: Record<string, string | undefined> = { ...process.env, ...env }
    for (const key of Object.keys(environment)) if (key.endsWith("_API_KEY")) delete environment[key]
    const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: environment })
    let stderr = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`the HTTP server did not start: ${stderr}`))
    }, REQUEST_TIMEOUT_MS)
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)))
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
      const match = /(http:\/\/\S+\/mcp)\b/.exec(stderr)
      if (match !== null) {
        clearTimeout(timer)
        resolve({
          child,
          url: match[1]!,
          stderr: () => stderr,
          stop: async () => {
            if (child.exitCode === null) child.kill("SIGTERM")
            return exited
          }
        })
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`the HTTP server exited with ${code}: ${stderr}`))
    })
  })

/** Call a tool and return the full result (protocol errors throw). */
export const call = async (client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: REQUEST_TIMEOUT_MS })) as CallToolResult

/** The text of a result's single text item. */
export const textOf = (result: CallToolResult): string => {
  const item = result.content[0]
  if (item?.type !== "text") throw new Error(`expected a text result, got ${JSON.stringify(result)}`)
  return item.text
}

/** A result's value: its text parsed as JSON (the server writes every value as JSON text). */
export const valueOf = (result: CallToolResult): unknown => {
  if (result.isError === true) throw new Error(`expected a value, got an error: ${textOf(result)}`)
  return JSON.parse(textOf(result))
}

/** A temporary directory, removed by the returned function. */
export const tempDir = async (): Promise<{ readonly path: string; readonly remove: () => Promise<void> }> => {
  const path = await mkdtemp(join(tmpdir(), "lambdagent-mcp-"))
  return { path, remove: () => rm(path, { recursive: true, force: true }) }
}

// The reference's example programs (MCP-PIF README and guide).

export const square = { lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } }

export const factorialAcc = {
  lam: "n_acc",
  body: {
    if: {
      cond: { lte: [{ fst: { var: "n_acc" } }, 1] },
      then: { snd: { var: "n_acc" } },
      else: {
        continue: {
          input: {
            pair: [{ sub: [{ fst: { var: "n_acc" } }, 1] }, { mul: [{ fst: { var: "n_acc" } }, { snd: { var: "n_acc" } }] }]
          }
        }
      }
    }
  }
}

export const factorialSelf = {
  lam: "n",
  body: {
    if: {
      cond: { lte: [{ var: "n" }, 1] },
      then: 1,
      else: { mul: [{ var: "n" }, { app: { func: { self: true }, arg: { sub: [{ var: "n" }, 1] } } }] }
    }
  }
}

export const map = {
  lam: "f",
  body: {
    lam: "list",
    body: {
      fold: [
        {
          lam: "acc_item",
          body: {
            cons: {
              head: { app: { func: { var: "f" }, arg: { snd: { var: "acc_item" } } } },
              tail: { fst: { var: "acc_item" } }
            }
          }
        },
        { nil: true },
        { var: "list" }
      ]
    }
  }
}

const parity = (base: boolean, other: string) => ({
  lam: "n",
  body: {
    if: {
      cond: { eq: [{ var: "n" }, 0] },
      then: base,
      else: { app: { func: { eval: { code_of: other } }, arg: { sub: [{ var: "n" }, 1] } } }
    }
  }
})

export const isEven = parity(true, "is_odd")
export const isOdd = parity(false, "is_even")

export const omega = {
  app: {
    func: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } },
    arg: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } }
  }
}

/** The server as a child process spoken to line by line, without any client library. */
export class RawServer {
  readonly child: ChildProcessWithoutNullStreams
  readonly lines: Array<string> = []
  stderr = ""
  private buffer = ""
  private waiters: Array<() => void> = []
  readonly exited: Promise<number | null>

  /** `args`: the `node` arguments (default: the test server with an in-memory store and `extra`). */
  constructor(extra: ReadonlyArray<string> = [], args: ReadonlyArray<string> = serverArgs(["--store", ":memory:", ...extra])) {
    this.child = spawn(process.execPath, args, { cwd: root })
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.buffer += chunk.toString("utf8")
      let newline: number
      while ((newline = this.buffer.indexOf("\n")) >= 0) {
        this.lines.push(this.buffer.slice(0, newline))
        this.buffer = this.buffer.slice(newline + 1)
      }
      for (const wake of this.waiters.splice(0)) wake()
    })
    this.child.stderr.on("data", (chunk: Buffer) => (this.stderr += chunk.toString("utf8")))
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)))
  }

  send(line: string | object) {
    this.child.stdin.write((typeof line === "string" ? line : JSON.stringify(line)) + "\n")
  }

  /** The next unread stdout line, parsed. */
  private read = 0
  async next(): Promise<Record<string, any>> {
    const deadline = Date.now() + REQUEST_TIMEOUT_MS
    while (this.read >= this.lines.length) {
      if (Date.now() > deadline) throw new Error(`no response; stderr: ${this.stderr}`)
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve)
        setTimeout(resolve, 100)
      })
    }
    return JSON.parse(this.lines[this.read++]!)
  }

  /** The response with this id (notifications before it are skipped). */
  async response(id: number): Promise<Record<string, any>> {
    for (;;) {
      const message = await this.next()
      if (message.id === id) return message
    }
  }

  async initialize(protocolVersion = LATEST_PROTOCOL_VERSION) {
    this.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "0" } } })
    const response = await this.response(0)
    this.send({ jsonrpc: "2.0", method: "notifications/initialized" })
    return response
  }

  kill() {
    if (this.child.exitCode === null) this.child.kill("SIGKILL")
  }
}
