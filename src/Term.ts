/**
 * The term language: a small JSON lambda calculus for pure computation and agent orchestration.
 *
 * JSON is the concrete syntax. {@link parse} turns JSON into a typed {@link Term} (every error
 * names the JSON path of the offending node), {@link encode} turns it back into canonical JSON
 * (`parse(encode(t))` is `t`), and the builders ({@link lam}, {@link app}, {@link add}, …) build
 * terms from TypeScript. See `docs/language.md` for every form.
 *
 * @since 0.1.0
 * @module
 */
import { writeJson } from "./internal/json.ts"
import { foldTree } from "./internal/tree.ts"
import type { FormEvent } from "./forms/index.ts"
import { type AnyNode, formByKey, formOf, forms } from "./forms/index.ts"
import { parseScalar } from "./forms/literal.ts"
import { parseArray } from "./forms/lists.ts"
import { type Plan, Parser, type ParseNode, parseJsonText as parseJson } from "./forms/parse.ts"
import { binary, unary } from "./forms/operators.ts"
import { BudgetExceeded, TermParseError } from "./Errors.ts"
import { NotRead, ReadTerm, readTerm } from "./forms/read.ts"

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

/**
 * Binary operators, spelled `{"<op>": [a, b]}`. `and`/`or` short-circuit.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const op: Term.BinaryOp = "add"
 * ```
 */
export type BinaryOp =
  | "add"
  | "sub"
  | "mul"
  | "div"
  | "mod"
  | "eq"
  | "lt"
  | "gt"
  | "lte"
  | "gte"
  | "and"
  | "or"
  | "concat"
  | "contains"
  | "startsWith"
  | "endsWith"
  | "get"
  | "compareNumbers"

/**
 * Unary operators, spelled `{"<op>": t}`.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const op: Term.UnaryOp = "head"
 * ```
 */
export type UnaryOp =
  | "not"
  | "head"
  | "tail"
  | "isEmpty"
  | "length"
  | "fst"
  | "snd"
  | "trim"
  | "trimStart"
  | "trimEnd"
  | "lower"
  | "upper"
  | "isJson"
  | "toText"
  | "typeName"
  | "toInt"
  | "toFloat"

/**
 * A literal: integer, string, boolean or null (unit). Integers outside the safe range of a
 * JavaScript number are `bigint`s; the language's integers are 64-bit and never wrap.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const l: Term.Literal = 42
 * ```
 */
export type Literal = number | bigint | string | boolean | null

export type { LlmOptions, ModelSettings, Output } from "./forms/llm.ts"
export type { ToolCalling } from "./forms/react.ts"
export type { Merge } from "./forms/par.ts"
export type { Fallback } from "./forms/guard.ts"
export type { Scheduler } from "./forms/groupchat.ts"
export type { ChannelDeclaration } from "./forms/channels.ts"

/**
 * A term of the language. Pure forms first, then the agent forms, each a first-class node so
 * that traces, lint and analyses can name it. Every agent form evaluates to a function of one
 * argument. The forms are defined in `src/forms/`, one module each; this type is the union of
 * their nodes.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * const square: Term.Term = Term.lam("x", Term.mul(Term.var("x"), Term.var("x")))
 * ```
 */
export type Term = AnyNode

/**
 * The `_tag` of every term form.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const t: Term.Tag = "Lam"
 * ```
 */
export type Tag = Term["_tag"]

/**
 * The term of one form, by tag.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const f = (l: Term.Of<"Lam">) => l.param
 * ```
 */
export type Of<T extends Tag> = Extract<Term, { readonly _tag: T }>

/**
 * The trace event kinds that forms record (`loop`, `route`, `guard`, …).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const k: Term.FormEventKind = "route"
 * ```
 */
export type FormEventKind = FormEvent

/**
 * Any JSON value.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const j: Term.Json = { add: [1, 2] }
 * ```
 */
export type Json = null | boolean | number | bigint | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

// ---------------------------------------------------------------------------------------------
// Constructors
// ---------------------------------------------------------------------------------------------

export { lit } from "./forms/literal.ts"
export { app, lam, variable as var } from "./forms/lambda.ts"
export { binary, unary } from "./forms/operators.ts"
export { conditional as if } from "./forms/conditional.ts"
export { cons, fold, list, nil } from "./forms/lists.ts"
export { pair } from "./forms/pair.ts"
export { codeOf, continueWith as continue, evaluate as eval, quote, self } from "./forms/meta.ts"
export { defaultOutputRetries, llm } from "./forms/llm.ts"
export { defaultMaxToolCalls, defaultToolRounds } from "./forms/llmTools.ts"
export { tool } from "./forms/tool.ts"
export { compose } from "./forms/compose.ts"
export { loop } from "./forms/loop.ts"
export { route } from "./forms/route.ts"
export { par } from "./forms/par.ts"
export { guard } from "./forms/guard.ts"
export { memory } from "./forms/memory.ts"
export { react } from "./forms/react.ts"
export { defaultKeywords, groupChat } from "./forms/groupchat.ts"
export { handoff, handoffOf } from "./forms/handoff.ts"
export { ask } from "./forms/ask.ts"
export { channels, receive, send } from "./forms/channels.ts"

const binaryBuilder =
  (op: BinaryOp) =>
  (left: Term, right: Term): Term =>
    binary(op, left, right)

/**
 * Integer addition. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.add(Term.lit(1), Term.lit(2))
 * ```
 */
export const add = binaryBuilder("add")
/**
 * Integer subtraction. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.sub(Term.lit(5), Term.lit(2))
 * ```
 */
export const sub = binaryBuilder("sub")
/**
 * Integer multiplication. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.mul(Term.var("x"), Term.var("x"))
 * ```
 */
export const mul = binaryBuilder("mul")
/**
 * Floor division (rounds toward negative infinity). @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.div(Term.lit(-7), Term.lit(2)) // evaluates to -4
 * ```
 */
export const div = binaryBuilder("div")
/**
 * Floor modulo (takes the divisor's sign). @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.mod(Term.lit(-7), Term.lit(2)) // evaluates to 1
 * ```
 */
export const mod = binaryBuilder("mod")
/**
 * Structural equality of first-order values. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.eq(Term.lit("a"), Term.lit("a"))
 * ```
 */
export const eq = binaryBuilder("eq")
/**
 * Less than (integers or strings). @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.lt(Term.lit(1), Term.lit(2))
 * ```
 */
export const lt = binaryBuilder("lt")
/**
 * Greater than. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.gt(Term.lit(2), Term.lit(1))
 * ```
 */
export const gt = binaryBuilder("gt")
/**
 * Less than or equal. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.lte(Term.var("n"), Term.lit(1))
 * ```
 */
export const lte = binaryBuilder("lte")
/**
 * Greater than or equal. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.gte(Term.var("n"), Term.lit(0))
 * ```
 */
export const gte = binaryBuilder("gte")
/**
 * Short-circuit conjunction. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.and(Term.lit(true), Term.lit(false))
 * ```
 */
export const and = binaryBuilder("and")
/**
 * Short-circuit disjunction. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.or(Term.lit(false), Term.lit(true))
 * ```
 */
export const or = binaryBuilder("or")
/**
 * String (or list) concatenation. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.concat(Term.lit("a"), Term.lit("b"))
 * ```
 */
export const concat = binaryBuilder("concat")
/**
 * Whether a string contains another, or a list contains a value. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.contains(Term.lit("an error here"), Term.lit("error")) // evaluates to true
 * ```
 */
export const contains = binaryBuilder("contains")
/**
 * Whether a string starts with another. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.startsWith(Term.lit("{\"a\":1}"), Term.lit("{"))
 * ```
 */
export const startsWith = binaryBuilder("startsWith")
/**
 * Whether a string ends with another. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.endsWith(Term.lit("done."), Term.lit("."))
 * ```
 */
export const endsWith = binaryBuilder("endsWith")
/**
 * A field of a JSON object (a JSON object text, as a structured `llm` answers one, or a list of
 * `(key, value)` pairs) by its name, or an element of a list (or a JSON array text) by its index
 * from 0; `null` when there is none. @since 0.2.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.get(Term.lit('{"city":"Paris"}'), Term.lit("city")) // evaluates to "Paris"
 * ```
 */
export const get = binaryBuilder("get")
/**
 * Compare two numbers, each an integer (a boolean counts as 1 or 0) or a text in Python's
 * `float()` syntax (`"0.5"`, `" 1e3\n"`, `"inf"`, `"nan"`, as {@link toFloat} gives): `-1`, `0` or
 * `1`, or `null` when either is NaN. A text is read as a 64-bit double and compared exactly with
 * integers; a text that is not a number is a `ValueError`. @since 0.2.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.compareNumbers(Term.lit("0.25"), Term.lit("0.5")) // evaluates to -1
 * ```
 */
export const compareNumbers = binaryBuilder("compareNumbers")

/**
 * Boolean negation. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.not(Term.lit(true))
 * ```
 */
export const not = (arg: Term): Term => unary("not", arg)
/**
 * First element of a list. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.head(Term.list([Term.lit(1)]))
 * ```
 */
export const head = (arg: Term): Term => unary("head", arg)
/**
 * A list without its first element. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.tail(Term.list([Term.lit(1), Term.lit(2)]))
 * ```
 */
export const tail = (arg: Term): Term => unary("tail", arg)
/**
 * Whether a list is empty. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.isEmpty(Term.nil)
 * ```
 */
export const isEmpty = (arg: Term): Term => unary("isEmpty", arg)
/**
 * Length of a list or string (in code points). @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.length(Term.lit("héllo"))
 * ```
 */
export const length = (arg: Term): Term => unary("length", arg)
/**
 * First component of a pair. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.fst(Term.pair(Term.lit(1), Term.lit(2)))
 * ```
 */
export const fst = (arg: Term): Term => unary("fst", arg)
/**
 * Second component of a pair. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.snd(Term.pair(Term.lit(1), Term.lit(2)))
 * ```
 */
export const snd = (arg: Term): Term => unary("snd", arg)
/**
 * A string without leading and trailing whitespace. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.trim(Term.lit("  x  "))
 * ```
 */
export const trim = (arg: Term): Term => unary("trim", arg)
/**
 * A string without leading whitespace. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.trimStart(Term.lit("  x"))
 * ```
 */
export const trimStart = (arg: Term): Term => unary("trimStart", arg)
/**
 * A string without trailing whitespace. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.trimEnd(Term.lit("x  "))
 * ```
 */
export const trimEnd = (arg: Term): Term => unary("trimEnd", arg)
/**
 * A string in lower case. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.lower(Term.lit("ABC"))
 * ```
 */
export const lower = (arg: Term): Term => unary("lower", arg)
/**
 * A string in upper case. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.upper(Term.lit("abc"))
 * ```
 */
export const upper = (arg: Term): Term => unary("upper", arg)
/**
 * Whether a string is valid JSON text. @since 0.1.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.isJson(Term.lit("{\"ok\":true}")) // evaluates to true
 * ```
 */
export const isJson = (arg: Term): Term => unary("isJson", arg)
/**
 * Any value as text, as `Value.toText` renders it: a string as it is, an integer in decimal,
 * anything else as JSON text. @since 0.2.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.toText(Term.lit(42)) // evaluates to "42"
 * ```
 */
export const toText = (arg: Term): Term => unary("toText", arg)
/**
 * The name of a value's type, as `Value.typeName` gives it: `"string"`, `"integer"`,
 * `"boolean"`, `"null"`, `"list"`, `"pair"`, `"function"`. @since 0.2.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.typeName(Term.lit("hi")) // evaluates to "string"
 * ```
 */
export const typeName = (arg: Term): Term => unary("typeName", arg)
/**
 * Python's `int()`: an integer as it is, a boolean as `1` or `0`, a decimal text as its integer —
 * spaces around it, a sign and `_` between digits allowed (`" 12\n"` is 12, `"1_000"` is 1000).
 * A text that is not an integer (`"1.5"`, `"abc"`, `""`) is a `ValueError`, one outside 64 bits an
 * `Overflow`. @since 0.2.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.toInt(Term.lit(" 12\n")) // evaluates to 12
 * ```
 */
export const toInt = (arg: Term): Term => unary("toInt", arg)
/**
 * Python's `float()`, as text: values are never fractional, so the double an integer, a boolean or
 * a text in `float()` syntax stands for is given as Python's `repr` of it (`"1e3"` gives
 * `"1000.0"`, `"nan"` gives `"nan"`, `1` gives `"1.0"`); compare it with
 * {@link compareNumbers}. A text that is not a number is a `ValueError`.
 * @since 0.2.0 @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.toFloat(Term.lit("1e3")) // evaluates to "1000.0"
 * ```
 */
export const toFloat = (arg: Term): Term => unary("toFloat", arg)

// ---------------------------------------------------------------------------------------------
// Structure
// ---------------------------------------------------------------------------------------------

/**
 * The direct sub-terms of a term, in evaluation order. Quoted code counts as a sub-term.
 *
 * @since 0.1.0
 * @category structure
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.children(Term.add(Term.lit(1), Term.lit(2))).length // 2
 * ```
 */
export const children = (term: Term): ReadonlyArray<Term> => formOf(term).children(term)

/**
 * Rebuild a term with new direct sub-terms (same order as {@link children}).
 *
 * @since 0.1.0
 * @category structure
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.withChildren(Term.add(Term.lit(1), Term.lit(2)), [Term.lit(3), Term.lit(4)])
 * ```
 */
export const withChildren = (term: Term, kids: ReadonlyArray<Term>): Term => formOf(term).withChildren(term, kids)

export { bounds, type Bounds, capabilities, type Capabilities, freeVariables, size } from "./Analysis.ts"

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

export { formatPath } from "./forms/parse.ts"

export { parseJsonText } from "./forms/parse.ts"

const plan = (p: Parser, node: ParseNode): Term | Plan => {
  const json = node.json
  if (typeof json !== "object" || json === null) return parseScalar(p, node)
  if (json instanceof ReadTerm) return json.take()
  if (Array.isArray(json)) return parseArray(p, node)
  const obj = json as Record<string, unknown>
  const keys = Object.keys(obj)
  if (keys.length === 0) return p.fail(node, 'a term object with one form key (e.g. "var", "lam", "app")')
  let chosen: { readonly form: (typeof forms)[keyof typeof forms]; readonly key: string; rank: number } | undefined
  for (const key of keys) {
    const entry = formByKey.get(key)
    if (entry !== undefined && (chosen === undefined || entry.rank < chosen.rank)) {
      chosen = { form: entry.form as unknown as (typeof forms)[keyof typeof forms], key, rank: entry.rank }
    }
  }
  if (chosen === undefined) return p.fail(node, `a term; unknown form ${keys.map((k) => JSON.stringify(k)).join(", ")}`)
  const { form, key } = chosen
  const allowed = form.siblings ?? []
  const extra = keys.find((k) => k !== key && !allowed.includes(k))
  if (extra !== undefined) {
    p.fail(node, `only the key ${JSON.stringify(key)}${allowed.map((a) => ` and ${JSON.stringify(a)}`).join("")}; unexpected key ${JSON.stringify(extra)}`)
  }
  return form.parse(p, node, key, obj)
}

/**
 * Options of {@link parse}: a deadline, so that reading a huge term counts against a run's time
 * budget instead of being free.
 *
 * @since 0.2.0
 * @category parsing
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const o: Term.ParseOptions = { deadline: Date.now() + 5_000, timeMs: 5_000 }
 * ```
 */
export interface ParseOptions {
  /** `Date.now()` time after which parsing stops with a `BudgetExceeded` error of budget `time`. */
  readonly deadline?: number
  /** The time budget (ms) the deadline belongs to, named in the error; default the time left at the start. */
  readonly timeMs?: number
}

/** Nodes read between two looks at the clock. */
const CLOCK_EVERY = 4096

/**
 * Throw a `BudgetExceeded` of budget `time` when `deadline` has passed.
 *
 * @since 0.2.0
 * @category parsing
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.checkDeadline({ deadline: Date.now() + 1_000 }, "parsing the term") // within time: returns
 * ```
 */
export const checkDeadline = (options: ParseOptions, doing: string, timeMs = options.timeMs): void => {
  if (options.deadline === undefined || Date.now() <= options.deadline) return
  const limit = timeMs ?? 0
  throw new BudgetExceeded({ budget: "time", limit, steps: 0, message: `time budget of ${limit} ms exhausted while ${doing}` })
}

/**
 * Parse a JSON value into a term. Throws {@link TermParseError} naming the JSON path of the
 * offending node and what was expected there, and `BudgetExceeded` (`time`) once
 * `options.deadline` passes. Never recurses on the JavaScript stack.
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * const square = Term.parse({ lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } })
 * ```
 */
export const parse = (json: unknown, options: ParseOptions = {}): Term => {
  const p = new Parser()
  const root: ParseNode = { json, key: undefined, parent: undefined }
  const timeMs = options.timeMs ?? (options.deadline !== undefined ? Math.max(0, options.deadline - Date.now()) : undefined)
  let sinceClock = 0
  return foldTree<ParseNode, Term>(
    root,
    (node) => {
      if (options.deadline !== undefined && ++sinceClock === CLOCK_EVERY) {
        sinceClock = 0
        checkDeadline(options, "parsing the term", timeMs)
      }
      const planned = plan(p, node)
      if ("_tag" in planned) {
        node.plan = { kids: [], build: () => planned }
        return []
      }
      node.plan = planned
      return planned.kids
    },
    (node, kids) => node.plan!.build(kids)
  )
}

/**
 * Parse JSON text into a term; integers beyond 2^53 keep their exact value. With
 * `options.deadline`, reading the text and the term counts against that time (see {@link parse}).
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * const t = Term.parseText('{"add":[1,2]}')
 * ```
 */
export const parseText = (text: string, options: ParseOptions = {}): Term => {
  const timeMs = options.timeMs ?? (options.deadline !== undefined ? Math.max(0, options.deadline - Date.now()) : undefined)
  const timed = timeMs !== undefined ? { ...options, timeMs } : options
  try {
    return readTerm(text, {
      parse: (json) => parse(json, timed),
      isFormKey: (key) => formByKey.has(key),
      tick: () => checkDeadline(timed, "reading the term's JSON"),
      every: CLOCK_EVERY
    })
  } catch (error) {
    if (!(error instanceof NotRead || error instanceof SyntaxError || error instanceof TermParseError)) throw error
  }
  // not a term the direct reader reads: the JSON, then the term, so that any error is the general parser's
  const json = parseJson(text)
  checkDeadline(timed, "reading the term's JSON")
  return parse(json, timed)
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

/**
 * Encode a term as canonical JSON: `parse(encode(t))` equals `t`. Integers beyond 2^53 stay
 * `bigint`; use {@link stringify} to get JSON text.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.encode(Term.app(Term.var("f"), Term.lit(1))) // { app: { func: { var: "f" }, arg: 1 } }
 * ```
 */
export const encode = (term: Term): Json => foldTree<Term, Json>(term, children, (t, kids) => formOf(t).encode(t, kids))

/**
 * Write JSON as compact text, without recursion (any depth): as `JSON.stringify` writes it, with
 * `bigint`s as exact integers. Any other value is written as `JSON.stringify` would (`toJSON`,
 * `undefined` left out of objects); a cycle throws a `TypeError`.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.stringify({ n: 2n ** 63n - 1n }) // '{"n":9223372036854775807}'
 * ```
 */
export const stringify = (json: unknown): string => writeJson(json)

/**
 * Encode a term as canonical JSON text.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.toJsonText(Term.var("x")) // '{"var":"x"}'
 * ```
 */
export const toJsonText = (term: Term): string => stringify(encode(term))

/**
 * The JSON path from `root` to the node `target` (compared by identity), or `undefined` when
 * `target` is not inside `root`.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * const x = Term.var("x")
 * Term.pathTo(Term.lam("x", x), x) // ["body"]
 * ```
 */
export const pathTo = (root: Term, target: Term): Array<string | number> | undefined => {
  interface Entry {
    readonly term: Term
    readonly parent: Entry | undefined
    readonly segments: ReadonlyArray<string | number>
  }
  const stack: Array<Entry> = [{ term: root, parent: undefined, segments: [] }]
  while (stack.length > 0) {
    const entry = stack.pop()!
    if (entry.term === target) {
      const parts: Array<ReadonlyArray<string | number>> = []
      for (let e: Entry | undefined = entry; e !== undefined; e = e.parent) parts.push(e.segments)
      return parts.reverse().flat()
    }
    const kids = children(entry.term)
    const segments = formOf(entry.term).segments(entry.term)
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ term: kids[i]!, parent: entry, segments: segments[i]! })
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Pretty printing
// ---------------------------------------------------------------------------------------------

/**
 * How {@link pretty} writes a term: `human` (infix operators, minimal parentheses, agent forms
 * as `CASE`, `Y₁₀`, `PAIR`…) or `formal` (every operator prefix and parenthesised).
 *
 * @since 0.1.0
 * @category printing
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const s: Term.PrettyStyle = "formal"
 * ```
 */
export type PrettyStyle = "human" | "formal"

/**
 * Write a term in lambda notation (`λx. x * x`, `Y₂₀(…)`, `CASE`, `PAIR`). Never recurses on the
 * JavaScript stack.
 *
 * @since 0.1.0
 * @category printing
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.pretty(Term.lam("x", Term.mul(Term.var("x"), Term.var("x")))) // "λx. x * x"
 * Term.pretty(Term.lam("x", Term.mul(Term.var("x"), Term.var("x"))), "formal") // "(λx. (mul x x))"
 * ```
 */
export const pretty = (term: Term, style: PrettyStyle = "human"): string => {
  const formal = style === "formal"
  return foldTree<Term, string>(term, children, (t, k) => {
    const operand = (i: number) => {
      if (formal) return k[i]!
      const child = children(t)[i]!
      return forms[child._tag].atomic ? k[i]! : `(${k[i]!})`
    }
    return formOf(t).pretty(t, k, formal, operand)
  })
}
