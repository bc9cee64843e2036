/**
 * The evaluator's machine: an explicit-stack (CEK-style) interpreter over compiled code.
 *
 * Nothing here recurses on the JavaScript stack: the continuation is a flat array of frames, so
 * depth is a data-structure limit. The loop is plain synchronous TypeScript and holds the pure
 * calculus; agent forms run their own reduction rules (`src/forms/`) through the small interface
 * {@link AgentMachine}. When the machine reaches a node it cannot reduce by itself (an LLM call,
 * a tool, memory, parallel branches) it stops and returns the request; the driver answers it and
 * resumes the same machine.
 */
import type * as Budget from "../Budget.ts"
import { BudgetExceeded, type BudgetKind, EvalError } from "../Errors.ts"
import type { AgentStep } from "../forms/Form.ts"
import type { ChannelsState } from "../forms/channels.ts"
import type { ParState } from "../forms/par.ts"
import type { AgentMachine, OracleRequest } from "../forms/step.ts"
import * as Term from "../Term.ts"
import type * as Trace from "../Trace.ts"
import { preview } from "../Trace.ts"
import * as Value from "../Value.ts"
import { BinOp, Code, Op, type Scope } from "./code.ts"
import { compile } from "./compile.ts"
import { nestingOf } from "./nesting.ts"
import * as Int from "./int.ts"
import { binary, Fault, isTrue, listBytes, type Meter, typeError, unary } from "./operators.ts"
import * as Tier from "./tier.ts"

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
  /** The time (`Date.now()`) the driver read last, before the request it is answering (0: never). */
  now = 0
  /** When the time budget runs out; moved when a run's clock is restored from its journal. */
  constructor(public deadline: number) {}
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

export type StepResult =
  | { readonly _tag: "Done"; readonly value: Value.Value }
  | { readonly _tag: "Suspended"; readonly request: OracleRequest }
  | { readonly _tag: "Paused" }

/** A budget that ran out inside an operation; becomes a `BudgetExceeded` with the steps and trace. */
class Exhausted {
  constructor(
    readonly budget: BudgetKind,
    readonly limit: number,
    readonly message: string
  ) {}
}

/** A budget error of a run: the steps used, the counters and the trace so far. */
export const budgetError = (config: MachineConfig, budget: BudgetKind, limit: number, steps: number, message: string): BudgetExceeded => {
  const { llmCalls, tokens, toolCalls } = config.counters
  return new BudgetExceeded({ budget, limit, steps, message, trace: config.events, usage: { llmCalls, toolCalls, tokens } })
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
  /** A frame of an agent form: the value returned to it goes to the form's `resume`. */
  Form,
  /** A frame of an agent form that also receives, in its `raised`, the errors raised above it. */
  Catch
}

const enum Mode {
  Eval,
  Return,
  Apply
}

/** Frame kinds by name, for snapshots (the numbers are this build's; the names are the format). */
const FRAME_NAMES: Readonly<Record<K, string>> = {
  [K.AppArg]: "AppArg",
  [K.AppCall]: "AppCall",
  [K.ApplyTo]: "ApplyTo",
  [K.BinRight]: "BinRight",
  [K.BinDone]: "BinDone",
  [K.BoolCheck]: "BoolCheck",
  [K.Unary]: "Unary",
  [K.If]: "If",
  [K.ConsHead]: "ConsHead",
  [K.ConsDone]: "ConsDone",
  [K.PairFirst]: "PairFirst",
  [K.PairDone]: "PairDone",
  [K.ListItem]: "ListItem",
  [K.FoldInit]: "FoldInit",
  [K.FoldList]: "FoldList",
  [K.FoldStart]: "FoldStart",
  [K.FoldStep]: "FoldStep",
  [K.Eval]: "Eval",
  [K.Continue]: "Continue",
  [K.RunInput]: "RunInput",
  [K.Form]: "Form",
  [K.Catch]: "Catch"
}
const FRAME_KINDS: ReadonlyMap<string, K> = new Map(Object.entries(FRAME_NAMES).map(([k, name]) => [name, Number(k) as K]))
const MODE_NAMES = ["eval", "return", "apply"] as const

/**
 * The whole state of a machine between two steps: its frames bottom first and its registers.
 * `Checkpoint` encodes it; {@link Machine.restore} makes the same machine again.
 */
export interface MachineState {
  /** Five slots a frame, bottom first: kind name, code, environment, context, extra. */
  readonly frames: ReadonlyArray<unknown>
  readonly mode: (typeof MODE_NAMES)[number]
  readonly code: Code | undefined
  readonly env: Env | undefined
  readonly ctx: Ctx
  readonly value: Value.Value
  readonly fn: Value.Value
  readonly requests: number
}

/** Whether `frames` (of a {@link MachineState}) has the shape of a machine's frames. */
export const framesFit = (frames: ReadonlyArray<unknown>, isCode: (v: unknown) => boolean): boolean => {
  if (frames.length % W !== 0) return false
  for (let sp = 0; sp < frames.length; sp += W) {
    const code = frames[sp + 1]
    const env = frames[sp + 2]
    if (!FRAME_KINDS.has(frames[sp] as string) || !(code === undefined || isCode(code))) return false
    if (!(env === undefined || env instanceof Env) || !(frames[sp + 3] instanceof Ctx)) return false
  }
  return true
}

/** Frame slots: kind, code, env, ctx, extra. */
const W = 5

/** Steps between clock and heap checks (about a millisecond of cheap steps). */
const CHECK_EVERY = 0x3fff

const PAUSED: StepResult = { _tag: "Paused" }

/** What the evaluation loop returns when an agent form's step is next (see `Machine.run`). */
const AGENT_STEP: unique symbol = Symbol("AgentStep")
/** What `reduce` returns when an error was raised above a catching frame (kept in `raised`). */
const RAISED: unique symbol = Symbol("Raised")
/** Work units (see `Meter.touch`) an expensive operation may add before the clock is read again. */
const TOUCH_CHECK = 1 << 16
/** Stop a run when the process heap is this full, before V8 would abort the process. */
const HEAP_FULL = 0.85

/** Evaluate a simple expression directly (its depth is bounded at compile time). */
const evalSimple = (code: Code, env: Env | undefined, ctx: Ctx, m: Machine): Value.Value => {
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
      if (ctx.self === undefined) throw new Fault("RuntimeError", "self used outside a tool")
      return ctx.self
    default: {
      const a = evalSimple(code.a!, env, ctx, m)
      if (code.sop === Op.Unary) return unary(code.x, a, m)
      const op = code.x as BinOp
      if (op === BinOp.And || op === BinOp.Or) {
        const left = isTrue(a, op === BinOp.And ? "and's operands" : "or's operands")
        if (left === (op === BinOp.Or)) return left
        return isTrue(evalSimple(code.b!, env, ctx, m), op === BinOp.And ? "and's operands" : "or's operands")
      }
      return binary(op, a, evalSimple(code.b!, env, ctx, m), m)
    }
  }
}

/** Whether evaluating a simple expression fails (its value otherwise). */
const attempt = (code: Code, env: Env | undefined, ctx: Ctx, m: Machine): { readonly value: Value.Value } | undefined => {
  try {
    return { value: evalSimple(code, env, ctx, m) }
  } catch {
    return undefined
  }
}

/**
 * The node of a simple expression where its evaluation fails, found by evaluating it again (it
 * is pure), or `undefined` when it evaluates: the hot path then never records where it is.
 */
const failingNode = (code: Code, env: Env | undefined, ctx: Ctx, m: Machine): Code | undefined => {
  const whole = attempt(code, env, ctx, m)
  if (whole !== undefined) return undefined
  if (code.op !== Op.Simple) return code
  const a = attempt(code.a!, env, ctx, m)
  if (a === undefined) return failingNode(code.a!, env, ctx, m)
  const op = code.x as BinOp
  const shortCircuit = code.sop === Op.Binary && (op === BinOp.And || op === BinOp.Or) && a.value === (op === BinOp.Or)
  if (code.b !== undefined && !shortCircuit && attempt(code.b, env, ctx, m) === undefined) return failingNode(code.b, env, ctx, m)
  return code
}

/** Where a fault raised while the machine was at `current` happened: inside its simple operands, or at it. */
const faultAt = (current: Code, env: Env | undefined, ctx: Ctx, m: Machine): Code => {
  if (current.op === Op.Simple) return failingNode(current, env, ctx, m) ?? current
  const operands = current.op === Op.App ? [current.a!, current.b!] : current.op === Op.If ? [current.a!] : []
  for (const operand of operands) {
    if (!operand.simple) break
    const at = failingNode(operand, env, ctx, m)
    if (at !== undefined) return at
  }
  return current
}

/** The context a function body runs in: the caller's tool context, the callee's eval depth. */
const calleeCtx = (caller: Ctx, callee: Ctx): Ctx => {
  if (caller === callee) return caller
  if (caller.self === undefined && caller.toolName === undefined) return callee
  if (caller.evalDepth === callee.evalDepth) return caller
  return new Ctx(caller.self, caller.toolName, caller.step, callee.evalDepth)
}

export class Machine implements AgentMachine, Meter {
  private readonly frames: Array<any>
  private sp = 0
  private mode: Mode = Mode.Eval
  private code: Code | undefined
  private env: Env | undefined
  private ctx: Ctx
  private value: Value.Value = null
  private fn: Value.Value = null
  /** The agent form step {@link run} takes next: its code, and the closure (apply) or state (resume). */
  private stepCode: Code | undefined
  private stepFn: Value.Closure | undefined
  private stepState: unknown
  /** The error on its way to a catching frame (see `catches`). */
  private raised: EvalError | undefined
  /** The current slice's length and end (0: its clock has not started). */
  private sliceMs = Infinity
  private sliceEnd = 0
  private finished = false
  private requests = 0
  private touched = 0
  /** For a machine not yet run: the input its code is applied to (`null`: none), for the compiled tier. */
  private fresh: Code | null | undefined

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
    const nesting = nestingOf(code)
    this.frames = nesting === undefined ? [] : new Array(Math.min(nesting + 1, config.budget.depth) * W)
  }

  /** Evaluate `term` in an empty environment. */
  static evaluate(config: MachineConfig, term: Term.Term, ctx: Ctx): Machine {
    const m = new Machine(config, term, compile(term, undefined), undefined, ctx)
    m.fresh = null
    return m
  }

  /**
   * The reference's `run`: evaluate `code`; if it is a function, evaluate `input` (with the tool
   * itself as `self` when there is a tool context) and apply the function to it.
   */
  static run(config: MachineConfig, code: Term.Term, input: { readonly term: Term.Term } | { readonly value: Value.Value }, ctx: Ctx): Machine {
    const m = Machine.evaluate(config, code, ctx)
    const inputCode =
      "term" in input ? compile(input.term, undefined) : new Code(Op.Const, Term.lit(null), undefined, undefined, undefined, input.value, undefined)
    m.pushFrame(K.RunInput, inputCode, undefined, ctx, undefined)
    m.fresh = inputCode
    return m
  }

  /**
   * Branch `index` of the pending `par` request (or the agent of a pending `channels` request), as
   * its own machine sharing this run's counters. `labelled`: whether its events carry a branch
   * path of their own (a `par` branch) or this machine's (a `channels` agent).
   */
  branch(index: number, input: Value.Value, events: Array<Trace.TraceEvent>, labelled = true): Machine {
    const top = this.sp - W
    const code = this.frames[top + 1] as Code
    const { fn } = this.frames[top + 4] as ParState | ChannelsState
    const child = code.items![index]!
    const config = labelled ? { ...this.config, events, branch: `${this.config.branch === undefined ? "" : this.config.branch + "."}${index}` } : this.config
    const m = new Machine(config, this.root, child, fn.env as Env | undefined, fn.ctx as Ctx)
    m.pushFrame(K.ApplyTo, child, fn.env as Env | undefined, fn.ctx as Ctx, input)
    return m
  }

  /**
   * The machine's state between two steps (suspended on an oracle request, or not started): what
   * a checkpoint records. The frames' contents are shared, not copied.
   */
  snapshot(): MachineState {
    if (this.finished) throw new Error("machine already finished")
    const frames = this.frames.slice(0, this.sp)
    for (let sp = 0; sp < this.sp; sp += W) frames[sp] = FRAME_NAMES[frames[sp] as K]
    return {
      frames,
      mode: MODE_NAMES[this.mode],
      code: this.code,
      env: this.env,
      ctx: this.ctx,
      value: this.value,
      fn: this.fn,
      requests: this.requests
    }
  }

  /** A machine in the state {@link snapshot} gave (from this or another process). */
  static restore(config: MachineConfig, root: Term.Term, state: MachineState): Machine {
    const m = new Machine(config, root, state.code!, state.env, state.ctx)
    const f = state.frames
    if (f.length % W !== 0) throw new Error("frames are not whole")
    for (let sp = 0; sp < f.length; sp += W) {
      const kind = FRAME_KINDS.get(f[sp] as string)
      if (kind === undefined) throw new Error(`unknown frame kind ${String(f[sp])}`)
      m.pushFrame(kind, f[sp + 1] as Code | undefined, f[sp + 2] as Env | undefined, f[sp + 3] as Ctx, f[sp + 4])
    }
    m.mode = MODE_NAMES.indexOf(state.mode) as Mode
    m.value = state.value
    m.fn = state.fn
    m.requests = state.requests
    return m
  }

  // -------------------------------------------------------------------------------------------
  // What agent forms use (AgentMachine) and operators report to (Meter)
  // -------------------------------------------------------------------------------------------

  get budget(): Budget.Budget {
    return this.config.budget
  }

  get tracing(): boolean {
    return this.config.trace !== "off"
  }

  get steps(): number {
    return this.config.counters.steps
  }

  nextRequestId(): number {
    return ++this.requests
  }

  push(code: Code, state: unknown): void {
    this.pushFrame(K.Form, code, undefined, this.ctx, state)
  }

  pushCatching(code: Code, state: unknown): void {
    this.pushFrame(K.Catch, code, undefined, this.ctx, state)
  }

  call(child: Code, fn: Value.Closure, arg: Value.Value): void {
    const env = fn.env as Env | undefined
    const ctx = fn.ctx as Ctx
    this.pushFrame(K.ApplyTo, child, env, ctx, arg)
    this.evaluate(child, fn)
  }

  evaluate(child: Code, fn: Value.Closure): void {
    this.mode = Mode.Eval
    this.code = child
    this.env = fn.env as Env | undefined
    this.ctx = fn.ctx as Ctx
  }

  done(value: Value.Value): void {
    this.mode = Mode.Return
    this.value = value
  }

  record(event: Trace.TraceEvent): void {
    const recorded = this.config.branch === undefined ? event : { ...event, branch: this.config.branch }
    this.config.events.push(recorded)
    this.config.listener?.(recorded)
  }

  fail(kind: "TypeError" | "RouteError" | "ValidationError" | "RuntimeError", message: string): never {
    throw new Fault(kind, message)
  }

  exhausted(budget: "loop", limit: number, message: string): never {
    throw new Exhausted(budget, limit, message)
  }

  isTrue(value: Value.Value, what: string): boolean {
    return isTrue(value, what)
  }

  touch(units: number): void {
    this.touched += units
    if (this.touched < TOUCH_CHECK) return
    this.touched = 0
    this.checkClock()
  }

  built(bytes: number): void {
    const limit = this.config.budget.memory
    if (bytes > limit) throw new Exhausted("memory", limit, `a value of ${megabytes(bytes)} exceeds the memory budget of ${megabytes(limit)}`)
  }

  // -------------------------------------------------------------------------------------------

  private pushFrame(kind: K, code: Code | undefined, env: Env | undefined, ctx: Ctx, extra: unknown) {
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
    throw budgetError(this.config, "depth", this.config.budget.depth, steps, `evaluation nested deeper than ${this.config.budget.depth} frames`)
  }

  /** Check the time and memory budgets; returns the time it read. */
  checkClock(): number {
    const now = Date.now()
    if (now > this.config.counters.deadline) {
      throw new Exhausted("time", this.config.budget.timeMs, `time budget of ${this.config.budget.timeMs} ms exhausted`)
    }
    // node:v8 is loaded on the first check rather than with this module: a program that never
    // runs long (`lambdagent lint`) does not pay for loading it
    const heap = process.getBuiltinModule("node:v8").getHeapStatistics()
    if (heap.used_heap_size > HEAP_FULL * heap.heap_size_limit) {
      throw new Exhausted(
        "memory",
        this.config.budget.memory,
        `the process heap is nearly full (${megabytes(heap.used_heap_size)} of ${megabytes(heap.heap_size_limit)}); the run was stopped to protect the process`
      )
    }
    return now
  }

  /** Answer the pending request and keep going. */
  resume(answer: Value.Value, sliceMs?: number): StepResult {
    this.value = answer
    this.mode = Mode.Return
    return this.run(sliceMs)
  }

  /**
   * Whether `error` (as `failure`, the error the run would stop with) goes to a catching frame
   * below `sp`; if so it is kept in `raised` for {@link deliverRaised}. Only the term's own
   * errors are caught: budgets and host limits stop the run wherever they happen.
   */
  private catches(error: unknown, failure: unknown, sp: number): boolean {
    if (!(error instanceof Fault || error instanceof Int.IntOverflow) || !(failure instanceof EvalError)) return false
    const f = this.frames
    for (let i = sp - W; i >= 0; i -= W) {
      if (f[i] === K.Catch) {
        this.raised = failure
        return true
      }
    }
    return false
  }

  /** Unwind to the topmost catching frame and hand it the error kept in `raised`. */
  private deliverRaised(): OracleRequest | undefined {
    const f = this.frames
    let i = this.sp - W
    while (f[i] !== K.Catch) i -= W
    const code = f[i + 1] as Code
    const state = f[i + 4]
    this.env = f[i + 2]
    this.ctx = f[i + 3]
    for (let j = i; j < this.sp; j++) f[j] = undefined
    this.sp = i
    this.mode = Mode.Return
    const error = this.raised!
    this.raised = undefined
    this.stepCode = code
    const counters = this.config.counters
    if (++counters.steps > this.config.budget.steps) this.stepsExceeded(counters.steps)
    return (code.x as AgentStep).raised!(this, code, state, error)
  }

  /** Run an agent form's step with the machine's registers saved, then hand back the request it made, if any. */
  private agentStep(step: AgentStep, code: Code, fn: Value.Closure | undefined, state: unknown, value: Value.Value): OracleRequest | undefined {
    const counters = this.config.counters
    if (++counters.steps > this.config.budget.steps) this.stepsExceeded(counters.steps)
    return fn === undefined ? step.resume!(this, code, state, value) : step.apply(this, code, fn, value)
  }

  /**
   * Run until the term is reduced to a value or reaches an oracle — or, with `sliceMs`, pauses
   * after about that much time so the caller can interleave other work. Throws
   * `EvalError`/`BudgetExceeded`.
   */
  run(sliceMs?: number): StepResult {
    if (this.finished) throw new Error("machine already finished")
    const fresh = this.fresh
    if (fresh !== undefined) {
      this.fresh = undefined
      // whole runs of pure code go to the compiled tier; slices, beta traces and runs whose
      // events stream to a listener (which a restart here would tell them twice) stay here
      const config = this.config
      if (sliceMs === undefined && Tier.enabled() && (config.trace === "off" || (config.trace === "agent" && config.listener === undefined))) {
        const outcome = Tier.run(this, this.code!, fresh ?? undefined, this.ctx)
        if (outcome !== undefined) {
          this.finished = true
          return { _tag: "Done", value: outcome.value }
        }
      }
    }
    // the slice's clock starts at its first check, so a run that reaches an oracle sooner never reads it
    this.sliceMs = sliceMs ?? Infinity
    this.sliceEnd = 0
    for (;;) {
      let result = this.reduce()
      let request: OracleRequest | undefined
      for (;;) {
        if (result !== AGENT_STEP && result !== RAISED) return result
        try {
          const step = this.stepCode!
          request = result === RAISED ? this.deliverRaised() : this.agentStep(step.x as AgentStep, step, this.stepFn, this.stepState, this.value)
          break
        } catch (error) {
          const code = this.stepCode!
          const at = error instanceof Fault || error instanceof Int.IntOverflow ? faultAt(code, this.env, this.ctx, this) : code
          const failure = this.toError(error, at, this.config.counters.steps)
          if (!this.catches(error, failure, this.sp)) {
            this.finished = true
            throw failure
          }
          this.stepFn = undefined
          this.stepState = undefined
          result = RAISED
        }
      }
      this.stepFn = undefined
      this.stepState = undefined
      if (request !== undefined) {
        this.mode = Mode.Return
        return { _tag: "Suspended", request }
      }
    }
  }

  /**
   * The evaluation loop: reduce until a value, a pause or an agent form's step (left in
   * `stepCode`/`stepFn`/`stepState` for {@link run}). The registers live in locals while it runs
   * and are written back once, on the way out. Frame pushes are written out in place rather than
   * through `pushFrame`, which works on the saved registers: they would be written back around every call.
   */
  private reduce(): StepResult | typeof AGENT_STEP | typeof RAISED {
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
    try {
      for (;;) {
        if (mode === Mode.Eval) {
          if (++steps > maxSteps) this.stepsExceeded(steps)
          if ((steps & CHECK_EVERY) === 0) {
            const now = this.checkClock()
            if (this.sliceEnd === 0) this.sliceEnd = now + this.sliceMs
            else if (now > this.sliceEnd) {
              // this node is evaluated (and counted) when the run goes on
              steps--
              return PAUSED
            }
          }
          current = code
          switch (code.op) {
            case Op.Simple:
              value = evalSimple(code, env, ctx, this)
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
            case Op.Agent:
              value = new Value.Closure(code.term, code, env, ctx)
              mode = Mode.Return
              continue
            case Op.App:
              if (code.a!.simple && code.b!.simple) {
                fn = evalSimple(code.a!, env, ctx, this)
                value = evalSimple(code.b!, env, ctx, this)
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
                const test = evalSimple(cond, env, ctx, this)
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
              f[sp] = code.op === Op.Binary ? K.BinRight : code.op === Op.Unary ? K.Unary : code.op === Op.Fold ? K.FoldInit : K.Continue
              f[sp + 1] = code
              f[sp + 2] = env
              f[sp + 3] = ctx
              sp += W
              code = code.a!
              continue
            case Op.Eval:
              if (ctx.evalDepth >= budget.evalDepth) {
                throw budgetError(config, "evalDepth", budget.evalDepth, steps, `eval nested deeper than ${budget.evalDepth}`)
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
            case Op.CodeOf:
              value = this.codeOf(code.x as string, ctx)
              mode = Mode.Return
              continue
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
          if (callee.op !== Op.Agent) throw typeError("not a function")
          current = callee
          this.stepCode = callee
          this.stepFn = fn
          return AGENT_STEP
        } else {
          // return `value` to the top frame
          if (sp === 0) {
            this.finished = true
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
              value = binary(fc.x as BinOp, extra, value, this)
              continue
            case K.BoolCheck:
              isTrue(value, fc.x === BinOp.And ? "and's operands" : "or's operands")
              continue
            case K.Unary:
              value = unary(fc.x, value, this)
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
              if ((tail.length & 0xffff) === 0xffff) this.built(listBytes(tail.length + 1))
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
              if (agentTrace) this.recordContinue(steps, ctx.toolName, value)
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
            case K.Form:
            case K.Catch:
              this.stepCode = fc
              this.stepState = extra
              return AGENT_STEP
          }
        }
      }
    } catch (error) {
      const at = error instanceof Fault || error instanceof Int.IntOverflow ? faultAt(current, env, ctx, this) : current
      const failure = this.toError(error, at, counters.steps > steps ? counters.steps : steps)
      if (this.catches(error, failure, sp)) return RAISED
      this.finished = true
      throw failure
    } finally {
      this.sp = sp
      this.mode = mode
      this.code = code
      this.env = env
      this.ctx = ctx
      this.value = value
      this.fn = fn
      counters.steps = steps
    }
  }

  /** Throw the step budget's error (the tier calls it too). */
  stepsExceeded(steps: number): never {
    throw budgetError(this.config, "steps", this.config.budget.steps, steps, `step budget of ${this.config.budget.steps} exhausted`)
  }

  /** `code_of name`: a tool's code, or the running tool's own. */
  codeOf(name: string, ctx: Ctx): Value.Quoted {
    const source = this.config.registry.get(name)
    if (source !== undefined) return new Value.Quoted(source)
    if (name !== "self") throw new Fault("RuntimeError", `unknown tool ${JSON.stringify(name)} in code_of`)
    if (ctx.self === undefined) throw new Fault("RuntimeError", 'code_of "self" used outside a tool')
    if (!(ctx.self instanceof Value.Closure)) throw new Fault("RuntimeError", "self is not a function")
    return new Value.Quoted(ctx.self.term)
  }

  /** Record the event of a `continue` at `step`. */
  recordContinue(step: number, tool: string, input: Value.Value): void {
    this.record({ step, kind: "continue", name: tool, output: preview(Value.toText(input)) })
  }

  /**
   * The error of a run the compiled tier stopped with `error`, raised by the operation of node
   * `at` (in `env` and `ctx`), after `steps` steps: the error the machine gives for it.
   */
  tierError(error: unknown, at: Code | undefined, env: Env | undefined, ctx: Ctx, steps: number): unknown {
    this.finished = true
    const node = at === undefined ? this.code! : error instanceof Fault || error instanceof Int.IntOverflow ? faultAt(at, env, ctx, this) : at
    return this.toError(error, node, steps)
  }

  private toError(error: unknown, at: Code, steps: number): unknown {
    if (error instanceof Exhausted || (error instanceof BudgetExceeded && error.steps !== steps)) {
      return budgetError(this.config, error.budget, error.limit, steps, error.message)
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

const megabytes = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`
