/**
 * The server's building blocks. A {@link ServerModule} contributes tools, resources, resource
 * templates and prompts, and says when its lists change; a server is the composition of its
 * modules. {@link defineTool} is the one way to declare a tool: a name, a description, a zod
 * schema of the arguments (published as JSON Schema and checked on every call) and a handler.
 *
 * @since 0.1.0
 * @module
 */
import type { CallToolResult, GetPromptResult, LoggingLevel, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import * as z from "zod"
import { errorResult } from "./results.ts"

/**
 * A log message for MCP clients, sent as `notifications/message` to the sessions whose level
 * (`logging/setLevel`; the server's `logLevel` until a client sets one) lets it through. `data`
 * is any JSON; the server's own messages are objects with a `message` text and details.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LogMessage } from "lambdagent/mcp"
 * const m: LogMessage = { level: "warning", logger: "search", data: { message: "index is stale", ageSeconds: 3600 } }
 * ```
 */
export interface LogMessage {
  /** `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert` or `emergency`. */
  readonly level: LoggingLevel
  /** Who logs (default `lambdagent`). */
  readonly logger?: string
  readonly data: unknown
}

/**
 * What a tool handler receives besides its arguments.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ToolCallContext } from "lambdagent/mcp"
 * const cancelled = (c: ToolCallContext) => c.signal.aborted
 * ```
 */
export interface ToolCallContext {
  /** Aborted when the client cancels the request or the session closes. */
  readonly signal: AbortSignal
  /** The session the call arrived on (HTTP transport). */
  readonly sessionId?: string
  /** Report progress to the client, when it asked for it (`_meta.progressToken`). */
  readonly progress?: (progress: number, message?: string) => Promise<void>
  /** Send a log message to the calling client, before the result (when its level lets it through). */
  readonly log?: (message: LogMessage) => void
}

/**
 * A tool as the server publishes it: `inputSchema` is a JSON Schema object, `call` validates its
 * arguments and never throws for bad input (it returns an `isError` result).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ToolSpec } from "lambdagent/mcp"
 * const names = (tools: ReadonlyArray<ToolSpec>) => tools.map((t) => t.name)
 * ```
 */
export interface ToolSpec {
  readonly name: string
  readonly title?: string
  readonly description: string
  readonly inputSchema: { readonly type: "object"; readonly [key: string]: unknown }
  readonly annotations?: ToolAnnotations
  /** Answer a call: the arguments (checked against `inputSchema`) and the call's context. */
  readonly call: (args: Record<string, unknown>, context: ToolCallContext) => CallToolResult | Promise<CallToolResult>
}

/** A zod object schema as a tool publishes it: JSON Schema of its input, without the dialect. */
const publishedSchema = (input: z.ZodObject): ToolSpec["inputSchema"] => {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(input, { io: "input" }) as Record<string, unknown>
  // A `type` array becomes `anyOf` single types: clients that map schemas onto a single-type
  // dialect (Gemini's OpenAPI subset) reject arrays.
  const properties = schema.properties as Record<string, Record<string, unknown>> | undefined
  for (const [key, property] of Object.entries(properties ?? {})) {
    if (Array.isArray(property.type)) {
      const { type, ...rest } = property
      properties![key] = { ...rest, anyOf: (type as Array<string>).map((t) => ({ type: t })) }
    }
  }
  return { ...schema, type: "object" }
}

/**
 * Declare a tool: its arguments are a zod object schema, published as JSON Schema and checked on
 * every call. Arguments that do not match come back as an `isError` result of kind
 * `InvalidArguments` naming each wrong field; the handler only sees valid arguments. The JSON
 * Schema is built when `inputSchema` is first read (the first `tools/list`) and then kept, so a
 * schema JSON Schema cannot express (`z.date()`, a transform's output) throws there.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import * as z from "zod"
 * import { defineTool } from "lambdagent/mcp"
 * const echo = defineTool({
 *   name: "echo",
 *   description: "Echo a message",
 *   input: z.object({ message: z.string() }),
 *   run: ({ message }) => ({ content: [{ type: "text", text: message }] })
 * })
 * ```
 */
export const defineTool = <S extends z.ZodObject>(definition: {
  readonly name: string
  readonly title?: string
  readonly description: string
  readonly input: S
  readonly annotations?: ToolAnnotations
  readonly run: (args: z.output<S>, context: ToolCallContext) => CallToolResult | Promise<CallToolResult>
}): ToolSpec => {
  // Built on first read (the first `tools/list`), not when the server starts: converting every
  // tool's schema costs start-up milliseconds that a client may never ask for.
  let inputSchema: ToolSpec["inputSchema"] | undefined
  return {
    name: definition.name,
    ...(definition.title !== undefined ? { title: definition.title } : {}),
    description: definition.description,
    get inputSchema() {
      inputSchema ??= publishedSchema(definition.input)
      return inputSchema
    },
    ...(definition.annotations !== undefined ? { annotations: definition.annotations } : {}),
    call: (args, context) => {
      const parsed = definition.input.safeParse(args)
      if (!parsed.success) {
        const issues = parsed.error.issues
        return errorResult({
          kind: "InvalidArguments",
          message: issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "arguments"}: ${i.message}`).join("; "),
          path: issues[0]!.path.filter((p): p is string | number => typeof p !== "symbol")
        })
      }
      return definition.run(parsed.data, context)
    }
  }
}

/**
 * A resource with a fixed URI. `read` returns its text.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ResourceSpec } from "lambdagent/mcp"
 * const readme: ResourceSpec = { uri: "docs://readme", name: "readme", mimeType: "text/markdown", read: () => "# Hello" }
 * ```
 */
export interface ResourceSpec {
  readonly uri: string
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType?: string
  /** The resource's text, read on each `resources/read`. */
  readonly read: () => string | Promise<string>
}

/**
 * A family of resources named by an RFC 6570 URI template (`lambda://tools/{name}`). `read`
 * returns the text for the matched variables, or `undefined` when there is no such resource.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ResourceTemplateSpec } from "lambdagent/mcp"
 * const notes: ResourceTemplateSpec = {
 *   uriTemplate: "notes://{id}",
 *   name: "note",
 *   read: (vars) => (vars.id === "1" ? "first note" : undefined)
 * }
 * ```
 */
export interface ResourceTemplateSpec {
  readonly uriTemplate: string
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType?: string
  /** The text of the resource the template's variables name, or `undefined` when there is none. */
  readonly read: (variables: Readonly<Record<string, string>>) => string | undefined | Promise<string | undefined>
}

/**
 * A prompt: its arguments (all strings, as MCP prompts have) and how to build its messages.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { PromptSpec } from "lambdagent/mcp"
 * const hello: PromptSpec = {
 *   name: "hello",
 *   arguments: [{ name: "who", required: true }],
 *   get: (args) => ({ messages: [{ role: "user", content: { type: "text", text: `Say hello to ${args.who}` } }] })
 * }
 * ```
 */
export interface PromptSpec {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly arguments?: ReadonlyArray<{ readonly name: string; readonly description?: string; readonly required?: boolean }>
  /** The prompt's messages for the given arguments. */
  readonly get: (args: Readonly<Record<string, string>>) => GetPromptResult | Promise<GetPromptResult>
}

/**
 * Which of a module's lists changed.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ModuleChange } from "lambdagent/mcp"
 * const change: ModuleChange = { tools: true, resources: true }
 * ```
 */
export interface ModuleChange {
  readonly tools?: boolean
  readonly resources?: boolean
  readonly prompts?: boolean
}

/**
 * A part of a server: tools, resources, resource templates and prompts, read afresh on every
 * list request, and a way to be told when they change (the server then sends the matching
 * `notifications/*\/list_changed` to every session). Earlier modules win name clashes.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import * as z from "zod"
 * import { defineTool, type ServerModule } from "lambdagent/mcp"
 * const clock: ServerModule = {
 *   name: "clock",
 *   tools: () => [defineTool({
 *     name: "now",
 *     description: "The current time",
 *     input: z.object({}),
 *     run: () => ({ content: [{ type: "text", text: new Date().toISOString() }] })
 *   })]
 * }
 * ```
 */
export interface ServerModule {
  readonly name: string
  /** The module's tools, read on every `tools/list` (and on every call when there is no `tool`). */
  readonly tools?: () => ReadonlyArray<ToolSpec>
  /**
   * The tool of this name among `tools()`, without listing them all: what `tools/call` uses when
   * given, so a call costs the same however many tools a module has.
   */
  readonly tool?: (name: string) => ToolSpec | undefined
  /** Its resources, read on every `resources/list` and read. */
  readonly resources?: () => ReadonlyArray<ResourceSpec>
  /** Its resource templates, read on every `resources/templates/list`. */
  readonly resourceTemplates?: () => ReadonlyArray<ResourceTemplateSpec>
  /** Its prompts, read on every `prompts/list` and get. */
  readonly prompts?: () => ReadonlyArray<PromptSpec>
  /** Report changes of its lists (the server then notifies clients); returns the unsubscribe function. */
  readonly subscribe?: (onChange: (change: ModuleChange) => void) => () => void
}
