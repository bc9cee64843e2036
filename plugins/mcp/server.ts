/**
 * The tool-evolving MCP server. {@link createLambdaServer} builds the shared state (the tool
 * registry, limits, policy, modules); every client connection gets its own MCP session over any
 * transport, and every session hears `notifications/tools/list_changed` (and the resource list's)
 * when a tool is evolved.
 *
 * @since 0.1.0
 * @module
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js"
import {
  type CallToolResult,
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  type LoggingLevel,
  LoggingLevelSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  type ServerNotification,
  type ServerRequest,
  type ServerResult
} from "@modelcontextprotocol/sdk/types.js"
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js"
import * as Schema from "effect/Schema"
import { Errors } from "lambdagent"
import * as z from "zod"
import type { AgentPolicy } from "./analysis.ts"
import { answerDirectly } from "./directCall.ts"
import type { AnswerOracle } from "./execute.ts"
import type { LogMessage, ModuleChange, PromptSpec, ResourceSpec, ResourceTemplateSpec, ServerModule, ToolCallContext, ToolSpec } from "./module.ts"
import { ToolRegistry } from "./registry.ts"
import { lambdaResourcesModule } from "./resources.ts"
import { errorInfo, errorResult } from "./results.ts"
import { resolveStore, type ToolRegistryStore } from "./store.ts"
import { type EvaluationLimits, lambdaToolsModule, SYSTEM_TOOLS } from "./tools.ts"

/**
 * The version the server reports in `serverInfo`.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { SERVER_VERSION } from "lambdagent/mcp"
 * console.log(SERVER_VERSION) // "0.1.0"
 * ```
 */
export const SERVER_VERSION = "0.1.0"

/**
 * The default evaluation limits: 10 million steps per call unless the call asks (`fuel`), at most
 * 100 million, 30 seconds of wall time, terms of up to 100,000 nodes.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { DEFAULT_LIMITS } from "lambdagent/mcp"
 * console.log(DEFAULT_LIMITS.defaultFuel) // 10000000
 * ```
 */
export const DEFAULT_LIMITS: EvaluationLimits = {
  defaultFuel: 10_000_000,
  maxFuel: 100_000_000,
  timeoutMs: 30_000,
  maxTermSize: 100_000
}

/**
 * Options of {@link createLambdaServer}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LambdaServerOptions } from "lambdagent/mcp"
 * const options: LambdaServerOptions = { store: "./tools.json", maxFuel: 1_000_000, timeoutMs: 5_000 }
 * ```
 */
export interface LambdaServerOptions {
  /** A registry to serve; when absent one is opened from `store`. */
  readonly registry?: ToolRegistry
  /**
   * Where evolved tools persist when no `registry` is given: a store, a JSON file path, or
   * `":memory:"`. Default: in memory (the `serve` entry and the CLI default to a file).
   */
  readonly store?: string | ToolRegistryStore
  /** `serverInfo.name` (default `lambdagent`). */
  readonly name?: string
  /** `serverInfo.version` (default {@link SERVER_VERSION}). */
  readonly version?: string
  /** Steps a call gets when it does not pass `fuel`. */
  readonly defaultFuel?: number
  /** The largest `fuel` a call may ask for. */
  readonly maxFuel?: number
  /** Wall time of one evaluation, in milliseconds. */
  readonly timeoutMs?: number
  /** The largest term `evolve` accepts, in nodes. */
  readonly maxTermSize?: number
  /** Agent capabilities evolved tools may use (default: none, pure tools only). */
  readonly allow?: AgentPolicy
  /** Answers agent forms' requests (LLM calls, host tools, memory) when `allow` permits them. */
  readonly answerOracle?: AnswerOracle
  /** More tools, resources and prompts, served after the lambda ones. */
  readonly modules?: ReadonlyArray<ServerModule>
  /**
   * Serve the tool-evolving system (evolve, run, list, help, the lambda resources and prompt);
   * default true. `false` serves only the given modules (an agent as a tool, say).
   */
  readonly system?: boolean
  /** Where diagnostics go (default: standard error). Never standard output. */
  readonly log?: (line: string) => void
  /** The `instructions` sent to clients at initialisation. */
  readonly instructions?: string
  /**
   * The least severe log message sent to a client that has not called `logging/setLevel`
   * (default `info`: evolved tools, failed calls, store failures; `debug` adds every call's time).
   */
  readonly logLevel?: LoggingLevel
}

/**
 * A running tool-evolving server: shared state plus any number of MCP sessions.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { createLambdaServer } from "lambdagent/mcp"
 * const server = await createLambdaServer()
 * const result = await server.callTool("run", { code: { add: [40, 2] }, input: null })
 * console.log(result.content) // [{ type: "text", text: "42" }]
 * await server.close()
 * ```
 */
export interface LambdaServer {
  readonly registry: ToolRegistry
  readonly limits: EvaluationLimits
  /** Open sessions. */
  readonly sessionCount: number
  /** A new MCP session (an SDK `Server`) wired to the shared state; connect it to a transport. */
  readonly createSession: () => Server
  /** Create a session and connect it to `transport`. */
  readonly connect: (transport: Transport) => Promise<Server>
  /** Every tool, as `tools/list` shows them. */
  readonly listTools: () => ReadonlyArray<ToolSpec>
  /** Call a tool in process, exactly as `tools/call` does (an unknown tool throws an `McpError`). */
  readonly callTool: (name: string, args?: Record<string, unknown>, context?: Partial<ToolCallContext>) => Promise<CallToolResult>
  /** Send a log message (`notifications/message`) to every initialised session whose level lets it through. */
  readonly log: (message: LogMessage) => void
  /** Close every session. */
  readonly close: () => Promise<void>
}

/** When the client asked for progress (a `progressToken`), a function that sends it. */
const progressOf = (token: string | number | undefined, extra: RequestExtra): { progress?: (progress: number, message?: string) => Promise<void> } =>
  token === undefined
    ? {}
    : {
        progress: (progress, message) =>
          extra
            .sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress, ...(message !== undefined ? { message } : {}) }
            })
            .catch(() => undefined)
      }

/**
 * A JSON-RPC error the server answers with (unknown tool, unknown prompt, missing resource): the
 * SDK sends `code` and `message` as they are.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { ProtocolError } from "lambdagent/mcp"
 * const e = new ProtocolError({ code: -32602, message: "Unknown tool: sqare" })
 * ```
 */
export class ProtocolError extends Errors.TaggedError<ProtocolError>()("ProtocolError", {
  code: Schema.Number,
  message: Schema.String,
  data: Schema.optional(Schema.Unknown)
}) {}

type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** Runs tasks one at a time, in arrival order. */
const serialQueue = () => {
  let tail: Promise<unknown> = Promise.resolve()
  return <A>(task: () => A | Promise<A>): Promise<A> => {
    const result = tail.then(task, task)
    tail = result.catch(() => undefined)
    return result
  }
}

const SEVERITY: ReadonlyMap<LoggingLevel, number> = new Map(LoggingLevelSchema.options.map((level, index) => [level, index]))

/** Whether a message at `level` passes a session whose threshold is `threshold`. */
const passes = (level: LoggingLevel, threshold: LoggingLevel) => SEVERITY.get(level)! >= SEVERITY.get(threshold)!

const LOGGER = "lambdagent"

/** The error of an `isError` result, as a log message's data. */
const failureData = (tool: string, result: CallToolResult) => {
  const structured = result.structuredContent as { kind?: unknown; message?: unknown } | undefined
  const kind = typeof structured?.kind === "string" ? structured.kind : "ToolError"
  const text =
    typeof structured?.message === "string"
      ? structured.message
      : result.content
          .map((c) => (c.type === "text" ? c.text : `[${c.type}]`))
          .join(" ")
          .slice(0, 1000)
  return { message: `${tool} failed: ${kind}: ${text}`, tool, kind }
}

const defaultLog = (line: string) => {
  process.stderr.write(`[lambdagent mcp] ${line}\n`)
}

const INSTRUCTIONS =
  "This server runs a small JSON lambda calculus. Create tools with evolve {name, description, code}, run them " +
  "with run {tool, input} (or run {code, input} for an inline term) or call them directly, and list them with list. Call help (or read lambda://reference) for the " +
  "language; the lambda-tutor prompt teaches it. Results are JSON; a continuation result asks you to call again with " +
  "next_input and its step."

/**
 * The SDK's JSON Schema validator, built on first use and shared by every session. A session checks
 * a schema only when it asks its client for input; building one per session cost each new session
 * (and the server's start) a few milliseconds for nothing.
 */
const sharedValidator = (): jsonSchemaValidator => {
  let ajv: AjvJsonSchemaValidator | undefined
  return { getValidator: (schema) => (ajv ??= new AjvJsonSchemaValidator()).getValidator(schema) }
}

const positive = (name: string, value: number | undefined, fallback: number): number => {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer, got ${value}`)
  return value
}

const firstByName = <T extends { readonly name: string }>(items: Iterable<T>): Array<T> => {
  const seen = new Set<string>()
  const out: Array<T> = []
  for (const item of items) {
    if (seen.has(item.name)) continue
    seen.add(item.name)
    out.push(item)
  }
  return out
}

/**
 * Create the tool-evolving server: `evolve`, `run`, `list` and `help`, one tool per evolved
 * tool, the `lambda://` resources and the `lambda-tutor` prompt, plus any extra modules. Opens the
 * store (failing if it holds data it cannot read).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
 * import { createLambdaServer } from "lambdagent/mcp"
 * const server = await createLambdaServer({ store: "./tools.json" })
 * await server.connect(new StdioServerTransport())
 * ```
 */
export const createLambdaServer = async (options: LambdaServerOptions = {}): Promise<LambdaServer> => {
  const log = options.log ?? defaultLog
  const defaultLevel = options.logLevel ?? "info"
  if (!SEVERITY.has(defaultLevel)) throw new RangeError(`logLevel must be one of ${LoggingLevelSchema.options.join(", ")}, got ${JSON.stringify(defaultLevel)}`)
  const registry = options.registry ?? (await ToolRegistry.open(resolveStore(options.store ?? ":memory:")))
  const maxFuel = positive("maxFuel", options.maxFuel, Math.max(DEFAULT_LIMITS.maxFuel, options.defaultFuel ?? 0))
  const limits: EvaluationLimits = {
    defaultFuel: Math.min(positive("defaultFuel", options.defaultFuel, DEFAULT_LIMITS.defaultFuel), maxFuel),
    maxFuel,
    timeoutMs: positive("timeoutMs", options.timeoutMs, DEFAULT_LIMITS.timeoutMs),
    maxTermSize: positive("maxTermSize", options.maxTermSize, DEFAULT_LIMITS.maxTermSize)
  }
  const extra = options.modules ?? []
  /** The built-in tools (`run`, `evolve`, `list`, `help`, the evolved tools), unless `system` is false. */
  const ownTools =
    options.system === false
      ? undefined
      : lambdaToolsModule({
          registry,
          limits,
          policy: options.allow ?? {},
          ...(options.answerOracle !== undefined ? { oracle: options.answerOracle } : {}),
          reservedNames: () => new Set(extra.flatMap((m) => m.tools?.().map((t) => t.name) ?? [])),
          log,
          broadcast: (message) => broadcast(message)
        })
  const modules: ReadonlyArray<ServerModule> = ownTools === undefined ? extra : [ownTools, lambdaResourcesModule(registry), ...extra]
  for (const module of extra) {
    for (const tool of module.tools?.() ?? []) {
      if (SYSTEM_TOOLS.includes(tool.name)) log(`module ${module.name}: tool ${tool.name} is hidden by the built-in tool of that name`)
    }
  }

  const listTools = (): ReadonlyArray<ToolSpec> => firstByName(modules.flatMap((m) => m.tools?.() ?? []))
  /** The tool `tools/call` means by `name`: the first module's of that name, as in {@link listTools}. */
  const findTool = (name: string): ToolSpec | undefined => {
    for (const module of modules) {
      const tool = module.tool !== undefined ? module.tool(name) : module.tools?.().find((t) => t.name === name)
      if (tool !== undefined) return tool
    }
    return undefined
  }
  const listResources = (): ReadonlyArray<ResourceSpec> => {
    const seen = new Set<string>()
    return modules.flatMap((m) => m.resources?.() ?? []).filter((r) => !seen.has(r.uri) && seen.add(r.uri))
  }
  const listTemplates = (): ReadonlyArray<ResourceTemplateSpec> => modules.flatMap((m) => m.resourceTemplates?.() ?? [])
  const listPrompts = (): ReadonlyArray<PromptSpec> => firstByName(modules.flatMap((m) => m.prompts?.() ?? []))

  const callTool = async (name: string, args: Record<string, unknown> = {}, context: Partial<ToolCallContext> = {}): Promise<CallToolResult> => {
    const tool = findTool(name)
    if (tool === undefined) throw new ProtocolError({ code: ErrorCode.InvalidParams, message: `Unknown tool: ${name}` })
    try {
      return await tool.call(args, {
        signal: context.signal ?? new AbortController().signal,
        ...(context.sessionId !== undefined ? { sessionId: context.sessionId } : {}),
        ...(context.progress !== undefined ? { progress: context.progress } : {}),
        ...(context.log !== undefined ? { log: context.log } : {})
      })
    } catch (error) {
      // Handlers report bad input as results; reaching here is a bug. Keep serving.
      log(`tool ${name} failed unexpectedly: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
      return errorResult({ kind: "InternalError", message: errorInfo(error).message })
    }
  }

  const readResource = async (uri: string): Promise<{ text: string; mimeType?: string }> => {
    const fixed = listResources().find((r) => r.uri === uri)
    if (fixed !== undefined) return { text: await fixed.read(), ...(fixed.mimeType !== undefined ? { mimeType: fixed.mimeType } : {}) }
    for (const template of listTemplates()) {
      const match = new UriTemplate(template.uriTemplate).match(uri)
      if (match === null) continue
      const variables: Record<string, string> = {}
      for (const [key, value] of Object.entries(match)) {
        const raw = Array.isArray(value) ? value.join(",") : value
        try {
          variables[key] = decodeURIComponent(raw)
        } catch {
          variables[key] = raw
        }
      }
      const text = await template.read(variables)
      if (text !== undefined) return { text, ...(template.mimeType !== undefined ? { mimeType: template.mimeType } : {}) }
    }
    throw new ProtocolError({ code: -32002, message: `Resource not found: ${uri}`, data: { uri } })
  }

  const sessions = new Set<Server>()
  const initialized = new WeakSet<Server>()
  /** Each session's log threshold (`logging/setLevel`). */
  const levels = new WeakMap<Server, LoggingLevel>()
  const wants = (session: Server, level: LoggingLevel) => initialized.has(session) && passes(level, levels.get(session) ?? defaultLevel)
  const logParams = (message: LogMessage) => ({ level: message.level, logger: message.logger ?? LOGGER, data: message.data })
  const broadcast = (message: LogMessage) => {
    for (const session of sessions) {
      if (session.transport === undefined || !wants(session, message.level)) continue
      session.notification({ method: "notifications/message", params: logParams(message) }).catch(() => undefined)
    }
  }
  const notify = (change: ModuleChange) => {
    for (const session of sessions) {
      // Notifications go only to sessions whose client has finished initialising.
      if (session.transport === undefined || !initialized.has(session)) continue
      const report = (what: string) => (error: unknown) => log(`could not send ${what} list_changed: ${errorInfo(error).message}`)
      if (change.tools === true) session.sendToolListChanged().catch(report("tools"))
      if (change.resources === true) session.sendResourceListChanged().catch(report("resources"))
      if (change.prompts === true) session.sendPromptListChanged().catch(report("prompts"))
    }
  }
  const unsubscribers = modules.flatMap((m) => (m.subscribe !== undefined ? [m.subscribe(notify)] : []))

  const validator = sharedValidator()
  const createSession = (): Server => {
    const session = new Server(
      { name: options.name ?? "lambdagent", version: options.version ?? SERVER_VERSION },
      {
        capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true }, logging: {} },
        instructions: options.instructions ?? INSTRUCTIONS,
        jsonSchemaValidator: validator
      }
    )
    // One request at a time per session, in arrival order: a pipelined `evolve` then call of the
    // new tool sees the tool, as with the reference's sequential loop.
    const queued = serialQueue()
    // Requests are validated here, so that malformed params are answered with -32602 (Invalid
    // params) naming the wrong fields, rather than the SDK's generic internal error.
    // (The SDK itself checks tools/call requests against CallToolRequestSchema before any handler
    // runs; those are not checked twice.)
    const on = <S extends z.ZodType>(method: string, schema: S, handler: (request: z.output<S>, extra: RequestExtra) => ServerResult | Promise<ServerResult>) =>
      session.setRequestHandler(z.object({ method: z.literal(method) }).loose(), (request, extra) => {
        if (method === "tools/call") return handler(request as z.output<S>, extra)
        const parsed = schema.safeParse(request)
        if (!parsed.success) {
          const issues = parsed.error.issues.map((i) => `${i.path.map(String).join(".") || "request"}: ${i.message}`).join("; ")
          throw new ProtocolError({ code: ErrorCode.InvalidParams, message: `Invalid params for ${method}: ${issues}` })
        }
        return handler(parsed.data, extra)
      })
    session.oninitialized = () => {
      initialized.add(session)
    }
    on("tools/list", ListToolsRequestSchema, () =>
      queued(() => ({
        tools: listTools().map((t) => ({
          name: t.name,
          ...(t.title !== undefined ? { title: t.title } : {}),
          description: t.description,
          inputSchema: t.inputSchema,
          ...(t.annotations !== undefined ? { annotations: t.annotations } : {})
        }))
      }))
    )
    /** A log message to this session's client, sent by `notify` (on the stream of the request being answered). */
    const logTo = (notify: (notification: ServerNotification) => Promise<void>) => (message: LogMessage) => {
      if (!wants(session, message.level)) return
      notify({ method: "notifications/message", params: logParams(message) }).catch(() => undefined)
    }
    on("logging/setLevel", SetLevelRequestSchema, (request) => {
      levels.set(session, request.params.level)
      return {}
    })
    /** Answer a tool call in its turn, logging failures (and, at `debug`, every call's time). */
    const answerCall = (name: string, args: Record<string, unknown>, context: ToolCallContext, notify: (notification: ServerNotification) => Promise<void>) =>
      queued(async () => {
        if (context.signal.aborted) return errorResult({ kind: "Cancelled", message: "the request was cancelled before it ran" })
        const started = performance.now()
        const result = await callTool(name, args, { ...context, log: logTo(notify) })
        if (result.isError === true) {
          const data = failureData(name, result)
          logTo(notify)({ level: data.kind === "InternalError" ? "error" : "warning", data })
        } else if (wants(session, "debug")) {
          const ms = Math.round((performance.now() - started) * 1000) / 1000
          logTo(notify)({ level: "debug", data: { message: `${name} answered in ${ms} ms`, tool: name, ms } })
        }
        return result
      })
    on("tools/call", CallToolRequestSchema, (request, extra) =>
      answerCall(
        request.params.name,
        request.params.arguments ?? {},
        {
          signal: extra.signal,
          ...(extra.sessionId !== undefined ? { sessionId: extra.sessionId } : {}),
          ...progressOf(request.params._meta?.progressToken, extra)
        },
        extra.sendNotification
      )
    )
    // The server's own tools build well-formed results themselves: a plain call of one may skip
    // the SDK's request machinery (see directCall.ts). Other modules' tools go the SDK's way.
    if (ownTools !== undefined) {
      answerDirectly(session, (call, signal, notify) =>
        ownTools.tool?.(call.name) !== undefined ? answerCall(call.name, call.args, { signal }, notify) : undefined
      )
    }
    on("resources/list", ListResourcesRequestSchema, () =>
      queued(() => ({
        resources: listResources().map((r) => ({
          uri: r.uri,
          name: r.name,
          ...(r.title !== undefined ? { title: r.title } : {}),
          ...(r.description !== undefined ? { description: r.description } : {}),
          ...(r.mimeType !== undefined ? { mimeType: r.mimeType } : {})
        }))
      }))
    )
    on("resources/templates/list", ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: listTemplates().map((t) => ({
        uriTemplate: t.uriTemplate,
        name: t.name,
        ...(t.title !== undefined ? { title: t.title } : {}),
        ...(t.description !== undefined ? { description: t.description } : {}),
        ...(t.mimeType !== undefined ? { mimeType: t.mimeType } : {})
      }))
    }))
    on("resources/read", ReadResourceRequestSchema, (request) =>
      queued(async () => {
        const { mimeType, text } = await readResource(request.params.uri)
        return { contents: [{ uri: request.params.uri, text, ...(mimeType !== undefined ? { mimeType } : {}) }] }
      })
    )
    on("prompts/list", ListPromptsRequestSchema, () => ({
      prompts: listPrompts().map((p) => ({
        name: p.name,
        ...(p.title !== undefined ? { title: p.title } : {}),
        ...(p.description !== undefined ? { description: p.description } : {}),
        ...(p.arguments !== undefined ? { arguments: p.arguments.map((a) => ({ ...a })) } : {})
      }))
    }))
    on("prompts/get", GetPromptRequestSchema, async (request) => {
      const prompt = listPrompts().find((p) => p.name === request.params.name)
      if (prompt === undefined) throw new ProtocolError({ code: ErrorCode.InvalidParams, message: `Unknown prompt: ${request.params.name}` })
      const args = request.params.arguments ?? {}
      const missing = (prompt.arguments ?? []).filter((a) => a.required === true && args[a.name] === undefined).map((a) => a.name)
      if (missing.length > 0) throw new ProtocolError({ code: ErrorCode.InvalidParams, message: `Missing required argument(s): ${missing.join(", ")}` })
      return await prompt.get(args)
    })
    session.onerror = (error) => log(`session error: ${error.message}`)
    session.onclose = () => {
      sessions.delete(session)
    }
    sessions.add(session)
    return session
  }

  return {
    registry,
    limits,
    get sessionCount() {
      return sessions.size
    },
    createSession,
    connect: async (transport) => {
      const session = createSession()
      try {
        await session.connect(transport)
      } catch (error) {
        sessions.delete(session)
        throw error
      }
      return session
    },
    listTools,
    callTool,
    log: broadcast,
    close: async () => {
      for (const unsubscribe of unsubscribers) unsubscribe()
      await Promise.allSettled([...sessions].map((s) => s.close()))
      sessions.clear()
    }
  }
}
