/**
 * The evaluator: runs terms under hard budgets and records a trace.
 *
 * {@link evaluate} reduces a pure term to a value. {@link run} is the tool protocol: evaluate the
 * code, and if it is a function apply it to the (normalised) input, with `self`, `code_of` and
 * `continue` available when the code is a named tool. {@link start} runs a term step by step: it
 * stops at every node it cannot reduce by itself (an LLM call, a tool, memory, parallel branches)
 * and resumes with the answer — the agent runtime is built on it.
 *
 * @since 0.1.0
 * @module
 */
import * as Budget from "./Budget.ts"
import type * as Errors from "./Errors.ts"
import { EvalError } from "./Errors.ts"
import { foldTree } from "./internal/tree.ts"
import { budgetError, Counters, Ctx, Machine, type MachineConfig } from "./internal/machine.ts"
import * as Oracle from "./Oracle.ts"
import * as Term from "./Term.ts"
import type * as Trace from "./Trace.ts"
import * as Value from "./Value.ts"

/**
 * A node the evaluator cannot reduce by itself: an LLM call, a tool call, a memory read or
 * write, or parallel branches (see `Oracle.Request`). The driver answers it with a value.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Evaluator } from "lambdagent"
 * const kind = (r: Evaluator.OracleRequest) => r.kind
 * ```
 */
export type OracleRequest = Oracle.Request

/**
 * Options of every evaluation.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Evaluator } from "lambdagent"
 * const o: Evaluator.EvaluateOptions = { budget: { steps: 1_000_000 }, trace: "beta" }
 * ```
 */
export interface EvaluateOptions {
  readonly budget?: Partial<Budget.Budget>
  readonly trace?: Trace.TraceLevel
  /** Named tools' code, for `code_of` (and for {@link run} by name). */
  readonly tools?: ReadonlyMap<string, Term.Term> | Readonly<Record<string, Term.Term>>
  /** Told of every trace event as it is recorded. */
  readonly onEvent?: (event: Trace.TraceEvent) => void
  /**
   * When the run began (`Date.now()` ms), default now: the time budget counts from here. Take it
   * before parsing the term (pass the same deadline to `Term.parse`) so that parsing counts too.
   */
  readonly startedAt?: number
}

/**
 * Options of {@link run}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Evaluator } from "lambdagent"
 * const o: Evaluator.RunOptions = { tool: "factorial", step: 3 }
 * ```
 */
export interface RunOptions extends EvaluateOptions {
  /** Run the code as this named tool: `self`, `code_of "self"` and `continue` refer to it. */
  readonly tool?: string
  /** How many `continue` round trips came before this call (the next continuation says step + 1). */
  readonly step?: number
  /** Normalise the input as described in {@link normalizeInput} (default true). */
  readonly normalize?: boolean
}

/**
 * The outcome of a run: the value, the trace, and the steps used.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Evaluator, Term } from "lambdagent"
 * const r: Evaluator.Result = Evaluator.run(Term.lam("x", Term.var("x")), 5)
 * console.log(r.value, r.steps)
 * ```
 */
export interface Result {
  readonly value: Value.Value
  readonly trace: ReadonlyArray<Trace.TraceEvent>
  readonly steps: number
}

/**
 * One step of a stepwise evaluation: finished, or waiting for an oracle's answer.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Evaluator } from "lambdagent"
 * const done = (s: Evaluator.Step) => s._tag === "Done"
 * ```
 */
export type Step = { readonly _tag: "Done"; readonly value: Value.Value } | { readonly _tag: "Suspended"; readonly request: OracleRequest }

/**
 * A step of a time-sliced evaluation ({@link Execution.slice}): a {@link Step}, or `Paused` when
 * the slice ended first.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Evaluator } from "lambdagent"
 * const more = (s: Evaluator.SliceStep) => s._tag === "Paused"
 * ```
 */
export type SliceStep = Step | { readonly _tag: "Paused" }

const registryOf = (tools: EvaluateOptions["tools"]): ReadonlyMap<string, Term.Term> =>
  tools === undefined ? new Map() : tools instanceof Map ? tools : new Map(Object.entries(tools))

/**
 * A stepwise evaluation. Call {@link Execution.next} once, then {@link Execution.resume} with the
 * answer to each request until the step is `Done`. Errors are thrown as `EvalError` or
 * `BudgetExceeded`.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Evaluator, Term } from "lambdagent"
 * const exec = Evaluator.start(Term.app(Term.tool("double"), Term.lit(21)))
 * let step = exec.next()
 * while (step._tag === "Suspended") step = exec.resume((step.request as { input: number }).input * 2)
 * console.log(step.value) // 42
 * ```
 */
export class Execution {
  /** @internal */
  constructor(
    /** @internal */
    readonly machine: Machine,
    /** The events recorded so far (shared with parallel branches' own lists until merged). */
    readonly events: Array<Trace.TraceEvent>,
    /** @internal */
    readonly counters: Counters,
    /**
     * Where this execution sits in the run: `""` for the run itself, and for a `par` branch the
     * scope of its parent, the `par` request's id and the branch index (`"3.1/"`). A request's
     * {@link requestKey} is unique within the run and the same in every replay of it.
     */
    readonly scope: string = ""
  ) {}

  /** The key of one of this execution's requests, unique within the run (see {@link scope}). */
  requestKey(request: Oracle.Request): string {
    return `${this.scope}${request.id}`
  }

  /** Run until done or until an oracle is needed. */
  next(): Step {
    return this.machine.run() as Step
  }

  /** Answer the pending request and run on. */
  resume(answer: Value.Value): Step {
    return this.machine.resume(answer) as Step
  }

  /**
   * Run on for about `ms` milliseconds at most: a long pure evaluation then returns `Paused`, so
   * the caller can serve other work (signals, other requests) and call `slice` again to go on.
   * `answer` answers the pending oracle request, as {@link resume} does.
   */
  slice(ms: number, answer?: Value.Value): SliceStep {
    // `arguments`, not `answer === undefined` (the answer may be any value), nor a rest array on this hot path
    // biome-ignore lint/complexity/noArguments: counts the arguments without allocating
    return arguments.length < 2 ? this.machine.run(ms) : this.machine.resume(answer as Value.Value, ms)
  }

  /** Steps used so far (shared by the run's parallel branches). */
  get steps(): number {
    return this.counters.steps
  }

  /** The run's shared counters of steps, LLM calls, tool calls and tokens (the driver updates them). */
  get usage(): { steps: number; llmCalls: number; toolCalls: number; tokens: number } {
    return this.counters
  }

  /** When the time budget runs out (`Date.now()` milliseconds). */
  get deadline(): number {
    return this.counters.deadline
  }

  /** Milliseconds of the time budget used so far. */
  get elapsedMs(): number {
    return Math.max(0, Date.now() - (this.counters.deadline - this.budget.timeMs))
  }

  /**
   * Count `elapsedMs` of the time budget as used, when more than the run has used in this
   * execution: a run executed again from its journal goes on with the time its earlier executions
   * had used, not with a fresh budget.
   */
  restoreElapsed(elapsedMs: number): void {
    if (Number.isFinite(this.counters.deadline) && elapsedMs > this.elapsedMs) this.counters.deadline = Date.now() + this.budget.timeMs - elapsedMs
  }

  /** The budget this execution runs under. */
  get budget(): Budget.Budget {
    return this.machine.config.budget
  }

  /**
   * A `BudgetExceeded` for this run: `budget` ran out at `limit`; it carries the steps, the
   * counters and the trace so far.
   */
  exhausted(budget: Errors.BudgetKind, limit: number, message = `${budget} budget of ${limit} exhausted`): Errors.BudgetExceeded {
    return budgetError(this.machine.config, budget, limit, this.counters.steps, message)
  }

  /** Record an event in this execution's trace (and tell the listener), as the machine does. */
  record(event: Trace.TraceEvent): void {
    const config = this.machine.config
    const recorded = config.branch === undefined ? event : { ...event, branch: config.branch }
    this.events.push(recorded)
    config.listener?.(recorded)
  }

  /**
   * Branch `index` of a pending `par` request, as its own execution sharing this run's budget.
   * Its events go to its own list (merge them back in branch order).
   */
  branch(request: Oracle.ParRequest, index: number): Execution {
    const events: Array<Trace.TraceEvent> = []
    return new Execution(this.machine.branch(index, request.input, events), events, this.counters, `${this.scope}${request.id}.${index}/`)
  }

  /**
   * This execution, recording its events into `events` instead (calls answered at the same time
   * keep their events apart this way, to be merged in call order).
   */
  recordingInto(events: Array<Trace.TraceEvent>): Execution {
    return new Execution(this.machine, events, this.counters, this.scope)
  }

  /**
   * The agent of a pending `channels` request, as its own execution sharing this run's budget,
   * trace and branch path (it is not a branch: it runs while its parent waits).
   */
  scoped(request: Oracle.ChannelsRequest): Execution {
    return new Execution(this.machine.branch(0, request.input, this.events, false), this.events, this.counters, `${this.scope}${request.id}.0/`)
  }

  /** The trace level this execution records at. */
  get traceLevel(): Trace.TraceLevel {
    return this.machine.config.trace
  }

  /** The branch path of this execution inside `par` branches (`undefined` for the run itself). */
  get branchPath(): string | undefined {
    return this.machine.config.branch
  }
}

const configOf = (options: EvaluateOptions): MachineConfig => {
  const budget = Budget.make(options.budget)
  const config: MachineConfig = {
    registry: registryOf(options.tools),
    budget,
    trace: options.trace ?? "off",
    counters: new Counters((options.startedAt ?? Date.now()) + budget.timeMs),
    events: [],
    ...(options.onEvent !== undefined ? { listener: options.onEvent } : {})
  }
  // what came before the run (parsing its code) may already have used up its time
  if (options.startedAt !== undefined && Date.now() > config.counters.deadline) {
    throw budgetError(config, "time", budget.timeMs, 0, `time budget of ${budget.timeMs} ms exhausted before the evaluation began`)
  }
  return config
}

/** @internal An execution of a machine made elsewhere (a checkpoint's). */
export const fromMachine = (machine: Machine, config: MachineConfig): Execution => new Execution(machine, config.events, config.counters)

/**
 * Start a stepwise evaluation of `term` (see {@link Execution}).
 *
 * @since 0.1.0
 * @category evaluation
 * @example
 * ```ts
 * import { Evaluator, Term } from "lambdagent"
 * const step = Evaluator.start(Term.add(Term.lit(1), Term.lit(2))).next() // { _tag: "Done", value: 3 }
 * ```
 */
export const start = (term: Term.Term, options: EvaluateOptions = {}): Execution => {
  const config = configOf(options)
  return new Execution(Machine.evaluate(config, term, new Ctx(undefined, undefined, 0, 0)), config.events, config.counters)
}

/**
 * Start a stepwise {@link run}: the tool protocol, oracle by oracle.
 *
 * @since 0.1.0
 * @category evaluation
 * @example
 * ```ts
 * import { Evaluator, Term } from "lambdagent"
 * const exec = Evaluator.startRun(Term.tool("echo"), "hi")
 * const step = exec.next() // Suspended: { kind: "tool", name: "echo", input: "hi", … }
 * ```
 */
export const startRun = (code: Term.Term, input: unknown, options: RunOptions = {}): Execution => {
  const config = configOf(options)
  const json = options.normalize === false ? input : normalizeInput(input)
  const ctx = new Ctx(undefined, options.tool, options.step ?? 0, 0)
  const data = dataValue(json)
  // reading the input as a term counts against the run's time budget
  const source = data === undefined ? { term: Term.parse(json, { deadline: config.counters.deadline, timeMs: config.budget.timeMs }) } : { value: data }
  return new Execution(Machine.run(config, code, source, ctx), config.events, config.counters)
}

/**
 * Start applying `code` to a value (when it evaluates to a function; otherwise its value is the
 * result): the input is data, not a term, and is not normalised. Agent runs start this way.
 *
 * @since 0.1.0
 * @category evaluation
 * @example
 * ```ts
 * import { Evaluator, Term } from "lambdagent"
 * const step = Evaluator.startApply(Term.lam("s", Term.length(Term.var("s"))), "{not json").next()
 * // { _tag: "Done", value: 9 }
 * ```
 */
export const startApply = (code: Term.Term, input: Value.Value, options: RunOptions = {}): Execution => {
  const config = configOf(options)
  const ctx = new Ctx(undefined, options.tool, options.step ?? 0, 0)
  return new Execution(Machine.run(config, code, { value: input }, ctx), config.events, config.counters)
}

const isDatum = (v: unknown): v is Value.Value =>
  v === null ||
  typeof v === "string" ||
  typeof v === "boolean" ||
  (typeof v === "number" && Number.isSafeInteger(v)) ||
  (typeof v === "bigint" && v >= -(2n ** 63n) && v < 2n ** 63n)

/** Plain data (a literal, or a flat array of literals) as a value, skipping the term parser. */
const dataValue = (json: unknown): Value.Value | undefined => {
  if (isDatum(json)) return json === 0 ? 0 : json
  if (Array.isArray(json) && json.every(isDatum)) return Value.fromArray(json.map((v) => (v === 0 ? 0 : v)))
  return undefined
}

const pureOnly = (execution: Execution, request: OracleRequest) =>
  new EvalError({
    kind: "OracleError",
    message: `the term needs ${Oracle.describe(request)}; pure evaluation cannot answer it (use a runtime)`,
    steps: execution.steps
  })

const finish = (execution: Execution): Result => {
  const step = execution.next()
  if (step._tag === "Suspended") throw pureOnly(execution, step.request)
  return { value: step.value, trace: execution.events, steps: execution.steps }
}

/**
 * Options of {@link complete}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Evaluator } from "lambdagent"
 * const o: Evaluator.CompleteOptions = { signal: AbortSignal.timeout(1_000), sliceMs: 5 }
 * ```
 */
export interface CompleteOptions {
  /** Stops the evaluation between two slices; the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal
  /** Longest stretch of evaluation between two turns of the event loop, in ms (default 10). */
  readonly sliceMs?: number
}

/**
 * Finish a pure evaluation without holding the event loop: the machine runs in slices of about
 * `sliceMs` and yields between them, so timers, I/O and signals (Ctrl+C) are served while a long
 * term computes, and `signal` can stop it. Rejects like {@link evaluate}.
 *
 * @since 0.2.0
 * @category evaluation
 * @example
 * ```ts
 * import { Evaluator, Term } from "lambdagent"
 * const result = await Evaluator.complete(Evaluator.start(Term.mul(Term.lit(6), Term.lit(7))))
 * console.log(result.value) // 42
 * ```
 */
export const complete = async (execution: Execution, options: CompleteOptions = {}): Promise<Result> => {
  const sliceMs = options.sliceMs ?? 10
  const signal = options.signal
  for (let step = execution.slice(sliceMs); ; step = execution.slice(sliceMs)) {
    if (step._tag === "Done") return { value: step.value, trace: execution.events, steps: execution.steps }
    if (step._tag === "Suspended") throw pureOnly(execution, step.request)
    await new Promise<void>((resolve) => setImmediate(resolve))
    if (signal?.aborted === true) throw signal.reason
  }
}

/**
 * Evaluate a pure term to a value. Throws `EvalError` or `BudgetExceeded`.
 *
 * @since 0.1.0
 * @category evaluation
 * @example
 * ```ts
 * import { Evaluator, Term } from "lambdagent"
 * Evaluator.evaluate(Term.mul(Term.lit(6), Term.lit(7))) // 42
 * ```
 */
export const evaluate = (term: Term.Term, options: EvaluateOptions = {}): Value.Value => finish(start(term, options)).value

/**
 * Evaluate a pure term and report the trace and steps used.
 *
 * @since 0.1.0
 * @category evaluation
 * @example
 * ```ts
 * import { Evaluator, Term } from "lambdagent"
 * const r = Evaluator.evaluateDetailed(Term.app(Term.lam("x", Term.var("x")), Term.lit(1)), { trace: "beta" })
 * console.log(r.trace.length) // 1
 * ```
 */
export const evaluateDetailed = (term: Term.Term, options: EvaluateOptions = {}): Result => finish(start(term, options))

/**
 * The tool protocol: evaluate `code`; if the value is a function, apply it to `input` (normalised,
 * then read as a term). With `options.tool`, the code runs as that named tool (`self`,
 * `continue`). A continuation result means "call again with `next_input`".
 *
 * @since 0.1.0
 * @category evaluation
 * @example
 * ```ts
 * import { Evaluator, Term } from "lambdagent"
 * const square = Term.lam("x", Term.mul(Term.var("x"), Term.var("x")))
 * Evaluator.run(square, "7").value // 49 (the string "7" is normalised to 7)
 * ```
 */
export const run = (code: Term.Term, input: unknown, options: RunOptions = {}): Result => finish(startRun(code, input, options))

/**
 * Run a named tool from `options.tools` on an input (see {@link run}).
 *
 * @since 0.1.0
 * @category evaluation
 * @example
 * ```ts
 * import { Evaluator, Term } from "lambdagent"
 * const tools = { square: Term.lam("x", Term.mul(Term.var("x"), Term.var("x"))) }
 * Evaluator.runTool("square", 7, { tools }).value // 49
 * ```
 */
export const runTool = (name: string, input: unknown, options: RunOptions = {}): Result => {
  const code = registryOf(options.tools).get(name)
  if (code === undefined) {
    throw new EvalError({ kind: "RuntimeError", message: `unknown tool ${JSON.stringify(name)}`, steps: 0 })
  }
  return run(code, input, { ...options, tool: name })
}

// ---------------------------------------------------------------------------------------------
// Input normalisation
// ---------------------------------------------------------------------------------------------

/** Keys whose string values are names, never normalised. */
const NAME_KEYS: ReadonlySet<string> = new Set(["var", "lam", "code_of", "tool", "system", "name"])

const roundHalfEven = (n: number): number => {
  const floor = Math.floor(n)
  const diff = n - floor
  if (diff < 0.5) return floor
  if (diff > 0.5) return floor + 1
  return floor % 2 === 0 ? floor : floor + 1
}

const INTEGER_TEXT = /^\s*-?(?:\d+|0[xX][0-9a-fA-F]+|0[oO][0-7]+)\s*$/

const integerFromText = (text: string): bigint | undefined => {
  const t = text.trim()
  const negative = t.startsWith("-")
  const body = negative ? t.slice(1) : t
  const digits = /^0[oO]/.test(body) ? `0o${body.slice(2)}` : body
  const n = BigInt(digits)
  const value = negative ? -n : n
  return value >= -(2n ** 63n) && value < 2n ** 63n ? value : undefined
}

const normalizeString = (text: string): unknown => {
  for (let depth = 0; depth < 64; depth++) {
    const trimmed = text.trim()
    if (trimmed !== "" && /^[[{"\-\d tfn]/.test(trimmed)) {
      let parsed: unknown
      let ok = true
      try {
        parsed = Term.parseJsonText(trimmed)
      } catch {
        ok = false
      }
      if (ok) {
        if (typeof parsed === "string") {
          text = parsed
          continue
        }
        return normalizeInput(parsed)
      }
    }
    if (INTEGER_TEXT.test(text)) {
      const n = integerFromText(text)
      if (n !== undefined) return n >= -9007199254740991n && n <= 9007199254740991n ? Number(n) : n
    }
    const lower = trimmed.toLowerCase()
    if (lower === "true") return true
    if (lower === "false") return false
    if (lower === "null") return null
    return text
  }
  return text
}

/**
 * Normalise an input the way the tool protocol does, so that inputs typed by people or produced
 * by models mean what they look like:
 * - a string that is JSON text becomes that JSON, normalised again (`"42"` → 42, `"[1,\"2\"]"` → [1, 2]);
 * - a string holding an integer with leading zeros, or in hex (`0x1F`) or octal (`0o17`), becomes that integer;
 * - `"true"`, `"false"`, `"null"` in any letter case become those literals;
 * - a number with a fraction is rounded half to even (`2.5` → 2);
 * - arrays and objects are normalised element by element, except the values of name keys
 *   (`var`, `lam`, `code_of`, `tool`, `system`, `name`), which stay strings;
 * - every other string stays a string.
 * The result is then read as a term, so an input can carry code (`"{\"add\":[1,2]}"` → 3).
 *
 * @since 0.1.0
 * @category input
 * @example
 * ```ts
 * import { Evaluator } from "lambdagent"
 * Evaluator.normalizeInput(["1", "TRUE", "x", 2.5]) // [1, true, "x", 2]
 * ```
 */
export const normalizeInput = (input: unknown): unknown =>
  typeof input !== "object" || input === null
    ? normalizeLeaf(input, false)
    : Array.isArray(input) && input.every((v) => v === null || typeof v === "boolean" || (typeof v === "number" && Number.isInteger(v)))
      ? input
      : normalizeTree(input)

const normalizeTree = (input: unknown): unknown =>
  foldTree<{ value: unknown; name: boolean }, unknown>(
    { value: input, name: false },
    ({ value }) =>
      Array.isArray(value)
        ? value.map((v) => ({ value: v, name: false }))
        : typeof value === "object" && value !== null
          ? Object.entries(value).map(([k, v]) => ({ value: v, name: NAME_KEYS.has(k) }))
          : [],
    ({ name, value }, kids) => {
      if (Array.isArray(value)) return kids
      if (typeof value === "object" && value !== null) {
        const out: Record<string, unknown> = {}
        Object.keys(value).forEach((k, i) => (out[k] = kids[i]))
        return out
      }
      return normalizeLeaf(value, name)
    }
  )

const normalizeLeaf = (value: unknown, name: boolean): unknown => {
  if (typeof value === "string") return name ? value : normalizeString(value)
  if (typeof value === "number" && Number.isFinite(value) && !Number.isInteger(value)) return roundHalfEven(value)
  return value
}

/**
 * Read input text: JSON when it parses (integers beyond 2^53 kept exact), otherwise the text
 * itself as a string. Rejects text above the budget's `inputBytes` with an `InputTooLarge` error.
 *
 * @since 0.1.0
 * @category input
 * @example
 * ```ts
 * import { Evaluator } from "lambdagent"
 * Evaluator.readInput("[1,2]") // [1, 2]
 * Evaluator.readInput("hello") // "hello"
 * ```
 */
export const readInput = (text: string, budget: Partial<Budget.Budget> = {}): unknown => {
  checkSize(text, budget)
  try {
    return Term.parseJsonText(text)
  } catch {
    return text
  }
}

/**
 * Reject text longer than the budget's `inputBytes` (UTF-8) with an `InputTooLarge` `EvalError`.
 *
 * @since 0.1.0
 * @category input
 * @example
 * ```ts
 * import { Evaluator } from "lambdagent"
 * Evaluator.checkSize("tiny", { inputBytes: 10 }) // ok
 * ```
 */
export const checkSize = (text: string, budget: Partial<Budget.Budget> = {}): void => {
  const limit = Budget.make(budget).inputBytes
  if (text.length > limit || Buffer.byteLength(text, "utf8") > limit) {
    throw new EvalError({
      kind: "InputTooLarge",
      message: `input of ${Buffer.byteLength(text, "utf8")} bytes exceeds the limit of ${limit} bytes`,
      steps: 0
    })
  }
}
