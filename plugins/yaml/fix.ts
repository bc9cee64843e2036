/**
 * `lint --fix`: the mechanical repairs of an agent file, made on the YAML document so that
 * comments, order and style survive.
 */
import { isMap, isSeq, parseDocument } from "yaml"
import { type AgentConfig, AgentFileSchema } from "./schema.ts"
import { formatFieldPath, type FieldPath } from "./errors.ts"
import { isTerminateName } from "./compile.ts"
import { agentsOf } from "./validate.ts"

/**
 * One repair {@link fixConfig} made: the lint rule (or `schema` for a number out of range), the
 * field and what was done.
 *
 * @since 0.2.0
 * @category linting
 * @example
 * ```ts
 * import type { Fix } from "lambdagent/yaml"
 * const f: Fix = { rule: "L004", field: "mcp.localTools", message: "added terminate, the loop's base case" }
 * ```
 */
export interface Fix {
  readonly rule: string
  readonly field: string
  readonly message: string
}

/**
 * Repair what is mechanically fixable in an agent file's YAML text, keeping its comments and
 * layout: a number beyond its field's range is clamped to the nearest valid value (a schema
 * error; `react.maxSteps: 0`, L003, becomes 1), a react agent without `terminate` gets it in
 * `mcp.localTools` (L004), and a react agent without `react.maxSteps` gets the default it runs
 * with, 10, written out (L017). Text that is not YAML is returned unchanged with no fixes.
 *
 * @since 0.2.0
 * @category linting
 * @example
 * ```ts
 * import { fixConfig } from "lambdagent/yaml"
 * const fixed = fixConfig("type: react\nsystemPrompt: Think.\nmodel: {name: gpt-4o, temperature: 3}\nreact: {maxSteps: 5}\n")
 * fixed.text // "type: react\nsystemPrompt: Think.\nmodel: { name: gpt-4o, temperature: 2 }\nreact: { maxSteps: 5 }\nmcp:\n  localTools:\n    - terminate\n"
 * fixed.fixes.map((f) => f.rule) // ["schema", "L004"]
 * ```
 */
export const fixConfig = (text: string): { readonly text: string; readonly fixes: ReadonlyArray<Fix> } => {
  const doc = parseDocument(text, { version: "1.2", merge: true })
  if (doc.errors.length > 0) return { text, fixes: [] }
  const fixes: Array<Fix> = []
  clampNumbers(doc, fixes)
  for (const { agent, path, type } of reactAgentsOf(doc.toJS())) {
    if (type !== "react") continue
    if (agent.react?.maxSteps === 0) {
      doc.setIn([...path, "react", "maxSteps"], 1)
      fixes.push({ rule: "L003", field: formatFieldPath([...path, "react", "maxSteps"]), message: "0 steps never run the agent: set to 1" })
    }
    if (!(agent.mcp?.localTools ?? []).some((t) => typeof t === "string" && isTerminateName(t))) {
      const at = [...path, "mcp", "localTools"]
      if (isSeq(doc.getIn(at, true))) doc.addIn(at, "terminate")
      else if (isMap(doc.getIn([...path, "mcp"], true))) doc.setIn(at, doc.createNode(["terminate"]))
      else doc.setIn([...path, "mcp"], doc.createNode({ localTools: ["terminate"] }))
      fixes.push({ rule: "L004", field: formatFieldPath(at), message: "added terminate, the loop's base case" })
    }
    if (agent.react?.maxSteps === undefined) {
      if (isMap(doc.getIn([...path, "react"], true))) doc.setIn([...path, "react", "maxSteps"], 10)
      else doc.setIn([...path, "react"], doc.createNode({ maxSteps: 10 }))
      fixes.push({ rule: "L017", field: formatFieldPath([...path, "react", "maxSteps"]), message: "wrote out the default bound, 10 steps" })
    }
  }
  return fixes.length === 0 ? { text, fixes } : { text: doc.toString({ lineWidth: 0 }), fixes }
}

/**
 * The agents of a file, also when other parts of it still fail the schema (a fix never depends on
 * them); a value too malformed to walk has none.
 */
const reactAgentsOf = (value: unknown): ReturnType<typeof agentsOf> => {
  const parsed = AgentFileSchema.safeParse(value)
  if (parsed.success) return agentsOf(parsed.data)
  if (typeof value !== "object" || value === null || Array.isArray(value)) return []
  try {
    return agentsOf(value as AgentConfig).filter(
      ({ agent }) =>
        (agent.mcp?.localTools === undefined || Array.isArray(agent.mcp.localTools)) && (agent.react === undefined || typeof agent.react === "object")
    )
  } catch {
    return []
  }
}

interface RangeIssue {
  readonly code: string
  readonly path: ReadonlyArray<PropertyKey>
  readonly origin?: string
  readonly minimum?: number | bigint
  readonly maximum?: number | bigint
  readonly inclusive?: boolean
}

/** Clamp every number the schema finds beyond an inclusive bound to that bound. */
const clampNumbers = (doc: ReturnType<typeof parseDocument>, fixes: Array<Fix>): void => {
  const parsed = AgentFileSchema.safeParse(doc.toJS())
  if (parsed.success) return
  for (const issue of parsed.error.issues as unknown as ReadonlyArray<RangeIssue>) {
    if (issue.origin !== "number" || issue.inclusive !== true) continue
    const bound = issue.code === "too_big" ? issue.maximum : issue.code === "too_small" ? issue.minimum : undefined
    if (bound === undefined) continue
    const path = issue.path.filter((k): k is string | number => typeof k === "string" || typeof k === "number") as FieldPath
    const before = doc.getIn(path)
    if (typeof before !== "number") continue
    doc.setIn(path, Number(bound))
    fixes.push({ rule: "schema", field: formatFieldPath(path), message: `${before} is out of range: clamped to ${Number(bound)}` })
  }
}
