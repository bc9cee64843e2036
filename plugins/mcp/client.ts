/**
 * Using external MCP servers as agent tools. {@link mcpTools} connects to each configured server
 * (a command over stdio, or a Streamable HTTP URL), lists its tools, and returns one
 * `Tools.ToolDefinition` per tool (kind `mcp`, named `server/tool`). A call never throws: a timeout
 * becomes `[MCP_TIMEOUT: server/tool]` and any other failure `[MCP_ERROR: server/tool: message]`,
 * returned as the tool's output, after the configured retries with exponential backoff.
 * {@link discover} lists a server's tools.
 *
 * @since 0.1.0
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { type CallToolResult, CallToolResultSchema, ErrorCode, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { Errors, type Tools } from "lambdagent"
import * as z from "zod"
import { SERVER_VERSION } from "./server.ts"
import { fetchWithOwnSignal } from "./ownSignalFetch.ts"

/**
 * Settings every server entry may carry.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { McpServerCommon } from "lambdagent/mcp"
 * const c: McpServerCommon = { timeout: 10, retryOnFail: 2, tools: ["search"] }
 * ```
 */
export interface McpServerCommon {
  /** Seconds one call may take (default 30; fractions allowed). */
  readonly timeout?: number
  /** Which of the server's tools to expose: a list of names, or a predicate. Default: all. */
  readonly tools?: ReadonlyArray<string> | ((name: string) => boolean)
  /** How many times to retry a call that failed (timeouts, transport errors); default 0. */
  readonly retryOnFail?: number
  /** Seconds to connect and list the tools (default 30): starting a server can take longer than a call. */
  readonly connectTimeout?: number
}

/**
 * An MCP server to use: a command started over stdio, or a Streamable HTTP URL.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { McpServerConfig } from "lambdagent/mcp"
 * const local: McpServerConfig = { command: "npx", args: ["lambdagent", "mcp"], env: { LOG: "1" } }
 * const remote: McpServerConfig = { url: "http://127.0.0.1:8765/mcp", headers: { authorization: "Bearer …" }, timeout: 5 }
 * ```
 */
export type McpServerConfig =
  | ({
      readonly command: string
      readonly args?: ReadonlyArray<string>
      /** Added to a minimal inherited environment (PATH, HOME, …). */
      readonly env?: Readonly<Record<string, string>>
      readonly cwd?: string
    } & McpServerCommon)
  | ({ readonly url: string; readonly headers?: Readonly<Record<string, string>> } & McpServerCommon)

/**
 * Options for all servers of one {@link mcpTools} call.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { McpToolsOptions } from "lambdagent/mcp"
 * const o: McpToolsOptions = { timeout: 20, retryOnFail: 1, backoffMs: 500 }
 * ```
 */
export interface McpToolsOptions {
  /** Default per-call timeout in seconds (a server's own `timeout` wins). */
  readonly timeout?: number
  /** Default retries (a server's own `retryOnFail` wins). */
  readonly retryOnFail?: number
  /** First retry delay in milliseconds (default 1000); doubles each retry. */
  readonly backoffMs?: number
  /** Longest retry delay in milliseconds (default 30,000). */
  readonly maxBackoffMs?: number
  /** Between server and tool name in tool names (default `/`). */
  readonly separator?: string
}

/**
 * A server could not be reached or listed while setting up its tools.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { McpClientError } from "lambdagent/mcp"
 * const e = new McpClientError({ server: "search", message: "connection refused" })
 * ```
 */
export class McpClientError extends Errors.TaggedError<McpClientError>()("McpClientError", {
  server: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * A tool a server offers, as `tools/list` describes it.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { DiscoveredTool } from "lambdagent/mcp"
 * const show = (t: DiscoveredTool) => `${t.name}: ${t.description ?? ""}`
 * ```
 */
export interface DiscoveredTool {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly inputSchema: Tool["inputSchema"]
  readonly annotations?: Tool["annotations"]
}

/**
 * The tools of {@link mcpTools}: an array of tool definitions that also holds the connections;
 * `close()` (or `await using`) ends them.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { McpToolset } from "lambdagent/mcp"
 * const names = (set: McpToolset) => set.map((t) => t.name)
 * ```
 */
export type McpToolset = ReadonlyArray<Tools.ToolDefinition<unknown>> & {
  /** Close the connections to every server (and stop the stdio servers it started). */
  readonly close: () => Promise<void>
  /** The same as `close`, for `await using`. */
  readonly [Symbol.asyncDispose]: () => Promise<void>
}

const DEFAULT_TIMEOUT_S = 30

const describeServer = (config: McpServerConfig): string => ("url" in config ? config.url : [config.command, ...(config.args ?? [])].join(" "))

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** One server connection, opened on first use and reopened after it breaks. */
class Connection {
  private client: Client | undefined
  private connecting: Promise<Client> | undefined
  private stderrTail = ""
  private closed = false

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    /** Time allowed to connect and initialise. */
    private readonly connectTimeoutMs: number
  ) {}

  get(): Promise<Client> {
    if (this.closed) return Promise.reject(new Error("the connection is closed"))
    if (this.client !== undefined) return Promise.resolve(this.client)
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined
    })
    return this.connecting
  }

  private async open(): Promise<Client> {
    this.stderrTail = "" // what an earlier server process wrote says nothing about this start
    const transport = this.transport()
    const client = new Client({ name: "lambdagent", version: SERVER_VERSION }, { capabilities: {} })
    client.onclose = () => {
      if (this.client === client) this.client = undefined
    }
    client.onerror = () => undefined // failures surface on the calls themselves
    try {
      await client.connect(transport, { timeout: this.connectTimeoutMs })
    } catch (error) {
      await client.close().catch(() => undefined)
      const tail = this.stderrTail.trim()
      throw new Error(`${messageOf(error)}${tail !== "" ? ` (server stderr: ${tail.slice(-300)})` : ""}`, { cause: error })
    }
    if (this.closed) {
      await client.close().catch(() => undefined)
      throw new Error("the connection is closed")
    }
    this.client = client
    return client
  }

  private transport(): Transport {
    const config = this.config
    if ("url" in config) {
      return new StreamableHTTPClientTransport(new URL(config.url), {
        fetch: fetchWithOwnSignal,
        requestInit: { headers: { ...(config.headers ?? {}) } }
      })
    }
    const transport = new StdioClientTransport({
      command: config.command,
      args: [...(config.args ?? [])],
      env: { ...getDefaultEnvironment(), ...(config.env ?? {}) },
      ...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
      stderr: "pipe"
    })
    transport.stderr?.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-2000)
    })
    return transport
  }

  /** Drop the current client (after a transport failure) so the next call reconnects. */
  async reset(): Promise<void> {
    const client = this.client
    this.client = undefined
    await client?.close().catch(() => undefined)
  }

  async close(): Promise<void> {
    this.closed = true
    await this.connecting?.catch(() => undefined)
    await this.reset()
  }
}

const listAll = async (client: Client, timeoutMs: number): Promise<Array<DiscoveredTool>> => {
  const out: Array<DiscoveredTool> = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor !== undefined ? { cursor } : {}, { timeout: timeoutMs })
    for (const t of page.tools) {
      out.push({
        name: t.name,
        ...(t.title !== undefined ? { title: t.title } : {}),
        ...(t.description !== undefined ? { description: t.description } : {}),
        inputSchema: t.inputSchema,
        ...(t.annotations !== undefined ? { annotations: t.annotations } : {})
      })
    }
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return out
}

/**
 * List the tools of one MCP server (connect, `tools/list` with every page, disconnect). Throws an
 * {@link McpClientError} when the server cannot be reached.
 *
 * @since 0.1.0
 * @category client
 * @example
 * ```ts
 * import { discover } from "lambdagent/mcp"
 * const tools = await discover({ command: "npx", args: ["lambdagent", "mcp", "--store", ":memory:"] })
 * console.log(tools.map((t) => t.name)) // ["evolve", "run", "list", "help"]
 * ```
 */
export const discover = async (server: McpServerConfig, options: { readonly name?: string } = {}): Promise<ReadonlyArray<DiscoveredTool>> => {
  const name = options.name ?? describeServer(server)
  const connectMs = (server.connectTimeout ?? DEFAULT_TIMEOUT_S) * 1000
  const connection = new Connection(name, server, connectMs)
  try {
    return await listAll(await connection.get(), connectMs)
  } catch (error) {
    throw new McpClientError({ server: name, message: `cannot list the tools of ${name}: ${messageOf(error)}`, cause: error })
  } finally {
    await connection.close()
  }
}

/** The text of a tool result: text items, placeholders for other content, else the structured content. */
const resultText = (result: CallToolResult): string => {
  const parts = result.content.map((item) => {
    switch (item.type) {
      case "text":
        return item.text
      case "resource":
        return "text" in item.resource ? item.resource.text : `[resource ${item.resource.uri}]`
      case "resource_link":
        return `[resource ${item.uri}]`
      default:
        return `[${item.type} ${"mimeType" in item ? item.mimeType : ""}]`.replace(" ]", "]")
    }
  })
  if (parts.length > 0) return parts.join("\n")
  return result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : ""
}

const isPlainObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The `tools/call` arguments for an agent's input: an object is passed as the arguments; any other
 * value goes into the schema's only property, or into `input`.
 *
 * @since 0.1.0
 * @category client
 * @example
 * ```ts
 * import { toArguments } from "lambdagent/mcp"
 * toArguments({ q: "x" }, { type: "object" }) // { q: "x" }
 * toArguments("x", { type: "object", properties: { query: {} } }) // { query: "x" }
 * toArguments(7, { type: "object", properties: { input: {}, step: {} } }) // { input: 7 }
 * ```
 */
export const toArguments = (input: unknown, schema: Tool["inputSchema"]): Record<string, unknown> => {
  if (isPlainObject(input)) return input
  const properties = Object.keys(schema.properties ?? {})
  if (properties.length === 1) return { [properties[0]!]: input }
  return { input }
}

/** Failures that another attempt cannot fix: the server understood and refused. */
const permanent = (error: unknown): boolean => error instanceof McpError && (error.code === ErrorCode.InvalidParams || error.code === ErrorCode.MethodNotFound)

const isTimeout = (error: unknown): boolean => error instanceof McpError && error.code === ErrorCode.RequestTimeout

/**
 * Connect to MCP servers and turn their tools into agent tools (kind `mcp`, named
 * `server/tool`, the input JSON Schema appended to the description). Each call runs `tools/call`
 * with the server's timeout and retries with exponential backoff; failures become
 * `[MCP_TIMEOUT: server/tool]` or `[MCP_ERROR: server/tool: message]` outputs, never exceptions.
 * Setting up throws an {@link McpClientError} when a server cannot be reached.
 *
 * @since 0.1.0
 * @category client
 * @example
 * ```ts
 * import { Tools } from "lambdagent"
 * import { mcpTools } from "lambdagent/mcp"
 * const tools = await mcpTools({
 *   lambda: { command: "npx", args: ["lambdagent", "mcp", "--store", ":memory:"], timeout: 10 },
 *   search: { url: "http://127.0.0.1:8765/mcp", tools: ["search"], retryOnFail: 2 }
 * })
 * const registry = Tools.make(tools) // "lambda/run", "search/search", …
 * await tools.close()
 * ```
 */
export const mcpTools = async (servers: Readonly<Record<string, McpServerConfig>>, options: McpToolsOptions = {}): Promise<McpToolset> => {
  const separator = options.separator ?? "/"
  const baseBackoff = options.backoffMs ?? 1000
  const maxBackoff = options.maxBackoffMs ?? 30_000
  const connections: Array<Connection> = []
  const close = async () => {
    await Promise.allSettled(connections.map((c) => c.close()))
  }

  const setUp = async ([server, config]: readonly [string, McpServerConfig]): Promise<Array<Tools.ToolDefinition<unknown>>> => {
    const timeoutMs = (config.timeout ?? options.timeout ?? DEFAULT_TIMEOUT_S) * 1000
    const retries = Math.max(0, Math.floor(config.retryOnFail ?? options.retryOnFail ?? 0))
    const connectMs = (config.connectTimeout ?? DEFAULT_TIMEOUT_S) * 1000
    const connection = new Connection(server, config, connectMs)
    connections.push(connection)
    let discovered: Array<DiscoveredTool>
    try {
      discovered = await listAll(await connection.get(), connectMs)
    } catch (error) {
      throw new McpClientError({
        server,
        message: `cannot list the tools of MCP server ${server} (${describeServer(config)}): ${messageOf(error)}`,
        cause: error
      })
    }
    const filter = config.tools
    const wanted =
      filter === undefined
        ? discovered
        : typeof filter === "function"
          ? discovered.filter((t) => filter(t.name))
          : discovered.filter((t) => filter.includes(t.name))
    const delays = Array.from({ length: retries }, (_, i) => Math.min(baseBackoff * 2 ** i, maxBackoff))
    // The agent-side timeout must not cut a call short of its retries (or of a reconnection).
    const budgetMs = (retries + 1) * (timeoutMs + connectMs) + delays.reduce((a, b) => a + b, 0) + 5_000
    // the same delays: baseBackoff doubling, each capped at maxBackoff, `retries` of them
    const backoff = Schedule.min([Schedule.exponential(Duration.millis(baseBackoff)), Schedule.spaced(Duration.millis(maxBackoff))]).pipe(
      Schedule.upTo({ times: retries })
    )

    return wanted.map((tool): Tools.ToolDefinition<unknown> => {
      const qualified = `${server}${separator}${tool.name}`
      const attempt = (args: Record<string, unknown>) =>
        Effect.tryPromise({
          try: async (signal) => {
            const client = await connection.get()
            const result = await client.callTool({ name: tool.name, arguments: args }, CallToolResultSchema, { timeout: timeoutMs, signal })
            const text = resultText(result as CallToolResult)
            return result.isError === true ? `[MCP_ERROR: ${qualified}: ${text}]` : text
          },
          catch: (error) => error
        }).pipe(
          Effect.tapError((error) =>
            // a lost connection (anything but a protocol answer) is opened again before the next attempt
            !permanent(error) && (!(error instanceof McpError) || error.code === ErrorCode.ConnectionClosed)
              ? Effect.promise(() => connection.reset())
              : Effect.void
          )
        )
      const call = (input: unknown): Effect.Effect<string> =>
        Effect.suspend(() => attempt(toArguments(input, tool.inputSchema))).pipe(
          Effect.retry({ schedule: backoff, while: (error) => !permanent(error) }),
          Effect.catch((error) => Effect.succeed(isTimeout(error) ? `[MCP_TIMEOUT: ${qualified}]` : `[MCP_ERROR: ${qualified}: ${messageOf(error)}]`))
        )
      return {
        name: qualified,
        description: `${tool.description ?? tool.title ?? tool.name}\n\nInput (JSON Schema): ${JSON.stringify(tool.inputSchema)}`,
        kind: "mcp",
        source: `MCP server ${server} (${describeServer(config)})`,
        input: z.unknown(),
        parameters: tool.inputSchema,
        timeoutMs: budgetMs,
        run: (input) => call(input)
      }
    })
  }

  let definitions: Array<Array<Tools.ToolDefinition<unknown>>>
  try {
    definitions = await Promise.all(Object.entries(servers).map(setUp))
  } catch (error) {
    await close()
    throw error
  }
  return Object.assign(definitions.flat(), { close, [Symbol.asyncDispose]: close }) as McpToolset
}
