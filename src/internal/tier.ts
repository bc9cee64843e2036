/**
 * The compiled tier: pure code compiled to JavaScript that evaluates on the JavaScript stack
 * instead of the machine's frames — a tree of closures, one per code node (below), for a term's
 * first run and for terms too big to be worth generating source for, and generated functions
 * (`tierSource.ts`) from a term's second run on (see {@link tierOf}).
 *
 * It keeps the machine's semantics exactly: the same values, the same steps (each node counts
 * what the machine's loop would count for it), the same checks of the step, time and memory
 * budgets at the same steps, and the same errors (a fault carries the node it happened at, which
 * the machine's own rules turn into the error and its path). What it cannot do it leaves to the
 * machine, which then runs the term from its start — pure code can be restarted safely:
 *
 * - code with an agent form or `eval` anywhere is not compiled (it needs the machine's frames);
 * - `beta` traces (an event per application) and time slices run on the machine;
 * - a recursion deep enough to overflow the JavaScript stack, or deep enough that the machine's
 *   frames could reach the depth budget, stops the tier and the machine runs the term again.
 *
 * Code is compiled once per code tree and kept with it.
 */
import * as Value from "../Value.ts"
import { BinOp, type Code, Op, type UnOp } from "./code.ts"
import { Ctx, Env, type Machine } from "./machine.ts"
import * as R from "./tierRuntime.ts"
import { CHECK_EVERY, FALLBACK, type Fn, Located, S, slowTick } from "./tierRuntime.ts"
import { generate } from "./tierSource.ts"

/** How the tier compiles: generated functions (`source`) or closure trees (`closures`); `off`: the machine only. */
export type Mode = "source" | "closures" | "off"

let mode: Mode = "source"

/** Whether runs may use the tier. */
export const enabled = (): boolean => mode !== "off"

/** Choose how runs that start after this compile (an internal switch: tests and measurements compare them). */
export const setMode = (next: Mode): void => {
  mode = next
}

/** Terms of more nodes than this are compiled to closure trees: their source would cost more to compile than it saves. */
const SOURCE_NODES = 20_000

/** Terms of more nodes than this run on the machine the first time (see {@link tierOf}). */
const FIRST_RUN_NODES = 50_000

// ---------------------------------------------------------------------------------------------
// Closure trees
// ---------------------------------------------------------------------------------------------

const tick = (): void => {
  if (++S.steps > S.maxSteps || (S.steps & CHECK_EVERY) === 0) slowTick()
}

/** A simple expression (no steps counted inside: its node counts them all), failing at `at`. */
const simple = (c: Code, at: Code): Fn => {
  switch (c.op) {
    case Op.Const:
    case Op.Quote: {
      const v = c.x as Value.Value
      return () => v
    }
    case Op.Var:
      return variable(c.x as number)
    case Op.Self:
      return (e, x) => (x.self !== undefined ? x.self : R.noSelf(at, e, x))
  }
  const a = simple(c.a!, at)
  if (c.sop === Op.Unary) {
    const op = c.x as UnOp
    return (e, x) => R.un(op, a(e, x), at, e, x)
  }
  const b = simple(c.b!, at)
  const op = c.x as BinOp
  if (op === BinOp.And || op === BinOp.Or) {
    const what = op === BinOp.And ? "and's operands" : "or's operands"
    const stop = op === BinOp.Or
    return (e, x) => (R.truth(a(e, x), what, at, e, x) === stop ? stop : R.truth(b(e, x), what, at, e, x))
  }
  return (e, x) => R.bin(op, a(e, x), b(e, x), at, e, x)
}

const variable = (index: number): Fn => {
  switch (index) {
    case 0:
      return (e) => e!.v
    case 1:
      return (e) => e!.next!.v
    default:
      return (e) => {
        let env = e!
        for (let i = index; i > 0; i--) env = env.next!
        return env.v
      }
  }
}

/** An application site: applies the closures it sees, remembering the body of the last one. */
const applier = (at: Code) => {
  let lastCode: unknown
  let lastBody: Fn | undefined
  return (fn: Value.Value, arg: Value.Value, ctx: Ctx, env: Env | undefined): Value.Value => {
    if (!(fn instanceof Value.Closure)) return R.notFunction(fn, at, env, ctx)
    if (fn.code !== lastCode) {
      lastBody = R.body(fn.code)
      lastCode = fn.code
    }
    if (++S.calls > S.maxCalls) throw FALLBACK
    const value = lastBody!(new Env(arg, fn.env as Env | undefined), R.calleeCtx(ctx, fn.ctx as Ctx))
    S.calls--
    return value
  }
}

/** The closure tree of `c`; throws `FALLBACK` when some node below it needs the machine. */
const node = (c: Code): Fn => {
  switch (c.op) {
    case Op.Simple:
    case Op.Const:
    case Op.Quote:
    case Op.Var:
    case Op.Self: {
      const f = simple(c, c)
      const extra = c.n - 1
      return (e, x) => {
        tick()
        const v = f(e, x)
        S.steps += extra
        return v
      }
    }
    case Op.Unbound:
      return (e, x) => {
        tick()
        return R.unbound(c, e, x)
      }
    case Op.Lam: {
      R.bodies.set(c, node(c.a!))
      const term = c.term
      return (e, x) => {
        tick()
        return new Value.Closure(term, c, e, x)
      }
    }
    case Op.App: {
      const apply = applier(c)
      if (c.a!.simple && c.b!.simple) {
        const f = simple(c.a!, c)
        const g = simple(c.b!, c)
        const operands = c.a!.n + c.b!.n
        return (e, x) => {
          tick()
          const fn = f(e, x)
          const arg = g(e, x)
          S.steps += operands
          return apply(fn, arg, x, e)
        }
      }
      const f = node(c.a!)
      const g = node(c.b!)
      return (e, x) => {
        tick()
        const fn = f(e, x)
        return apply(fn, g(e, x), x, e)
      }
    }
    case Op.If: {
      const then = node(c.b!)
      const otherwise = node(c.c!)
      const simpleTest = c.a!.simple
      const test = simpleTest ? simple(c.a!, c) : node(c.a!)
      const n = simpleTest ? c.a!.n : 0
      return (e, x) => {
        tick()
        const v = test(e, x)
        S.steps += n
        return R.truth(v, "if's condition", c, e, x) ? then(e, x) : otherwise(e, x)
      }
    }
    case Op.Binary: {
      const a = node(c.a!)
      const b = node(c.b!)
      const op = c.x as BinOp
      if (op === BinOp.And || op === BinOp.Or) {
        const what = op === BinOp.And ? "and's operands" : "or's operands"
        const stop = op === BinOp.Or
        return (e, x) => {
          tick()
          if (R.truth(a(e, x), what, c, e, x) === stop) return stop
          return R.truth(b(e, x), what, c, e, x)
        }
      }
      return (e, x) => {
        tick()
        const l = a(e, x)
        return R.bin(op, l, b(e, x), c, e, x)
      }
    }
    case Op.Unary: {
      const a = node(c.a!)
      const op = c.x as UnOp
      return (e, x) => {
        tick()
        return R.un(op, a(e, x), c, e, x)
      }
    }
    case Op.Cons: {
      const a = node(c.a!)
      const b = node(c.b!)
      return (e, x) => {
        tick()
        const head = a(e, x)
        return R.cons(head, b(e, x), c, e, x)
      }
    }
    case Op.Pair: {
      const a = node(c.a!)
      const b = node(c.b!)
      return (e, x) => {
        tick()
        const first = a(e, x)
        return new Value.Pair(first, b(e, x))
      }
    }
    case Op.List: {
      const items = c.items!.map(node)
      return (e, x) => {
        tick()
        const values: Array<Value.Value> = []
        for (const item of items) values.push(item(e, x))
        return Value.fromArray(values)
      }
    }
    case Op.Fold: {
      const f = node(c.a!)
      const z = node(c.b!)
      const xs = node(c.c!)
      return (e, x) => {
        tick()
        const func = f(e, x)
        let acc = z(e, x)
        const items = xs(e, x)
        R.foldOperands(items, func, c, e, x)
        const list = items as Value.List
        if (list.length === 0) return acc
        const closure = func as Value.Closure
        const body = R.body(closure.code)
        const env = closure.env as Env | undefined
        const ctx = closure.ctx as Ctx
        if (++S.calls > S.maxCalls) throw FALLBACK
        for (let l = list; l.length > 0; l = l.tail) acc = body(new Env(new Value.Pair(acc, l.head), env), ctx)
        S.calls--
        return acc
      }
    }
    case Op.Continue: {
      const a = node(c.a!)
      return (e, x) => {
        tick()
        return R.continueWith(a(e, x), c, e, x)
      }
    }
    case Op.CodeOf:
      return (e, x) => {
        tick()
        return R.codeOf(c, e, x)
      }
    default:
      // `eval` and agent forms need the machine
      throw FALLBACK
  }
}

// ---------------------------------------------------------------------------------------------
// Compiling and running
// ---------------------------------------------------------------------------------------------

/** What compiling a code tree gave: how it runs, and how deep the tree nests. */
export interface Compiled {
  readonly fn: Fn
  /** Apply a closure the tree made to a run's input. */
  readonly apply: (fn: Value.Closure, arg: Value.Value, ctx: Ctx) => Value.Value
  readonly nesting: number
}

/** A closure tree's root and how to apply the closures it makes. */
const closureTree = (code: Code, nesting: number): Compiled => {
  const apply = applier(code)
  return { fn: node(code), apply: (fn, arg, ctx) => apply(fn, arg, ctx, undefined), nesting }
}

/** Nesting depth and node count of a code tree (walked without recursion: trees can be deep). */
const measureTree = (root: Code): { readonly nesting: number; readonly nodes: number } => {
  let nesting = 0
  let nodes = 0
  const stack: Array<Code | number> = [root, 1]
  while (stack.length > 0) {
    const depth = stack.pop() as number
    const c = stack.pop() as Code
    nodes++
    if (depth > nesting) nesting = depth
    const kids = c.items ?? [c.a, c.b, c.c]
    for (const kid of kids) if (kid !== undefined) stack.push(kid, depth + 1)
  }
  return { nesting, nodes }
}

/** What the tier made of a code tree: its closure tree, then its generated functions (`null`: not possible). */
interface Entry {
  /** Built at the tree's first run on the tier (`null`: it needs the machine). */
  closures: Compiled | null | undefined
  source: Compiled | null | undefined
  readonly nesting: number
  readonly nodes: number
  runs: number
}

const entries = new WeakMap<Code, Entry>()

/** Compile with `compile`, or `null` when a node needs the machine or the tree is too deep for the JavaScript stack. */
const attempt = (compile: () => Compiled): Compiled | null => {
  try {
    return compile()
  } catch (error) {
    if (error !== FALLBACK && !(error instanceof RangeError)) throw error
    return null
  }
}

/**
 * The tier of a code tree, compiled on first use and kept with the tree; `undefined` when the
 * tree needs the machine. Its first run is on a closure tree, which costs little more to build
 * than walking the tree; from its second run on, on generated functions, which cost more to
 * make (the engine parses and compiles them) and run several times faster. A term built for
 * one run (a request's input) is thus never turned into source.
 */
export const tierOf = (code: Code): Compiled | undefined => {
  let entry = entries.get(code)
  if (entry === undefined) {
    const { nesting, nodes } = measureTree(code)
    entry = { closures: undefined, source: undefined, nesting, nodes, runs: 0 }
    entries.set(code, entry)
  }
  // a large tree's first run is on the machine: a closure per node would take several times the
  // memory of its code, for a term that may run once (a request's input)
  if (++entry.runs < 2 && entry.nodes > FIRST_RUN_NODES) return undefined
  if (entry.closures === undefined) {
    const nesting = entry.nesting
    entry.closures = attempt(() => closureTree(code, nesting))
  }
  const closures = entry.closures
  if (closures === null) return undefined
  if (mode !== "source" || entry.runs < 2 || entry.nodes > SOURCE_NODES) return closures
  if (entry.source === undefined) entry.source = attempt(() => ({ ...generate(code), nesting: closures.nesting }))
  return entry.source ?? closures
}

/** Whether `error` is the JavaScript stack overflowing. */
const isStackOverflow = (error: unknown): boolean => error instanceof RangeError && /call stack/i.test(error.message)

/** The outcome of a run on the tier: its value, or `undefined` when the machine must run it. */
export type Outcome = { readonly value: Value.Value } | undefined

/**
 * Run `code` (and, when it is a function, apply it to `inputCode` as the machine's `run` does) on
 * the tier for `m`. Steps go to `m`'s counters; errors are the machine's. Returns `undefined`,
 * with the counters and trace as they were, when the machine must run the term instead.
 */
export const run = (m: Machine, code: Code, inputCode: Code | undefined, ctx: Ctx): Outcome => {
  const root = tierOf(code)
  if (root === undefined) return undefined
  // a run's input value is a constant made for the run: it is not compiled
  const constant = inputCode !== undefined && inputCode.op === Op.Const
  const input = inputCode === undefined || constant ? undefined : tierOf(inputCode)
  if (inputCode !== undefined && !constant && input === undefined) return undefined
  const counters = m.config.counters
  const events = m.config.events
  const startSteps = counters.steps
  const startEvents = events.length
  // the machine's frames grow by at most a tree's nesting per pending call: stop well before
  // they could reach the depth budget, so that a depth error is the machine's to give
  const nesting = Math.max(root.nesting, input?.nesting ?? 0) + 2
  const callsAllowed = Math.floor((m.config.budget.depth - 1) / nesting) - 1
  if (callsAllowed < 0) return undefined
  const { steps, maxSteps, machine, calls, maxCalls, agentTrace } = S
  S.steps = startSteps
  S.maxSteps = m.config.budget.steps
  S.machine = m
  S.calls = 0
  S.maxCalls = callsAllowed
  S.agentTrace = m.config.trace !== "off"
  try {
    let value = root.fn(undefined, ctx)
    if (inputCode !== undefined && value instanceof Value.Closure) {
      const toolCtx = ctx.toolName === undefined ? ctx : new Ctx(value, ctx.toolName, ctx.step, ctx.evalDepth)
      let arg: Value.Value
      if (input === undefined) {
        tick()
        arg = inputCode.x as Value.Value
      } else arg = input.fn(undefined, toolCtx)
      value = root.apply(value, arg, toolCtx)
    }
    counters.steps = S.steps
    return { value }
  } catch (thrown) {
    const error = thrown instanceof Located ? thrown.error : thrown
    if (thrown === FALLBACK || isStackOverflow(error)) {
      counters.steps = startSteps
      events.length = startEvents
      return undefined
    }
    counters.steps = S.steps
    throw thrown instanceof Located ? m.tierError(error, thrown.at, thrown.env, thrown.ctx, S.steps) : m.tierError(error, undefined, undefined, ctx, S.steps)
  } finally {
    S.steps = steps
    S.maxSteps = maxSteps
    S.machine = machine
    S.calls = calls
    S.maxCalls = maxCalls
    S.agentTrace = agentTrace
  }
}
