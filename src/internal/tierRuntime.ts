/**
 * What the compiled tier's code runs against, whichever way it was compiled (closure trees in
 * `tier.ts`, generated functions in `tierSource.ts`): the state of the running tier, the bodies
 * of the functions it compiled, and the operations whose failures carry the node they happened at.
 */
import * as Value from "../Value.ts"
import type { BinOp, Code, UnOp } from "./code.ts"
import { Ctx, Env, type Machine } from "./machine.ts"
import { binary, Fault, isTrue, listBytes, typeError, unary } from "./operators.ts"

/** A compiled node: its value in an environment and a system context. */
export type Fn = (env: Env | undefined, ctx: Ctx) => Value.Value

/** Thrown to give up: the machine then runs the term from its start. */
export const FALLBACK: unique symbol = Symbol("fallback")

/** A fault with where it happened (the node whose own operation failed, its environment and context). */
export class Located {
  constructor(
    readonly error: unknown,
    readonly at: Code,
    readonly env: Env | undefined,
    readonly ctx: Ctx
  ) {}
}

/** Steps between clock and heap checks: the machine's (see `machine.ts`). */
export const CHECK_EVERY = 0x3fff
export const MAX_SAFE = 9007199254740991

/**
 * The state of the running tier. Runs are synchronous and call no user code (a run whose events
 * stream to a listener is the machine's), so they do not nest; each saves and restores it all the same.
 */
export class TierState {
  steps = 0
  maxSteps = 0
  /** Function calls pending on the JavaScript stack, and how many may be before the machine takes over. */
  calls = 0
  maxCalls = 0
  agentTrace = false
  machine: Machine | undefined = undefined
}

export const S = new TierState()

/** Count the step just taken: the step budget, and now and then the clock. */
export const slowTick = (): void => {
  if (S.steps > S.maxSteps) S.machine!.stepsExceeded(S.steps)
  S.machine!.checkClock()
}

export const located = (error: unknown, at: Code, env: Env | undefined, ctx: Ctx): unknown =>
  error instanceof Located || error === FALLBACK ? error : new Located(error, at, env, ctx)

/** The compiled body of each function (`Op.Lam` code) the tier compiled. */
export const bodies = new WeakMap<Code, Fn>()

/** The body of a closure's code, or give up (an agent form, or a function the tier did not compile). */
export const body = (code: unknown): Fn => {
  const fn = bodies.get(code as Code)
  if (fn === undefined) throw FALLBACK
  return fn
}

export const fallback = (): never => {
  throw FALLBACK
}

/** The context a function body runs in (the machine's rule). */
export const calleeCtx = (caller: Ctx, callee: Ctx): Ctx => {
  if (caller === callee) return caller
  if (caller.self === undefined && caller.toolName === undefined) return callee
  if (caller.evalDepth === callee.evalDepth) return caller
  return new Ctx(caller.self, caller.toolName, caller.step, callee.evalDepth)
}

export const bin = (op: BinOp, a: Value.Value, b: Value.Value, at: Code, env: Env | undefined, ctx: Ctx): Value.Value => {
  try {
    return binary(op, a, b, S.machine!)
  } catch (error) {
    throw located(error, at, env, ctx)
  }
}

export const un = (op: UnOp, v: Value.Value, at: Code, env: Env | undefined, ctx: Ctx): Value.Value => {
  try {
    return unary(op, v, S.machine!)
  } catch (error) {
    throw located(error, at, env, ctx)
  }
}

/** `v` as a condition, when it is not a boolean: the machine's error. */
export const notBoolean = (v: Value.Value, what: string, at: Code, env: Env | undefined, ctx: Ctx): never => {
  try {
    isTrue(v, what)
  } catch (error) {
    throw located(error, at, env, ctx)
  }
  throw new Error("unreachable")
}

export const truth = (v: Value.Value, what: string, at: Code, env: Env | undefined, ctx: Ctx): boolean =>
  v === true ? true : v === false ? false : notBoolean(v, what, at, env, ctx)

export const noSelf = (at: Code, env: Env | undefined, ctx: Ctx): never => {
  throw new Located(new Fault("RuntimeError", "self used outside a tool"), at, env, ctx)
}

export const unbound = (at: Code, env: Env | undefined, ctx: Ctx): never => {
  throw new Located(new Fault("Unbound", `unbound variable ${JSON.stringify(at.x)}`), at, env, ctx)
}

export const notFunction = (fn: Value.Value, at: Code, env: Env | undefined, ctx: Ctx): never => {
  throw new Located(typeError(`cannot apply ${Value.typeName(fn)} (not a function)`), at, env, ctx)
}

export const cons = (head: Value.Value, tail: Value.Value, at: Code, env: Env | undefined, ctx: Ctx): Value.List => {
  if (!(tail instanceof Value.List)) throw new Located(typeError(`cons expects a list as tail, got ${Value.typeName(tail)}`), at, env, ctx)
  if ((tail.length & 0xffff) === 0xffff) {
    try {
      S.machine!.built(listBytes(tail.length + 1))
    } catch (error) {
      throw located(error, at, env, ctx)
    }
  }
  return new Value.List(head, tail, tail.length + 1)
}

/** A fold's operands, when they are not a list and a function: the machine's error. */
export const foldOperands = (items: Value.Value, func: Value.Value, at: Code, env: Env | undefined, ctx: Ctx): void => {
  if (!(items instanceof Value.List)) throw new Located(typeError(`fold expects a list as third argument, got ${Value.typeName(items)}`), at, env, ctx)
  if (!(func instanceof Value.Closure)) throw new Located(typeError(`fold expects a function as first argument, got ${Value.typeName(func)}`), at, env, ctx)
}

export const continueWith = (v: Value.Value, at: Code, env: Env | undefined, ctx: Ctx): Value.Continuation => {
  if (ctx.toolName === undefined) throw new Located(new Fault("RuntimeError", "continue used outside a tool"), at, env, ctx)
  if (S.agentTrace) S.machine!.recordContinue(S.steps, ctx.toolName, v)
  return new Value.Continuation(ctx.toolName, v, ctx.step + 1)
}

export const codeOf = (at: Code, env: Env | undefined, ctx: Ctx): Value.Value => {
  try {
    return S.machine!.codeOf(at.x as string, ctx)
  } catch (error) {
    throw located(error, at, env, ctx)
  }
}

export { Env }
