/**
 * Structured output: reading a JSON value out of a model's answer, checking it against a JSON
 * Schema (through zod's reading of the schema), and the texts a model is shown — the schema as
 * instructions, and what was wrong with an answer it is asked to repair.
 */
import * as z from "zod"
import type { JsonSchema } from "../LanguageModel.ts"
import { writeJson } from "./json.ts"

export type { JsonSchema }

const validators = new WeakMap<JsonSchema, z.ZodType>()

/**
 * The validator of a JSON Schema, built once per schema object. Throws (with zod's message) for a
 * schema zod cannot read, which the parser reports at the schema's path.
 */
export const validatorOf = (schema: JsonSchema): z.ZodType => {
  let validator = validators.get(schema)
  if (validator === undefined) {
    validator = z.fromJSONSchema(schema as z.core.JSONSchema.JSONSchema)
    validators.set(schema, validator)
  }
  return validator
}

const MAX_ISSUES = 8

/** A JSON path in the `$.a[0].b` notation of parse errors. */
const pathText = (path: ReadonlyArray<PropertyKey>): string => {
  let out = "$"
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else if (typeof key === "string" && /^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`
    else out += `[${JSON.stringify(String(key))}]`
  }
  return out
}

const issueText = (issue: z.core.$ZodIssue): string => {
  const message = issue.message.replace(/^Invalid input: /, "")
  // zod reports a missing property as a value of the wrong type
  const missing = /^expected (.+), received undefined$/.exec(message)
  return `${pathText(issue.path)}: ${missing !== null ? `missing (expected ${missing[1]})` : message}`
}

/** What is wrong with a JSON value under a schema, one issue a line; `undefined` when nothing is. */
export const problemsOf = (schema: JsonSchema, json: unknown): string | undefined => {
  let checked: z.ZodSafeParseResult<unknown>
  try {
    checked = validatorOf(schema).safeParse(json)
  } catch (error) {
    // a recursive schema checks nested data recursively: too deep a value overflows the stack
    if (error instanceof RangeError) return "$: the value is nested too deeply to check"
    throw error
  }
  return checked.success ? undefined : issuesText(checked.error)
}

/** A zod error's issues, one a line, with the JSON path of each (at most eight, then how many more). */
export const issuesText = (error: z.ZodError): string => {
  const issues = error.issues
  const lines = issues.slice(0, MAX_ISSUES).map(issueText)
  if (issues.length > MAX_ISSUES) lines.push(`… and ${issues.length - MAX_ISSUES} more`)
  return lines.join("\n")
}

const FENCED = /```(?:json|JSON)?[ \t]*\r?\n([\s\S]*?)\r?\n?```/

const parsed = (text: string): { readonly json: unknown } | undefined => {
  try {
    return { json: JSON.parse(text) }
  } catch {
    return undefined
  }
}

/**
 * The JSON value an answer holds: the whole text, else the inside of a fenced code block, else
 * the text from the first `{` or `[` to the last `}` or `]` (a model asked for JSON in the prompt
 * often wraps it in prose or a fence).
 */
export const readJson = (text: string): { readonly json: unknown } | { readonly problem: string } => {
  const trimmed = text.trim()
  if (trimmed === "") return { problem: "the answer is empty; expected a JSON value" }
  const whole = parsed(trimmed)
  if (whole !== undefined) return whole
  const fenced = FENCED.exec(trimmed)
  if (fenced !== null) {
    const inside = parsed(fenced[1]!.trim())
    if (inside !== undefined) return inside
  }
  const open = trimmed.search(/[[{]/)
  const close = Math.max(trimmed.lastIndexOf("}"), trimmed.lastIndexOf("]"))
  if (open >= 0 && close > open) {
    const inner = parsed(trimmed.slice(open, close + 1))
    if (inner !== undefined) return inner
  }
  let reason = "not valid JSON"
  try {
    JSON.parse(trimmed)
  } catch (error) {
    if (error instanceof Error) reason = `not valid JSON (${error.message})`
  }
  return { problem: `the answer is ${reason}` }
}

/** The JSON value of an answer when it matches the schema, else what is wrong with it. */
export const checkAnswer = (text: string, schema: JsonSchema): { readonly json: unknown } | { readonly problem: string } => {
  const read = readJson(text)
  if ("problem" in read) return read
  const problems = problemsOf(schema, read.json)
  return problems === undefined ? read : { problem: problems }
}

/** The system prompt's part that asks a model without structured output for JSON. */
export const instructions = (schema: JsonSchema): string =>
  ["## Output", "Answer with one JSON value that matches this JSON Schema, and nothing else: no prose, no code fence.", writeJson(schema)].join("\n")

/** The user turn that asks a model to repair an answer that did not match the schema. */
export const repairPrompt = (problem: string): string =>
  `Your answer does not match the required JSON Schema:\n${problem}\nAnswer again with only the corrected JSON value.`

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Whether a schema meets the rules of OpenAI's strict mode: every object lists all its properties
 * as required and allows no others. Schemas nested anywhere (properties, items, `anyOf`,
 * definitions) are checked, without recursion.
 */
export const isStrictCompatible = (schema: JsonSchema): boolean => {
  const pending: Array<unknown> = [schema]
  while (pending.length > 0) {
    const node = pending.pop()
    if (Array.isArray(node)) {
      pending.push(...node)
      continue
    }
    if (!isRecord(node)) continue
    const properties = node.properties
    if (node.type === "object" || isRecord(properties)) {
      if (node.additionalProperties !== false) return false
      const keys = isRecord(properties) ? Object.keys(properties) : []
      const required = Array.isArray(node.required) ? node.required : []
      if (keys.some((key) => !required.includes(key))) return false
    }
    for (const [key, value] of Object.entries(node)) {
      if (key !== "enum" && key !== "const" && key !== "required" && key !== "default" && key !== "examples") pending.push(value)
    }
  }
  return true
}

/**
 * A zod schema as the JSON Schema a model is sent: without the `$schema` key (providers do not
 * want it) and without the bounds zod gives every integer (±2⁵³ − 1, which tell a model nothing).
 */
export const zodToJsonSchema = (schema: z.ZodType): JsonSchema => {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { unrepresentable: "any" }) as Record<string, unknown>
  const pending: Array<unknown> = [json]
  while (pending.length > 0) {
    const node = pending.pop()
    if (Array.isArray(node)) pending.push(...node)
    else if (isRecord(node)) {
      const mutable = node as Record<string, unknown>
      if (node.type === "integer" && node.minimum === Number.MIN_SAFE_INTEGER && node.maximum === Number.MAX_SAFE_INTEGER) {
        delete mutable.minimum
        delete mutable.maximum
      }
      pending.push(...Object.values(node))
    }
  }
  return json
}

/** A schema given as zod, or as JSON Schema, as JSON Schema. */
export const toJsonSchema = (schema: z.ZodType | JsonSchema): JsonSchema => (schema instanceof z.ZodType ? zodToJsonSchema(schema) : schema)
