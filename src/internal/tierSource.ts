/**
 * The compiled tier as generated JavaScript: each function of a term (and the term itself)
 * becomes one JavaScript function, its nodes nested expressions, and each application and fold
 * site a small function of its own that remembers the body it last called — so every call site
 * in the generated code sees one target and the engine can inline it. A function's body takes
 * its argument and the environment it closes over apart, and builds the environment with its
 * argument only when it needs it (to close over it, or to say where an error happened).
 *
 * The generated text is made of the generator's own identifiers, operator numbers and counts
 * only: every literal, name and code node of the term is passed in an array of constants and
 * referred to by its index, so no text of the term ever becomes source.
 */
import * as Value from "../Value.ts"
import { BinOp, type Code, Op, UnOp } from "./code.ts"
import * as R from "./tierRuntime.ts"
import type { Ctx } from "./machine.ts"
import { CHECK_EVERY, FALLBACK, type Fn, MAX_SAFE } from "./tierRuntime.ts"

/** What the generated code is given: the runtime, by name (gathered on first use: the modules import each other). */
let runtime: object | undefined
const runtimeOf = (): object => (runtime ??= { ...R, sourceBody, Closure: Value.Closure, Pair: Value.Pair, List: Value.List, fromArray: Value.fromArray })

/** Generated function bodies, by their `Op.Lam` code: `(argument, closed-over environment, context)`. */
export type Body = (arg: Value.Value, env: R.Env | undefined, ctx: Ctx) => Value.Value

export const sourceBodies = new WeakMap<Code, Body>()

const sourceBody = (code: unknown): Body => {
  const fn = sourceBodies.get(code as Code)
  if (fn === undefined) throw FALLBACK
  return fn
}

const PRELUDE = `"use strict";
const { S, Env, Closure, Pair, List, fromArray, slowTick, bin, un, truth, notBoolean, noSelf, unbound, notFunction, cons, foldOperands, continueWith, codeOf, sourceBody, fallback, calleeCtx } = R;
function T() { if (++S.steps > S.maxSteps || (S.steps & ${CHECK_EVERY}) === 0) slowTick() }
`

/** The binary operators whose common cases {@link Generator} writes inline (`eq` is inline only when equal). */
const INLINE_BINARY: ReadonlySet<BinOp> = new Set([BinOp.Add, BinOp.Sub, BinOp.Lt, BinOp.Gt, BinOp.Lte, BinOp.Gte, BinOp.And, BinOp.Or])

/** Whether a simple expression's common cases are all inline code, so a fold can inline it in its loop. */
const inlinable = (c: Code): boolean => {
  if (!c.simple) return false
  if (c.op !== Op.Simple) return true
  if (c.sop === Op.Unary) return (c.x === UnOp.Fst || c.x === UnOp.Snd) && inlinable(c.a!)
  return INLINE_BINARY.has(c.x as BinOp) && inlinable(c.a!) && inlinable(c.b!)
}

class Generator {
  /** The constants the source refers to as `K[i]` (hoisted as `k<i>`). */
  readonly constants: Array<unknown> = []
  private readonly constantIndex = new Map<unknown, number>()
  /** Module-level declarations: functions and site caches. */
  readonly decls: Array<string> = []
  /** Each compiled function's code and the name of its generated function. */
  readonly functions: Array<[Code, string]> = []
  private temps = 0
  private sites = 0
  private names = 0
  /**
   * What the function being generated is: a tree's `root` (`e`: its environment), a body (`arg`:
   * `a` its argument, `o` the environment it closes over), or the body of a fold's function
   * taking its argument pair apart (`pair`: `p1`, `p2`; the pair `a` is built when needed).
   */
  private kind: "root" | "arg" | "pair" = "root"
  /**
   * Whether the expression being generated is a fold body inlined in its loop (see
   * {@link inlineFold}): there a case the inline code does not cover sets `bad` instead of
   * calling the runtime, and the loop runs that element through the body function.
   */
  private bailing = false

  constant(value: unknown): string {
    let i = this.constantIndex.get(value)
    if (i === undefined) {
      i = this.constants.length
      this.constants.push(value)
      this.constantIndex.set(value, i)
      this.decls.push(`const k${i} = K[${i}];`)
    }
    return `k${i}`
  }

  private temp(): string {
    return `t${this.temps++}`
  }

  /** A generated function of kind `kind` evaluating `c` in context `x`; returns its name. */
  fn(c: Code, kind: "root" | "arg" | "pair"): string {
    const saved = [this.temps, this.kind] as const
    this.temps = 0
    this.kind = kind
    const name = `f${this.names++}`
    const expr = this.node(c)
    const locals = Array.from({ length: this.temps }, (_, i) => `t${i}`)
    if (kind !== "root") locals.push("e")
    if (kind === "pair") locals.push("a")
    const declared = locals.length > 0 ? `let ${locals.join(", ")}; ` : ""
    const params = kind === "root" ? "e" : kind === "arg" ? "a, o" : "p1, p2, o"
    this.decls.push(`function ${name}(${params}, x) { ${declared}return ${expr}; }`)
    ;[this.temps, this.kind] = saved
    return name
  }

  /** A body's argument (of a `pair` body, built the first time it is needed). */
  private get argument(): string {
    return this.kind === "pair" ? "(a === undefined ? (a = new Pair(p1, p2)) : a)" : "a"
  }

  /** The environment (of a body, built from its argument the first time it is needed). */
  private get env(): string {
    return this.kind === "root" ? "e" : `(e === undefined ? (e = new Env(${this.argument}, o)) : e)`
  }

  private where(at: Code): string {
    return `${this.constant(at)}, ${this.env}, x`
  }

  /** A literal: a safe integer as a number literal, any other value as a constant. */
  private literal(v: unknown): string {
    return typeof v === "number" && Number.isSafeInteger(v) && !Object.is(v, -0) ? `(${String(v)})` : this.constant(v)
  }

  private variable(index: number): string {
    if (this.kind === "root") return `e${".next".repeat(index)}.v`
    return index === 0 ? this.argument : `o${".next".repeat(index - 1)}.v`
  }

  /** A call to the runtime for what the inline code does not cover (when {@link bailing}, giving up instead). */
  private slowly(call: () => string): string {
    // a number, so that an expression whose every other outcome is a number stays one to the engine
    return this.bailing ? "(bad = true, 0)" : call()
  }

  /** `v` (a temporary) as a condition. */
  private truth(v: string, what: string, at: Code): string {
    return `(${v} === true ? true : ${v} === false ? false : ${this.slowly(() => `notBoolean(${v}, ${this.constant(what)}, ${this.where(at)})`)})`
  }

  /** A binary operator over two evaluated temporaries (not `and`/`or`), with the common cases inline. */
  private binary(op: BinOp, l: string, r: string, at: Code): string {
    const slow = this.slowly(() => `bin(${op}, ${l}, ${r}, ${this.where(at)})`)
    const ints = `typeof ${l} === "number" && typeof ${r} === "number"`
    switch (op) {
      case BinOp.Add:
      case BinOp.Sub: {
        const t = this.temp()
        return `(${ints} && (${t} = ${l} ${op === BinOp.Add ? "+" : "-"} ${r}) <= ${MAX_SAFE} && ${t} >= -${MAX_SAFE} ? ${t} : ${slow})`
      }
      case BinOp.Lt:
        return `(${ints} ? ${l} < ${r} : ${slow})`
      case BinOp.Gt:
        return `(${ints} ? ${l} > ${r} : ${slow})`
      case BinOp.Lte:
        return `(${ints} ? ${l} <= ${r} : ${slow})`
      case BinOp.Gte:
        return `(${ints} ? ${l} >= ${r} : ${slow})`
      case BinOp.Eq:
        return `(${l} === ${r} ? true : ${slow})`
      default:
        return slow
    }
  }

  private unary(op: UnOp, v: string, at: Code): string {
    const slow = this.slowly(() => `un(${op}, ${v}, ${this.where(at)})`)
    if (op === UnOp.Fst) return `(${v} instanceof Pair ? ${v}.fst : ${slow})`
    if (op === UnOp.Snd) return `(${v} instanceof Pair ? ${v}.snd : ${slow})`
    return slow
  }

  /** A simple expression, failing at `at` (its steps are counted by the node that holds it). */
  private simple(c: Code, at: Code): string {
    switch (c.op) {
      case Op.Const:
        return this.literal(c.x)
      case Op.Quote:
        return this.constant(c.x)
      case Op.Var:
        return this.variable(c.x as number)
      case Op.Self:
        return `(x.self !== undefined ? x.self : ${this.slowly(() => `noSelf(${this.where(at)})`)})`
    }
    if (this.kind === "pair" && c.sop === Op.Unary && c.a!.op === Op.Var && c.a!.x === 0) {
      // a part of the argument pair, which a `pair` body has apart
      if (c.x === UnOp.Fst) return "p1"
      if (c.x === UnOp.Snd) return "p2"
    }
    const a = this.temp()
    const first = `${a} = ${this.simple(c.a!, at)}`
    if (c.sop === Op.Unary) return `(${first}, ${this.unary(c.x as UnOp, a, at)})`
    const op = c.x as BinOp
    if (op === BinOp.And || op === BinOp.Or) {
      const what = op === BinOp.And ? "and's operands" : "or's operands"
      const stop = op === BinOp.Or
      const b = this.temp()
      return `(${first}, ${this.truth(a, what, at)} === ${stop} ? ${stop} : (${b} = ${this.simple(c.b!, at)}, ${this.truth(b, what, at)}))`
    }
    const b = this.temp()
    return `(${first}, ${b} = ${this.simple(c.b!, at)}, ${this.binary(op, a, b, at)})`
  }

  /** A site that applies closures (`f` is one): a function of its own remembering the body it last called. */
  applySite(): string {
    const i = this.sites++
    this.decls.push(
      `let c${i}, b${i};`,
      `function a${i}(f, a, x) { if (f.code !== c${i}) { b${i} = sourceBody(f.code); c${i} = f.code } if (++S.calls > S.maxCalls) fallback(); const r = b${i}(a, f.env, calleeCtx(x, f.ctx)); S.calls--; return r }`
    )
    return `a${i}`
  }

  /**
   * A fold's loop (`xs` is a list, `f` a closure): a function of its own, as {@link applySite}.
   * When the fold's function is written in place (`lam`), its `pair` body is called directly,
   * or inlined in the loop when it is a simple expression the inline code covers.
   */
  private foldSite(lam: Code | undefined): string {
    const i = this.sites++
    const generic = `if (f.code !== c${i}) { b${i} = sourceBody(f.code); c${i} = f.code } const g = b${i}; for (let l = xs; l.length > 0; l = l.tail) acc = g(new Pair(acc, l.head), env, ctx);`
    let loop = generic
    if (lam !== undefined) {
      const body = this.fn(lam.a!, "pair")
      const direct = inlinable(lam.a!) ? this.inlineFold(lam.a!, body) : `for (let l = xs; l.length > 0; l = l.tail) acc = ${body}(acc, l.head, env, ctx)`
      loop = `if (f.code === ${this.constant(lam)}) { ${direct} } else { ${generic} }`
    }
    this.decls.push(
      `let c${i}, b${i};`,
      `function a${i}(f, acc, xs) { if (xs.length === 0) return acc; const env = f.env, ctx = f.ctx; if (++S.calls > S.maxCalls) fallback(); ${loop} S.calls--; return acc }`
    )
    return `a${i}`
  }

  /**
   * A fold's loop with its function's body `c` (a simple expression, see {@link inlinable})
   * inline: the accumulator and the step count stay in locals. An element whose step would check
   * the budget or the clock, or on which the inline code gives up (an integer leaving the safe
   * range, an operand of another type), runs through the body function `body` instead, which
   * does exactly what the machine does; the expression is pure, so evaluating it again is safe.
   * When the body is an addition or subtraction, the accumulator is kept in a local holding only
   * numbers while it is one, which the engine keeps unboxed instead of allocating each sum.
   */
  private inlineFold(c: Code, body: string): string {
    const saved = [this.temps, this.kind, this.bailing] as const
    this.temps = 0
    this.kind = "pair"
    this.bailing = true
    const expr = this.simple(c, c)
    const temps = Array.from({ length: this.temps }, (_, i) => `, t${i}`).join("")
    ;[this.temps, this.kind, this.bailing] = saved
    const numeric = c.op === Op.Simple && c.sop === Op.Binary && (c.x === BinOp.Add || c.x === BinOp.Sub)
    const v = numeric ? "n" : "acc"
    // the elements from `l` on that the inline code takes; stops at the first it does not
    const inline =
      `for (; l.length > 0; l = l.tail) { p1 = ${v}; p2 = l.head; a = undefined; ` +
      `if (s < stop && ((s + 1) & ${CHECK_EVERY}) !== 0) { r = ${expr}; if (!bad) { ${v} = r; s += ${c.n}; continue } bad = false } break }`
    const run = numeric ? `if (typeof acc === "number") { let n = acc; ${inline} acc = n }` : inline
    return (
      `const o = env, x = ctx; let stop = S.maxSteps, s = S.steps, bad = false, l = xs, p1, p2, a, r${temps}; ` +
      `for (;;) { ${run} if (l.length === 0) break; ` +
      `S.steps = s; acc = ${body}(acc, l.head, env, ctx); s = S.steps; stop = S.maxSteps; l = l.tail } S.steps = s;`
    )
  }

  /** Apply `f` (a temporary) to `arg` at site `site`, failing at `at` when it is not a function. */
  private call(site: string, f: string, arg: string, at: Code): string {
    return `(${f} instanceof Closure ? ${site}(${f}, ${arg}, x) : notFunction(${f}, ${this.where(at)}))`
  }

  /** The expression evaluating node `c` in `e`, `x`, counting its steps. */
  node(c: Code): string {
    switch (c.op) {
      case Op.Simple:
      case Op.Const:
      case Op.Quote:
      case Op.Var:
      case Op.Self: {
        if (c.n === 1) return `(T(), ${this.simple(c, c)})`
        const t = this.temp()
        return `(T(), ${t} = ${this.simple(c, c)}, S.steps += ${c.n - 1}, ${t})`
      }
      case Op.Unbound:
        return `(T(), unbound(${this.where(c)}))`
      case Op.Lam: {
        const name = this.fn(c.a!, "arg")
        this.functions.push([c, name])
        return `(T(), new Closure(${this.constant(c.term)}, ${this.constant(c)}, ${this.env}, x))`
      }
      case Op.App: {
        const site = this.applySite()
        const f = this.temp()
        const a = this.temp()
        if (c.a!.simple && c.b!.simple) {
          return `(T(), ${f} = ${this.simple(c.a!, c)}, ${a} = ${this.simple(c.b!, c)}, S.steps += ${c.a!.n + c.b!.n}, ${this.call(site, f, a, c)})`
        }
        return `(T(), ${f} = ${this.node(c.a!)}, ${a} = ${this.node(c.b!)}, ${this.call(site, f, a, c)})`
      }
      case Op.If: {
        const v = this.temp()
        const test = c.a!.simple ? `${v} = ${this.simple(c.a!, c)}, S.steps += ${c.a!.n}` : `${v} = ${this.node(c.a!)}`
        return `((T(), ${test}, ${this.truth(v, "if's condition", c)}) ? ${this.node(c.b!)} : ${this.node(c.c!)})`
      }
      case Op.Binary: {
        const op = c.x as BinOp
        const l = this.temp()
        const r = this.temp()
        if (op === BinOp.And || op === BinOp.Or) {
          const what = op === BinOp.And ? "and's operands" : "or's operands"
          const stop = op === BinOp.Or
          return `(T(), ${l} = ${this.node(c.a!)}, ${this.truth(l, what, c)} === ${stop} ? ${stop} : (${r} = ${this.node(c.b!)}, ${this.truth(r, what, c)}))`
        }
        return `(T(), ${l} = ${this.node(c.a!)}, ${r} = ${this.node(c.b!)}, ${this.binary(op, l, r, c)})`
      }
      case Op.Unary: {
        const v = this.temp()
        return `(T(), ${v} = ${this.node(c.a!)}, ${this.unary(c.x as UnOp, v, c)})`
      }
      case Op.Cons: {
        const h = this.temp()
        const t = this.temp()
        return `(T(), ${h} = ${this.node(c.a!)}, ${t} = ${this.node(c.b!)}, ${t} instanceof List && (${t}.length & 65535) !== 65535 ? new List(${h}, ${t}, ${t}.length + 1) : cons(${h}, ${t}, ${this.where(c)}))`
      }
      case Op.Pair: {
        const a = this.temp()
        return `(T(), ${a} = ${this.node(c.a!)}, new Pair(${a}, ${this.node(c.b!)}))`
      }
      case Op.List:
        return `(T(), fromArray([${c.items!.map((item) => this.node(item)).join(", ")}]))`
      case Op.Fold: {
        const site = this.foldSite(c.a!.op === Op.Lam ? c.a! : undefined)
        const f = this.temp()
        const z = this.temp()
        const xs = this.temp()
        const ok = `${xs} instanceof List && ${f} instanceof Closure`
        return `(T(), ${f} = ${this.node(c.a!)}, ${z} = ${this.node(c.b!)}, ${xs} = ${this.node(c.c!)}, ${ok} ? ${site}(${f}, ${z}, ${xs}) : foldOperands(${xs}, ${f}, ${this.where(c)}))`
      }
      case Op.Continue: {
        const v = this.temp()
        return `(T(), ${v} = ${this.node(c.a!)}, continueWith(${v}, ${this.where(c)}))`
      }
      case Op.CodeOf:
        return `(T(), codeOf(${this.where(c)}))`
      default:
        // `eval` and agent forms need the machine
        throw FALLBACK
    }
  }
}

/** The source generated for a code tree, and the constants it refers to (for tests and inspection). */
export const sourceOf = (
  root: Code
): { readonly source: string; readonly constants: ReadonlyArray<unknown>; readonly functions: ReadonlyArray<[Code, string]> } => {
  const g = new Generator()
  const name = g.fn(root, "root")
  // applying the tree's value to a run's input (see `tier.run`)
  const apply = g.applySite()
  const list = g.functions.map(([, f]) => f).join(", ")
  return { source: `${PRELUDE}${g.decls.join("\n")}\nreturn [${name}, [${list}], ${apply}];`, constants: g.constants, functions: g.functions }
}

/** A tree compiled to generated functions: its root, and how to apply a closure it made. */
export interface Generated {
  readonly fn: Fn
  readonly apply: (fn: Value.Closure, arg: Value.Value, ctx: Ctx) => Value.Value
}

/**
 * Compile a code tree to generated functions; registers the bodies of its functions. Throws
 * `FALLBACK` when a node needs the machine.
 */
export const generate = (root: Code): Generated => {
  const { source, constants, functions } = sourceOf(root)
  const [fn, bodies, apply] = new Function("R", "K", source)(runtimeOf(), constants) as [Fn, Array<Body>, Generated["apply"]]
  functions.forEach(([code], i) => sourceBodies.set(code, bodies[i]!))
  return { fn, apply }
}
