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
import { TermParseError } from "./Errors.ts"
import { foldTree } from "./internal/tree.ts"

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

/**
 * Settings of the model an `llm` term calls. Every field is optional: absent fields come from the
 * runtime's default model.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const m: Term.ModelSettings = { provider: "openai", name: "gpt-4o-mini", temperature: 0 }
 * ```
 */
export interface ModelSettings {
  readonly provider?: string
  readonly name?: string
  readonly temperature?: number
  readonly maxTokens?: number
  readonly topP?: number
  readonly stop?: ReadonlyArray<string>
  readonly baseUrl?: string
  /** Seconds before one call is abandoned. */
  readonly timeout?: number
}

/**
 * How a `par` term combines its branches' results: `tuple` (a pair for two branches, a list
 * otherwise), `concat` (texts joined by a blank line), or a function term applied to the list.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const m: Term.Merge = "concat"
 * ```
 */
export type Merge = "tuple" | "concat" | Term

/**
 * What a `guard` returns when every attempt failed validation: fail (`error`), the empty string,
 * the last attempt, or a fixed value.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const f: Term.Fallback = { value: "n/a" }
 * ```
 */
export type Fallback = "error" | "empty" | "last" | { readonly value: Term }

/**
 * A term of the language. Pure forms first, then the agent forms, each a first-class node so
 * that traces, lint and analyses can name it. Every agent form evaluates to a function of one
 * argument.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * const square: Term.Term = Term.lam("x", Term.mul(Term.var("x"), Term.var("x")))
 * ```
 */
export type Term =
  | { readonly _tag: "Lit"; readonly value: Literal }
  | { readonly _tag: "Var"; readonly name: string }
  | { readonly _tag: "Lam"; readonly param: string; readonly body: Term }
  | { readonly _tag: "App"; readonly func: Term; readonly arg: Term }
  | { readonly _tag: "Binary"; readonly op: BinaryOp; readonly left: Term; readonly right: Term }
  | { readonly _tag: "Unary"; readonly op: UnaryOp; readonly arg: Term }
  | { readonly _tag: "If"; readonly cond: Term; readonly then: Term; readonly else: Term }
  | { readonly _tag: "Nil" }
  | { readonly _tag: "Cons"; readonly head: Term; readonly tail: Term }
  | { readonly _tag: "List"; readonly items: ReadonlyArray<Term> }
  | { readonly _tag: "Pair"; readonly first: Term; readonly second: Term }
  | { readonly _tag: "Fold"; readonly func: Term; readonly init: Term; readonly list: Term }
  | { readonly _tag: "Quote"; readonly term: Term }
  | { readonly _tag: "Eval"; readonly term: Term }
  | { readonly _tag: "CodeOf"; readonly name: string }
  | { readonly _tag: "Self" }
  | { readonly _tag: "Continue"; readonly input: Term }
  // agent forms
  | {
    readonly _tag: "Llm"
    readonly system: string
    readonly name?: string
    readonly model?: ModelSettings
    /** Keep the conversation across calls (default) or call statelessly. */
    readonly conversation?: boolean
    readonly maxHistoryTokens?: number
  }
  | { readonly _tag: "Tool"; readonly name: string }
  | { readonly _tag: "Compose"; readonly stages: ReadonlyArray<Term> }
  | {
    readonly _tag: "Loop"
    readonly body: Term
    readonly max: number
    readonly until?: Term
    /** Fail with a budget error when `max` passes without `until` holding. */
    readonly failOnExhaustion?: boolean
  }
  | {
    readonly _tag: "Route"
    readonly classify: Term
    readonly routes: ReadonlyArray<readonly [label: string, agent: Term]>
    readonly default?: Term
  }
  | { readonly _tag: "Par"; readonly branches: ReadonlyArray<Term>; readonly merge: Merge }
  | {
    readonly _tag: "Guard"
    readonly agent: Term
    readonly validate: Term
    readonly retry: number
    readonly fallback: Fallback
  }
  | {
    readonly _tag: "Memory"
    readonly agent: Term
    readonly size: number
    /** Seconds; 0 means entries never expire. */
    readonly ttl: number
    readonly scope: "session" | "user" | "global"
  }
  | {
    readonly _tag: "React"
    readonly think: Term
    readonly tools: ReadonlyArray<string>
    readonly maxSteps: number
    /** Seconds before a tool call becomes a timeout observation. */
    readonly toolTimeout?: number
    /** Append tool observations to the state (default true). */
    readonly observe?: boolean
  }

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

/**
 * A literal term.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.lit(42)
 * ```
 */
export const lit = (value: Literal): Term => ({ _tag: "Lit", value })

/**
 * A variable reference, `{"var": name}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.var("x")
 * ```
 */
const var_ = (name: string): Term => ({ _tag: "Var", name })
export { var_ as var }

/**
 * A lambda abstraction, `{"lam": param, "body": body}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.lam("x", Term.var("x"))
 * ```
 */
export const lam = (param: string, body: Term): Term => ({ _tag: "Lam", param, body })

/**
 * An application, `{"app": {"func": f, "arg": a}}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.app(Term.lam("x", Term.var("x")), Term.lit(1))
 * ```
 */
export const app = (func: Term, arg: Term): Term => ({ _tag: "App", func, arg })

/**
 * A binary operation, `{"<op>": [left, right]}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.binary("add", Term.lit(1), Term.lit(2))
 * ```
 */
export const binary = (op: BinaryOp, left: Term, right: Term): Term => ({ _tag: "Binary", op, left, right })

const binaryBuilder = (op: BinaryOp) => (left: Term, right: Term): Term => binary(op, left, right)

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
 * A unary operation, `{"<op>": arg}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.unary("length", Term.lit("hello"))
 * ```
 */
export const unary = (op: UnaryOp, arg: Term): Term => ({ _tag: "Unary", op, arg })

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
 * A conditional, `{"if": {"cond": c, "then": t, "else": e}}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.if(Term.lit(true), Term.lit(1), Term.lit(2))
 * ```
 */
const if_ = (cond: Term, then: Term, else_: Term): Term => ({ _tag: "If", cond, then, else: else_ })
export { if_ as if }

/**
 * The empty list, `{"nil": true}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.cons(Term.lit(1), Term.nil)
 * ```
 */
export const nil: Term = { _tag: "Nil" }

/**
 * A list cell, `{"cons": {"head": h, "tail": t}}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.cons(Term.lit(1), Term.nil)
 * ```
 */
export const cons = (head: Term, tail: Term): Term => ({ _tag: "Cons", head, tail })

/**
 * A list literal, a JSON array.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.list([Term.lit(1), Term.lit(2)])
 * ```
 */
export const list = (items: ReadonlyArray<Term>): Term => ({ _tag: "List", items })

/**
 * A pair, `{"pair": [a, b]}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.pair(Term.lit(1), Term.lit("one"))
 * ```
 */
export const pair = (first: Term, second: Term): Term => ({ _tag: "Pair", first, second })

/**
 * A left fold, `{"fold": [f, init, list]}`: `f` receives one pair `(accumulator, item)`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * const sum = Term.fold(
 *   Term.lam("p", Term.add(Term.fst(Term.var("p")), Term.snd(Term.var("p")))),
 *   Term.lit(0),
 *   Term.var("xs")
 * )
 * ```
 */
export const fold = (func: Term, init: Term, list: Term): Term => ({ _tag: "Fold", func, init, list })

/**
 * Quote a term: code as data, `{"quote": t}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.quote(Term.add(Term.lit(1), Term.lit(2)))
 * ```
 */
export const quote = (term: Term): Term => ({ _tag: "Quote", term })

/**
 * Evaluate quoted code, `{"eval": t}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.eval(Term.quote(Term.lit(1)))
 * ```
 */
const eval_ = (term: Term): Term => ({ _tag: "Eval", term })
export { eval_ as eval }

/**
 * The source of a named tool as quoted code, `{"code_of": name}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.eval(Term.codeOf("square"))
 * ```
 */
export const codeOf = (name: string): Term => ({ _tag: "CodeOf", name })

/**
 * The running tool itself, `{"self": true}` (only inside a named tool).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.app(Term.self, Term.lit(3))
 * ```
 */
export const self: Term = { _tag: "Self" }

/**
 * Ask the caller to run the current tool again with a new input, `{"continue": {"input": x}}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.continue(Term.sub(Term.var("n"), Term.lit(1)))
 * ```
 */
const continue_ = (input: Term): Term => ({ _tag: "Continue", input })
export { continue_ as continue }

/**
 * An LLM call: a function from the input text to the model's answer.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.llm({ system: "Summarize.", name: "summarizer", model: { provider: "openai", name: "gpt-4o-mini" } })
 * ```
 */
export const llm = (options: Omit<Of<"Llm">, "_tag">): Term => ({ _tag: "Llm", ...options })

/**
 * A named tool from the `Tools` service, as a function.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.app(Term.tool("search"), Term.lit("effect 4"))
 * ```
 */
export const tool = (name: string): Term => ({ _tag: "Tool", name })

/**
 * A pipeline: `compose([f, g])` is `λx. g(f(x))`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.compose([Term.llm({ system: "Extract facts." }), Term.llm({ system: "Write a summary." })])
 * ```
 */
export const compose = (stages: ReadonlyArray<Term>): Term => ({ _tag: "Compose", stages })

/**
 * Bounded iteration: apply `body` up to `max` times, stopping early when `until` holds of the result.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.loop({ body: Term.lam("n", Term.add(Term.var("n"), Term.lit(1))), max: 10 })
 * ```
 */
export const loop = (options: Omit<Of<"Loop">, "_tag">): Term => ({ _tag: "Loop", ...options })

/**
 * Classify the input, then run the agent of the matching label (CASE with a default).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.route({
 *   classify: Term.llm({ system: "Answer code or math." }),
 *   routes: [["code", Term.llm({ system: "You write code." })], ["math", Term.llm({ system: "You do math." })]]
 * })
 * ```
 */
export const route = (options: Omit<Of<"Route">, "_tag">): Term => ({
  _tag: "Route",
  ...options,
  // routes are kept in the order a JSON object of them has, so encoding and parsing keep it
  routes: Object.keys(Object.fromEntries(options.routes.map(([label], i) => [label, i]))).map((label) =>
    options.routes.find(([l]) => l === label)!
  )
})

/**
 * Run branches concurrently on the same input and merge their results.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.par([Term.llm({ system: "Research." }), Term.llm({ system: "Critique." })], "concat")
 * ```
 */
export const par = (branches: ReadonlyArray<Term>, merge: Merge = "tuple"): Term => ({ _tag: "Par", branches, merge })

/**
 * Validate an agent's output with a pure predicate term, retry, then fall back.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.guard({
 *   agent: Term.llm({ system: "Write JSON." }),
 *   validate: Term.lam("x", Term.gt(Term.length(Term.var("x")), Term.lit(0))),
 *   retry: 2,
 *   fallback: "last"
 * })
 * ```
 */
export const guard = (options: Omit<Of<"Guard">, "_tag">): Term => ({ _tag: "Guard", ...options })

/**
 * Give an agent memory: recent entries are prepended to its input and its result is stored.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.memory({ agent: Term.llm({ system: "Chat." }), size: 20, ttl: 3600, scope: "session" })
 * ```
 */
export const memory = (options: Omit<Of<"Memory">, "_tag">): Term => ({ _tag: "Memory", ...options })

/**
 * A ReAct agent: think, pick a tool, observe, repeat, at most `maxSteps` times.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.react({ think: Term.llm({ system: "Use tools." }), tools: ["search", "terminate"], maxSteps: 10 })
 * ```
 */
export const react = (options: Omit<Of<"React">, "_tag">): Term => ({ _tag: "React", ...options })

// ---------------------------------------------------------------------------------------------
// Structure
// ---------------------------------------------------------------------------------------------

const fallbackChildren = (fallback: Fallback): ReadonlyArray<Term> =>
  typeof fallback === "object" ? [fallback.value] : []

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
export const children = (term: Term): ReadonlyArray<Term> => {
  switch (term._tag) {
    case "Lit":
    case "Var":
    case "Nil":
    case "CodeOf":
    case "Self":
    case "Llm":
    case "Tool":
      return []
    case "Lam":
      return [term.body]
    case "App":
      return [term.func, term.arg]
    case "Binary":
      return [term.left, term.right]
    case "Unary":
      return [term.arg]
    case "If":
      return [term.cond, term.then, term.else]
    case "Cons":
      return [term.head, term.tail]
    case "List":
      return term.items
    case "Pair":
      return [term.first, term.second]
    case "Fold":
      return [term.func, term.init, term.list]
    case "Quote":
    case "Eval":
      return [term.term]
    case "Continue":
      return [term.input]
    case "Compose":
      return term.stages
    case "Loop":
      return term.until === undefined ? [term.body] : [term.body, term.until]
    case "Route": {
      const kids = [term.classify, ...term.routes.map(([, agent]) => agent)]
      if (term.default !== undefined) kids.push(term.default)
      return kids
    }
    case "Par":
      return typeof term.merge === "string" ? term.branches : [...term.branches, term.merge]
    case "Guard":
      return [term.agent, term.validate, ...fallbackChildren(term.fallback)]
    case "Memory":
      return [term.agent]
    case "React":
      return [term.think]
  }
}

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
export const withChildren = (term: Term, kids: ReadonlyArray<Term>): Term => {
  const k = (i: number) => kids[i]!
  switch (term._tag) {
    case "Lit":
    case "Var":
    case "Nil":
    case "CodeOf":
    case "Self":
    case "Llm":
    case "Tool":
      return term
    case "Lam":
      return { ...term, body: k(0) }
    case "App":
      return { ...term, func: k(0), arg: k(1) }
    case "Binary":
      return { ...term, left: k(0), right: k(1) }
    case "Unary":
      return { ...term, arg: k(0) }
    case "If":
      return { ...term, cond: k(0), then: k(1), else: k(2) }
    case "Cons":
      return { ...term, head: k(0), tail: k(1) }
    case "List":
      return { ...term, items: kids }
    case "Pair":
      return { ...term, first: k(0), second: k(1) }
    case "Fold":
      return { ...term, func: k(0), init: k(1), list: k(2) }
    case "Quote":
    case "Eval":
      return { ...term, term: k(0) }
    case "Continue":
      return { ...term, input: k(0) }
    case "Compose":
      return { ...term, stages: kids }
    case "Loop":
      return term.until === undefined ? { ...term, body: k(0) } : { ...term, body: k(0), until: k(1) }
    case "Route": {
      const routes = term.routes.map(([label], i) => [label, k(i + 1)] as const)
      return term.default === undefined
        ? { ...term, classify: k(0), routes }
        : { ...term, classify: k(0), routes, default: k(routes.length + 1) }
    }
    case "Par":
      return typeof term.merge === "string"
        ? { ...term, branches: kids }
        : { ...term, branches: kids.slice(0, -1), merge: kids[kids.length - 1]! }
    case "Guard":
      return typeof term.fallback === "object"
        ? { ...term, agent: k(0), validate: k(1), fallback: { value: k(2) } }
        : { ...term, agent: k(0), validate: k(1) }
    case "Memory":
      return { ...term, agent: k(0) }
    case "React":
      return { ...term, think: k(0) }
  }
}

/**
 * Number of nodes in a term.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.size(Term.add(Term.lit(1), Term.lit(2))) // 3
 * ```
 */
export const size = (term: Term): number =>
  foldTree<Term, number>(term, children, (_, sizes) => {
    let n = 1
    for (const s of sizes) n += s
    return n
  })

/**
 * The variables a term uses without binding them (quoted code included).
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.freeVariables(Term.lam("x", Term.add(Term.var("x"), Term.var("y")))) // Set { "y" }
 * ```
 */
export const freeVariables = (term: Term): ReadonlySet<string> =>
  foldTree<Term, Set<string>>(term, children, (node, sets) => {
    if (node._tag === "Var") return new Set([node.name])
    const out = new Set<string>()
    for (const s of sets) for (const name of s) out.add(name)
    if (node._tag === "Lam") out.delete(node.param)
    return out
  })

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

const BINARY_OPS: ReadonlyArray<BinaryOp> = [
  "add",
  "sub",
  "mul",
  "div",
  "mod",
  "eq",
  "lt",
  "gt",
  "lte",
  "gte",
  "and",
  "or",
  "concat",
  "contains",
  "startsWith",
  "endsWith"
]
const UNARY_OPS: ReadonlyArray<UnaryOp> = ["not", "head", "tail", "isEmpty", "length", "fst", "snd", "trim", "trimStart", "trimEnd", "lower", "upper", "isJson"]
const BINARY_SET: ReadonlySet<string> = new Set(BINARY_OPS)
const UNARY_SET: ReadonlySet<string> = new Set(UNARY_OPS)

/** The form keys, in the order a multi-key object is matched (the first present wins). */
const FORM_KEYS: ReadonlyArray<string> = [
  "var",
  "lam",
  "app",
  ...BINARY_OPS,
  ...UNARY_OPS,
  "if",
  "nil",
  "cons",
  "pair",
  "fold",
  "quote",
  "eval",
  "code_of",
  "self",
  "continue",
  "llm",
  "tool",
  "compose",
  "loop",
  "route",
  "par",
  "guard",
  "memory",
  "react"
]

/** Keys each form allows besides its own. */
const SIBLING_KEYS: Readonly<Record<string, ReadonlyArray<string>>> = { lam: ["body"] }

/** A JSON node awaiting conversion, with the way back to the root for error paths. */
interface ParseNode {
  readonly json: unknown
  readonly key: string | number | undefined
  readonly parent: ParseNode | undefined
  /** Set once the node's shape is checked: the sub-terms to parse and how to assemble them. */
  plan?: Plan
}

interface Plan {
  readonly kids: ReadonlyArray<ParseNode>
  readonly build: (kids: ReadonlyArray<Term>) => Term
}

const pathOf = (node: ParseNode | undefined): Array<string | number> => {
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
    out += typeof segment === "number"
      ? `[${segment}]`
      : /^[A-Za-z_$][\w$]*$/.test(segment)
      ? `.${segment}`
      : `[${JSON.stringify(segment)}]`
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

const isRecord = (json: unknown): json is Record<string, unknown> =>
  typeof json === "object" && json !== null && !Array.isArray(json)

/** A literal that needs no checks beyond its type (the fast path for large data lists). */
const isPlainLiteral = (json: unknown): json is string | boolean | null | number =>
  json === null || typeof json === "string" || typeof json === "boolean" || (typeof json === "number" && Number.isSafeInteger(json))

const MIN_INT64 = -(2n ** 63n)
const MAX_INT64 = 2n ** 63n - 1n

class Parser {
  fail(node: ParseNode, expected: string, key?: string | number): never {
    const path = pathOf(node)
    if (key !== undefined) path.push(key)
    const found = key === undefined ? node.json : (node.json as Record<string, unknown>)[key as string]
    throw new TermParseError({
      message: `${formatPath(path)}: expected ${expected}, found ${describe(found)}`,
      path,
      expected
    })
  }

  child(parent: ParseNode, json: unknown, key: string | number): ParseNode {
    return { json, key, parent }
  }

  /** Check one node's shape; return the finished term (leaves) or the plan for its sub-terms. */
  plan(node: ParseNode): Term | Plan {
    const json = node.json
    switch (typeof json) {
      case "string":
      case "boolean":
        return lit(json)
      case "bigint":
        if (json < MIN_INT64 || json > MAX_INT64) this.fail(node, "an integer within 64 bits")
        return lit(json)
      case "number": {
        if (!Number.isInteger(json)) this.fail(node, "an integer (the language has no fractions)")
        if (Number.isSafeInteger(json)) return lit(json === 0 ? 0 : json)
        // beyond 2^53 a JavaScript number is still an exact integer: keep that value as a bigint
        const exact = BigInt(json)
        if (exact < MIN_INT64 || exact > MAX_INT64) this.fail(node, "an integer within 64 bits")
        return lit(exact)
      }
      case "object":
        break
      default:
        return this.fail(node, "a JSON value")
    }
    if (json === null) return lit(null)
    if (Array.isArray(json)) {
      if (json.every(isPlainLiteral)) return list(json.map((item) => lit(item === 0 ? 0 : item)))
      const kids = json.map((item, i) => this.child(node, item, i))
      return { kids, build: (items) => list(items) }
    }
    const obj = json as Record<string, unknown>
    const keys = Object.keys(obj)
    if (keys.length === 0) return this.fail(node, "a term object with one form key (e.g. \"var\", \"lam\", \"app\")")
    const form = FORM_KEYS.find((k) => Object.hasOwn(obj, k))
    if (form === undefined) {
      return this.fail(node, `a term; unknown form ${keys.map((k) => JSON.stringify(k)).join(", ")}`)
    }
    const allowed = SIBLING_KEYS[form] ?? []
    const extra = keys.find((k) => k !== form && !allowed.includes(k))
    if (extra !== undefined) {
      this.fail(node, `only the key ${JSON.stringify(form)}${allowed.map((a) => ` and ${JSON.stringify(a)}`).join("")}; unexpected key ${JSON.stringify(extra)}`)
    }
    return this.planForm(node, form, obj)
  }

  fields(node: ParseNode, form: string, value: unknown, required: ReadonlyArray<string>, optional: ReadonlyArray<string> = []): Record<string, unknown> {
    const shape = `an object with ${required.map((r) => JSON.stringify(r)).join(", ")}${optional.length > 0 ? ` (optional ${optional.map((r) => JSON.stringify(r)).join(", ")})` : ""}`
    if (!isRecord(value)) return this.fail(node, shape, form)
    const at = this.child(node, value, form)
    for (const key of required) if (!Object.hasOwn(value, key)) this.fail(at, shape)
    for (const key of Object.keys(value)) {
      if (!required.includes(key) && !optional.includes(key)) this.fail(at, `${shape}; unexpected key ${JSON.stringify(key)}`)
    }
    return value
  }

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

  planForm(node: ParseNode, form: string, obj: Record<string, unknown>): Term | Plan {
    const value = obj[form]
    const sub = (json: unknown, ...path: Array<string | number>): ParseNode => {
      let parent = node
      for (const key of path.slice(0, -1)) parent = this.child(parent, undefined, key)
      return this.child(parent, json, path[path.length - 1]!)
    }
    if (BINARY_SET.has(form)) {
      const [l, r] = this.tuple(node, form, value, 2, `an array of 2 terms for ${JSON.stringify(form)}`)
      return { kids: [l!, r!], build: ([a, b]) => binary(form as BinaryOp, a!, b!) }
    }
    if (UNARY_SET.has(form)) {
      return { kids: [sub(value, form)], build: ([a]) => unary(form as UnaryOp, a!) }
    }
    switch (form) {
      case "var":
        return var_(this.string(node, value, form, "a variable name (string)"))
      case "lam": {
        const param = this.string(node, value, form, "a parameter name (string)")
        if (!Object.hasOwn(obj, "body")) return this.fail(node, "a \"body\" next to \"lam\"")
        return { kids: [sub(obj.body, "body")], build: ([b]) => lam(param, b!) }
      }
      case "app": {
        const f = this.fields(node, form, value, ["func", "arg"])
        return { kids: [sub(f.func, form, "func"), sub(f.arg, form, "arg")], build: ([a, b]) => app(a!, b!) }
      }
      case "if": {
        const f = this.fields(node, form, value, ["cond", "then", "else"])
        return {
          kids: [sub(f.cond, form, "cond"), sub(f.then, form, "then"), sub(f.else, form, "else")],
          build: ([c, t, e]) => if_(c!, t!, e!)
        }
      }
      case "nil":
        return nil
      case "self":
        return self
      case "cons": {
        const f = this.fields(node, form, value, ["head", "tail"])
        return { kids: [sub(f.head, form, "head"), sub(f.tail, form, "tail")], build: ([h, t]) => cons(h!, t!) }
      }
      case "pair": {
        const [a, b] = this.tuple(node, form, value, 2, "an array of 2 terms")
        return { kids: [a!, b!], build: ([x, y]) => pair(x!, y!) }
      }
      case "fold": {
        const kids = this.tuple(node, form, value, 3, "an array [function, initial, list]")
        return { kids, build: ([f, i, l]) => fold(f!, i!, l!) }
      }
      case "quote":
        return { kids: [sub(value, form)], build: ([t]) => quote(t!) }
      case "eval":
        return { kids: [sub(value, form)], build: ([t]) => eval_(t!) }
      case "code_of":
        return codeOf(this.string(node, value, form, "a tool name (string)"))
      case "continue": {
        const f = this.fields(node, form, value, ["input"])
        return { kids: [sub(f.input, form, "input")], build: ([t]) => continue_(t!) }
      }
      case "tool":
        return tool(this.string(node, value, form, "a tool name (string)"))
      case "llm":
        return this.planLlm(node, value)
      case "compose": {
        if (!Array.isArray(value) || value.length === 0) return this.fail(node, "a non-empty array of stages", form)
        const at = this.child(node, value, form)
        return { kids: value.map((s, i) => this.child(at, s, i)), build: (stages) => compose(stages) }
      }
      case "loop": {
        const f = this.fields(node, form, value, ["body", "max"], ["until", "failOnExhaustion"])
        const at = this.child(node, f, form)
        const max = this.count(at, f.max, "max", 0)
        const failOnExhaustion = this.optionalBoolean(at, f, "failOnExhaustion")
        const kids = [sub(f.body, form, "body")]
        if (f.until !== undefined) kids.push(sub(f.until, form, "until"))
        return {
          kids,
          build: ([body, until]) =>
            loop({
              body: body!,
              max,
              ...(until !== undefined ? { until } : {}),
              ...(failOnExhaustion !== undefined ? { failOnExhaustion } : {})
            })
        }
      }
      case "route": {
        const f = this.fields(node, form, value, ["classify", "routes"], ["default"])
        const at = this.child(node, f, form)
        if (!isRecord(f.routes)) return this.fail(at, "an object of label → agent", "routes")
        const labels = Object.keys(f.routes)
        const kids = [sub(f.classify, form, "classify"), ...labels.map((l) => sub((f.routes as Record<string, unknown>)[l], form, "routes", l))]
        if (f.default !== undefined) kids.push(sub(f.default, form, "default"))
        return {
          kids,
          build: (ts) =>
            route({
              classify: ts[0]!,
              routes: labels.map((l, i) => [l, ts[i + 1]!] as const),
              ...(f.default !== undefined ? { default: ts[labels.length + 1]! } : {})
            })
        }
      }
      case "par": {
        const f = this.fields(node, form, value, ["branches"], ["merge"])
        const at = this.child(node, f, form)
        if (!Array.isArray(f.branches) || f.branches.length === 0) return this.fail(at, "a non-empty array of branches", "branches")
        const bAt = this.child(at, f.branches, "branches")
        const kids = f.branches.map((b, i) => this.child(bAt, b, i))
        const merge = f.merge ?? "tuple"
        if (merge === "tuple" || merge === "concat") return { kids, build: (bs) => par(bs, merge) }
        if (typeof merge === "string") return this.fail(at, "\"tuple\", \"concat\" or a function term", "merge")
        kids.push(sub(merge, form, "merge"))
        return { kids, build: (ts) => par(ts.slice(0, -1), ts[ts.length - 1]!) }
      }
      case "guard": {
        const f = this.fields(node, form, value, ["agent", "validate"], ["retry", "fallback"])
        const at = this.child(node, f, form)
        const retry = f.retry === undefined ? 0 : this.count(at, f.retry, "retry", 0)
        const kids = [sub(f.agent, form, "agent"), sub(f.validate, form, "validate")]
        const fb = f.fallback ?? "error"
        if (fb === "error" || fb === "empty" || fb === "last") {
          return { kids, build: ([a, v]) => guard({ agent: a!, validate: v!, retry, fallback: fb }) }
        }
        if (!isRecord(fb) || !Object.hasOwn(fb, "value") || Object.keys(fb).length !== 1) {
          return this.fail(at, "\"error\", \"empty\", \"last\" or {\"value\": term}", "fallback")
        }
        kids.push(sub(fb.value, form, "fallback", "value"))
        return { kids, build: ([a, v, d]) => guard({ agent: a!, validate: v!, retry, fallback: { value: d! } }) }
      }
      case "memory": {
        const f = this.fields(node, form, value, ["agent"], ["size", "ttl", "scope"])
        const at = this.child(node, f, form)
        const size = f.size === undefined ? 10 : this.count(at, f.size, "size", 0)
        const ttl = f.ttl === undefined ? 0 : this.count(at, f.ttl, "ttl", 0)
        const scope = f.scope ?? "session"
        if (scope !== "session" && scope !== "user" && scope !== "global") {
          return this.fail(at, "\"session\", \"user\" or \"global\"", "scope")
        }
        return { kids: [sub(f.agent, form, "agent")], build: ([a]) => memory({ agent: a!, size, ttl, scope }) }
      }
      case "react": {
        const f = this.fields(node, form, value, ["think", "tools", "maxSteps"], ["toolTimeout", "observe"])
        const at = this.child(node, f, form)
        if (!Array.isArray(f.tools) || f.tools.some((t) => typeof t !== "string")) {
          return this.fail(at, "an array of tool names", "tools")
        }
        const tools = f.tools as ReadonlyArray<string>
        const maxSteps = this.count(at, f.maxSteps, "maxSteps", 1)
        const toolTimeout = f.toolTimeout === undefined ? undefined : this.count(at, f.toolTimeout, "toolTimeout", 0)
        const observe = this.optionalBoolean(at, f, "observe")
        return {
          kids: [sub(f.think, form, "think")],
          build: ([think]) =>
            react({
              think: think!,
              tools,
              maxSteps,
              ...(toolTimeout !== undefined ? { toolTimeout } : {}),
              ...(observe !== undefined ? { observe } : {})
            })
        }
      }
      default:
        return this.fail(node, "a known form")
    }
  }

  optionalBoolean(at: ParseNode, f: Record<string, unknown>, key: string): boolean | undefined {
    const v = f[key]
    if (v === undefined) return undefined
    if (typeof v !== "boolean") return this.fail(at, "a boolean", key)
    return v
  }

  planLlm(node: ParseNode, value: unknown): Term {
    const f = this.fields(node, "llm", value, ["system"], ["name", "model", "conversation", "maxHistoryTokens"])
    const at = this.child(node, f, "llm")
    const system = this.string(at, f.system, "system")
    const name = f.name === undefined ? undefined : this.string(at, f.name, "name")
    const conversation = this.optionalBoolean(at, f, "conversation")
    const maxHistoryTokens = f.maxHistoryTokens === undefined ? undefined : this.count(at, f.maxHistoryTokens, "maxHistoryTokens", 1)
    let model: ModelSettings | undefined
    if (f.model !== undefined) {
      if (!isRecord(f.model)) return this.fail(at, "an object of model settings", "model")
      model = this.modelSettings(this.child(at, f.model, "model"), f.model)
    }
    return llm({
      system,
      ...(name !== undefined ? { name } : {}),
      ...(model !== undefined ? { model } : {}),
      ...(conversation !== undefined ? { conversation } : {}),
      ...(maxHistoryTokens !== undefined ? { maxHistoryTokens } : {})
    })
  }

  modelSettings(at: ParseNode, m: Record<string, unknown>): ModelSettings {
    const out: Record<string, unknown> = {}
    for (const [key, v] of Object.entries(m)) {
      switch (key) {
        case "provider":
        case "name":
        case "baseUrl":
          out[key] = this.string(at, v, key)
          break
        case "temperature":
        case "topP":
        case "timeout":
          if (typeof v !== "number" || !Number.isFinite(v) || v < 0) this.fail(at, "a non-negative number", key)
          out[key] = v
          break
        case "maxTokens":
          out[key] = this.count(at, v, key, 1)
          break
        case "stop":
          if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) this.fail(at, "an array of strings", key)
          out[key] = v
          break
        default:
          this.fail(at, "one of provider, name, temperature, maxTokens, topP, stop, baseUrl, timeout", key)
      }
    }
    return out as ModelSettings
  }

  run(json: unknown): Term {
    const root: ParseNode = { json, key: undefined, parent: undefined }
    return foldTree<ParseNode, Term>(
      root,
      (node) => {
        const planned = this.plan(node)
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
}

/**
 * Parse a JSON value into a term. Throws {@link TermParseError} naming the JSON path of the
 * offending node and what was expected there. Never recurses on the JavaScript stack.
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * const square = Term.parse({ lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } })
 * ```
 */
export const parse = (json: unknown): Term => new Parser().run(json)

/**
 * Parse JSON text into a term; integers beyond 2^53 keep their exact value.
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * const t = Term.parseText('{"add":[1,2]}')
 * ```
 */
export const parseText = (text: string): Term => parse(parseJsonText(text))

/**
 * Parse JSON text, keeping integers beyond the safe range of a JavaScript number exact (as
 * `bigint`). Throws {@link TermParseError} on malformed JSON.
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
    return /\d{16}/.test(text) ? JSON.parse(text, exactIntegers) : JSON.parse(text)
  } catch (cause) {
    throw new TermParseError({
      message: `invalid JSON: ${cause instanceof Error ? cause.message : String(cause)}`,
      path: [],
      expected: "JSON text"
    })
  }
}

function exactIntegers(this: unknown, _key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === "number" && !Number.isSafeInteger(value) && context?.source !== undefined && /^-?\d+$/.test(context.source)) {
    return BigInt(context.source)
  }
  return value
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

/** JSON with `bigint`s allowed; {@link stringify} writes them as plain integers. */
const encodeNode = (term: Term, kids: ReadonlyArray<Json>): Json => {
  switch (term._tag) {
    case "Lit":
      return term.value
    case "Var":
      return { var: term.name }
    case "Lam":
      return { lam: term.param, body: kids[0]! }
    case "App":
      return { app: { func: kids[0]!, arg: kids[1]! } }
    case "Binary":
      return { [term.op]: [kids[0]!, kids[1]!] }
    case "Unary":
      return { [term.op]: kids[0]! }
    case "If":
      return { if: { cond: kids[0]!, then: kids[1]!, else: kids[2]! } }
    case "Nil":
      return { nil: true }
    case "Cons":
      return { cons: { head: kids[0]!, tail: kids[1]! } }
    case "List":
      return kids
    case "Pair":
      return { pair: [kids[0]!, kids[1]!] }
    case "Fold":
      return { fold: [kids[0]!, kids[1]!, kids[2]!] }
    case "Quote":
      return { quote: kids[0]! }
    case "Eval":
      return { eval: kids[0]! }
    case "CodeOf":
      return { code_of: term.name }
    case "Self":
      return { self: true }
    case "Continue":
      return { continue: { input: kids[0]! } }
    case "Llm": {
      const out: Record<string, Json> = { system: term.system }
      if (term.name !== undefined) out.name = term.name
      if (term.model !== undefined) out.model = term.model as Json
      if (term.conversation !== undefined) out.conversation = term.conversation
      if (term.maxHistoryTokens !== undefined) out.maxHistoryTokens = term.maxHistoryTokens
      return { llm: out }
    }
    case "Tool":
      return { tool: term.name }
    case "Compose":
      return { compose: kids }
    case "Loop": {
      const out: Record<string, Json> = { body: kids[0]!, max: term.max }
      if (term.until !== undefined) out.until = kids[1]!
      if (term.failOnExhaustion !== undefined) out.failOnExhaustion = term.failOnExhaustion
      return { loop: out }
    }
    case "Route": {
      const routes: Record<string, Json> = {}
      term.routes.forEach(([label], i) => (routes[label] = kids[i + 1]!))
      const out: Record<string, Json> = { classify: kids[0]!, routes }
      if (term.default !== undefined) out.default = kids[term.routes.length + 1]!
      return { route: out }
    }
    case "Par":
      return {
        par: {
          branches: typeof term.merge === "string" ? kids : kids.slice(0, -1),
          merge: typeof term.merge === "string" ? term.merge : kids[kids.length - 1]!
        }
      }
    case "Guard":
      return {
        guard: {
          agent: kids[0]!,
          validate: kids[1]!,
          retry: term.retry,
          fallback: typeof term.fallback === "string" ? term.fallback : { value: kids[2]! }
        }
      }
    case "Memory":
      return { memory: { agent: kids[0]!, size: term.size, ttl: term.ttl, scope: term.scope } }
    case "React": {
      const out: Record<string, Json> = { think: kids[0]!, tools: term.tools, maxSteps: term.maxSteps }
      if (term.toolTimeout !== undefined) out.toolTimeout = term.toolTimeout
      if (term.observe !== undefined) out.observe = term.observe
      return { react: out }
    }
  }
}

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
export const encode = (term: Term): Json => foldTree<Term, Json>(term, children, encodeNode)

/**
 * Write JSON (with `bigint`s as exact integers) as compact text, without recursion.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.stringify({ n: 2n ** 63n - 1n }) // '{"n":9223372036854775807}'
 * ```
 */
export const stringify = (json: Json): string => {
  // Emit into one buffer from an explicit stack of pending values and punctuation, so deep
  // nesting costs neither JavaScript stack nor repeated copying.
  const out: Array<string> = []
  const stack: Array<Json | Raw> = [json]
  while (stack.length > 0) {
    const item = stack.pop()!
    if (item instanceof Raw) out.push(item.text)
    else if (typeof item === "bigint") out.push(item.toString())
    else if (Array.isArray(item)) {
      out.push("[")
      stack.push(CLOSE_ARRAY)
      for (let i = item.length - 1; i >= 0; i--) {
        stack.push(item[i]!)
        if (i > 0) stack.push(COMMA)
      }
    } else if (item !== null && typeof item === "object") {
      out.push("{")
      stack.push(CLOSE_OBJECT)
      const keys = Object.keys(item)
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push((item as Record<string, Json>)[keys[i]!]!)
        stack.push(new Raw(`${i > 0 ? "," : ""}${JSON.stringify(keys[i])}:`))
      }
    } else out.push(JSON.stringify(item))
  }
  return out.join("")
}

/** Punctuation waiting on {@link stringify}'s stack. */
class Raw {
  constructor(readonly text: string) {}
}
const COMMA = new Raw(",")
const CLOSE_ARRAY = new Raw("]")
const CLOSE_OBJECT = new Raw("}")

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

/** JSON path segments from a term to each of its children, in {@link children} order. */
const childSegments = (term: Term): ReadonlyArray<ReadonlyArray<string | number>> => {
  switch (term._tag) {
    case "Lam":
      return [["body"]]
    case "App":
      return [["app", "func"], ["app", "arg"]]
    case "Binary":
      return [[term.op, 0], [term.op, 1]]
    case "Unary":
      return [[term.op]]
    case "If":
      return [["if", "cond"], ["if", "then"], ["if", "else"]]
    case "Cons":
      return [["cons", "head"], ["cons", "tail"]]
    case "List":
      return term.items.map((_, i) => [i])
    case "Pair":
      return [["pair", 0], ["pair", 1]]
    case "Fold":
      return [["fold", 0], ["fold", 1], ["fold", 2]]
    case "Quote":
      return [["quote"]]
    case "Eval":
      return [["eval"]]
    case "Continue":
      return [["continue", "input"]]
    case "Compose":
      return term.stages.map((_, i) => ["compose", i])
    case "Loop":
      return [["loop", "body"], ["loop", "until"]]
    case "Route":
      return [
        ["route", "classify"],
        ...term.routes.map(([label]) => ["route", "routes", label]),
        ["route", "default"]
      ]
    case "Par":
      return [...term.branches.map((_, i) => ["par", "branches", i]), ["par", "merge"]]
    case "Guard":
      return [["guard", "agent"], ["guard", "validate"], ["guard", "fallback", "value"]]
    case "Memory":
      return [["memory", "agent"]]
    case "React":
      return [["react", "think"]]
    default:
      return []
  }
}

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
    const segments = childSegments(entry.term)
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

const INFIX: Partial<Record<BinaryOp, string>> = {
  add: "+",
  sub: "-",
  mul: "*",
  div: "/",
  mod: "mod",
  eq: "=",
  lt: "<",
  gt: ">",
  lte: "≤",
  gte: "≥",
  and: "∧",
  or: "∨",
  concat: "++",
  contains: "∋",
  startsWith: "startsWith",
  endsWith: "endsWith"
}

const SUBSCRIPT = "₀₁₂₃₄₅₆₇₈₉"
const subscript = (n: number) => String(n).replace(/\d/g, (d) => SUBSCRIPT[Number(d)]!)

const literalText = (value: Literal): string => (typeof value === "bigint" ? value.toString() : JSON.stringify(value))

const clip = (text: string, max: number) => (text.length <= max ? text : text.slice(0, max) + "…")

const modelText = (model: ModelSettings | undefined): string => {
  if (model === undefined) return ""
  const name = [model.provider, model.name].filter((p) => p !== undefined).join("/")
  const temp = model.temperature === undefined ? "" : `, θ=${model.temperature}`
  return name === "" && temp === "" ? "" : `_{${name}${temp}}`
}

const isAtomic = (term: Term) =>
  term._tag === "Lit" || term._tag === "Var" || term._tag === "Nil" || term._tag === "Self" || term._tag === "List" ||
  term._tag === "Pair" || term._tag === "Tool" || term._tag === "Llm" || term._tag === "CodeOf"

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
    const wrap = (i: number) => (formal || isAtomic(children(t)[i]!) ? k[i]! : `(${k[i]!})`)
    switch (t._tag) {
      case "Lit":
        return literalText(t.value)
      case "Var":
        return t.name
      case "Lam":
        return formal ? `(λ${t.param}. ${k[0]})` : `λ${t.param}. ${k[0]}`
      case "App":
        return formal ? `(${k[0]} ${k[1]})` : `${t.func._tag === "Lam" ? `(${k[0]})` : wrap(0)} ${wrap(1)}`
      case "Binary":
        return formal ? `(${t.op} ${k[0]} ${k[1]})` : `${wrap(0)} ${INFIX[t.op]} ${wrap(1)}`
      case "Unary":
        return formal ? `(${t.op} ${k[0]})` : t.op === "not" ? `¬${wrap(0)}` : `${t.op}(${k[0]})`
      case "If":
        return formal ? `(if ${k[0]} ${k[1]} ${k[2]})` : `if ${k[0]} then ${k[1]} else ${k[2]}`
      case "Nil":
        return formal ? "nil" : "[]"
      case "Cons":
        return formal ? `(cons ${k[0]} ${k[1]})` : `${wrap(0)} :: ${k[1]}`
      case "List":
        return formal ? k.reduce((acc, item) => `(cons ${item} ${acc})`, "nil") : `[${k.join(", ")}]`
      case "Pair":
        return formal ? `(pair ${k[0]} ${k[1]})` : `⟨${k[0]}, ${k[1]}⟩`
      case "Fold":
        return formal ? `(fold ${k[0]} ${k[1]} ${k[2]})` : `fold(${k[0]}, ${k[1]}, ${k[2]})`
      case "Quote":
        return formal ? `(quote ${k[0]})` : `⌜${k[0]}⌝`
      case "Eval":
        return formal ? `(eval ${k[0]})` : `eval(${k[0]})`
      case "CodeOf":
        return formal ? `(code_of ${JSON.stringify(t.name)})` : `code_of(${t.name})`
      case "Self":
        return "self"
      case "Continue":
        return formal ? `(continue ${k[0]})` : `continue(${k[0]})`
      case "Llm": {
        const head = `LLM${modelText(t.model)}("${clip(t.system.replace(/\s+/g, " ").trim(), 50)}")`
        return formal ? `(λx. ${head}(x))` : t.name !== undefined ? `${t.name}:${head}` : head
      }
      case "Tool":
        return formal ? `(λx. Tool("${t.name}", x))` : `Tool(${t.name})`
      case "Compose":
        return formal ? `(λx. ${k.reduce((acc, stage) => `(${stage} ${acc})`, "x")})` : k.join(" >> ")
      case "Loop": {
        const until = t.until === undefined ? "" : formal ? ` ${k[1]}` : `, until ${k[1]}`
        return formal ? `(Y${subscript(t.max)} ${k[0]}${until})` : `Y${subscript(t.max)}(${k[0]}${until})`
      }
      case "Route": {
        const cases = t.routes.map(([label], i) => `(${JSON.stringify(label)}, ${k[i + 1]})`)
        if (t.default !== undefined) cases.push(`(_, ${k[t.routes.length + 1]})`)
        return formal ? `(λx. CASE (${k[0]} x) [${cases.join(" ")}] x)` : `CASE (${k[0]}) [${cases.join(", ")}]`
      }
      case "Par": {
        const branches = typeof t.merge === "string" ? k : k.slice(0, -1)
        const head = branches.length === 2 ? `PAIR(${branches.join(", ")})` : `PAR(${branches.join(", ")})`
        const merge = typeof t.merge === "string" ? (t.merge === "concat" ? " >> concat" : "") : ` >> ${k[k.length - 1]}`
        return formal ? `(${head}${merge})` : `${head}${merge}`
      }
      case "Guard": {
        const fallback = typeof t.fallback === "string" ? t.fallback : k[2]
        return `Guard(${k[0]}, ${k[1]}, retry=${t.retry}, fallback=${fallback})`
      }
      case "Memory":
        return `Memory(${k[0]}, Γ ∪ ${t.scope}{size=${t.size}, ttl=${t.ttl}})`
      case "React": {
        const cases = [...t.tools.filter((n) => n !== "terminate").map((n) => `(${n}, Tool(${n}))`), "(terminate, λx. x)"]
        return `Y${subscript(t.maxSteps)}(λself. λstate. let t = ${k[0]}(state) in CASE t [${cases.join(", ")}] >> IF is_terminate THEN t ELSE self(state ⊕ obs))`
      }
    }
  })
}

// ---------------------------------------------------------------------------------------------
// Static bounds and capabilities
// ---------------------------------------------------------------------------------------------

/**
 * Worst-case numbers of LLM calls and tool calls of a term, found without running it.
 * `Infinity` means no static bound (recursion through `self` or `eval`, or a fold over a list of
 * unknown length that calls an agent).
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const b: Term.Bounds = { llmCalls: 20, toolCalls: 20 }
 * ```
 */
export interface Bounds {
  readonly llmCalls: number
  readonly toolCalls: number
}

interface Cost {
  /** Calls made by evaluating the term. */
  readonly eval: Bounds
  /** Calls made by applying the term's value once (when it is a function). */
  readonly call: Bounds
}

const ZERO: Bounds = { llmCalls: 0, toolCalls: 0 }
const plus = (...bs: ReadonlyArray<Bounds>): Bounds => ({
  llmCalls: bs.reduce((n, b) => n + b.llmCalls, 0),
  toolCalls: bs.reduce((n, b) => n + b.toolCalls, 0)
})
const times = (n: number, b: Bounds): Bounds => ({
  llmCalls: b.llmCalls === 0 ? 0 : n * b.llmCalls,
  toolCalls: b.toolCalls === 0 ? 0 : n * b.toolCalls
})
const max = (...bs: ReadonlyArray<Bounds>): Bounds => ({
  llmCalls: Math.max(0, ...bs.map((b) => b.llmCalls)),
  toolCalls: Math.max(0, ...bs.map((b) => b.toolCalls))
})
const unbounded = (b: Bounds): Bounds => times(Infinity, b)

/**
 * Worst-case LLM calls and tool calls of applying `term` once (for an agent, a function) — or of
 * evaluating it, when it is not a function. Loops multiply their body's bound by their maximum,
 * routes take the costliest branch, guards multiply by their attempts.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.bounds(Term.react({ think: Term.llm({ system: "…" }), tools: ["search"], maxSteps: 20 }))
 * // { llmCalls: 20, toolCalls: 20 }
 * ```
 */
export const bounds = (term: Term): Bounds => {
  const hasOracle = capabilities(term)
  const recursion: Bounds = { llmCalls: hasOracle.llm ? Infinity : 0, toolCalls: hasOracle.tools.size > 0 ? Infinity : 0 }
  const cost = foldTree<Term, Cost>(term, children, (t, k): Cost => {
    const evalAll = plus(...k.map((c) => c.eval))
    switch (t._tag) {
      case "Llm":
        return { eval: ZERO, call: { llmCalls: 1, toolCalls: 0 } }
      case "Tool":
        return { eval: ZERO, call: { llmCalls: 0, toolCalls: t.name === "terminate" ? 0 : 1 } }
      case "Lam":
        return { eval: ZERO, call: k[0]!.eval }
      case "App":
        return { eval: plus(evalAll, t.func._tag === "Self" ? recursion : k[0]!.call), call: ZERO }
      case "Fold":
        return { eval: plus(evalAll, unbounded(k[0]!.call)), call: ZERO }
      case "Eval":
        return { eval: t.term._tag === "Quote" ? plus(k[0]!.eval, k[0]!.call) : plus(evalAll, recursion), call: ZERO }
      case "Quote":
        return { eval: ZERO, call: k[0]!.eval }
      case "Compose":
        return { eval: ZERO, call: plus(...k.map((c) => plus(c.eval, c.call))) }
      case "Loop":
        return { eval: ZERO, call: times(t.max, plus(...k.map((c) => plus(c.eval, c.call)))) }
      case "Route":
        return { eval: ZERO, call: plus(k[0]!.eval, k[0]!.call, max(...k.slice(1).map((c) => plus(c.eval, c.call)))) }
      case "Par":
        return { eval: ZERO, call: plus(...k.map((c) => plus(c.eval, c.call))) }
      case "Guard": {
        const attempt = plus(k[0]!.eval, k[0]!.call, k[1]!.eval, k[1]!.call)
        return { eval: ZERO, call: plus(times(t.retry + 1, attempt), k[2]?.eval ?? ZERO) }
      }
      case "Memory":
        return { eval: ZERO, call: plus(k[0]!.eval, k[0]!.call) }
      case "React": {
        const tools = t.tools.some((name) => name !== "terminate") ? 1 : 0
        return { eval: ZERO, call: times(t.maxSteps, plus(k[0]!.eval, k[0]!.call, { llmCalls: 0, toolCalls: tools })) }
      }
      default:
        return { eval: evalAll, call: ZERO }
    }
  })
  return term._tag === "App" || term._tag === "Lit" ? cost.eval : plus(cost.eval, cost.call)
}

/**
 * What a term may do besides pure computation: call LLMs, which tools, use memory, run branches
 * in parallel; and whether it can recurse (`self`, `eval`, `code_of`).
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const c: Term.Capabilities = { llm: true, tools: new Set(["search"]), memory: false, parallel: false, recursion: false, codeOf: new Set() }
 * ```
 */
export interface Capabilities {
  readonly llm: boolean
  readonly tools: ReadonlySet<string>
  readonly memory: boolean
  readonly parallel: boolean
  readonly recursion: boolean
  /** Tools whose code the term reads with `code_of`. */
  readonly codeOf: ReadonlySet<string>
}

/**
 * The capabilities a term uses (see {@link Capabilities}).
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.capabilities(Term.app(Term.tool("search"), Term.lit("q"))).tools // Set { "search" }
 * ```
 */
export const capabilities = (term: Term): Capabilities => {
  let llm = false
  let memory = false
  let parallel = false
  let recursion = false
  const tools = new Set<string>()
  const codeOf = new Set<string>()
  const stack: Array<Term> = [term]
  while (stack.length > 0) {
    const t = stack.pop()!
    switch (t._tag) {
      case "Llm":
        llm = true
        break
      case "Tool":
        tools.add(t.name)
        break
      case "React":
        for (const name of t.tools) tools.add(name)
        break
      case "Memory":
        memory = true
        break
      case "Par":
        parallel = true
        break
      case "Self":
      case "Eval":
        recursion = true
        break
      case "CodeOf":
        recursion = true
        codeOf.add(t.name)
        break
    }
    for (const c of children(t)) stack.push(c)
  }
  return { llm, tools, memory, parallel, recursion, codeOf }
}
