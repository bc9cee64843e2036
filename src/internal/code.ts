/**
 * Compiled code: what the machine runs. Variables are resolved to environment indices, literal
 * lists folded into constants, and every node has one object shape so the machine's dispatch
 * stays monomorphic. The pure calculus has one opcode per construct; every agent form compiles to
 * `Op.Agent`, whose `x` is the form's step (see `src/forms/Form.ts`).
 */
import type * as Term from "../Term.ts"

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
  /** An agent form: evaluates to a function value whose application is the form's step. */
  Agent
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
  EndsWith,
  Get,
  CompareNumbers
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
  IsJson,
  ToText,
  TypeName,
  ToInt,
  ToFloat
}

/** Static scope: the names bound around a node, innermost first. */
export interface Scope {
  readonly name: string
  readonly next: Scope | undefined
}

/** Bits of {@link Code}'s packed fields: the opcode, the operator form, then `simple`, `depth` and `n`. */
const OP_BITS = 5
const OP_MASK = (1 << OP_BITS) - 1
const SOP_SHIFT = OP_BITS
const SIMPLE_BIT = 1 << (2 * OP_BITS)
const DEPTH_SHIFT = 2 * OP_BITS + 1
const N_SHIFT = DEPTH_SHIFT + 4

export class Code {
  /**
   * `op`, `sop`, `simple`, `depth` and `n` in one small integer, and the third child and the
   * list of all children in one field (no node has both): code nodes are as many as the term's,
   * and each field fewer makes a deep term's code a tenth smaller.
   */
  private readonly packed: number
  private readonly rest: Code | ReadonlyArray<Code> | undefined
  constructor(
    op: Op,
    readonly term: Term.Term,
    readonly a: Code | undefined,
    readonly b: Code | undefined,
    c: Code | undefined,
    /** Literal value, variable index, operator, name, scope or agent step, depending on `op`. */
    readonly x: any,
    items: ReadonlyArray<Code> | undefined,
    sop: Op = op,
    simple: boolean = op === Op.Const || op === Op.Var || op === Op.Quote || op === Op.Self,
    n = 1,
    depth = 1
  ) {
    this.packed = op | (sop << SOP_SHIFT) | (simple ? SIMPLE_BIT : 0) | (depth << DEPTH_SHIFT) | (n << N_SHIFT)
    this.rest = items ?? c
  }

  get op(): Op {
    return this.packed & OP_MASK
  }

  /** The third child (of an `if`, a `fold`), for a node that does not list its children. */
  get c(): Code | undefined {
    return this.rest instanceof Code ? this.rest : undefined
  }

  /** All the children, for the nodes that list them (lists, agent forms). */
  get items(): ReadonlyArray<Code> | undefined {
    return this.rest instanceof Code ? undefined : this.rest
  }

  /** For `Op.Simple`: the operator form (`Op.Binary` or `Op.Unary`). */
  get sop(): Op {
    return (this.packed >> SOP_SHIFT) & OP_MASK
  }

  /** Whether this node can be evaluated directly, without machine frames. */
  get simple(): boolean {
    return (this.packed & SIMPLE_BIT) !== 0
  }

  /** Nesting depth of a simple expression (kept small so direct evaluation stays shallow). */
  get depth(): number {
    return (this.packed >> DEPTH_SHIFT) & 15
  }

  /** Nodes in a simple expression (the steps it accounts for). */
  get n(): number {
    return this.packed >>> N_SHIFT
  }
}

/** A node from its children: `a`, `b`, `c` are the first three (`c` only without `items`), `items` all of them when given. */
export const code = (op: Op, term: Term.Term, kids: ReadonlyArray<Code>, x?: unknown, items?: ReadonlyArray<Code>): Code =>
  new Code(op, term, kids[0], kids[1], items === undefined ? kids[2] : undefined, x, items)

const MAX_SIMPLE_DEPTH = 12

/** Turn an operator node over simple operands into one `Op.Simple` node. */
export const simplify = (c: Code): Code => {
  if (c.op !== Op.Binary && c.op !== Op.Unary) return c
  const a = c.a!
  const b = c.b
  if (!a.simple || (b !== undefined && !b.simple)) return c
  const depth = 1 + Math.max(a.depth, b?.depth ?? 0)
  if (depth > MAX_SIMPLE_DEPTH) return c
  return new Code(Op.Simple, c.term, a, b, undefined, c.x, undefined, c.op, true, 1 + a.n + (b?.n ?? 0), depth)
}
