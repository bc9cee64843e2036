/**
 * Terms compiled for the machine: variables resolved to environment indices, literal lists folded
 * into constants, one object shape for every node so the machine's dispatch stays monomorphic.
 */
import * as Term from "../Term.ts"
import * as Value from "../Value.ts"
import { foldTree } from "./tree.ts"

export const enum Op {
  /** A small operator expression over simple operands, evaluated in one machine step. */
  Simple,
  Const,
  Var,
  Unbound,
  Lam,
  App,
  Binary,
  Unary,
  If,
  Cons,
  List,
  Pair,
  Fold,
  Quote,
  Eval,
  CodeOf,
  Self,
  Continue,
  // agent forms: each evaluates to a function value
  Llm,
  Tool,
  Compose,
  Loop,
  Route,
  Par,
  Guard,
  Memory,
  React
}

export const enum BinOp {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Eq,
  Lt,
  Gt,
  Lte,
  Gte,
  And,
  Or,
  Concat,
  Contains,
  StartsWith,
  EndsWith
}

export const enum UnOp {
  Not,
  Head,
  Tail,
  IsEmpty,
  Length,
  Fst,
  Snd,
  Trim,
  TrimStart,
  TrimEnd,
  Lower,
  Upper,
  IsJson
}

const BIN_OPS: Record<Term.BinaryOp, BinOp> = {
  add: BinOp.Add,
  sub: BinOp.Sub,
  mul: BinOp.Mul,
  div: BinOp.Div,
  mod: BinOp.Mod,
  eq: BinOp.Eq,
  lt: BinOp.Lt,
  gt: BinOp.Gt,
  lte: BinOp.Lte,
  gte: BinOp.Gte,
  and: BinOp.And,
  or: BinOp.Or,
  concat: BinOp.Concat,
  contains: BinOp.Contains,
  startsWith: BinOp.StartsWith,
  endsWith: BinOp.EndsWith
}

const UN_OPS: Record<Term.UnaryOp, UnOp> = {
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
  isJson: UnOp.IsJson
}

/** Static scope: the names bound around a node, innermost first. */
export interface Scope {
  readonly name: string
  readonly next: Scope | undefined
}

export class Code {
  constructor(
    readonly op: Op,
    readonly term: Term.Term,
    readonly a: Code | undefined,
    readonly b: Code | undefined,
    readonly c: Code | undefined,
    /** Literal value, variable index, operator, name or scope, depending on `op`. */
    readonly x: any,
    readonly items: ReadonlyArray<Code> | undefined,
    /** For `Op.Simple`: the operator form (`Op.Binary` or `Op.Unary`). */
    readonly sop: Op = op,
    /** Whether this node can be evaluated directly, without machine frames. */
    readonly simple: boolean = op === Op.Const || op === Op.Var || op === Op.Quote || op === Op.Self,
    /** Nodes in a simple expression (the steps it accounts for). */
    readonly n: number = 1,
    /** Nesting depth of a simple expression (kept small so direct evaluation stays shallow). */
    readonly depth: number = 1
  ) {}
}

const MAX_SIMPLE_DEPTH = 12

/** Turn an operator node over simple operands into one `Op.Simple` node. */
const simplify = (c: Code): Code => {
  if (c.op !== Op.Binary && c.op !== Op.Unary) return c
  const a = c.a!
  const b = c.b
  if (!a.simple || (b !== undefined && !b.simple)) return c
  const depth = 1 + Math.max(a.depth, b?.depth ?? 0)
  if (depth > MAX_SIMPLE_DEPTH) return c
  return new Code(Op.Simple, c.term, a, b, undefined, c.x, undefined, c.op, true, 1 + a.n + (b?.n ?? 0), depth)
}

const lookup = (scope: Scope | undefined, name: string): number => {
  let i = 0
  for (let s = scope; s !== undefined; s = s.next, i++) if (s.name === name) return i
  return -1
}

interface Node {
  readonly term: Term.Term
  readonly scope: Scope | undefined
}

const childNodes = (node: Node): ReadonlyArray<Node> => {
  const { scope, term } = node
  switch (term._tag) {
    case "Quote":
      return [] // quoted code is data; `eval` compiles it where it runs
    case "Lam":
      return [{ term: term.body, scope: { name: term.param, next: scope } }]
    case "List":
      return term.items.every((t) => t._tag === "Lit") ? [] : term.items.map((t) => ({ term: t, scope }))
    default:
      return Term.children(term).map((t) => ({ term: t, scope }))
  }
}

const code = (op: Op, term: Term.Term, kids: ReadonlyArray<Code>, x?: unknown, items?: ReadonlyArray<Code>) =>
  new Code(op, term, kids[0], kids[1], kids[2], x, items)

const build = (node: Node, kids: ReadonlyArray<Code>): Code => {
  const term = node.term
  switch (term._tag) {
    case "Lit":
      return code(Op.Const, term, kids, term.value)
    case "Nil":
      return code(Op.Const, term, kids, Value.nil)
    case "Var": {
      const index = lookup(node.scope, term.name)
      return index < 0 ? code(Op.Unbound, term, kids, term.name) : code(Op.Var, term, kids, index)
    }
    case "Lam":
      return code(Op.Lam, term, kids, term.param)
    case "App":
      return code(Op.App, term, kids)
    case "Binary":
      return simplify(code(Op.Binary, term, kids, BIN_OPS[term.op]))
    case "Unary":
      return simplify(code(Op.Unary, term, kids, UN_OPS[term.op]))
    case "If":
      return code(Op.If, term, kids)
    case "Cons":
      return code(Op.Cons, term, kids)
    case "List": {
      if (kids.length === 0 && term.items.length > 0) {
        return code(Op.Const, term, [], Value.fromArray(term.items.map((t) => (t as Term.Of<"Lit">).value)))
      }
      if (kids.every((k) => k.op === Op.Const)) {
        return code(Op.Const, term, [], Value.fromArray(kids.map((k) => k.x as Value.Value)))
      }
      return code(Op.List, term, [], undefined, kids)
    }
    case "Pair":
      return code(Op.Pair, term, kids)
    case "Fold":
      return code(Op.Fold, term, kids)
    case "Quote":
      return code(Op.Quote, term, kids, new Value.Quoted(term.term))
    case "Eval":
      return code(Op.Eval, term, kids, { scope: node.scope, cache: new Map<Term.Term, Code>() })
    case "CodeOf":
      return code(Op.CodeOf, term, kids, term.name)
    case "Self":
      return code(Op.Self, term, kids)
    case "Continue":
      return code(Op.Continue, term, kids)
    case "Llm":
      return code(Op.Llm, term, kids)
    case "Tool":
      return code(Op.Tool, term, kids, term.name)
    case "Compose":
      return code(Op.Compose, term, [], undefined, kids)
    case "Loop":
      return code(Op.Loop, term, kids)
    case "Route":
      return code(Op.Route, term, [], new Map(term.routes.map(([label], i) => [label.toLowerCase(), i])), kids)
    case "Par":
      return code(Op.Par, term, [], undefined, kids)
    case "Guard":
      return code(Op.Guard, term, kids)
    case "Memory":
      return code(Op.Memory, term, kids)
    case "React":
      return code(Op.React, term, kids)
  }
}

const topLevel = new WeakMap<Term.Term, Code>()

/** Compile a term whose free variables are looked up in `scope` (closed terms are cached). */
export const compile = (term: Term.Term, scope: Scope | undefined): Code => {
  if (scope !== undefined) return foldTree<Node, Code>({ term, scope }, childNodes, build)
  let code = topLevel.get(term)
  if (code === undefined) {
    code = foldTree<Node, Code>({ term, scope }, childNodes, build)
    topLevel.set(term, code)
  }
  return code
}
