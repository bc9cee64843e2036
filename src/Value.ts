/**
 * The values terms evaluate to, and their JSON encoding.
 *
 * The encoding is the term syntax of the value wherever one exists, so first-order results can be
 * fed back as input: integers, booleans, strings and null as themselves, lists as arrays, pairs as
 * `{"pair":[a,b]}`, quoted code as `{"quote":t}`. Functions encode as `{"closure":<lambda>}` or
 * `{"agent":<term>}` (their captured environment is not part of the encoding), a continuation as
 * `{"type":"continuation","tool":…,"next_input":…,"step":n}`.
 *
 * @since 0.1.0
 * @module
 */
import { foldTree } from "./internal/tree.ts"
import * as Term from "./Term.ts"

/**
 * A list cell. The empty list is {@link nil}. `length` is kept in every cell, so `length` is O(1).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * const xs = Value.fromArray([1, 2, 3])
 * console.log(xs.length) // 3
 * ```
 */
export class List {
  constructor(
    readonly head: Value,
    readonly tail: List,
    readonly length: number
  ) {}
}

/**
 * The empty list.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * Value.nil.length // 0
 * ```
 */
export const nil: List = new List(null, undefined as unknown as List, 0)

/**
 * A pair of values.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * new Value.Pair(1, "one").fst // 1
 * ```
 */
export class Pair {
  constructor(
    readonly fst: Value,
    readonly snd: Value
  ) {}
}

/**
 * Quoted code: a term as data, produced by `quote` and `code_of`, run by `eval`.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Term, Value } from "lambdagent"
 * new Value.Quoted(Term.lit(1)).term
 * ```
 */
export class Quoted {
  constructor(readonly term: Term.Term) {}
}

/**
 * A function value: a lambda with its captured environment, or an agent form (`llm`, `tool`,
 * `compose`, …). `term` is its source. The other fields belong to the evaluator.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Evaluator, Term, Value } from "lambdagent"
 * const f = Evaluator.evaluate(Term.lam("x", Term.var("x")))
 * console.log(f instanceof Value.Closure) // true
 * ```
 */
export class Closure {
  constructor(
    readonly term: Term.Term,
    /** @internal compiled code */
    readonly code: unknown,
    /** @internal captured environment */
    readonly env: unknown,
    /** @internal captured system context */
    readonly ctx: unknown
  ) {}
}

/**
 * A request to run a tool again: what `continue` returns. Send `next_input` back as the tool's
 * input (with `step`) to take the next step.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * const k = new Value.Continuation("factorial", new Value.Pair(4, 5), 1)
 * Value.toJson(k) // { type: "continuation", tool: "factorial", next_input: { pair: [4, 5] }, step: 1 }
 * ```
 */
export class Continuation {
  constructor(
    readonly tool: string,
    readonly input: Value,
    readonly step: number
  ) {}
}

/**
 * A value of the language.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Value } from "lambdagent"
 * const v: Value.Value = "hello"
 * ```
 */
export type Value = number | bigint | string | boolean | null | List | Pair | Quoted | Closure | Continuation

/**
 * Build a list from an array.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * Value.toArray(Value.fromArray([1, 2])) // [1, 2]
 * ```
 */
export const fromArray = (items: ReadonlyArray<Value>): List => {
  let out = nil
  for (let i = items.length - 1; i >= 0; i--) out = new List(items[i]!, out, out.length + 1)
  return out
}

/**
 * The elements of a list, in order.
 *
 * @since 0.1.0
 * @category destructors
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * Value.toArray(Value.fromArray(["a"])) // ["a"]
 * ```
 */
export const toArray = (list: List): Array<Value> => {
  const out: Array<Value> = []
  for (let l = list; l.length > 0; l = l.tail) out.push(l.head)
  return out
}

/**
 * A short name of a value's type, for error messages.
 *
 * @since 0.1.0
 * @category destructors
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * Value.typeName(Value.nil) // "list"
 * ```
 */
export const typeName = (value: Value): string => {
  if (value === null) return "null"
  switch (typeof value) {
    case "number":
    case "bigint":
      return "integer"
    case "string":
      return "string"
    case "boolean":
      return "boolean"
  }
  if (value instanceof List) return "list"
  if (value instanceof Pair) return "pair"
  if (value instanceof Quoted) return "quoted term"
  if (value instanceof Closure) return "function"
  return "continuation"
}

const valueChildren = (value: Value): ReadonlyArray<Value> => {
  if (value instanceof List) return toArray(value)
  if (value instanceof Pair) return [value.fst, value.snd]
  if (value instanceof Continuation) return [value.input]
  return []
}

/**
 * Encode a value as JSON (see the module description). Integers beyond 2^53 stay `bigint`;
 * `Term.stringify` writes them exactly.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * Value.toJson(new Value.Pair(1, Value.fromArray([true]))) // { pair: [1, [true]] }
 * ```
 */
export const toJson = (value: Value): Term.Json =>
  foldTree<Value, Term.Json>(value, valueChildren, (v, kids) => {
    if (v === null || typeof v !== "object") return v
    if (v instanceof List) return kids
    if (v instanceof Pair) return { pair: [kids[0]!, kids[1]!] }
    if (v instanceof Quoted) return { quote: Term.encode(v.term) }
    if (v instanceof Closure) return v.term._tag === "Lam" ? { closure: Term.encode(v.term) } : { agent: Term.encode(v.term) }
    return { type: "continuation", tool: v.tool, next_input: kids[0]!, step: v.step }
  })

/**
 * Encode a value as compact JSON text.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * Value.toJsonText(Value.fromArray([1, 2])) // "[1,2]"
 * ```
 */
export const toJsonText = (value: Value): string =>
  typeof value === "bigint" ? value.toString() : value === null || typeof value !== "object" ? JSON.stringify(value) : Term.stringify(toJson(value))

/**
 * Render a value for people: strings as they are, everything else as JSON text.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * Value.toText("hi") // "hi"
 * Value.toText(Value.fromArray([1])) // "[1]"
 * ```
 */
export const toText = (value: Value): string =>
  typeof value === "string" ? value : typeof value === "number" && Number.isSafeInteger(value) ? String(value) : toJsonText(value)

/**
 * Structural equality of first-order values (functions are equal only to themselves).
 *
 * @since 0.1.0
 * @category equivalence
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * Value.equals(Value.fromArray([1, 2]), Value.fromArray([1, 2])) // true
 * ```
 */
export const equals = (a: Value, b: Value): boolean => {
  const left: Array<Value> = [a]
  const right: Array<Value> = [b]
  while (left.length > 0) {
    let x = left.pop()!
    let y = right.pop()!
    if (x === y) continue
    if (x instanceof List && y instanceof List) {
      if (x.length !== y.length) return false
      for (; x.length > 0; x = x.tail, y = (y as List).tail) {
        left.push(x.head)
        right.push((y as List).head)
      }
      continue
    }
    if (x instanceof Pair && y instanceof Pair) {
      left.push(x.fst, x.snd)
      right.push(y.fst, y.snd)
      continue
    }
    if (x instanceof Quoted && y instanceof Quoted) {
      if (Term.toJsonText(x.term) !== Term.toJsonText(y.term)) return false
      continue
    }
    if (x instanceof Continuation && y instanceof Continuation) {
      if (x.tool !== y.tool || x.step !== y.step) return false
      left.push(x.input)
      right.push(y.input)
      continue
    }
    return false
  }
  return true
}
