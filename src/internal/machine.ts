/**
 * The evaluator's machine: an explicit-stack (CEK-style) interpreter over compiled code.
 *
 * Nothing here recurses on the JavaScript stack: the continuation is a flat array of frames, so
 * depth is a data-structure limit. The loop is plain synchronous TypeScript. When it reaches a
 * node it cannot reduce by itself (an LLM call, a tool, memory, parallel branches) it stops and
 * returns a request; the driver answers it and resumes the same machine.
 */
import type * as Budget from "../Budget.ts"
import { BudgetExceeded, EvalError, type EvalErrorKind } from "../Errors.ts"
import * as Term from "../Term.ts"
import type * as Trace from "../Trace.ts"
import { preview } from "../Trace.ts"
import * as Value from "../Value.ts"
import { BinOp, Code, compile, Op, type Scope, UnOp } from "./compile.ts"
import * as Int from "./int.ts"
import { extractToolCall, formatState } from "./react.ts"

/** A lexical environment: one binding per frame, looked up by index. */
export class Env {
  constructor(
    readonly v: Value.Value,
    readonly next: Env | undefined
  ) {}
}

/** The system context of a running term: outside the user's namespace, so it cannot be forged. */
export class Ctx {
  constructor(
    readonly self: Value.Value | undefined,
    readonly toolName: string | undefined,
    readonly step: number,
    readonly evalDepth: number
  ) {}
}

/** Counters shared by a run and its parallel branches. */
export class Counters {
  steps = 0
  llmCalls = 0
  toolCalls = 0
  tokens = 0
  constructor(readonly deadline: number) {}
}

/** What the machine needs from outside: tool code for `code_of`, limits, trace level. */
export interface MachineConfig {
  readonly registry: ReadonlyMap<string, Term.Term>
  readonly budget: Budget.Budget
  readonly trace: Trace.TraceLevel
  readonly counters: Counters
  /** Where events go; shared across branches. */
  readonly events: Array<Trace.TraceEvent>
  readonly branch?: string
  /** Told of every event as it is recorded (streaming). */
  readonly listener?: (event: Trace.TraceEvent) => void
}

/** A node the machine cannot reduce by itself. */
export type OracleRequest =
  | { readonly kind: "llm"; readonly term: Term.Of<"Llm">; readonly fn: Value.Closure; readonly input: Value.Value; readonly tools?: ReadonlyArray<string> }
  | { readonly kind: "tool"; readonly name: string; readonly input: Value.Value; readonly timeoutMs?: number; readonly observe: boolean }
  | { readonly kind: "memory-read"; readonly term: Term.Of<"Memory">; readonly input: Value.Value }
  | { readonly kind: "memory-write"; readonly term: Term.Of<"Memory">; readonly input: Value.Value; readonly output: Value.Value }
  | { readonly kind: "par"; readonly term: Term.Of<"Par">; readonly fn: Value.Closure; readonly input: Value.Value }

export type StepResult =
  | { readonly _tag: "Done"; readonly value: Value.Value }
  | { readonly _tag: "Suspended"; readonly request: OracleRequest }

/** A runtime fault inside the loop; becomes an `EvalError` with the failing node's path. */
class Fault {
  constructor(
    readonly kind: EvalErrorKind,
    readonly message: string
  ) {}
}

const enum K {
  AppArg,
  AppCall,
  ApplyTo,
  BinRight,
  BinDone,
  BoolCheck,
  Unary,
  If,
  ConsHead,
  ConsDone,
  PairFirst,
  PairDone,
  ListItem,
  FoldInit,
  FoldList,
  FoldStart,
  FoldStep,
  Eval,
  Continue,
  RunInput,
  Yield,
  ComposeNext,
  LoopBody,
  LoopUntil,
  RouteLabel,
  ParMerge,
  GuardResult,
  GuardValid,
  MemoryAgent,
  MemoryWrite,
  ReactThought,
  ReactObserve
}

const enum Mode {
  Eval,
  Return,
  Apply
}

/** Frame slots: kind, code, env, ctx, extra. */
const W = 5

const typeError = (message: string) => new Fault("TypeError", message)

const isTrue = (v: Value.Value, what: string): boolean => {
  if (v === true) return true
  if (v === false) return false
  throw typeError(`${what} must be a boolean, got ${Value.typeName(v)}`)
}

const int = (v: Value.Value, op: string): Int.Int => {
  if (typeof v === "number" || typeof v === "bigint") return v
  throw typeError(`${op} expects integers, got ${Value.typeName(v)}`)
}

const codePointLength = (s: string): number => {
  let n = s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--
        i++
      }
    }
  }
  return n
}

const compare = (op: BinOp, a: Value.Value, b: Value.Value): boolean => {
  const bothInts = (typeof a === "number" || typeof a === "bigint") && (typeof b === "number" || typeof b === "bigint")
  if (!bothInts && !(typeof a === "string" && typeof b === "string")) {
    throw typeError(`comparison expects two integers or two strings, got ${Value.typeName(a)} and ${Value.typeName(b)}`)
  }
  const x = a as number | string
  const y = b as number | string
  switch (op) {
    case BinOp.Lt:
      return x < y
    case BinOp.Gt:
      return x > y
    case BinOp.Lte:
      return x <= y
    default:
      return x >= y
  }
}

const binary = (op: BinOp, a: Value.Value, b: Value.Value): Value.Value => {
  switch (op) {
    case BinOp.Add:
      return typeof a === "number" && typeof b === "number" && Math.abs(a + b) <= 9007199254740991
        ? a + b
        : Int.add(int(a, "add"), int(b, "add"))
    case BinOp.Sub:
      return typeof a === "number" && typeof b === "number" && Math.abs(a - b) <= 9007199254740991
        ? a - b
        : Int.sub(int(a, "sub"), int(b, "sub"))
    case BinOp.Mul:
      return Int.mul(int(a, "mul"), int(b, "mul"))
    case BinOp.Div: {
      const x = int(a, "div")
      const y = int(b, "div")
      if (Int.isZero(y)) throw new Fault("DivisionByZero", "division by zero")
      return Int.div(x, y)
    }
    case BinOp.Mod: {
      const x = int(a, "mod")
      const y = int(b, "mod")
      if (Int.isZero(y)) throw new Fault("DivisionByZero", "modulo by zero")
      return Int.mod(x, y)
    }
    case BinOp.Eq:
      return a === b || (typeof a === "object" && typeof b === "object" && Value.equals(a, b))
    case BinOp.Concat:
      if (typeof a === "string" && typeof b === "string") return a + b
      if (a instanceof Value.List && b instanceof Value.List) {
        return Value.fromArray([...Value.toArray(a), ...Value.toArray(b)])
      }
      throw typeError(`concat expects two strings or two lists, got ${Value.typeName(a)} and ${Value.typeName(b)}`)
    case BinOp.Contains:
      if (typeof a === "string" && typeof b === "string") return a.includes(b)
      if (a instanceof Value.List) {
        for (let l = a; l.length > 0; l = l.tail) if (l.head === b || Value.equals(l.head, b)) return true
        return false
      }
      throw typeError(`contains expects a string and a string, or a list and a value, got ${Value.typeName(a)} and ${Value.typeName(b)}`)
    case BinOp.StartsWith:
    case BinOp.EndsWith:
      if (typeof a === "string" && typeof b === "string") return op === BinOp.StartsWith ? a.startsWith(b) : a.endsWith(b)
      throw typeError(`${op === BinOp.StartsWith ? "startsWith" : "endsWith"} expects two strings, got ${Value.typeName(a)} and ${Value.typeName(b)}`)
    default:
      return compare(op, a, b)
  }
}

const list = (v: Value.Value, op: string): Value.List => {
  if (v instanceof Value.List) return v
  throw typeError(`${op} expects a list, got ${Value.typeName(v)}`)
}

const unary = (op: UnOp, v: Value.Value): Value.Value => {
  switch (op) {
    case UnOp.Not:
      return !isTrue(v, "not's argument")
    case UnOp.Head: {
      const l = list(v, "head")
      if (l.length === 0) throw new Fault("EmptyList", "head of an empty list")
      return l.head
    }
    case UnOp.Tail: {
      const l = list(v, "tail")
      if (l.length === 0) throw new Fault("EmptyList", "tail of an empty list")
      return l.tail
    }
    case UnOp.IsEmpty:
      return list(v, "isEmpty").length === 0
    case UnOp.Length:
      if (typeof v === "string") return codePointLength(v)
      if (v instanceof Value.List) return v.length
      throw typeError(`length expects a string or a list, got ${Value.typeName(v)}`)
    case UnOp.Fst:
      if (v instanceof Value.Pair) return v.fst
      throw typeError(`fst expects a pair, got ${Value.typeName(v)}`)
    case UnOp.Snd:
      if (v instanceof Value.Pair) return v.snd
      throw typeError(`snd expects a pair, got ${Value.typeName(v)}`)
    case UnOp.Trim:
    case UnOp.TrimStart:
    case UnOp.TrimEnd:
    case UnOp.Lower:
    case UnOp.Upper:
    case UnOp.IsJson: {
      if (typeof v !== "string") throw typeError(`${["trim", "trimStart", "trimEnd", "lower", "upper", "isJson"][op - UnOp.Trim]} expects a string, got ${Value.typeName(v)}`)
      if (op === UnOp.Trim) return v.trim()
      if (op === UnOp.TrimStart) return v.trimStart()
      if (op === UnOp.TrimEnd) return v.trimEnd()
      if (op === UnOp.Lower) return v.toLowerCase()
      if (op === UnOp.Upper) return v.toUpperCase()
      try {
        JSON.parse(v)
        return true
      } catch {
        return false
      }
    }
  }
}

/** The node a direct evaluation was at, for error paths. */
let simpleAt: Code | undefined

/** Evaluate a simple expression directly (its depth is bounded at compile time). */
const evalSimple = (code: Code, env: Env | undefined, ctx: Ctx): Value.Value => {
  switch (code.op) {
    case Op.Const:
    case Op.Quote:
      return code.x
    case Op.Var: {
      let e = env!
      for (let i = code.x as number; i > 0; i--) e = e.next!
      return e.v
    }
    case Op.Self:
      if (ctx.self === undefined) {
        simpleAt = code
        throw new Fault("RuntimeError", "self used outside a tool")
      }
      return ctx.self
    default: {
      const a = evalSimple(code.a!, env, ctx)
      simpleAt = code
      if (code.sop === Op.Unary) return unary(code.x as UnOp, a)
      const op = code.x as BinOp
      if (op === BinOp.And || op === BinOp.Or) {
        const left = isTrue(a, op === BinOp.And ? "and's operands" : "or's operands")
        if (left === (op === BinOp.Or)) return left
        const right = evalSimple(code.b!, env, ctx)
        simpleAt = code
        return isTrue(right, op === BinOp.And ? "and's operands" : "or's operands")
      }
      const b = evalSimple(code.b!, env, ctx)
      simpleAt = code
      return binary(op, a, b)
    }
  }
}

/** The context a function body runs in: the caller's tool context, the callee's eval depth. */
const calleeCtx = (caller: Ctx, callee: Ctx): Ctx => {
  if (caller === callee) return caller
  if (caller.self === undefined && caller.toolName === undefined) return callee
  if (caller.evalDepth === callee.evalDepth) return caller
  return new Ctx(caller.self, caller.toolName, caller.step, callee.evalDepth)
}

const routeLabel = (v: Value.Value) => Value.toText(v).trim().toLowerCase()

interface ComposeState {
  readonly fn: Value.Closure
  i: number
}
interface LoopState {
  readonly fn: Value.Closure
  i: number
  current: Value.Value
}
interface GuardState {
  readonly fn: Value.Closure
  readonly input: Value.Value
  attempt: number
  last: Value.Value
}
interface ReactState {
  readonly fn: Value.Closure
  step: number
  state: string
  thought: string
  tool: string
}

export class Machine {
  private readonly frames: Array<any> = []
  private sp = 0
  private mode: Mode = Mode.Eval
  private code: Code | undefined
  private env: Env | undefined
  private ctx: Ctx
  private value: Value.Value = null
  private fn: Value.Value = null
  private finished = false

  constructor(
    readonly config: MachineConfig,
    readonly root: Term.Term,
    code: Code,
    env: Env | undefined,
    ctx: Ctx
  ) {
    this.code = code
    this.env = env
    this.ctx = ctx
  }

  /** Evaluate `term` in an empty environment. */
  static evaluate(config: MachineConfig, term: Term.Term, ctx: Ctx): Machine {
    return new Machine(config, term, compile(term, undefined), undefined, ctx)
  }

  /**
   * The reference's `run`: evaluate `code`; if it is a function, evaluate `input` (with the tool
   * itself as `self` when there is a tool context) and apply the function to it.
   */
  static run(config: MachineConfig, code: Term.Term, input: { readonly term: Term.Term } | { readonly value: Value.Value }, ctx: Ctx): Machine {
    const m = Machine.evaluate(config, code, ctx)
    const inputCode = "term" in input
      ? compile(input.term, undefined)
      : new Code(Op.Const, Term.lit(null), undefined, undefined, undefined, input.value, undefined)
    m.push(K.RunInput, inputCode, undefined, ctx, undefined)
    return m
  }

  /** A machine applying the function `fn` to `arg` (a parallel branch, a callback). */
  static apply(config: MachineConfig, root: Term.Term, fn: Value.Value, arg: Value.Value, ctx: Ctx): Machine {
    const m = new Machine(config, root, compile(Term.lit(null), undefined), undefined, ctx)
    m.mode = Mode.Apply
    m.fn = fn
    m.value = arg
    return m
  }

  /** Branch `index` of a pending `par` request, as its own machine sharing this run's counters. */
  branch(request: Extract<OracleRequest, { kind: "par" }>, index: number, events: Array<Trace.TraceEvent>): Machine {
    const fn = request.fn
    const code = (fn.code as Code).items![index]!
    const branch = `${this.config.branch === undefined ? "" : this.config.branch + "."}${index}`
    const m = new Machine({ ...this.config, events, branch }, this.root, code, fn.env as Env | undefined, fn.ctx as Ctx)
    m.push(K.ApplyTo, code, fn.env as Env | undefined, fn.ctx as Ctx, request.input)
    return m
  }

  private push(kind: K, code: Code | undefined, env: Env | undefined, ctx: Ctx, extra: unknown) {
    const f = this.frames
    const sp = this.sp
    if (sp >= this.config.budget.depth * W) this.depthExceeded(this.config.counters.steps)
    f[sp] = kind
    f[sp + 1] = code
    f[sp + 2] = env
    f[sp + 3] = ctx
    f[sp + 4] = extra
    this.sp = sp + W
  }

  private depthExceeded(steps: number): never {
    throw new BudgetExceeded({
      budget: "depth",
      limit: this.config.budget.depth,
      steps,
      message: `evaluation nested deeper than ${this.config.budget.depth} frames`,
      trace: this.config.events
    })
  }

  /** Answer the pending request and keep going. */
  resume(answer: Value.Value): StepResult {
    this.value = answer
    this.mode = Mode.Return
    return this.run()
  }

  private suspend(request: OracleRequest): StepResult {
    this.mode = Mode.Return
    return { _tag: "Suspended", request }
  }

  private record(event: Trace.TraceEvent) {
    const recorded = this.config.branch === undefined ? event : { ...event, branch: this.config.branch }
    this.config.events.push(recorded)
    this.config.listener?.(recorded)
  }

  /** Run until the term is reduced to a value or reaches an oracle. Throws `EvalError`/`BudgetExceeded`. */
  run(): StepResult {
    if (this.finished) throw new Error("machine already finished")
    const config = this.config
    const counters = config.counters
    const budget = config.budget
    const maxSteps = budget.steps
    const maxDepth = budget.depth * W
    const beta = config.trace === "beta"
    const agentTrace = config.trace !== "off"
    const f = this.frames
    let sp = this.sp
    let mode = this.mode
    let code = this.code!
    let env = this.env
    let ctx = this.ctx
    let value = this.value
    let fn = this.fn
    let steps = counters.steps
    let current: Code = code
    const save = () => {
      this.sp = sp
      this.code = code
      this.env = env
      this.ctx = ctx
      this.value = value
      this.fn = fn
      counters.steps = steps
    }
    try {
      for (;;) {
        if (mode === Mode.Eval) {
          if (++steps > maxSteps) this.stepsExceeded(steps)
          if ((steps & 0xffff) === 0 && Date.now() > counters.deadline) this.timeExceeded(steps)
          current = code
          switch (code.op) {
            case Op.Simple:
              value = evalSimple(code, env, ctx)
              simpleAt = undefined
              steps += code.n - 1
              mode = Mode.Return
              continue
            case Op.Const:
              value = code.x
              mode = Mode.Return
              continue
            case Op.Var: {
              let e = env!
              for (let i = code.x as number; i > 0; i--) e = e.next!
              value = e.v
              mode = Mode.Return
              continue
            }
            case Op.Lam:
            case Op.Llm:
            case Op.Tool:
            case Op.Compose:
            case Op.Loop:
            case Op.Route:
            case Op.Par:
            case Op.Guard:
            case Op.Memory:
            case Op.React:
              value = new Value.Closure(code.term, code, env, ctx)
              mode = Mode.Return
              continue
            case Op.App:
              if (code.a!.simple && code.b!.simple) {
                fn = evalSimple(code.a!, env, ctx)
                value = evalSimple(code.b!, env, ctx)
                simpleAt = undefined
                steps += code.a!.n + code.b!.n
                mode = Mode.Apply
                continue
              }
              if (sp >= maxDepth) this.depthExceeded(steps)
              f[sp] = K.AppArg
              f[sp + 1] = code
              f[sp + 2] = env
              f[sp + 3] = ctx
              sp += W
              code = code.a!
              continue
            case Op.If:
              if (code.a!.simple) {
                const cond = code.a!
                const test = evalSimple(cond, env, ctx)
                simpleAt = undefined
                steps += cond.n
                code = isTrue(test, "if's condition") ? code.b! : code.c!
                continue
              }
              if (sp >= maxDepth) this.depthExceeded(steps)
              f[sp] = K.If
              f[sp + 1] = code
              f[sp + 2] = env
              f[sp + 3] = ctx
              sp += W
              code = code.a!
              continue
            case Op.Binary:
            case Op.Unary:
            case Op.Fold:
            case Op.Continue:
              if (sp >= maxDepth) this.depthExceeded(steps)
              f[sp] = code.op === Op.Binary
                ? K.BinRight
                : code.op === Op.Unary
                ? K.Unary
                : code.op === Op.Fold
                ? K.FoldInit
                : K.Continue
              f[sp + 1] = code
              f[sp + 2] = env
              f[sp + 3] = ctx
              sp += W
              code = code.a!
              continue
            case Op.Eval:
              if (ctx.evalDepth >= budget.evalDepth) {
                throw new BudgetExceeded({
                  budget: "evalDepth",
                  limit: budget.evalDepth,
                  steps,
                  message: `eval nested deeper than ${budget.evalDepth}`,
                  trace: config.events
                })
              }
              if (sp >= maxDepth) this.depthExceeded(steps)
              f[sp] = K.Eval
              f[sp + 1] = code
              f[sp + 2] = env
              f[sp + 3] = ctx
              sp += W
              code = code.a!
              continue
            case Op.Cons:
            case Op.Pair:
              if (sp >= maxDepth) this.depthExceeded(steps)
              f[sp] = code.op === Op.Cons ? K.ConsHead : K.PairFirst
              f[sp + 1] = code
              f[sp + 2] = env
              f[sp + 3] = ctx
              sp += W
              code = code.a!
              continue
            case Op.List: {
              if (sp >= maxDepth) this.depthExceeded(steps)
              f[sp] = K.ListItem
              f[sp + 1] = code
              f[sp + 2] = env
              f[sp + 3] = ctx
              f[sp + 4] = [] as Array<Value.Value>
              sp += W
              code = code.items![0]!
              continue
            }
            case Op.Unbound:
              throw new Fault("Unbound", `unbound variable ${JSON.stringify(code.x)}`)
            case Op.Quote:
              value = code.x
              mode = Mode.Return
              continue
            case Op.Self:
              if (ctx.self === undefined) throw new Fault("RuntimeError", "self used outside a tool")
              value = ctx.self
              mode = Mode.Return
              continue
            case Op.CodeOf: {
              const name = code.x as string
              const source = config.registry.get(name)
              if (source !== undefined) value = new Value.Quoted(source)
              else if (name === "self") {
                if (ctx.self === undefined) throw new Fault("RuntimeError", "code_of \"self\" used outside a tool")
                if (!(ctx.self instanceof Value.Closure)) throw new Fault("RuntimeError", "self is not a function")
                value = new Value.Quoted(ctx.self.term)
              } else throw new Fault("RuntimeError", `unknown tool ${JSON.stringify(name)} in code_of`)
              mode = Mode.Return
              continue
            }
          }
        } else if (mode === Mode.Apply) {
          // apply `fn` to `value`
          if (!(fn instanceof Value.Closure)) throw typeError(`cannot apply ${Value.typeName(fn)} (not a function)`)
          const callee = fn.code as Code
          if (callee.op === Op.Lam) {
            if (beta) this.record({ step: steps, kind: "beta", name: callee.x as string, input: preview(Value.toText(value)) })
            env = new Env(value, fn.env as Env | undefined)
            ctx = calleeCtx(ctx, fn.ctx as Ctx)
            code = callee.a!
            mode = Mode.Eval
            continue
          }
          const fenv = fn.env as Env | undefined
          const fctx = fn.ctx as Ctx
          switch (callee.op) {
            case Op.Llm:
              save()
              return this.suspend({ kind: "llm", term: callee.term as Term.Of<"Llm">, fn, input: value })
            case Op.Tool:
              save()
              return this.suspend({ kind: "tool", name: callee.x as string, input: value, observe: false })
            case Op.Compose: {
              const state: ComposeState = { fn, i: 0 }
              this.sp = sp
              this.push(K.ComposeNext, callee, fenv, fctx, state)
              this.push(K.ApplyTo, callee, fenv, fctx, value)
              sp = this.sp
              code = callee.items![0]!
              env = fenv
              ctx = fctx
              mode = Mode.Eval
              continue
            }
            case Op.Loop: {
              const term = callee.term as Term.Of<"Loop">
              if (term.max === 0) {
                mode = Mode.Return
                continue
              }
              const state: LoopState = { fn, i: 0, current: value }
              this.sp = sp
              this.push(K.LoopBody, callee, fenv, fctx, state)
              this.push(K.ApplyTo, callee, fenv, fctx, value)
              sp = this.sp
              code = callee.a!
              env = fenv
              ctx = fctx
              mode = Mode.Eval
              continue
            }
            case Op.Route:
              this.sp = sp
              this.push(K.RouteLabel, callee, fenv, fctx, { fn, input: value })
              this.push(K.ApplyTo, callee, fenv, fctx, value)
              sp = this.sp
              code = callee.items![0]!
              env = fenv
              ctx = fctx
              mode = Mode.Eval
              continue
            case Op.Par:
              this.sp = sp
              this.push(K.ParMerge, callee, fenv, fctx, fn)
              sp = this.sp
              save()
              return this.suspend({ kind: "par", term: callee.term as Term.Of<"Par">, fn, input: value })
            case Op.Guard: {
              const state: GuardState = { fn, input: value, attempt: 0, last: null }
              this.sp = sp
              this.push(K.GuardResult, callee, fenv, fctx, state)
              this.push(K.ApplyTo, callee, fenv, fctx, value)
              sp = this.sp
              code = callee.a!
              env = fenv
              ctx = fctx
              mode = Mode.Eval
              continue
            }
            case Op.Memory:
              this.sp = sp
              this.push(K.MemoryAgent, callee, fenv, fctx, value)
              sp = this.sp
              save()
              return this.suspend({ kind: "memory-read", term: callee.term as Term.Of<"Memory">, input: value })
            case Op.React: {
              const state: ReactState = { fn, step: 0, state: Value.toText(value), thought: "", tool: "" }
              this.sp = sp
              const suspended = this.reactThink(state, callee)
              sp = this.sp
              if (suspended !== undefined) {
                save()
                return suspended
              }
              code = callee.a!
              env = fenv
              ctx = fctx
              mode = Mode.Eval
              continue
            }
          }
          throw typeError("not a function")
        } else {
          // return `value` to the top frame
          if (sp === 0) {
            this.finished = true
            save()
            return { _tag: "Done", value }
          }
          sp -= W
          const kind = f[sp] as K
          const fc = f[sp + 1] as Code
          env = f[sp + 2]
          ctx = f[sp + 3]
          const extra = f[sp + 4]
          f[sp + 2] = undefined
          f[sp + 4] = undefined
          current = fc
          switch (kind) {
            case K.AppArg:
              f[sp] = K.AppCall
              f[sp + 4] = value
              sp += W
              code = fc.b!
              mode = Mode.Eval
              continue
            case K.AppCall:
              fn = extra
              mode = Mode.Apply
              continue
            case K.ApplyTo:
              fn = value
              value = extra
              mode = Mode.Apply
              continue
            case K.BinRight: {
              const op = fc.x as BinOp
              if (op === BinOp.And || op === BinOp.Or) {
                const left = isTrue(value, op === BinOp.And ? "and's operands" : "or's operands")
                if (left === (op === BinOp.Or)) continue
                f[sp] = K.BoolCheck
              } else {
                f[sp] = K.BinDone
                f[sp + 4] = value
              }
              f[sp + 2] = env
              sp += W
              code = fc.b!
              mode = Mode.Eval
              continue
            }
            case K.BinDone:
              value = binary(fc.x as BinOp, extra, value)
              continue
            case K.BoolCheck:
              isTrue(value, fc.x === BinOp.And ? "and's operands" : "or's operands")
              continue
            case K.Unary:
              value = unary(fc.x as UnOp, value)
              continue
            case K.If:
              code = isTrue(value, "if's condition") ? fc.b! : fc.c!
              mode = Mode.Eval
              continue
            case K.ConsHead:
            case K.PairFirst:
              f[sp] = kind === K.ConsHead ? K.ConsDone : K.PairDone
              f[sp + 2] = env
              f[sp + 4] = value
              sp += W
              code = fc.b!
              mode = Mode.Eval
              continue
            case K.ConsDone: {
              const tail = value
              if (!(tail instanceof Value.List)) throw typeError(`cons expects a list as tail, got ${Value.typeName(tail)}`)
              value = new Value.List(extra, tail, tail.length + 1)
              continue
            }
            case K.PairDone:
              value = new Value.Pair(extra, value)
              continue
            case K.ListItem: {
              const items = extra as Array<Value.Value>
              items.push(value)
              const codes = fc.items!
              if (items.length === codes.length) {
                value = Value.fromArray(items)
                continue
              }
              f[sp + 2] = env
              f[sp + 4] = items
              sp += W
              code = codes[items.length]!
              mode = Mode.Eval
              continue
            }
            case K.FoldInit:
              f[sp] = K.FoldList
              f[sp + 2] = env
              f[sp + 4] = [value]
              sp += W
              code = fc.b!
              mode = Mode.Eval
              continue
            case K.FoldList:
              f[sp] = K.FoldStart
              f[sp + 2] = env
              f[sp + 4] = [extra[0], value]
              sp += W
              code = fc.c!
              mode = Mode.Eval
              continue
            case K.FoldStart: {
              const items = value
              if (!(items instanceof Value.List)) throw typeError(`fold expects a list as third argument, got ${Value.typeName(items)}`)
              const func = extra[0] as Value.Value
              if (!(func instanceof Value.Closure)) throw typeError(`fold expects a function as first argument, got ${Value.typeName(func)}`)
              if (items.length === 0) {
                value = extra[1]
                continue
              }
              f[sp] = K.FoldStep
              f[sp + 2] = env
              f[sp + 4] = { func, rest: items.tail }
              sp += W
              value = new Value.Pair(extra[1], items.head)
              fn = func
              if ((func.code as Code).op === Op.Lam) {
                if (beta) this.record({ step: steps, kind: "beta", name: (func.code as Code).x, input: preview(Value.toText(value)) })
                env = new Env(value, func.env as Env | undefined)
                ctx = func.ctx as Ctx
                code = (func.code as Code).a!
                mode = Mode.Eval
              } else mode = Mode.Apply
              continue
            }
            case K.FoldStep: {
              const state = extra as { func: Value.Closure; rest: Value.List }
              const rest = state.rest
              if (rest.length === 0) continue
              state.rest = rest.tail
              f[sp + 2] = env
              f[sp + 4] = state
              sp += W
              const func = state.func
              value = new Value.Pair(value, rest.head)
              const fcode = func.code as Code
              if (fcode.op === Op.Lam) {
                if (beta) this.record({ step: steps, kind: "beta", name: fcode.x, input: preview(Value.toText(value)) })
                env = new Env(value, func.env as Env | undefined)
                ctx = func.ctx as Ctx
                code = fcode.a!
                mode = Mode.Eval
              } else {
                fn = func
                mode = Mode.Apply
              }
              continue
            }
            case K.Eval: {
              if (!(value instanceof Value.Quoted)) {
                throw typeError(`eval expects quoted code (from quote or code_of), got ${Value.typeName(value)}`)
              }
              const slot = fc.x as { scope: Scope | undefined; cache: Map<Term.Term, Code> }
              let compiled = slot.cache.get(value.term)
              if (compiled === undefined) {
                compiled = compile(value.term, slot.scope)
                slot.cache.set(value.term, compiled)
              }
              ctx = new Ctx(undefined, undefined, ctx.step, ctx.evalDepth + 1)
              code = compiled
              mode = Mode.Eval
              continue
            }
            case K.Continue:
              if (ctx.toolName === undefined) throw new Fault("RuntimeError", "continue used outside a tool")
              if (agentTrace) this.record({ step: steps, kind: "continue", name: ctx.toolName, output: preview(Value.toText(value)) })
              value = new Value.Continuation(ctx.toolName, value, ctx.step + 1)
              continue
            case K.RunInput: {
              if (!(value instanceof Value.Closure)) continue
              const toolCtx = ctx.toolName === undefined ? ctx : new Ctx(value, ctx.toolName, ctx.step, ctx.evalDepth)
              f[sp] = K.AppCall
              f[sp + 1] = fc
              f[sp + 2] = undefined
              f[sp + 3] = toolCtx
              f[sp + 4] = value
              sp += W
              code = fc
              env = undefined
              ctx = toolCtx
              mode = Mode.Eval
              continue
            }
            case K.Yield:
              value = extra
              continue
            case K.ComposeNext: {
              const state = extra as ComposeState
              const stages = fc.items!
              if (++state.i >= stages.length) continue
              this.sp = sp
              this.push(K.ComposeNext, fc, env, ctx, state)
              this.push(K.ApplyTo, fc, env, ctx, value)
              sp = this.sp
              code = stages[state.i]!
              env = state.fn.env as Env | undefined
              ctx = state.fn.ctx as Ctx
              mode = Mode.Eval
              continue
            }
            case K.LoopBody:
            case K.LoopUntil: {
              const state = extra as LoopState
              const term = fc.term as Term.Of<"Loop">
              if (kind === K.LoopBody) {
                state.current = value
                state.i++
                if (agentTrace) this.record({ step: steps, kind: "loop", name: `iteration ${state.i}`, output: preview(Value.toText(value)) })
                if (fc.b !== undefined) {
                  this.sp = sp
                  this.push(K.LoopUntil, fc, env, ctx, state)
                  this.push(K.ApplyTo, fc, env, ctx, value)
                  sp = this.sp
                  code = fc.b
                  env = state.fn.env as Env | undefined
                  ctx = state.fn.ctx as Ctx
                  mode = Mode.Eval
                  continue
                }
              } else if (isTrue(value, "a loop's exit test")) {
                value = state.current
                continue
              }
              if (state.i >= term.max) {
                if (term.failOnExhaustion === true) {
                  throw new BudgetExceeded({
                    budget: "loop",
                    limit: term.max,
                    steps,
                    message: `loop ran ${term.max} iterations without meeting its exit test`,
                    trace: config.events
                  })
                }
                value = state.current
                continue
              }
              this.sp = sp
              this.push(K.LoopBody, fc, env, ctx, state)
              this.push(K.ApplyTo, fc, env, ctx, state.current)
              sp = this.sp
              code = fc.a!
              env = state.fn.env as Env | undefined
              ctx = state.fn.ctx as Ctx
              mode = Mode.Eval
              continue
            }
            case K.RouteLabel: {
              const state = extra as { fn: Value.Closure; input: Value.Value }
              const term = fc.term as Term.Of<"Route">
              const label = routeLabel(value)
              let index = (fc.x as Map<string, number>).get(label)
              if (index === undefined) {
                const found = term.routes.findIndex(([l]) => label.includes(l.toLowerCase()))
                if (found >= 0) index = found
              }
              let chosen: Code
              let chosenName: string
              if (index !== undefined) {
                chosen = fc.items![index + 1]!
                chosenName = term.routes[index]![0]
              } else if (term.default !== undefined) {
                chosen = fc.items![fc.items!.length - 1]!
                chosenName = "default"
              } else {
                throw new Fault(
                  "RouteError",
                  `no route for ${JSON.stringify(label)}; routes: ${term.routes.map(([l]) => l).join(", ")}`
                )
              }
              if (agentTrace) this.record({ step: steps, kind: "route", name: chosenName, input: preview(label) })
              this.sp = sp
              this.push(K.ApplyTo, fc, env, ctx, state.input)
              sp = this.sp
              code = chosen
              env = state.fn.env as Env | undefined
              ctx = state.fn.ctx as Ctx
              mode = Mode.Eval
              continue
            }
            case K.ParMerge: {
              const term = fc.term as Term.Of<"Par">
              const results = Value.toArray(value as Value.List)
              if (term.merge === "tuple") {
                value = results.length === 2 ? new Value.Pair(results[0]!, results[1]!) : value
                continue
              }
              if (term.merge === "concat") {
                value = results.map(Value.toText).join("\n\n")
                continue
              }
              const parFn = extra as Value.Closure
              this.sp = sp
              this.push(K.ApplyTo, fc, env, ctx, value)
              sp = this.sp
              code = fc.items![fc.items!.length - 1]!
              env = parFn.env as Env | undefined
              ctx = parFn.ctx as Ctx
              mode = Mode.Eval
              continue
            }
            case K.GuardResult: {
              const state = extra as GuardState
              state.last = value
              this.sp = sp
              this.push(K.GuardValid, fc, env, ctx, state)
              this.push(K.ApplyTo, fc, env, ctx, value)
              sp = this.sp
              code = fc.b!
              env = state.fn.env as Env | undefined
              ctx = state.fn.ctx as Ctx
              mode = Mode.Eval
              continue
            }
            case K.GuardValid: {
              const state = extra as GuardState
              const term = fc.term as Term.Of<"Guard">
              const valid = isTrue(value, "a guard's validator result")
              state.attempt++
              if (agentTrace) {
                this.record({ step: steps, kind: "guard", name: valid ? "valid" : "invalid", output: preview(Value.toText(state.last)) })
              }
              if (valid) {
                value = state.last
                continue
              }
              if (state.attempt <= term.retry) {
                this.sp = sp
                this.push(K.GuardResult, fc, env, ctx, state)
                this.push(K.ApplyTo, fc, env, ctx, state.input)
                sp = this.sp
                code = fc.a!
                env = state.fn.env as Env | undefined
                ctx = state.fn.ctx as Ctx
                mode = Mode.Eval
                continue
              }
              const fallback = term.fallback
              if (fallback === "error") {
                throw new Fault(
                  "ValidationError",
                  `guard failed after ${state.attempt} attempt${state.attempt === 1 ? "" : "s"}; last output: ${preview(Value.toText(state.last))}`
                )
              }
              if (fallback === "empty") value = ""
              else if (fallback === "last") value = state.last
              else {
                code = fc.c!
                env = state.fn.env as Env | undefined
                ctx = state.fn.ctx as Ctx
                mode = Mode.Eval
              }
              continue
            }
            case K.MemoryAgent:
              // `value` is the input with the memory context prepended; `extra` the original input
              this.sp = sp
              this.push(K.MemoryWrite, fc, env, ctx, extra)
              this.push(K.ApplyTo, fc, env, ctx, value)
              sp = this.sp
              code = fc.a!
              mode = Mode.Eval
              continue
            case K.MemoryWrite:
              this.sp = sp
              this.push(K.Yield, fc, env, ctx, value)
              sp = this.sp
              save()
              return this.suspend({ kind: "memory-write", term: fc.term as Term.Of<"Memory">, input: extra, output: value })
            case K.ReactThought: {
              const state = extra as ReactState
              const term = fc.term as Term.Of<"React">
              state.thought = Value.toText(value)
              const call = extractToolCall(state.thought, term.tools)
              if (call === undefined || call.tool.toLowerCase() === "terminate") {
                if (agentTrace) this.record({ step: steps, kind: "react", name: "final", output: preview(state.thought) })
                value = call !== undefined && call.args !== undefined && call.args.trim() !== "" ? call.args : state.thought
                continue
              }
              state.tool = call.tool
              this.sp = sp
              this.push(K.ReactObserve, fc, env, ctx, state)
              sp = this.sp
              if (!term.tools.includes(call.tool)) {
                value = `[TOOL_ERROR] unknown tool ${JSON.stringify(call.tool)}; available: ${term.tools.join(", ")}`
                continue
              }
              save()
              return this.suspend({
                kind: "tool",
                name: call.tool,
                input: call.args ?? state.thought,
                ...(term.toolTimeout !== undefined ? { timeoutMs: term.toolTimeout * 1000 } : {}),
                observe: true
              })
            }
            case K.ReactObserve: {
              const state = extra as ReactState
              const term = fc.term as Term.Of<"React">
              state.step++
              const observation = Value.toText(value)
              state.state = term.observe === false
                ? state.thought
                : formatState(state.state, state.step, state.thought, state.tool, observation)
              if (state.step >= term.maxSteps) {
                value = state.state
                continue
              }
              this.sp = sp
              const suspended = this.reactThink(state, fc)
              sp = this.sp
              if (suspended !== undefined) {
                save()
                return suspended
              }
              code = fc.a!
              env = state.fn.env as Env | undefined
              ctx = state.fn.ctx as Ctx
              mode = Mode.Eval
              continue
            }
          }
        }
      }
    } catch (error) {
      this.finished = true
      save()
      throw this.toError(error, simpleAt ?? current, steps)
    }
  }

  /**
   * Start a ReAct thinking step: an `llm` think is called directly (so the request carries the tool
   * list); any other think term is evaluated and applied. Returns the request when suspending.
   */
  private reactThink(state: ReactState, callee: Code): StepResult | undefined {
    const term = callee.term as Term.Of<"React">
    const env = state.fn.env as Env | undefined
    const ctx = state.fn.ctx as Ctx
    this.push(K.ReactThought, callee, env, ctx, state)
    const think = callee.a!
    if (think.op === Op.Llm) {
      const fn = new Value.Closure(think.term, think, env, ctx)
      return this.suspend({ kind: "llm", term: think.term as Term.Of<"Llm">, fn, input: state.state, tools: term.tools })
    }
    this.push(K.ApplyTo, callee, env, ctx, state.state)
    return undefined
  }

  private stepsExceeded(steps: number): never {
    throw new BudgetExceeded({
      budget: "steps",
      limit: this.config.budget.steps,
      steps,
      message: `step budget of ${this.config.budget.steps} exhausted`,
      trace: this.config.events
    })
  }

  private timeExceeded(steps: number): never {
    throw new BudgetExceeded({
      budget: "time",
      limit: this.config.budget.timeMs,
      steps,
      message: `time budget of ${this.config.budget.timeMs} ms exhausted`,
      trace: this.config.events
    })
  }

  private toError(error: unknown, at: Code, steps: number): unknown {
    if (error instanceof BudgetExceeded && error.steps !== steps) {
      return new BudgetExceeded({ budget: error.budget, limit: error.limit, steps, message: error.message, trace: this.config.events })
    }
    if (error instanceof Fault || error instanceof Int.IntOverflow) {
      const kind = error instanceof Fault ? error.kind : "Overflow"
      const message = error instanceof Fault ? error.message : `integer overflow in ${error.op} (results must fit in 64 bits)`
      const path = Term.pathTo(this.root, at.term)
      return new EvalError({ kind, message, steps, ...(path !== undefined ? { path } : {}) })
    }
    if (error instanceof RangeError) {
      // a host limit (string or array length) reached by the term
      return new EvalError({ kind: "RuntimeError", message: `host limit reached: ${error.message}`, steps })
    }
    return error
  }
}
