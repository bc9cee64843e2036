/**
 * The compiled tier: pure code turned into a tree of JavaScript closures, one per code node, that
 * evaluate on the JavaScript stack instead of the machine's frames.
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
 * Tiers are compiled once per code tree and kept with it.
 */
import * as Value from "../Value.ts"
import { BinOp, type Code, Op, UnOp } from "./code.ts"
import { Ctx, Env, type Machine } from "./machine.ts"
import { binary, Fault, isTrue, listBytes, typeError, unary } from "./operators.ts"

/** A compiled node: its value in an environment and a system context. */
type Fn = (env: Env | undefined, ctx: Ctx) => Value.Value

/** Thrown to give up: the machine then runs the term from its start. */
const FALLBACK: unique symbol = Symbol("fallback")

/** A fault with where it happened (the node whose own operation failed, its environment and context). */
export class Located {
  constructor(
    readonly error: unknown,
    readonly at: Code,
    readonly env: Env | undefined,
    readonly ctx: Ctx
  ) {}
}

/** Whether runs may use the tier (an internal switch: tests compare the two). */
export let enabled = true

/** Turn the tier on or off for the runs that start after. */
export const setEnabled = (on: boolean): void => {
  enabled = on
}

/** Steps between clock and heap checks: the machine's (see `machine.ts`). */
const CHECK_EVERY = 0x3fff
const MAX_SAFE = 9007199254740991

// The state of the running tier. Runs are synchronous; one that starts inside another (a trace
// listener that evaluates) saves and restores it.
let steps = 0
let maxSteps = 0
let machine: Machine
let calls = 0
let maxCalls = 0
let agentTrace = false

/** Count one step (a node evaluated), checking the step budget and, now and then, the clock. */
const slowTick = (): void => {
  if (steps > maxSteps) machine.stepsExceeded(steps)
  machine.checkClock()
}

const located = (error: unknown, at: Code, env: Env | undefined, ctx: Ctx): Located =>
  error instanceof Located || error === FALLBACK ? (error as Located) : new Located(error, at, env, ctx)

/** The code of a closure's body, compiled with the tree that made the closure. */
const bodies = new WeakMap<Code, Fn>()

/** The context a function body runs in (the machine's `calleeCtx`). */
const calleeCtx = (caller: Ctx, callee: Ctx): Ctx => {
  if (caller === callee) return caller
  if (caller.self === undefined && caller.toolName === undefined) return callee
  if (caller.evalDepth === callee.evalDepth) return caller
  return new Ctx(caller.self, caller.toolName, caller.step, callee.evalDepth)
}

/** An application site: applies the closures it sees, remembering the body of the last one. */
const applier = (at: Code) => {
  let lastCode: unknown
  let lastBody: Fn | undefined
  return (fn: Value.Value, arg: Value.Value, ctx: Ctx, env: Env | undefined): Value.Value => {
    if (!(fn instanceof Value.Closure)) throw new Located(typeError(`cannot apply ${Value.typeName(fn)} (not a function)`), at, env, ctx)
    let body = lastBody
    if (fn.code !== lastCode) {
      body = bodies.get(fn.code as Code)
      // an agent form, or a function the tier did not compile
      if (body === undefined) throw FALLBACK
      lastCode = fn.code
      lastBody = body
    }
    if (++calls > maxCalls) throw FALLBACK
    const value = body!(new Env(arg, fn.env as Env | undefined), calleeCtx(ctx, fn.ctx as Ctx))
    calls--
    return value
  }
}

/** A simple expression (no steps counted inside: its node counts them all). */
const simple = (c: Code): Fn => {
  switch (c.op) {
    case Op.Const:
    case Op.Quote: {
      const v = c.x as Value.Value
      return () => v
    }
    case Op.Var:
      return variable(c.x as number)
    case Op.Self:
      return (_, ctx) => {
        if (ctx.self === undefined) throw new Fault("RuntimeError", "self used outside a tool")
        return ctx.self
      }
  }
  const a = simple(c.a!)
  if (c.sop === Op.Unary) {
    const op = c.x as UnOp
    if (op === UnOp.Fst) return (e, x) => fst(a(e, x))
    if (op === UnOp.Snd) return (e, x) => snd(a(e, x))
    return (e, x) => unary(op, a(e, x), machine)
  }
  const b = simple(c.b!)
  return operator(c.x as BinOp, a, b)
}

const fst = (v: Value.Value): Value.Value => (v instanceof Value.Pair ? v.fst : unary(UnOp.Fst, v, machine))
const snd = (v: Value.Value): Value.Value => (v instanceof Value.Pair ? v.snd : unary(UnOp.Snd, v, machine))

/** A binary operator over two evaluated operands (`and`/`or` short-circuit). */
const operator = (op: BinOp, a: Fn, b: Fn): Fn => {
  switch (op) {
    case BinOp.And:
      return (e, x) => isTrue(a(e, x), "and's operands") && isTrue(b(e, x), "and's operands")
    case BinOp.Or:
      return (e, x) => isTrue(a(e, x), "or's operands") || isTrue(b(e, x), "or's operands")
    case BinOp.Add:
      return (e, x) => {
        const l = a(e, x)
        const r = b(e, x)
        if (typeof l === "number" && typeof r === "number") {
          const s = l + r
          if (s <= MAX_SAFE && s >= -MAX_SAFE) return s
        }
        return binary(op, l, r, machine)
      }
    case BinOp.Sub:
      return (e, x) => {
        const l = a(e, x)
        const r = b(e, x)
        if (typeof l === "number" && typeof r === "number") {
          const s = l - r
          if (s <= MAX_SAFE && s >= -MAX_SAFE) return s
        }
        return binary(op, l, r, machine)
      }
    case BinOp.Lt:
      return (e, x) => {
        const l = a(e, x)
        const r = b(e, x)
        return typeof l === "number" && typeof r === "number" ? l < r : binary(op, l, r, machine)
      }
    case BinOp.Gt:
      return (e, x) => {
        const l = a(e, x)
        const r = b(e, x)
        return typeof l === "number" && typeof r === "number" ? l > r : binary(op, l, r, machine)
      }
    default:
      return (e, x) => binary(op, a(e, x), b(e, x), machine)
  }
}

const variable = (index: number): Fn => {
  switch (index) {
    case 0:
      return (e) => e!.v
    case 1:
      return (e) => e!.next!.v
    case 2:
      return (e) => e!.next!.next!.v
    default:
      return (e) => {
        let env = e!
        for (let i = index; i > 0; i--) env = env.next!
        return env.v
      }
  }
}

/** The compiled node of `c`, or `undefined` when some node below it needs the machine. */
const node = (c: Code): Fn => {
  switch (c.op) {
    case Op.Simple:
    case Op.Const:
    case Op.Quote:
    case Op.Var:
    case Op.Self: {
      const f = simple(c)
      const extra = c.n - 1
      if (c.op === Op.Const || c.op === Op.Quote || c.op === Op.Var) {
        return (e, x) => {
          if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
          return f(e, x)
        }
      }
      return (e, x) => {
        if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
        let v: Value.Value
        try {
          v = f(e, x)
        } catch (error) {
          throw located(error, c, e, x)
        }
        steps += extra
        return v
      }
    }
    case Op.Unbound: {
      const message = `unbound variable ${JSON.stringify(c.x)}`
      return (e, x) => {
        if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
        throw new Located(new Fault("Unbound", message), c, e, x)
      }
    }
    case Op.Lam: {
      bodies.set(c, node(c.a!))
      const term = c.term
      return (e, x) => {
        if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
        return new Value.Closure(term, c, e, x)
      }
    }
    case Op.App: {
      const apply = applier(c)
      if (c.a!.simple && c.b!.simple) {
        const f = simple(c.a!)
        const g = simple(c.b!)
        const operands = c.a!.n + c.b!.n
        return (e, x) => {
          if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
          let fn: Value.Value
          let arg: Value.Value
          try {
            fn = f(e, x)
            arg = g(e, x)
          } catch (error) {
            throw located(error, c, e, x)
          }
          steps += operands
          return apply(fn, arg, x, e)
        }
      }
      const f = node(c.a!)
      const g = node(c.b!)
      return (e, x) => {
        if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
        const fn = f(e, x)
        return apply(fn, g(e, x), x, e)
      }
    }
    case Op.If: {
      const then = node(c.b!)
      const otherwise = node(c.c!)
      if (c.a!.simple) {
        const test = simple(c.a!)
        const n = c.a!.n
        return (e, x) => {
          if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
          let yes: boolean
          try {
            const v = test(e, x)
            steps += n
            yes = isTrue(v, "if's condition")
          } catch (error) {
            throw located(error, c, e, x)
          }
          return yes ? then(e, x) : otherwise(e, x)
        }
      }
      const test = node(c.a!)
      return (e, x) => {
        if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
        const v = test(e, x)
        let yes: boolean
        try {
          yes = isTrue(v, "if's condition")
        } catch (error) {
          throw located(error, c, e, x)
        }
        return yes ? then(e, x) : otherwise(e, x)
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
          if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
          const l = a(e, x)
          try {
            if (isTrue(l, what) === stop) return stop
          } catch (error) {
            throw located(error, c, e, x)
          }
          const r = b(e, x)
          try {
            return isTrue(r, what)
          } catch (error) {
            throw located(error, c, e, x)
          }
        }
      }
      return (e, x) => {
        if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
        const l = a(e, x)
        const r = b(e, x)
        try {
          return binary(op, l, r, machine)
        } catch (error) {
          throw located(error, c, e, x)
        }
      }
    }
    case Op.Unary: {
      const a = node(c.a!)
      const op = c.x as UnOp
      return (e, x) => {
        if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
        const v = a(e, x)
        try {
          return unary(op, v, machine)
        } catch (error) {
          throw located(error, c, e, x)
        }
      }
    }
    case Op.Cons: {
      const a = node(c.a!)
      const b = node(c.b!)
      return (e, x) => {
        if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
        const head = a(e, x)
        const tail = b(e, x)
        try {
          if (!(tail instanceof Value.List)) throw typeError(`cons expects a list as tail, got ${Value.typeName(tail)}`)
          if ((tail.length & 0xffff) === 0xffff) machine.built(listBytes(tail.length + 1))
        } catch (error) {
          throw located(error, c, e, x)
        }
        return new Value.List(head, tail, tail.length + 1)
      }
    }
    case Op.Pair: {
      const a = node(c.a!)
      const b = node(c.b!)
      return (e, x) => {
        if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
        const first = a(e, x)
        return new Value.Pair(first, b(e, x))
      }
    }
    case Op.List: {
      const items = c.items!.map(node)
      return (e, x) => {
        if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
        const values: Array<Value.Value> = []
        for (const item of items) values.push(item(e, x))
        return Value.fromArray(values)
      }
    }
    case Op.Fold:
      return fold(c)
    case Op.Continue: {
      const a = node(c.a!)
      return (e, x) => {
        if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
        const v = a(e, x)
        if (x.toolName === undefined) throw new Located(new Fault("RuntimeError", "continue used outside a tool"), c, e, x)
        if (agentTrace) machine.recordContinue(steps, x.toolName, v)
        return new Value.Continuation(x.toolName, v, x.step + 1)
      }
    }
    case Op.CodeOf:
      return (e, x) => {
        if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
        try {
          return machine.codeOf(c.x as string, x)
        } catch (error) {
          throw located(error, c, e, x)
        }
      }
    default:
      // `eval` and agent forms need the machine
      throw FALLBACK
  }
}

/** `fold f z xs`: the function applied to `(acc, x)` for each element, as the machine's fold frames do. */
const fold = (c: Code): Fn => {
  const f = node(c.a!)
  const z = node(c.b!)
  const xs = node(c.c!)
  return (e, x) => {
    if (++steps > maxSteps || (steps & CHECK_EVERY) === 0) slowTick()
    const func = f(e, x)
    let acc = z(e, x)
    const items = xs(e, x)
    try {
      if (!(items instanceof Value.List)) throw typeError(`fold expects a list as third argument, got ${Value.typeName(items)}`)
      if (!(func instanceof Value.Closure)) throw typeError(`fold expects a function as first argument, got ${Value.typeName(func)}`)
    } catch (error) {
      throw located(error, c, e, x)
    }
    if (items.length === 0) return acc
    const body = bodies.get(func.code as Code)
    if (body === undefined) throw FALLBACK
    const env = func.env as Env | undefined
    const ctx = func.ctx as Ctx
    if (++calls > maxCalls) throw FALLBACK
    for (let l = items; l.length > 0; l = l.tail) acc = body(new Env(new Value.Pair(acc, l.head), env), ctx)
    calls--
    return acc
  }
}

/** What compiling a code tree gave: its closure tree and how deep the tree nests. */
export interface Compiled {
  readonly code: Code
  readonly fn: Fn
  readonly nesting: number
}

const compiled = new WeakMap<Code, Compiled | null>()

const nestingOf = (root: Code): number => {
  let deepest = 0
  const stack: Array<Code | number> = [root, 1]
  while (stack.length > 0) {
    const depth = stack.pop() as number
    const c = stack.pop() as Code
    if (depth > deepest) deepest = depth
    const kids = c.items ?? [c.a, c.b, c.c]
    for (const kid of kids) if (kid !== undefined) stack.push(kid, depth + 1)
  }
  return deepest
}

/** The tier of a code tree, compiled on first use; `undefined` when the tree needs the machine. */
export const tierOf = (code: Code): Compiled | undefined => {
  let entry = compiled.get(code)
  if (entry === undefined) {
    try {
      entry = { code, fn: node(code), nesting: nestingOf(code) }
    } catch (error) {
      // a node the tier leaves to the machine, or a tree too deep to compile on the JavaScript stack
      if (error !== FALLBACK && !(error instanceof RangeError)) throw error
      entry = null
    }
    compiled.set(code, entry)
  }
  return entry ?? undefined
}

/** Whether `error` is the JavaScript stack overflowing. */
const isStackOverflow = (error: unknown): boolean => error instanceof RangeError && /call stack/i.test(error.message)

/** The outcome of a run on the tier: its value, or `undefined` when the machine must run it. */
export type Outcome = { readonly value: Value.Value } | undefined

/**
 * Run `root` (and, when it is a function, apply it to `input` as the machine's `run` does) on the
 * tier for `m`. Steps go to `m`'s counters; errors are the machine's. Returns `undefined`, with
 * the counters and trace as they were, when the machine must run the term instead.
 */
export const run = (m: Machine, root: Compiled, input: Compiled | undefined, ctx: Ctx): Outcome => {
  const counters = m.config.counters
  const events = m.config.events
  const startSteps = counters.steps
  const startEvents = events.length
  // the machine's frames grow by at most a tree's nesting per pending call: stop well before
  // they could reach the depth budget, so that a depth error is the machine's to give
  const nesting = Math.max(root.nesting, input?.nesting ?? 0) + 2
  const callsAllowed = Math.floor((m.config.budget.depth - 1) / nesting) - 1
  if (callsAllowed < 0) return undefined
  const saved = [steps, maxSteps, machine, calls, maxCalls, agentTrace] as const
  steps = startSteps
  maxSteps = m.config.budget.steps
  machine = m
  calls = 0
  maxCalls = callsAllowed
  agentTrace = m.config.trace !== "off"
  try {
    let value = root.fn(undefined, ctx)
    if (input !== undefined && value instanceof Value.Closure) {
      const toolCtx = ctx.toolName === undefined ? ctx : new Ctx(value, ctx.toolName, ctx.step, ctx.evalDepth)
      const arg = input.fn(undefined, toolCtx)
      value = applier(input.code)(value, arg, toolCtx, undefined)
    }
    counters.steps = steps
    return { value }
  } catch (thrown) {
    const error = thrown instanceof Located ? thrown.error : thrown
    if (thrown === FALLBACK || isStackOverflow(error)) {
      counters.steps = startSteps
      events.length = startEvents
      return undefined
    }
    counters.steps = steps
    throw thrown instanceof Located ? m.tierError(error, thrown.at, thrown.env, thrown.ctx, steps) : m.tierError(error, undefined, undefined, ctx, steps)
  } finally {
    ;[steps, maxSteps, machine, calls, maxCalls, agentTrace] = saved
  }
}
