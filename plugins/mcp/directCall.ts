/**
 * The direct path of `tools/call` over stdio. The server's own tools (`run`, `evolve`, `list`,
 * `help` and the evolved tools) build their results themselves, always well-formed, so a plain
 * call of one of them need not go through the SDK's request machinery (its schema checks of the
 * request and of the result, an abort controller and a handler context per request): the stdio
 * transport hands it straight to the session's answer and writes the response itself. Anything
 * else (other modules' tools, progress tokens, tasks, unusual fields) takes the SDK's path, and
 * both paths give the same bytes on the wire.
 *
 * Internal to the MCP plugin: not exported from its index.
 *
 * @since 0.2.0
 * @module
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { CallToolResult, ServerNotification } from "@modelcontextprotocol/sdk/types.js"

/** A `tools/call` request the direct path may answer, read from the JSON-RPC message. */
export interface PlainToolCall {
  readonly id: string | number
  readonly name: string
  readonly args: Record<string, unknown>
}

/**
 * A session's answer to a plain call of one of the server's own tools, or `undefined` when the
 * tool is not one of them (the SDK then answers). `notify` sends a notification about the call.
 */
export type DirectCall = (
  call: PlainToolCall,
  signal: AbortSignal,
  notify: (notification: ServerNotification) => Promise<void>
) => Promise<CallToolResult> | undefined

const directCalls = new WeakMap<Server, DirectCall>()

/** Let the stdio transport answer `session`'s plain calls of the server's own tools with `answer`. */
export const answerDirectly = (session: Server, answer: DirectCall): void => {
  directCalls.set(session, answer)
}

/** The direct answer of `session`, if it has one. */
export const directCallOf = (session: Server): DirectCall | undefined => directCalls.get(session)

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"])

/**
 * The call in `json` when it is a JSON-RPC `tools/call` request that the SDK's schemas accept as
 * it is and that asks for nothing beyond a result: no progress token, no task, no related task.
 * Anything else is `undefined`, and goes the SDK's way.
 */
export const plainToolCall = (json: unknown): PlainToolCall | undefined => {
  if (!isRecord(json) || json.method !== "tools/call" || json.jsonrpc !== "2.0") return undefined
  const id = json.id
  if (typeof id !== "string" && !(typeof id === "number" && Number.isSafeInteger(id))) return undefined
  const params = json.params
  if (!isRecord(params) || typeof params.name !== "string") return undefined
  for (const key in json) if (!REQUEST_KEYS.has(key)) return undefined
  for (const key in params) if (key !== "name" && key !== "arguments" && key !== "_meta") return undefined
  const args = params.arguments
  if (args !== undefined && !isRecord(args)) return undefined
  const meta = params._meta
  if (meta !== undefined && (!isRecord(meta) || Object.keys(meta).length > 0)) return undefined
  return { id, name: params.name, args: args ?? {} }
}
