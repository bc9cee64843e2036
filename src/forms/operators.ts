/**
 * The operators: binary `{"<op>": [a, b]}` (`and`/`or` short-circuit) and unary `{"<op>": t}`.
 */
import { BinOp, code, Op, simplify, UnOp } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import { dataCost, unknownCost } from "./analysis.ts"
import type { Form } from "./Form.ts"

/** `{"<op>": [left, right]}` */
export interface Binary {
  readonly _tag: "Binary"
  readonly op: Term.BinaryOp
  readonly left: Term.Term
  readonly right: Term.Term
}

/** `{"<op>": arg}` */
export interface Unary {
  readonly _tag: "Unary"
  readonly op: Term.UnaryOp
  readonly arg: Term.Term
}

/** Each binary operator's machine code and infix symbol, in the order the parser tries them. */
const BINARY: { readonly [op in Term.BinaryOp]: readonly [BinOp, string] } = {
  add: [BinOp.Add, "+"],
  sub: [BinOp.Sub, "-"],
  mul: [BinOp.Mul, "*"],
  div: [BinOp.Div, "/"],
  mod: [BinOp.Mod, "mod"],
  eq: [BinOp.Eq, "="],
  lt: [BinOp.Lt, "<"],
  gt: [BinOp.Gt, ">"],
  lte: [BinOp.Lte, "≤"],
  gte: [BinOp.Gte, "≥"],
  and: [BinOp.And, "∧"],
  or: [BinOp.Or, "∨"],
  concat: [BinOp.Concat, "++"],
  contains: [BinOp.Contains, "∋"],
  startsWith: [BinOp.StartsWith, "startsWith"],
  endsWith: [BinOp.EndsWith, "endsWith"],
  get: [BinOp.Get, "get"],
  compareNumbers: [BinOp.CompareNumbers, "compareNumbers"]
}

const UNARY: { readonly [op in Term.UnaryOp]: UnOp } = {
  not: UnOp.Not,
  head: UnOp.Head,
  tail: UnOp.Tail,
  isEmpty: UnOp.IsEmpty,
  length: UnOp.Length,
  fst: UnOp.Fst,
  snd: UnOp.Snd,
  trim: UnOp.Trim,
  trimStart: UnOp.TrimStart,
  trimEnd: UnOp.TrimEnd,
  lower: UnOp.Lower,
  upper: UnOp.Upper,
  isJson: UnOp.IsJson,
  toText: UnOp.ToText,
  typeName: UnOp.TypeName,
  toInt: UnOp.ToInt,
  toFloat: UnOp.ToFloat
}

/** The names of the binary operators. */
export const binaryOps = Object.keys(BINARY) as ReadonlyArray<Term.BinaryOp>

/** The names of the unary operators. */
export const unaryOps = Object.keys(UNARY) as ReadonlyArray<Term.UnaryOp>

/** The unary operators that take a value out of a structure (which may hold a function). */
const PROJECTIONS: ReadonlySet<Term.UnaryOp> = new Set(["head", "fst", "snd"])

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
export const binary = (op: Term.BinaryOp, left: Term.Term, right: Term.Term): Term.Term => ({ _tag: "Binary", op, left, right })

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
export const unary = (op: Term.UnaryOp, arg: Term.Term): Term.Term => ({ _tag: "Unary", op, arg })

export const binaryForm: Form<Binary> = {
  tag: "Binary",
  keys: binaryOps,
  parse: (p, node, key, obj) => {
    const [l, r] = p.tuple(node, key, obj[key], 2, `an array of 2 terms for ${JSON.stringify(key)}`)
    return { kids: [l!, r!], build: ([a, b]) => binary(key as Term.BinaryOp, a!, b!) }
  },
  children: (t) => [t.left, t.right],
  withChildren: (t, [left, right]) => ({ ...t, left: left!, right: right! }),
  segments: (t) => [
    [t.op, 0],
    [t.op, 1]
  ],
  encode: (t, [l, r]) => ({ [t.op]: [l!, r!] }),
  pretty: (t, [l, r], formal, operand) => (formal ? `(${t.op} ${l} ${r})` : `${operand(0)} ${BINARY[t.op][1]} ${operand(1)}`),
  atomic: false,
  // `get` takes a value out of a list, which may hold a function
  cost: (t, kids, context) => (t.op === "get" ? unknownCost(t, kids, context) : dataCost(t, kids)),
  value: (t) => (t.op === "get" ? "unknown" : "data"),
  compile: (t, kids) => simplify(code(Op.Binary, t, kids, BINARY[t.op][0])),
  events: []
}

export const unaryForm: Form<Unary> = {
  tag: "Unary",
  keys: unaryOps,
  parse: (p, node, key, obj) => ({ kids: [p.sub(node, obj[key], key)], build: ([a]) => unary(key as Term.UnaryOp, a!) }),
  children: (t) => [t.arg],
  withChildren: (t, [arg]) => ({ ...t, arg: arg! }),
  segments: (t) => [[t.op]],
  encode: (t, [a]) => ({ [t.op]: a! }),
  pretty: (t, [a], formal, operand) => (formal ? `(${t.op} ${a})` : t.op === "not" ? `¬${operand(0)}` : `${t.op}(${a})`),
  atomic: false,
  cost: (t, kids, context) => (PROJECTIONS.has(t.op) ? unknownCost(t, kids, context) : dataCost(t, kids)),
  value: (t) => (PROJECTIONS.has(t.op) ? "unknown" : "data"),
  compile: (t, kids) => simplify(code(Op.Unary, t, kids, UNARY[t.op])),
  events: []
}
