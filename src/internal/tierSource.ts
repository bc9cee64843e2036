/**
 * The compiled tier as generated JavaScript: each function of a term (and the term itself)
 * becomes one JavaScript function, its nodes nested expressions, and each application and fold
 * site a small function of its own that remembers the body it last called — so every call site
 * in the generated code sees one target and the engine can inline it.
 *
 * The generated text is made of the generator's own identifiers, operator numbers and counts
 * only: every literal, name and code node of the term is passed in an array of constants and
 * referred to by its index, so no text of the term ever becomes source.
 */
import * as Value from "../Value.ts"
import { BinOp, type Code, Op, UnOp } from "./code.ts"
import * as R from "./tierRuntime.ts"
import { CHECK_EVERY, FALLBACK, type Fn, MAX_SAFE } from "./tierRuntime.ts"

/** What the generated code is given: the runtime, by name (gathered on first use: the modules import each other). */
let runtime: object | undefined
const runtimeOf = (): object => (runtime ??= { ...R, Closure: Value.Closure, Pair: Value.Pair, List: Value.List, fromArray: Value.fromArray })

const PRELUDE = `"use strict";
const { S, Env, Closure, Pair, List, fromArray, slowTick, bin, un, truth, notBoolean, noSelf, unbound, notFunction, cons, foldOperands, continueWith, codeOf, body, fallback, calleeCtx } = R;
function T() { if (++S.steps > S.maxSteps || (S.steps & ${CHECK_EVERY}) === 0) slowTick() }
`

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

  /** A generated function evaluating `c` in `e`, `x`; returns its name. */
  fn(c: Code): string {
    const saved = this.temps
    this.temps = 0
    const name = `f${this.names++}`
    const expr = this.node(c)
    const temps = Array.from({ length: this.temps }, (_, i) => `t${i}`)
    this.decls.push(`function ${name}(e, x) { ${temps.length > 0 ? `let ${temps.join(", ")}; ` : ""}return ${expr}; }`)
    this.temps = saved
    return name
  }

  private where(at: Code): string {
    return `${this.constant(at)}, e, x`
  }

  /** `v` (a temporary) as a condition. */
  private truth(v: string, what: string, at: Code): string {
    return `(${v} === true ? true : ${v} === false ? false : notBoolean(${v}, ${this.constant(what)}, ${this.where(at)}))`
  }

  /** A binary operator over two evaluated temporaries (not `and`/`or`), with the common cases inline. */
  private binary(op: BinOp, l: string, r: string, at: Code): string {
    const slow = `bin(${op}, ${l}, ${r}, ${this.where(at)})`
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
    if (op === UnOp.Fst) return `(${v} instanceof Pair ? ${v}.fst : un(${op}, ${v}, ${this.where(at)}))`
    if (op === UnOp.Snd) return `(${v} instanceof Pair ? ${v}.snd : un(${op}, ${v}, ${this.where(at)}))`
    return `un(${op}, ${v}, ${this.where(at)})`
  }

  /** A simple expression, failing at `at` (its steps are counted by the node that holds it). */
  private simple(c: Code, at: Code): string {
    switch (c.op) {
      case Op.Const:
      case Op.Quote:
        return this.constant(c.x)
      case Op.Var:
        return `e${".next".repeat(c.x as number)}.v`
      case Op.Self:
        return `(x.self !== undefined ? x.self : noSelf(${this.where(at)}))`
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

  /** A site that applies closures: a function of its own remembering the body it last called. */
  private applySite(at: Code): string {
    const i = this.sites++
    this.decls.push(
      `let c${i}, b${i};`,
      `function a${i}(f, a, x, e) { if (!(f instanceof Closure)) notFunction(f, ${this.where(at)}); if (f.code !== c${i}) { b${i} = body(f.code); c${i} = f.code } if (++S.calls > S.maxCalls) fallback(); const r = b${i}(new Env(a, f.env), calleeCtx(x, f.ctx)); S.calls--; return r }`
    )
    return `a${i}`
  }

  private foldSite(at: Code): string {
    const i = this.sites++
    this.decls.push(
      `let c${i}, b${i};`,
      `function a${i}(f, acc, xs, e, x) { if (!(xs instanceof List) || !(f instanceof Closure)) foldOperands(xs, f, ${this.where(at)}); if (xs.length === 0) return acc; if (f.code !== c${i}) { b${i} = body(f.code); c${i} = f.code } const g = b${i}, env = f.env, ctx = f.ctx; if (++S.calls > S.maxCalls) fallback(); for (let l = xs; l.length > 0; l = l.tail) acc = g(new Env(new Pair(acc, l.head), env), ctx); S.calls--; return acc }`
    )
    return `a${i}`
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
        const name = this.fn(c.a!)
        this.functions.push([c, name])
        return `(T(), new Closure(${this.constant(c.term)}, ${this.constant(c)}, e, x))`
      }
      case Op.App: {
        const site = this.applySite(c)
        const f = this.temp()
        if (c.a!.simple && c.b!.simple) {
          const a = this.temp()
          return `(T(), ${f} = ${this.simple(c.a!, c)}, ${a} = ${this.simple(c.b!, c)}, S.steps += ${c.a!.n + c.b!.n}, ${site}(${f}, ${a}, x, e))`
        }
        return `(T(), ${f} = ${this.node(c.a!)}, ${site}(${f}, ${this.node(c.b!)}, x, e))`
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
        const site = this.foldSite(c)
        const f = this.temp()
        const z = this.temp()
        return `(T(), ${f} = ${this.node(c.a!)}, ${z} = ${this.node(c.b!)}, ${site}(${f}, ${z}, ${this.node(c.c!)}, e, x))`
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
  const name = g.fn(root)
  const list = g.functions.map(([, f]) => f).join(", ")
  return { source: `${PRELUDE}${g.decls.join("\n")}\nreturn [${name}, [${list}]];`, constants: g.constants, functions: g.functions }
}

/**
 * Compile a code tree to generated functions; registers the bodies of its functions. Throws
 * `FALLBACK` when a node needs the machine.
 */
export const generate = (root: Code): Fn => {
  const { source, constants, functions } = sourceOf(root)
  const [fn, bodies] = new Function("R", "K", source)(runtimeOf(), constants) as [Fn, Array<Fn>]
  functions.forEach(([code], i) => R.bodies.set(code, bodies[i]!))
  return fn
}
