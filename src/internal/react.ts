/**
 * Finding the tool call in a ReAct agent's thought.
 */
import { writeJson } from "./json.ts"

export interface ToolCallIntent {
  readonly tool: string
  /** The arguments as text (objects as JSON text). */
  readonly args: string | undefined
  /** The arguments as JSON, when they were found in a JSON object (so they need not be parsed again). */
  readonly json?: unknown
}

const NAME_KEYS = ["tool", "action", "name"] as const
const ARG_KEYS = ["args", "input", "arguments", "action_input"] as const

const argText = (value: unknown): string | undefined => (value === undefined ? undefined : typeof value === "string" ? value : writeJson(value))

/** Every balanced `{…}` substring, outermost first, respecting JSON strings. */
const jsonObjectCandidates = function* (text: string): Generator<string> {
  for (let start = text.indexOf("{"); start >= 0; start = text.indexOf("{", start + 1)) {
    let depth = 0
    let inString = false
    for (let i = start; i < text.length; i++) {
      const ch = text[i]
      if (inString) {
        if (ch === "\\") i++
        else if (ch === '"') inString = false
      } else if (ch === '"') inString = true
      else if (ch === "{") depth++
      else if (ch === "}" && --depth === 0) {
        yield text.slice(start, i + 1)
        break
      }
    }
  }
}

/** The tool call a parsed JSON value names, if it is an object with a tool name. */
const intentOf = (parsed: unknown): ToolCallIntent | undefined => {
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined
  const record = parsed as Record<string, unknown>
  const nameKey = NAME_KEYS.find((k) => typeof record[k] === "string")
  if (nameKey === undefined) return undefined
  const argKey = ARG_KEYS.find((k) => k in record)
  const tool = (record[nameKey] as string).trim()
  if (argKey === undefined) return { tool, args: undefined }
  const json = record[argKey]
  return { tool, args: argText(json), json }
}

const parsedOrUndefined = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const fromJson = (text: string): ToolCallIntent | undefined => {
  // the usual thought is exactly one JSON object: parse it whole before scanning for objects in prose
  const trimmed = text.trim()
  if (trimmed.startsWith("{") && trimmed.endsWith("}")) {
    const whole = intentOf(parsedOrUndefined(trimmed))
    if (whole !== undefined) return whole
  }
  for (const candidate of jsonObjectCandidates(text)) {
    const intent = intentOf(parsedOrUndefined(candidate))
    if (intent !== undefined) return intent
  }
  return undefined
}

const fromXml = (text: string): ToolCallIntent | undefined => {
  const tool = /<tool>\s*([\s\S]*?)\s*<\/tool>/i.exec(text)
  if (tool === null) return undefined
  const args = /<args>([\s\S]*?)<\/args>/i.exec(text)
  return { tool: tool[1]!.trim(), args: args === null ? undefined : args[1]!.trim() }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const fromKeyword = (text: string, tools: ReadonlyArray<string>): ToolCallIntent | undefined => {
  const action = /^\s*Action\s*:\s*(.+?)\s*$/im.exec(text)
  const input = /^\s*(?:Action Input|Input)\s*:\s*([\s\S]*?)\s*$/im.exec(text)
  if (action !== null) {
    const named = tools.find((t) => t.toLowerCase() === action[1]!.toLowerCase())
    if (named !== undefined) return { tool: named, args: input === null ? undefined : input[1]! }
  }
  for (const tool of tools) {
    if (new RegExp(`(^|[^\\w-])${escapeRegExp(tool)}([^\\w-]|$)`, "i").test(text)) {
      return { tool, args: input === null ? undefined : input[1]! }
    }
  }
  return undefined
}

/**
 * The tool call a thought asks for: a JSON object `{"tool": …, "args": …}` first, then XML
 * `<tool>…</tool><args>…</args>`, then a keyword (`Action: name`, or a tool's name as a word).
 * `undefined` means the thought is a final answer.
 */
export const extractToolCall = (thought: string, tools: ReadonlyArray<string>): ToolCallIntent | undefined =>
  fromJson(thought) ?? fromXml(thought) ?? fromKeyword(thought, tools)

/**
 * The tool call a thought writes as structure only — a JSON object, then XML — for a model that
 * could have called the tool natively and wrote it in its text instead (a tool's name in prose is
 * no call here).
 */
export const extractWrittenToolCall = (thought: string): ToolCallIntent | undefined => fromJson(thought) ?? fromXml(thought)
