/**
 * Lists: the empty list, cons cells, list literals (JSON arrays), and the left fold.
 */
import { code, type Code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import * as Value from "../Value.ts"
import { dataCost, evalAll, plus, times } from "./analysis.ts"
import type { Form } from "./Form.ts"
import { isPlainLiteral, lit } from "./literal.ts"
import type { Parser, ParseNode, Plan } from "./parse.ts"

/** `{"nil": true}` */
export interface Nil {
  readonly _tag: "Nil"
}

/** `{"cons": {"head": h, "tail": t}}` */
export interface Cons {
  readonly _tag: "Cons"
  readonly head: Term.Term
  readonly tail: Term.Term
}

/** A JSON array: a list of terms. */
export interface List {
  readonly _tag: "List"
  readonly items: ReadonlyArray<Term.Term>
}

/** `{"fold": [f, init, list]}` */
export interface Fold {
  readonly _tag: "Fold"
  readonly func: Term.Term
  readonly init: Term.Term
  readonly list: Term.Term
}

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
export const nil: Term.Term = { _tag: "Nil" }

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
export const cons = (head: Term.Term, tail: Term.Term): Term.Term => ({ _tag: "Cons", head, tail })

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
export const list = (items: ReadonlyArray<Term.Term>): Term.Term => ({ _tag: "List", items })

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
export const fold = (func: Term.Term, init: Term.Term, list: Term.Term): Term.Term => ({ _tag: "Fold", func, init, list })

/** A JSON array as a list: plain literals at once, anything else as sub-terms. */
export const parseArray = (p: Parser, node: ParseNode): Term.Term | Plan => {
  const json = node.json as ReadonlyArray<unknown>
  if (json.every(isPlainLiteral)) return list(json.map((item) => lit(item === 0 ? 0 : item)))
  return { kids: json.map((item, i) => p.child(node, item, i)), build: (items) => list(items) }
}

export const nilForm: Form<Nil> = {
  tag: "Nil",
  keys: ["nil"],
  parse: () => nil,
  children: () => [],
  withChildren: (t) => t,
  segments: () => [],
  encode: () => ({ nil: true }),
  pretty: (_, __, formal) => (formal ? "nil" : "[]"),
  atomic: true,
  cost: dataCost,
  value: () => "data",
  compile: (t, kids) => code(Op.Const, t, kids, Value.nil),
  events: []
}

export const consForm: Form<Cons> = {
  tag: "Cons",
  keys: ["cons"],
  parse: (p, node, key, obj) => {
    const f = p.fields(node, key, obj[key], ["head", "tail"])
    return { kids: [p.sub(node, f.head, key, "head"), p.sub(node, f.tail, key, "tail")], build: ([h, t]) => cons(h!, t!) }
  },
  children: (t) => [t.head, t.tail],
  withChildren: (t, [head, tail]) => ({ ...t, head: head!, tail: tail! }),
  segments: () => [
    ["cons", "head"],
    ["cons", "tail"]
  ],
  encode: (_, [h, t]) => ({ cons: { head: h!, tail: t! } }),
  pretty: (_, [h, t], formal, operand) => (formal ? `(cons ${h} ${t})` : `${operand(0)} :: ${t}`),
  atomic: false,
  cost: dataCost,
  value: () => "data",
  compile: (t, kids) => code(Op.Cons, t, kids),
  events: []
}

const allLiterals = (t: List) => t.items.every((item) => item._tag === "Lit")

export const listForm: Form<List> = {
  tag: "List",
  keys: [],
  parse: parseArray,
  children: (t) => t.items,
  withChildren: (t, items) => ({ ...t, items }),
  segments: (t) => t.items.map((_, i) => [i]),
  encode: (_, items) => items,
  pretty: (_, items, formal) => (formal ? items.reduceRight((acc, item) => `(cons ${item} ${acc})`, "nil") : `[${items.join(", ")}]`),
  atomic: true,
  cost: dataCost,
  value: () => "data",
  compiled: (t) => (allLiterals(t) ? [] : t.items),
  compile: (t, kids): Code => {
    if (kids.length === 0 && t.items.length > 0) {
      return code(Op.Const, t, [], Value.fromArray(t.items.map((item) => (item as Term.Of<"Lit">).value)))
    }
    if (kids.every((k) => k.op === Op.Const)) return code(Op.Const, t, [], Value.fromArray(kids.map((k) => k.x as Value.Value)))
    return code(Op.List, t, [], undefined, kids)
  },
  events: []
}

export const foldForm: Form<Fold> = {
  tag: "Fold",
  keys: ["fold"],
  parse: (p, node, key, obj) => {
    const kids = p.tuple(node, key, obj[key], 3, "an array [function, initial, list]")
    return { kids, build: ([f, i, l]) => fold(f!, i!, l!) }
  },
  children: (t) => [t.func, t.init, t.list],
  withChildren: (t, [func, init, list]) => ({ ...t, func: func!, init: init!, list: list! }),
  segments: () => [
    ["fold", 0],
    ["fold", 1],
    ["fold", 2]
  ],
  encode: (_, [f, i, l]) => ({ fold: [f!, i!, l!] }),
  pretty: (_, [f, i, l], formal) => (formal ? `(fold ${f} ${i} ${l})` : `fold(${f}, ${i}, ${l})`),
  atomic: false,
  cost: (t, kids, context) => {
    // the function is applied once per item: exactly as often as a literal list is long
    const length = t.list._tag === "List" ? t.list.items.length : t.list._tag === "Nil" ? 0 : Infinity
    const applications = times(length, kids[0]!.call)
    return { eval: plus(evalAll(kids), applications), call: context.unknown }
  },
  value: () => "unknown",
  compile: (t, kids) => code(Op.Fold, t, kids),
  events: []
}
