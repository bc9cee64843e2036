/**
 * The `__builtin_*` tools: small pure string operations that compiled validators and output
 * parsers call because the core term language has no primitive for them yet (`contains`,
 * `startsWith`, `trim`, JSON checks, …). A runtime registers {@link builtinTools} next to the
 * agent's own tools; {@link evaluateValidator} runs a compiled validator without a runtime.
 *
 * Every builtin is total on its documented input and deterministic.
 *
 * @since 0.1.0
 * @module
 */
import { Evaluator, Oracle, Term, Tools, Value } from "lambdagent"
import * as z from "zod"
import { builtinToolNames } from "./validators.ts"

/**
 * Names of the output-parser tools a chain step's `outputParser` compiles to.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { parserToolNames } from "lambdagent/yaml"
 * console.log(parserToolNames.json) // "__builtin_parse_json"
 * ```
 */
export const parserToolNames = {
  json: "__builtin_parse_json",
  number: "__builtin_parse_number",
  boolean: "__builtin_parse_boolean"
} as const

const text = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v))

/** Python's `str.strip()` with no argument: Unicode whitespace, which takes in four control characters. */
// biome-ignore-start lint/suspicious/noControlCharactersInRegex: U+001C–U+001F are whitespace to Python
const PY_SPACE = /^[\s\u001c-\u001f\u0085]+|[\s\u001c-\u001f\u0085]+$/g
const PY_SPACE_START = /^[\s\u001c-\u001f\u0085]+/
const PY_SPACE_END = /[\s\u001c-\u001f\u0085]+$/
// biome-ignore-end lint/suspicious/noControlCharactersInRegex: U+001C–U+001F are whitespace to Python

const deepEqual = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/** The JSON text inside a model's answer: the whole text, or the body of a ```json fence. */
const jsonCandidate = (s: string): string => {
  const fence = /```(?:json)?\s*\n([\s\S]*?)\n?```/i.exec(s)
  return (fence !== null ? fence[1]! : s).trim()
}

const isJsonText = (s: string): boolean => {
  const t = s.trim()
  if (t === "") return false
  try {
    JSON.parse(t)
    return true
  } catch {
    return false
  }
}

const pair = z.tuple([z.unknown(), z.unknown()])

/**
 * The implementations, by name, on plain JSON inputs (a two-argument builtin receives a
 * two-element array `[subject, argument]`).
 *
 * @since 0.1.0
 * @category builtins
 * @example
 * ```ts
 * import { builtinImplementations } from "lambdagent/yaml"
 * builtinImplementations.__builtin_contains(["an error occurred", "error"]) // true
 * builtinImplementations.__builtin_strip("  hi ") // "hi"
 * ```
 */
export const builtinImplementations: Readonly<Record<string, (input: unknown) => unknown>> = {
  [builtinToolNames.contains]: (input) => {
    const [haystack, needle] = pair.parse(input)
    if (Array.isArray(haystack)) return haystack.some((item) => deepEqual(item, needle))
    return text(haystack).includes(text(needle))
  },
  [builtinToolNames.startswith]: (input) => {
    const [s, prefix] = pair.parse(input)
    return text(s).startsWith(text(prefix))
  },
  [builtinToolNames.endswith]: (input) => {
    const [s, suffix] = pair.parse(input)
    return text(s).endsWith(text(suffix))
  },
  [builtinToolNames.strip]: (input) => text(input).replace(PY_SPACE, ""),
  [builtinToolNames.lstrip]: (input) => text(input).replace(PY_SPACE_START, ""),
  [builtinToolNames.rstrip]: (input) => text(input).replace(PY_SPACE_END, ""),
  [builtinToolNames.lower]: (input) => text(input).toLowerCase(),
  [builtinToolNames.upper]: (input) => text(input).toUpperCase(),
  [builtinToolNames.is_json]: (input) => isJsonText(text(input)),
  [parserToolNames.json]: (input) => {
    const candidate = jsonCandidate(text(input))
    let parsed: unknown
    try {
      parsed = JSON.parse(candidate)
    } catch (cause) {
      throw new Error(`the output is not JSON: ${cause instanceof Error ? cause.message : String(cause)}`)
    }
    // Canonical JSON text: objects are not values of the term language, so the text is kept.
    return JSON.stringify(parsed)
  },
  [parserToolNames.number]: (input) => {
    const t = text(input).trim()
    if (!/^[-+]?\d+(?:\.\d+)?$/.test(t)) throw new Error(`the output is not a number: ${JSON.stringify(t.slice(0, 40))}`)
    const n = Number(t)
    // Integers only: a fraction is rounded half to even, as input normalisation does.
    const floor = Math.floor(n)
    const diff = n - floor
    return diff < 0.5 ? floor : diff > 0.5 ? floor + 1 : floor % 2 === 0 ? floor : floor + 1
  },
  [parserToolNames.boolean]: (input) => {
    const t = text(input)
      .trim()
      .toLowerCase()
      .replace(/[.!]+$/, "")
    if (["true", "yes", "y", "1"].includes(t)) return true
    if (["false", "no", "n", "0"].includes(t)) return false
    throw new Error(`the output is not a yes/no answer: ${JSON.stringify(t.slice(0, 40))}`)
  }
}

const descriptions: Readonly<Record<string, string>> = {
  [builtinToolNames.contains]: "[haystack, needle]: whether the text contains the needle (or the list holds it)",
  [builtinToolNames.startswith]: "[text, prefix]: whether the text starts with the prefix",
  [builtinToolNames.endswith]: "[text, suffix]: whether the text ends with the suffix",
  [builtinToolNames.strip]: "the text without leading and trailing whitespace",
  [builtinToolNames.lstrip]: "the text without leading whitespace",
  [builtinToolNames.rstrip]: "the text without trailing whitespace",
  [builtinToolNames.lower]: "the text in lower case",
  [builtinToolNames.upper]: "the text in upper case",
  [builtinToolNames.is_json]: "whether the text is one JSON value",
  [parserToolNames.json]: "the JSON value in the text (a ```json fence is unwrapped), as canonical JSON text",
  [parserToolNames.number]: "the number in the text, as an integer (fractions rounded half to even)",
  [parserToolNames.boolean]: "true for yes/true/1, false for no/false/0"
}

const twoArgument: ReadonlySet<string> = new Set([builtinToolNames.contains, builtinToolNames.startswith, builtinToolNames.endswith])

/**
 * The builtins as tool definitions, for a runtime's `Tools` registry.
 *
 * @since 0.1.0
 * @category builtins
 * @example
 * ```ts
 * import { Tools } from "lambdagent"
 * import { builtinTools } from "lambdagent/yaml"
 * const registry = Tools.make([...builtinTools])
 * console.log(registry.get("__builtin_lower")?.description) // "the text in lower case"
 * ```
 */
export const builtinTools: ReadonlyArray<Tools.ToolDefinition> = Object.entries(builtinImplementations).map(([name, run]) =>
  Tools.define<unknown>({
    name,
    description: descriptions[name]!,
    ...(twoArgument.has(name) ? { input: pair } : {}),
    run: (input: unknown) => run(input)
  })
)

/**
 * Whether a tool name is one of the builtins.
 *
 * @since 0.1.0
 * @category builtins
 * @example
 * ```ts
 * import { isBuiltinTool } from "lambdagent/yaml"
 * isBuiltinTool("__builtin_strip") // true
 * isBuiltinTool("search") // false
 * ```
 */
export const isBuiltinTool = (name: string): boolean => Object.hasOwn(builtinImplementations, name)

/**
 * Run a builtin on a value of the term language.
 *
 * @since 0.1.0
 * @category builtins
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * import { runBuiltin } from "lambdagent/yaml"
 * runBuiltin("__builtin_startswith", Value.fromArray(["{\"a\":1}", "{"])) // true
 * ```
 */
export const runBuiltin = (name: string, input: Value.Value): Value.Value => {
  const run = builtinImplementations[name]
  if (run === undefined) throw new Error(`unknown builtin ${JSON.stringify(name)}`)
  const result = run(Value.toJson(input))
  return result as Value.Value
}

/**
 * Apply a term to an input and evaluate it, answering calls of the builtins; any other oracle
 * (an LLM, another tool, memory) is an error. This is how a compiled validator is checked
 * without a runtime.
 *
 * @since 0.1.0
 * @category builtins
 * @example
 * ```ts
 * import { compileValidator, evaluateWithBuiltins } from "lambdagent/yaml"
 * evaluateWithBuiltins(compileValidator("x.startswith('{') and 'error' not in x"), "{\"ok\":1}") // true
 * ```
 */
export const evaluateWithBuiltins = (fn: Term.Term, input: Value.Value, options: Evaluator.EvaluateOptions = {}): Value.Value => {
  const arg = typeof input === "object" && input !== null ? Term.parse(Value.toJson(input)) : Term.lit(input)
  const execution = Evaluator.start(Term.app(fn, arg), options)
  let step = execution.next()
  while (step._tag === "Suspended") {
    const request = step.request
    if (request.kind !== "tool" || !isBuiltinTool(request.name)) {
      throw new Error(`the term needs ${Oracle.describe(request)}, which only a runtime can answer`)
    }
    step = execution.resume(runBuiltin(request.name, request.input))
  }
  return step.value
}

/**
 * Run a compiled validator on an output: `true` when the output is valid. Throws when the
 * validator does not return a boolean or needs more than the builtins.
 *
 * @since 0.1.0
 * @category builtins
 * @example
 * ```ts
 * import { compileValidator, evaluateValidator } from "lambdagent/yaml"
 * const valid = compileValidator("len(x.strip()) > 0")
 * evaluateValidator(valid, "  ") // false
 * evaluateValidator(valid, " ok ") // true
 * ```
 */
export const evaluateValidator = (validator: Term.Term, output: Value.Value): boolean => {
  const value = evaluateWithBuiltins(validator, output)
  if (typeof value !== "boolean") throw new Error(`the validator returned ${Value.typeName(value)}, not a boolean`)
  return value
}
