/**
 * How values and errors travel back as MCP tool results.
 *
 * - A value: one text item holding its JSON encoding (`Value.toJsonText`), and `structuredContent`
 *   `{ value, steps }`.
 * - A continuation: `structuredContent` `{ type: "continuation", message, tool, next_input, step,
 *   next_call }` (plus `version` when a version was named), the same object as JSON text. Send
 *   `next_input` back as `input` with `step` to take the next step; `next_call` is that call.
 * - An error: `isError: true`, `structuredContent` `{ kind, message, path?, … }`, the same object as
 *   JSON text.
 *
 * @since 0.1.0
 * @module
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Errors, Term, Value } from "lambdagent"

/**
 * A structured error as a tool result carries it: `kind` names the failure (an `EvalError` kind,
 * `TermParseError`, `BudgetExceeded`, `InvalidArguments`, `UnknownTool`, `FreeVariable`,
 * `CapabilityDenied`, …), `path` locates the offending node when known.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ErrorInfo } from "lambdagent/mcp"
 * const e: ErrorInfo = { kind: "DivisionByZero", message: "division by zero", path: ["body"] }
 * ```
 */
export interface ErrorInfo {
  readonly kind: string
  readonly message: string
  readonly path?: ReadonlyArray<string | number>
  readonly [extra: string]: unknown
}

/**
 * Deepest nesting of a value that is still sent as `structuredContent`; deeper values travel only
 * as text (the text is written without recursion, any depth).
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { STRUCTURED_DEPTH_LIMIT } from "lambdagent/mcp"
 * console.log(STRUCTURED_DEPTH_LIMIT) // 512
 * ```
 */
export const STRUCTURED_DEPTH_LIMIT = 512

type RawJson = (text: string) => unknown
const rawJson: RawJson | undefined = (JSON as unknown as { rawJSON?: RawJson }).rawJSON

const TOO_DEEP: unique symbol = Symbol("too deep")

/**
 * JSON ready for `JSON.stringify`: `bigint`s become exact raw numbers (or plain numbers where the
 * runtime has no `JSON.rawJSON`). `undefined` when the value nests deeper than `limit`.
 */
const wireJson = (json: Term.Json, limit: number): unknown => {
  // Recursion is bounded by `limit` (512), far below the stack's depth.
  const convert = (value: Term.Json, depth: number): unknown => {
    if (typeof value === "bigint") return rawJson !== undefined ? rawJson(value.toString()) : Number(value)
    if (value === null || typeof value !== "object") return value
    if (depth >= limit) return TOO_DEEP
    if (Array.isArray(value)) {
      const out: Array<unknown> = new Array(value.length)
      for (let i = 0; i < value.length; i++) {
        const item = convert(value[i] as Term.Json, depth + 1)
        if (item === TOO_DEEP) return TOO_DEEP
        out[i] = item
      }
      return out
    }
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value)) {
      const item = convert((value as Record<string, Term.Json>)[key]!, depth + 1)
      if (item === TOO_DEEP) return TOO_DEEP
      out[key] = item
    }
    return out
  }
  const wire = convert(json, 0)
  return wire === TOO_DEEP ? undefined : wire
}

const structured = (json: Term.Json): Record<string, unknown> | undefined => {
  const wire = wireJson(json, STRUCTURED_DEPTH_LIMIT)
  return wire === undefined ? undefined : (wire as Record<string, unknown>)
}

const textResult = (text: string, structuredContent: Record<string, unknown> | undefined, isError: boolean): CallToolResult => ({
  content: [{ type: "text", text }],
  ...(structuredContent !== undefined ? { structuredContent } : {}),
  ...(isError ? { isError: true } : {})
})

/**
 * Where a continuation came from, to say how to send it back.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ContinuationRoute } from "lambdagent/mcp"
 * const viaRun: ContinuationRoute = { via: "run", version: 2 }
 * ```
 */
export interface ContinuationRoute {
  /** `run` (the continuation says "call run again") or `tool` (call the tool itself again). */
  readonly via: "run" | "tool"
  /** The version that was run, when one was named. */
  readonly version?: number
}

/**
 * The result for a value: JSON text plus `structuredContent` `{ value, steps }`, or the
 * continuation form when the value is a continuation.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { valueResult } from "lambdagent/mcp"
 * valueResult(49, 12).content // [{ type: "text", text: "49" }]
 * ```
 */
export const valueResult = (value: Value.Value, steps: number, route: ContinuationRoute = { via: "run" }): CallToolResult => {
  if (value instanceof Value.Continuation) return continuationResult(value, route)
  const json = Value.toJson(value)
  const wire = structured({ value: json, steps })
  return textResult(Term.stringify(json), wire, false)
}

/**
 * The result for a continuation: `{ type: "continuation", message, tool, next_input, step, next_call }`
 * (and `version`) as `structuredContent` and as JSON text. `message` is the reference's wording;
 * `next_call` is the call that takes the next step, ready to send.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * import { continuationResult } from "lambdagent/mcp"
 * continuationResult(new Value.Continuation("factorial", new Value.Pair(4, 5), 1), { via: "run" }).structuredContent
 * // { type: "continuation", message: "Recursive step needed. Call run again with:", tool: "factorial", next_input: { pair: [4, 5] }, step: 1, next_call: … }
 * ```
 */
export const continuationResult = (k: Value.Continuation, route: ContinuationRoute): CallToolResult => {
  const next_input = Value.toJson(k.input)
  const version = route.version !== undefined ? { version: route.version } : {}
  const json: Record<string, Term.Json> = {
    type: "continuation",
    message: `Recursive step needed. Call ${route.via === "run" ? "run" : k.tool} again with:`,
    tool: k.tool,
    next_input,
    step: k.step,
    ...version,
    next_call:
      route.via === "run"
        ? { tool: "run", arguments: { tool: k.tool, input: next_input, step: k.step, ...version } }
        : { tool: k.tool, arguments: { input: next_input, step: k.step } }
  }
  return textResult(Term.stringify(json), structured(json), false)
}

/**
 * A structured error result (`isError: true`).
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { errorResult } from "lambdagent/mcp"
 * errorResult({ kind: "UnknownTool", message: "no tool named \"sqare\"" }).isError // true
 * ```
 */
export const errorResult = (error: ErrorInfo): CallToolResult => {
  const json = error as unknown as Term.Json
  return textResult(Term.stringify(json), structured(json), true)
}

/**
 * The structured form of any failure: the term language's errors via `Errors.toJson` (with the
 * budget that ran out for `BudgetExceeded`), anything else as an `InternalError`.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { Errors } from "lambdagent"
 * import { errorInfo } from "lambdagent/mcp"
 * errorInfo(new Errors.EvalError({ kind: "DivisionByZero", message: "division by zero", steps: 3 })).kind // "DivisionByZero"
 * ```
 */
export const errorInfo = (error: unknown): ErrorInfo => {
  if (Errors.isLambdaError(error)) {
    const base = Errors.toJson(error)
    const info: ErrorInfo = { ...base, ...(base.path !== undefined ? { path: [...base.path] } : {}) }
    return info
  }
  return { kind: "InternalError", message: error instanceof Error ? error.message : String(error) }
}
