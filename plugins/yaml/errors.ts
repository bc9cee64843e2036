/**
 * The errors of loading and compiling an agent file. Each is a tagged error (`_tag`) whose fields
 * say where the problem is (file, field path, line and column) and what was expected; the
 * `message` is the same information as one line per problem, `file:line:column: path: …`.
 *
 * - {@link ConfigError}: the file cannot be read or is not valid YAML.
 * - {@link SchemaError}: the YAML does not have the shape of an agent file (unknown key, wrong
 *   type, missing field, bad validator expression), with a suggestion for typos.
 * - {@link SemanticError}: the shape is right but the agent cannot mean anything (a router with
 *   no routes, `maxSteps: 0`, …); `rule` is the lint rule that describes it.
 *
 * @since 0.1.0
 * @module
 */
import * as Schema from "effect/Schema"
import { Errors } from "lambdagent"

/**
 * A path from the top of the file to a field: keys and list indexes.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { FieldPath } from "lambdagent/yaml"
 * const p: FieldPath = ["chain", "steps", 1, "prompt"]
 * ```
 */
export type FieldPath = ReadonlyArray<string | number>

const FieldPathSchema = Schema.Array(Schema.Union([Schema.String, Schema.Number]))

/**
 * A 1-based line and column in the YAML text.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Position } from "lambdagent/yaml"
 * const p: Position = { line: 3, column: 5 }
 * ```
 */
export interface Position {
  readonly line: number
  readonly column: number
}

/**
 * One problem in a {@link SchemaError} or {@link SemanticError}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Issue } from "lambdagent/yaml"
 * const i: Issue = {
 *   path: ["systemPromt"], field: "systemPromt", line: 4, column: 1,
 *   message: "unknown key \"systemPromt\" (did you mean \"systemPrompt\"?)",
 *   expected: "a known key", actual: "systemPromt", suggestion: "systemPrompt"
 * }
 * ```
 */
export interface Issue {
  readonly path: FieldPath
  /** `path` as text: `chain.steps[1].prompt`. */
  readonly field: string
  readonly line?: number | undefined
  readonly column?: number | undefined
  readonly message: string
  readonly expected?: string | undefined
  readonly actual?: string | undefined
  readonly suggestion?: string | undefined
  /** The lint rule, for semantic problems. */
  readonly rule?: string | undefined
}

const IssueSchema = Schema.Struct({
  path: FieldPathSchema,
  field: Schema.String,
  line: Schema.optional(Schema.Number),
  column: Schema.optional(Schema.Number),
  message: Schema.String,
  expected: Schema.optional(Schema.String),
  actual: Schema.optional(Schema.String),
  suggestion: Schema.optional(Schema.String),
  rule: Schema.optional(Schema.String)
})

/**
 * Write a field path as text: `chain.steps[1].prompt`, `router.routes["code review"]`; the top
 * level is `(root)`.
 *
 * @since 0.1.0
 * @category formatting
 * @example
 * ```ts
 * import { formatFieldPath } from "lambdagent/yaml"
 * formatFieldPath(["chain", "steps", 1, "prompt"]) // "chain.steps[1].prompt"
 * formatFieldPath(["router", "routes", "code review"]) // 'router.routes["code review"]'
 * ```
 */
export const formatFieldPath = (path: FieldPath): string => {
  if (path.length === 0) return "(root)"
  let out = ""
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) out += out === "" ? segment : `.${segment}`
    else out += `[${JSON.stringify(segment)}]`
  }
  return out
}

const where = (file: string | undefined, line: number | undefined, column: number | undefined): string => {
  const parts = [file, line, line === undefined ? undefined : column].filter((p) => p !== undefined)
  return parts.length === 0 ? "" : `${parts.join(":")}: `
}

/**
 * One line for an issue: `file:line:column: field: message [rule]`.
 *
 * @since 0.1.0
 * @category formatting
 * @example
 * ```ts
 * import { formatIssue } from "lambdagent/yaml"
 * formatIssue({ path: ["type"], field: "type", line: 2, column: 7, message: "expected one of simple, react" }, "a.yml")
 * // "a.yml:2:7: type: expected one of simple, react"
 * ```
 */
export const formatIssue = (issue: Issue, file?: string): string =>
  `${where(file, issue.line, issue.column)}${issue.field}: ${issue.message}${issue.rule === undefined ? "" : ` [${issue.rule}]`}`

/**
 * Why a {@link ConfigError} happened.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ConfigErrorReason } from "lambdagent/yaml"
 * const r: ConfigErrorReason = "Syntax"
 * ```
 */
export type ConfigErrorReason = "NotFound" | "Unreadable" | "Syntax" | "TooLarge" | "TooDeep" | "Cycle"

const ConfigErrorReasonSchema = Schema.Literals(["NotFound", "Unreadable", "Syntax", "TooLarge", "TooDeep", "Cycle"])

/**
 * The file cannot be read, or its text is not one valid YAML document. `line` and `column` locate
 * syntax errors.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { ConfigError, fromConfig } from "lambdagent/yaml"
 * try {
 *   fromConfig("type: simple\nmodel: [unclosed\n")
 * } catch (e) {
 *   if (e instanceof ConfigError) console.log(e.line, e.column, e.reason) // 3 1 "Syntax"
 * }
 * ```
 */
export class ConfigError extends Errors.TaggedError<ConfigError>()("ConfigError", {
  message: Schema.String,
  reason: ConfigErrorReasonSchema,
  file: Schema.optional(Schema.String),
  line: Schema.optional(Schema.Number),
  column: Schema.optional(Schema.Number),
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * Build a {@link ConfigError} whose message starts with its position.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { configError } from "lambdagent/yaml"
 * configError("Syntax", "Map keys must be unique", { file: "a.yml", line: 2, column: 1 }).message
 * // "a.yml:2:1: Map keys must be unique"
 * ```
 */
export const configError = (
  reason: ConfigErrorReason,
  detail: string,
  at: { readonly file?: string | undefined; readonly line?: number | undefined; readonly column?: number | undefined; readonly cause?: unknown } = {}
): ConfigError =>
  new ConfigError({
    message: `${where(at.file, at.line, at.column)}${detail}`,
    reason,
    ...(at.file !== undefined ? { file: at.file } : {}),
    ...(at.line !== undefined ? { line: at.line } : {}),
    ...(at.column !== undefined ? { column: at.column } : {}),
    ...(at.cause !== undefined ? { cause: at.cause } : {})
  })

/**
 * The YAML does not have the shape of an agent file. The top-level fields describe the first
 * issue (in file order); `issues` lists them all.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { SchemaError, fromConfig } from "lambdagent/yaml"
 * try {
 *   fromConfig("type: simple\nsystemPromt: Hi\n")
 * } catch (e) {
 *   if (e instanceof SchemaError) console.log(e.field, e.suggestion) // "systemPromt" "systemPrompt"
 * }
 * ```
 */
export class SchemaError extends Errors.TaggedError<SchemaError>()("SchemaError", {
  message: Schema.String,
  file: Schema.optional(Schema.String),
  path: FieldPathSchema,
  field: Schema.String,
  line: Schema.optional(Schema.Number),
  column: Schema.optional(Schema.Number),
  expected: Schema.optional(Schema.String),
  actual: Schema.optional(Schema.String),
  suggestion: Schema.optional(Schema.String),
  issues: Schema.Array(IssueSchema)
}) {}

/**
 * The file is well-formed but describes an agent that cannot run (a router with no routes, a
 * chain with no steps, `maxSteps: 0`, …). `rule` is the lint rule of the first issue.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { SemanticError, fromConfig } from "lambdagent/yaml"
 * try {
 *   fromConfig("type: chain\nchain:\n  steps: []\n")
 * } catch (e) {
 *   if (e instanceof SemanticError) console.log(e.rule, e.field) // "L006" "chain.steps"
 * }
 * ```
 */
export class SemanticError extends Errors.TaggedError<SemanticError>()("SemanticError", {
  message: Schema.String,
  file: Schema.optional(Schema.String),
  rule: Schema.String,
  path: FieldPathSchema,
  field: Schema.String,
  line: Schema.optional(Schema.Number),
  column: Schema.optional(Schema.Number),
  expected: Schema.optional(Schema.String),
  actual: Schema.optional(Schema.String),
  issues: Schema.Array(IssueSchema)
}) {}

const byPosition = (a: Issue, b: Issue) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? Infinity) - (b.column ?? Infinity)

const summary = (issues: ReadonlyArray<Issue>, file: string | undefined) => issues.map((i) => formatIssue(i, file)).join("\n")

const firstFields = (first: Issue, file: string | undefined) => ({
  ...(file !== undefined ? { file } : {}),
  path: first.path,
  field: first.field,
  ...(first.line !== undefined ? { line: first.line } : {}),
  ...(first.column !== undefined ? { column: first.column } : {}),
  ...(first.expected !== undefined ? { expected: first.expected } : {}),
  ...(first.actual !== undefined ? { actual: first.actual } : {})
})

/**
 * Build a {@link SchemaError} from one or more issues, sorted by position.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { schemaError } from "lambdagent/yaml"
 * const e = schemaError([{ path: ["type"], field: "type", message: "missing required field" }])
 * e.message // "type: missing required field"
 * ```
 */
export const schemaError = (issues: ReadonlyArray<Issue>, file?: string): SchemaError => {
  const sorted = [...issues].sort(byPosition)
  const first = sorted[0]!
  return new SchemaError({
    message: summary(sorted, file),
    ...firstFields(first, file),
    ...(first.suggestion !== undefined ? { suggestion: first.suggestion } : {}),
    issues: sorted
  })
}

/**
 * Build a {@link SemanticError} from issues that each name a lint rule, sorted by position.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { semanticError } from "lambdagent/yaml"
 * const e = semanticError([{ path: ["router", "routes"], field: "router.routes", rule: "L005", message: "router has no routes" }])
 * e.rule // "L005"
 * ```
 */
export const semanticError = (issues: ReadonlyArray<Issue>, file?: string): SemanticError => {
  const sorted = [...issues].sort(byPosition)
  const first = sorted[0]!
  return new SemanticError({ message: summary(sorted, file), ...firstFields(first, file), rule: first.rule ?? "", issues: sorted })
}

/**
 * Any error of this plugin.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { YamlError } from "lambdagent/yaml"
 * const tag = (e: YamlError) => e._tag
 * ```
 */
export type YamlError = ConfigError | SchemaError | SemanticError

/**
 * Whether a value is one of this plugin's errors (by `_tag`, so it works across bundles).
 *
 * @since 0.1.0
 * @category guards
 * @example
 * ```ts
 * import { fromConfig, isYamlError } from "lambdagent/yaml"
 * try { fromConfig("type: nope\n") } catch (e) { console.log(isYamlError(e)) } // true
 * ```
 */
export const isYamlError = (u: unknown): u is YamlError =>
  typeof u === "object" && u !== null && "_tag" in u && (u._tag === "ConfigError" || u._tag === "SchemaError" || u._tag === "SemanticError")
