/**
 * The shape checks forms parse with, and the JSON paths their errors name.
 *
 * Parsing is a bottom-up fold over the JSON (never recursion on the JavaScript stack): each node's
 * form checks its shape and returns either a finished term (a leaf) or a {@link Plan} naming the
 * sub-terms to parse and how to assemble them.
 */
import { TermParseError } from "../Errors.ts"
import { parseExact } from "../internal/json.ts"
import type * as Term from "../Term.ts"

/** A JSON node awaiting conversion, with the way back to the root for error paths. */
export interface ParseNode {
  readonly json: unknown
  readonly key: string | number | undefined
  readonly parent: ParseNode | undefined
  /** Set once the node's shape is checked: the sub-terms to parse and how to assemble them. */
  plan?: Plan
}

/** The sub-terms of a node and how to build the node from them. */
export interface Plan {
  readonly kids: ReadonlyArray<ParseNode>
  readonly build: (kids: ReadonlyArray<Term.Term>) => Term.Term
}

/** The path from the root to `node`. */
export const pathOf = (node: ParseNode | undefined): Array<string | number> => {
  const path: Array<string | number> = []
  for (let n = node; n !== undefined && n.key !== undefined; n = n.parent) path.push(n.key)
  return path.reverse()
}

/**
 * Render a JSON path as `$.app.func[0]`.
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.formatPath(["app", "func", 0]) // "$.app.func[0]"
 * ```
 */
export const formatPath = (path: ReadonlyArray<string | number>): string => {
  let out = "$"
  for (const segment of path) {
    out += typeof segment === "number" ? `[${segment}]` : /^[A-Za-z_$][\w$]*$/.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`
  }
  return out
}

const describe = (json: unknown): string => {
  if (json === null) return "null"
  if (Array.isArray(json)) return `an array of ${json.length}`
  if (typeof json === "object") return "an object"
  if (typeof json === "string") return "a string"
  if (typeof json === "number" && !Number.isInteger(json)) return `the number ${json}`
  return typeof json
}

/** Segments a parse error's message names at each end of a longer path (its `path` holds them all). */
const PATH_ENDS_IN_MESSAGE = 16

/** A path for an error message: whole, or its two ends around how many segments are left out. */
const messagePath = (path: ReadonlyArray<string | number>): string =>
  path.length <= 2 * PATH_ENDS_IN_MESSAGE
    ? formatPath(path)
    : `${formatPath(path.slice(0, PATH_ENDS_IN_MESSAGE))}…(${path.length - 2 * PATH_ENDS_IN_MESSAGE} more)…${formatPath(path.slice(-PATH_ENDS_IN_MESSAGE)).slice(1)}`

/** Whether a JSON value is an object (not null, not an array). */
export const isRecord = (json: unknown): json is Record<string, unknown> => typeof json === "object" && json !== null && !Array.isArray(json)

/** The checks a form's `parse` uses; each failure throws a {@link TermParseError} with the path. */
export class Parser {
  fail(node: ParseNode, expected: string, key?: string | number): never {
    const path = pathOf(node)
    if (key !== undefined) path.push(key)
    const found = key === undefined ? node.json : (node.json as Record<string, unknown>)[key as string]
    throw new TermParseError({
      message: `${messagePath(path)}: expected ${expected}, found ${describe(found)}`,
      path,
      expected
    })
  }

  child(parent: ParseNode, json: unknown, key: string | number): ParseNode {
    return { json, key, parent }
  }

  /** The node of `json` at `path` below `node` (intermediate objects only name the path). */
  sub(node: ParseNode, json: unknown, ...path: ReadonlyArray<string | number>): ParseNode {
    let parent = node
    for (const key of path.slice(0, -1)) parent = this.child(parent, undefined, key)
    return this.child(parent, json, path[path.length - 1]!)
  }

  /** An object under `form` with the required keys and no keys besides the optional ones. */
  fields(
    node: ParseNode,
    form: string | number,
    value: unknown,
    required: ReadonlyArray<string>,
    optional: ReadonlyArray<string> = []
  ): Record<string, unknown> {
    const shape = `an object with ${required.map((r) => JSON.stringify(r)).join(", ")}${optional.length > 0 ? ` (optional ${optional.map((r) => JSON.stringify(r)).join(", ")})` : ""}`
    if (!isRecord(value)) return this.fail(node, shape, form)
    const at = this.child(node, value, form)
    for (const key of required) if (!Object.hasOwn(value, key)) this.fail(at, shape)
    for (const key of Object.keys(value)) {
      if (!required.includes(key) && !optional.includes(key)) this.fail(at, `${shape}; unexpected key ${JSON.stringify(key)}`)
    }
    return value
  }

  /** An array of exactly `n` sub-terms under `form`. */
  tuple(node: ParseNode, form: string, value: unknown, n: number, what: string): ReadonlyArray<ParseNode> {
    if (!Array.isArray(value) || value.length !== n) return this.fail(node, what, form)
    const at = this.child(node, value, form)
    return value.map((item, i) => this.child(at, item, i))
  }

  string(node: ParseNode, value: unknown, key: string | number, what = "a string"): string {
    if (typeof value !== "string") return this.fail(node, what, key)
    return value
  }

  count(node: ParseNode, value: unknown, key: string, min: number): number {
    if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
      return this.fail(node, `an integer ≥ ${min}`, key)
    }
    return value
  }

  optionalBoolean(at: ParseNode, f: Readonly<Record<string, unknown>>, key: string): boolean | undefined {
    const v = f[key]
    if (v === undefined) return undefined
    if (typeof v !== "boolean") return this.fail(at, "a boolean", key)
    return v
  }
}

/**
 * Parse JSON text, keeping integers beyond the safe range of a JavaScript number exact (as
 * `bigint`). Nesting depth is limited only by memory. Throws `TermParseError` on malformed JSON.
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.parseJsonText("9223372036854775807") // 9223372036854775807n
 * ```
 */
export const parseJsonText = (text: string): unknown => {
  try {
    // only text with a long digit run can hold an inexact integer; the rest takes the native parser
    return /\d{16}/.test(text) ? parseExact(text) : JSON.parse(text)
  } catch (cause) {
    throw new TermParseError({
      message: `invalid JSON: ${cause instanceof Error ? cause.message : String(cause)}`,
      path: [],
      expected: "JSON text"
    })
  }
}
