/**
 * The driver: the one loop that answers the machine's oracle requests (see `Oracle`). Agent runs,
 * the MCP server and any host that steps an `Evaluator.Execution` use it.
 *
 * The driver owns the rules every run shares: the `llmCalls`, `toolCalls` and `tokens` budgets
 * are checked before each call is made; `terminate` is answered without a tool call; every
 * answer becomes a value by `Oracle.toValue`; a `par` request runs its branches as concurrent
 * fibers, and when one fails the others are interrupted; long pure stretches are evaluated in
 * time slices, so the fiber can be interrupted (a time budget, a cancelled request) while it
 * computes. What answers each kind of request is the caller's {@link Handlers}.
 *
 * Answers that are already complete (a zero-latency model, a synchronous tool) resume the machine
 * at once, without going through the Effect scheduler; only pending work suspends the loop.
 *
 * @since 0.2.0
 * @module
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { EvalError, isLambdaError, type LambdaError } from "./Errors.ts"
import type * as Evaluator from "./Evaluator.ts"
import * as Oracle from "./Oracle.ts"
import type * as Trace from "./Trace.ts"
import { preview } from "./Trace.ts"
import { isTerminate } from "./forms/tool.ts"
import { type Backlog, type Fork, Scope } from "./internal/channels.ts"
import { isExit } from "./internal/exits.ts"
import * as Spans from "./internal/spans.ts"
import * as Value from "./Value.ts"

/**
 * What answers each kind of request. A handler returns the answer — any value `Oracle.toValue`
 * accepts — or fails: a failure ends the run (a tool's own failure should be answered as an
 * observation instead, when the request says `observe`).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Driver } from "lambdagent"
 * const handlers: Driver.Handlers<never, never> = {
 *   llm: (request) => Effect.succeed(`echo: ${String(request.input)}`),
 *   tool: (request) => Effect.succeed(request.input),
 *   memory: (request) => Effect.succeed(request.kind === "memory-read" ? request.input : request.output)
 * }
 * ```
 */
export interface Handlers<E, R> {
  /** Answers an `llm` request: the model's reply. */
  readonly llm: (request: Oracle.LlmRequest, run: RunState) => Effect.Effect<unknown, E, R>
  /** Answers a `tool` request: the tool's result. */
  readonly tool: (request: Oracle.ToolRequest, run: RunState) => Effect.Effect<unknown, E, R>
  /**
   * Answers several tool calls of one model turn (`tools`) as a whole (a replay does, from its
   * recording); `each` makes them with the `tool` handler, at the same time. Without it, the
   * driver runs `each`.
   */
  readonly tools?: (request: Oracle.ToolCallsRequest, run: RunState, each: () => Effect.Effect<unknown, E, R>) => Effect.Effect<unknown, E, R>
  /** Answers a memory read (the remembered context) or write (the value to pass on). */
  readonly memory: (request: Oracle.MemoryRequest, run: RunState) => Effect.Effect<unknown, E, R>
  /**
   * Answers an `ask` request: the person's reply. Without it, an `ask` fails the run with an
   * `EvalError` (an agent run pauses instead: `Agent.run`).
   */
  readonly ask?: (request: Oracle.AskRequest, run: RunState) => Effect.Effect<unknown, E, R>
  /**
   * Checked before every request is answered: a reason to refuse it (the run fails with an
   * `OracleError` saying so), or `undefined`.
   */
  readonly admit?: (request: Oracle.Request) => string | undefined
  /**
   * Told of every answer as it becomes a value (to record a run for replay); `recorded` is the
   * recorded answer it was given from ({@link DriveOptions.recorded} or the `message` handler), when it
   * was. A `send` or `receive` passed on its channel is told when the channel decides it (which
   * may be before the waiting branch runs on), with `message`: where it passed.
   */
  readonly answered?: (request: Oracle.Request, answer: Value.Value, run: RunState, recorded?: RecordedAnswer, message?: Message) => void
  /**
   * Answers a `send` or `receive` from a recording (a replay does): the recorded answer, or
   * `undefined` to pass the message on its channel. Without it, a message recorded in
   * {@link DriveOptions.recorded} is answered from there.
   */
  readonly message?: (request: Oracle.ChannelRequest, run: RunState) => Effect.Effect<RecordedAnswer | undefined, E, R>
  /**
   * Run before a request is answered live, before its budgets are counted (a checkpoint is
   * saved here); its failure ends the run before the call is made.
   */
  readonly suspended?: (request: Oracle.Request, run: RunState) => Effect.Effect<void, E, R>
  /**
   * Run between two time slices of pure evaluation (see {@link DriveOptions.sliceMs}), where the
   * machine waits on no request (a checkpoint every so many steps is saved here); its failure
   * ends the run.
   */
  readonly sliced?: (run: RunState) => Effect.Effect<void, E, R>
}

/**
 * An answer recorded by an earlier run of the same term: a resumed run takes it instead of asking
 * again. `events` and `tokens` are what the call added to the trace and the token count.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Driver } from "lambdagent"
 * const a: Driver.RecordedAnswer = { value: "42", events: [], tokens: 0 }
 * ```
 */
export interface RecordedAnswer {
  readonly value: Value.Value
  readonly events: ReadonlyArray<Trace.TraceEvent>
  readonly tokens: number
  /** For a `send` or `receive`: the message it passed (for a send, `value` is the value sent). */
  readonly message?: Message
}

/**
 * Where a message passed: the channel — the request key of its `channels` scope and its name —
 * and the message's number on it (0, 1, … in the order the channel accepted them; receivers take
 * them in that order). A run's messages recorded under their request keys replay it exactly,
 * whatever order its branches then run in (docs/semantics.md, D10).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Driver } from "lambdagent"
 * const m: Driver.Message = { op: "send", scope: "2", channel: "drafts", seq: 0 }
 * ```
 */
export interface Message {
  /** Which side of the message the request was. */
  readonly op: "send" | "receive"
  readonly scope: string
  readonly channel: string
  readonly seq: number
}

/**
 * The run a request belongs to, as a handler sees it.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Driver } from "lambdagent"
 * const tracing = (run: Driver.RunState) => run.execution.traceLevel !== "off"
 * ```
 */
export interface RunState {
  /** The machine the request came from (a `par` branch is an execution of its own). */
  readonly execution: Evaluator.Execution
  /** Whether the request comes from inside a `channels` scope. */
  readonly inChannels?: boolean
}

/**
 * Options of {@link drive}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Driver } from "lambdagent"
 * const o: Driver.DriveOptions = { concurrency: 4, sliceMs: 10 }
 * ```
 */
export interface DriveOptions {
  /**
   * Branches of one `par` that run at the same time (default: all of them). Inside a `channels`
   * scope every branch runs at once (a branch waiting on a channel must not hold another's turn).
   */
  readonly concurrency?: number
  /** Longest stretch of pure evaluation between chances to interrupt, in ms (default 10). */
  readonly sliceMs?: number
  /** The step the caller already took (`execution.slice(…)`), when it ran the machine first. */
  readonly first?: Evaluator.SliceStep
  /**
   * Answers an earlier run recorded, by request key (`Execution.requestKey`): a request found
   * here is answered from it, counted against the budgets as the original was, without asking
   * the handlers. Its messages (answers with `message`) also give each `channels` scope the
   * messages it held: those sent and not yet received.
   */
  readonly recorded?: ReadonlyMap<string, RecordedAnswer>
  /**
   * Open an Effect span around each `par` (`lambdagent.par`), each of its branches
   * (`lambdagent.par.branch`) and each `channels` scope (default false: no span, no cost).
   */
  readonly spans?: boolean
}

const DEFAULT_SLICE_MS = 10

/** One turn of the event loop: timers, I/O and signals get their chance, then the run goes on. */
const nextTurn: Effect.Effect<void> = Effect.callback<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** The result of an effect that is already complete (an `Exit`), else `undefined`. */
const completed = <A, E>(effect: Effect.Effect<A, E, any>): Exit.Exit<A, E> | undefined => (isExit(effect) ? (effect as Exit.Exit<A, E>) : undefined)

type Step = Evaluator.SliceStep | { readonly _tag: "Failed"; readonly error: LambdaError }

/** Run one machine step, turning thrown term-language errors into values. */
const attempt = (f: () => Evaluator.SliceStep): Step => {
  try {
    return f()
  } catch (error) {
    if (isLambdaError(error)) return { _tag: "Failed", error }
    throw error
  }
}

/**
 * Answer one request: check the budgets, then ask the handler. Returns the handler's effect, which
 * may already be complete (an `Exit`); the caller turns its output into a value.
 */
const answer = <E, R>(
  exec: Evaluator.Execution,
  run: RunState,
  request: Oracle.Request,
  handlers: Handlers<E, R>,
  options: DriveOptions,
  scope: Scope | undefined
): Effect.Effect<unknown, E | LambdaError, R> => {
  if (handlers.admit !== undefined) {
    const refused = request.kind === "tools" ? request.calls.map(handlers.admit).find((r) => r !== undefined) : handlers.admit(request)
    if (refused !== undefined) {
      return Effect.fail(new EvalError({ kind: "OracleError", message: `capability denied: ${refused}`, steps: exec.steps }))
    }
  }
  const usage = exec.usage
  const budget = exec.budget
  const recorded = request.kind === "par" || request.kind === "channels" ? undefined : options.recorded?.get(exec.requestKey(request))
  switch (request.kind) {
    case "llm":
      if (usage.llmCalls >= budget.llmCalls) return Effect.fail(exec.exhausted("llmCalls", budget.llmCalls))
      if (usage.tokens >= budget.tokens) return Effect.fail(exec.exhausted("tokens", budget.tokens))
      usage.llmCalls++
      return recorded !== undefined ? answerRecorded(exec, recorded) : handlers.llm(request, run)
    case "tool":
      if (isTerminate(request.name)) return Effect.succeed(request.input)
      if (usage.toolCalls >= budget.toolCalls) return Effect.fail(exec.exhausted("toolCalls", budget.toolCalls))
      usage.toolCalls++
      return recorded !== undefined ? answerRecorded(exec, recorded) : handlers.tool(request, run)
    case "tools": {
      if (usage.toolCalls + request.calls.length > budget.toolCalls) return Effect.fail(exec.exhausted("toolCalls", budget.toolCalls))
      usage.toolCalls += request.calls.length
      if (recorded !== undefined) return answerRecorded(exec, recorded)
      const each = () => toolCalls(exec, run, request, handlers, options)
      return handlers.tools !== undefined ? handlers.tools(request, run, each) : each()
    }
    case "memory-read":
    case "memory-write":
      return recorded !== undefined ? answerRecorded(exec, recorded) : handlers.memory(request, run)
    case "par":
      return branches(exec, request, handlers, options, scope)
    case "ask":
      if (recorded !== undefined) return answerRecorded(exec, recorded)
      if (handlers.ask !== undefined) return handlers.ask(request, run)
      return Effect.fail(new EvalError({ kind: "OracleError", message: `nothing answers ${Oracle.describe(request)}`, steps: exec.steps }))
    case "channels": {
      const key = exec.requestKey(request)
      const backlog = options.recorded === undefined ? undefined : backlogOf(options.recorded, key, exec.steps)
      if (backlog instanceof EvalError) return Effect.fail(backlog)
      const opened = new Scope(scope, request.term.declare, key, backlog)
      const scoped = loop(exec.scoped(request), handlers, options, undefined, opened)
      return options.spans === true
        ? Spans.channels(
            scoped,
            request.term.declare.map((c) => c.name)
          )
        : scoped
    }
    case "send":
    case "receive":
      return message(exec, run, request, scope, handlers, recorded)
  }
}

const scopesOf = new WeakMap<ReadonlyMap<string, RecordedAnswer>, Map<string, Array<RecordedAnswer>>>()

/** A record's messages by the key of their scope, gathered once per record (a run may open many scopes). */
const messagesByScope = (recorded: ReadonlyMap<string, RecordedAnswer>): Map<string, Array<RecordedAnswer>> => {
  let scopes = scopesOf.get(recorded)
  if (scopes === undefined) {
    scopes = new Map()
    for (const answer of recorded.values()) {
      const scope = answer.message?.scope
      if (scope === undefined) continue
      const list = scopes.get(scope)
      if (list === undefined) scopes.set(scope, [answer])
      else list.push(answer)
    }
    scopesOf.set(recorded, scopes)
  }
  return scopes
}

/**
 * What a record says the channels of scope `key` held, by channel name: how many messages each
 * had accepted and handed on, and those still in it. A record with a message missing in between
 * (not the record of one run) is an error.
 */
const backlogOf = (recorded: ReadonlyMap<string, RecordedAnswer>, key: string, steps: number): Map<string, Backlog> | EvalError | undefined => {
  const messages = messagesByScope(recorded).get(key)
  if (messages === undefined) return undefined
  const channels = new Map<string, { sent: Map<number, Value.Value>; received: number }>()
  for (const answer of messages) {
    const m = answer.message!
    let channel = channels.get(m.channel)
    if (channel === undefined) channels.set(m.channel, (channel = { sent: new Map(), received: 0 }))
    if (m.op === "send") channel.sent.set(m.seq, answer.value)
    else channel.received = Math.max(channel.received, m.seq + 1)
  }
  const backlog = new Map<string, Backlog>()
  for (const [name, { sent, received }] of channels) {
    let total = received
    for (const seq of sent.keys()) total = Math.max(total, seq + 1)
    const held: Array<Value.Value> = []
    for (let seq = received; seq < total; seq++) {
      const value = sent.get(seq)
      if (value === undefined) {
        return new EvalError({
          kind: "RuntimeError",
          message: `the recorded messages of channel ${JSON.stringify(name)} are incomplete: message ${seq} was received or sent after it, and is not recorded`,
          steps
        })
      }
      held.push(value)
    }
    backlog.set(name, { sent: total, received, held })
  }
  return backlog
}

/**
 * Make a turn's tool calls at the same time (as many at once as `par` branches), each with its
 * own trace list, merged into the run's in call order; the answer is the list of their results.
 */
const toolCalls = <E, R>(
  exec: Evaluator.Execution,
  run: RunState,
  request: Oracle.ToolCallsRequest,
  handlers: Handlers<E, R>,
  options: DriveOptions
): Effect.Effect<Value.Value, E, R> => {
  const events = request.calls.map((): Array<Trace.TraceEvent> => [])
  return Effect.forEach(request.calls, (call, i) => handlers.tool(call, { ...run, execution: exec.recordingInto(events[i]!) }), {
    concurrency: options.concurrency ?? "unbounded"
  }).pipe(
    Effect.map((outputs) => {
      for (const list of events) exec.events.push(...list)
      return Value.fromArray(outputs.map(Oracle.toValue))
    })
  )
}

/**
 * Pass a message on a channel of the enclosing scopes, or answer it from a record
 * (`handlers.message`, else `recorded`); one step of the budget, one trace event.
 */
const message = <E, R>(
  exec: Evaluator.Execution,
  run: RunState,
  request: Oracle.ChannelRequest,
  scope: Scope | undefined,
  handlers: Handlers<E, R>,
  recorded: RecordedAnswer | undefined
): Effect.Effect<Value.Value, E | LambdaError, R> => {
  const usage = exec.usage
  if (++usage.steps > exec.budget.steps) return Effect.fail(exec.exhausted("steps", exec.budget.steps, `step budget of ${exec.budget.steps} exhausted`))
  if (scope === undefined) {
    return Effect.fail(
      new EvalError({
        kind: "RuntimeError",
        message: `${request.kind} on channel ${JSON.stringify(request.channel)} outside any channels scope`,
        steps: usage.steps
      })
    )
  }
  const started = performance.now()
  // the step it was asked at: a message answered from a record is not kept waiting
  const step = usage.steps
  const traced =
    exec.traceLevel === "off"
      ? undefined
      : (value: Value.Value) =>
          exec.record({
            step,
            kind: request.kind,
            name: request.channel,
            [request.kind === "send" ? "input" : "output"]: preview(Value.toText(value)),
            durationMs: performance.now() - started
          })
  const answered = handlers.answered
  const pass = (recorded: RecordedAnswer | undefined): Effect.Effect<Value.Value, LambdaError> => {
    if (recorded !== undefined) {
      // a send answers with what it sent; the record holds the same value (or a replay would have diverged)
      const value = request.kind === "send" ? request.value : recorded.value
      answered?.(request, value, run, recorded)
      traced?.(value)
      return Effect.succeed(value)
    }
    const who = exec.branchPath === undefined ? "the run" : `branch ${exec.branchPath}`
    // recorded when the channel decides, so a checkpoint taken meanwhile never holds half a message
    const note = answered === undefined ? undefined : (value: Value.Value, m: Message) => answered(request, value, run, undefined, m)
    let passed: Effect.Effect<Value.Value, EvalError>
    try {
      // a message the channel serves at once is an Exit, so the loop goes on without the scheduler
      passed =
        request.kind === "send" ? scope.send(request.channel, request.value, who, usage.steps, note) : scope.receive(request.channel, who, usage.steps, note)
    } catch (error) {
      if (error instanceof EvalError) return Effect.fail(error)
      throw error
    }
    if (traced === undefined) return passed
    const done = completed(passed)
    if (done !== undefined) {
      if (Exit.isSuccess(done)) traced(done.value)
      return passed
    }
    return Effect.map(passed, (value) => (traced(value), value))
  }
  if (handlers.message === undefined) return pass(recorded)
  const asked = handlers.message(request, run)
  const ready = completed(asked)
  if (ready === undefined) return Effect.flatMap(asked, pass)
  return Exit.isSuccess(ready) ? pass(ready.value) : (ready as unknown as Effect.Effect<never, E>)
}

/**
 * Answer a request with a recorded answer: what the original call added to the trace and the
 * token count is added again, and the answer is the recorded value (a complete effect).
 *
 * @since 0.2.0
 * @category running
 * @example
 * ```ts
 * import { Driver, Evaluator, Term } from "lambdagent"
 * const exec = Evaluator.startApply(Term.tool("double"), 21)
 * const answer = Driver.answerRecorded(exec, { value: 42, events: [], tokens: 0 })
 * ```
 */
export const answerRecorded = (exec: Evaluator.Execution, recorded: RecordedAnswer): Effect.Effect<unknown> => {
  for (const event of recorded.events) exec.record(event)
  exec.usage.tokens += recorded.tokens
  return Effect.succeed(recorded.value)
}

const branches = <E, R>(
  exec: Evaluator.Execution,
  request: Oracle.ParRequest,
  handlers: Handlers<E, R>,
  options: DriveOptions,
  scope: Scope | undefined
): Effect.Effect<Value.Value, E | LambdaError, R> => {
  const started = performance.now()
  const runs = request.term.branches.map((_, i) => exec.branch(request, i))
  const fork: Fork | undefined = scope?.hub.fork(runs.length)
  const unspanned =
    fork === undefined
      ? (branch: Evaluator.Execution) => loop(branch, handlers, options, undefined, undefined)
      : (branch: Evaluator.Execution) =>
          Effect.map(loop(branch, handlers, options, undefined, scope), (value) => {
            scope!.hub.branchDone(fork, exec.steps)
            return value
          })
  const spans = options.spans === true
  const run = spans ? (branch: Evaluator.Execution, i: number) => Spans.branch(unspanned(branch), i, branch.branchPath) : unspanned
  const all = Effect.forEach(runs, run, { concurrency: fork === undefined ? (options.concurrency ?? "unbounded") : "unbounded" })
  return (spans ? Spans.par(all, runs.length, exec.steps) : all).pipe(
    Effect.map((results) => {
      // branch events join the run's trace in branch order, whatever order they finished in
      for (const branch of runs) exec.events.push(...branch.events)
      if (exec.traceLevel !== "off") {
        exec.record({ step: exec.steps, kind: "par", name: `${runs.length} branches`, durationMs: performance.now() - started })
      }
      return Value.fromArray(results)
    })
  )
}

/**
 * Step the machine, answering each oracle request with `handlers`, until it is done. Fails with
 * the term language's errors (`EvalError`, `BudgetExceeded`) or the handlers' own. The run's time
 * budget holds for the whole run: a pending answer is interrupted when it runs out. Interrupting
 * the effect interrupts the pending answer (and every branch of a pending `par`).
 *
 * @since 0.2.0
 * @category running
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Driver, Evaluator, Term } from "lambdagent"
 * const exec = Evaluator.startApply(Term.tool("double"), 21)
 * const value = await Effect.runPromise(Driver.drive(exec, {
 *   llm: () => Effect.succeed(""),
 *   tool: (request) => Effect.succeed(Number(request.input) * 2),
 *   memory: () => Effect.succeed(null)
 * }))
 * console.log(value) // 42
 * ```
 */
export const drive = <E, R>(exec: Evaluator.Execution, handlers: Handlers<E, R>, options: DriveOptions = {}): Effect.Effect<Value.Value, E | LambdaError, R> =>
  loop(exec, handlers, options, options.first, undefined)

/**
 * {@link drive}, begun at once: the machine steps now, as far as the answers already complete
 * take it, and the result is a complete effect (an `Exit`) when the run needs no other. Only for
 * a caller that is itself being run (inside `Effect.suspend` or the like): it saves the effects
 * a run that never waits would otherwise build and evaluate.
 *
 * @internal
 */
export const driveNow = <E, R>(
  exec: Evaluator.Execution,
  handlers: Handlers<E, R>,
  options: DriveOptions = {}
): Effect.Effect<Value.Value, E | LambdaError, R> => begin(exec, handlers, options, options.first, undefined)

const loop = <E, R>(
  exec: Evaluator.Execution,
  handlers: Handlers<E, R>,
  options: DriveOptions,
  first: Evaluator.SliceStep | undefined,
  scope: Scope | undefined
): Effect.Effect<Value.Value, E | LambdaError, R> => Effect.suspend(() => begin(exec, handlers, options, first, scope))

const begin = <E, R>(
  exec: Evaluator.Execution,
  handlers: Handlers<E, R>,
  options: DriveOptions,
  first: Evaluator.SliceStep | undefined,
  scope: Scope | undefined
): Effect.Effect<Value.Value, E | LambdaError, R> => {
  const slice = options.sliceMs ?? DEFAULT_SLICE_MS
  const run: RunState = scope === undefined ? { execution: exec } : { execution: exec, inChannels: true }
  const record = handlers.answered
  const suspended = handlers.suspended
  const sliced = handlers.sliced
  const timeUp = () => exec.exhausted("time", exec.budget.timeMs, `time budget of ${exec.budget.timeMs} ms exhausted`)
  const recorded = options.recorded
  const valueOf = (request: Oracle.Request, output: unknown): Value.Value => {
    const value = Oracle.toValue(output)
    // a message is recorded by `message`, when its channel decides it
    if (record !== undefined && request.kind !== "send" && request.kind !== "receive") {
      const from = recorded === undefined || request.kind === "par" || request.kind === "channels" ? undefined : recorded.get(exec.requestKey(request))
      record(request, value, run, from)
    }
    return value
  }
  const go = (step: Step): Effect.Effect<Value.Value, E | LambdaError, R> => {
    for (;;) {
      switch (step._tag) {
        case "Done":
          return Effect.succeed(step.value)
        case "Failed":
          return Effect.fail(step.error)
        case "Paused": {
          // let I/O, signals and other fibers run (and interruption reach this one), then go on
          const next = Effect.flatMap(nextTurn, () => go(attempt(() => exec.slice(slice))))
          return sliced === undefined ? next : Effect.flatMap(sliced(run), () => next)
        }
      }
      const request = step.request
      // noted for the hooks (a checkpoint's time), which then need not read the clock again
      const now = (exec.counters.now = Date.now())
      // read at every request: a journal may move it (Execution.restoreElapsed)
      const deadline = exec.deadline
      if (now > deadline) return Effect.fail(timeUp())
      const live =
        suspended !== undefined && request.kind !== "send" && request.kind !== "receive" && !(options.recorded?.has(exec.requestKey(request)) ?? false)
      const before = live ? suspended(request, run) : undefined
      const ready = before === undefined ? undefined : completed(before)
      // a hook that is already done (it only took a note) keeps a complete answer complete
      const answered =
        before === undefined || (ready !== undefined && Exit.isSuccess(ready))
          ? answer(exec, run, request, handlers, options, scope)
          : Effect.flatMap(before, () => answer(exec, run, request, handlers, options, scope))
      const done = completed(answered)
      if (done === undefined) {
        // waiting: the time budget interrupts the wait when it runs out. A channel wait needs no
        // timer of its own: only another branch of the run can end it, and that branch is under
        // the budget (when none is left, the wait is a deadlock, reported at once)
        const waiting =
          deadline === Infinity || request.kind === "send" || request.kind === "receive"
            ? answered
            : Effect.timeoutOrElse(answered, { duration: Math.max(0, deadline - Date.now()), orElse: () => Effect.fail(timeUp()) })
        return Effect.flatMap(waiting, (output) => go(attempt(() => exec.slice(slice, valueOf(request, output)))))
      }
      if (Exit.isFailure(done)) return done as unknown as Effect.Effect<never, E | LambdaError>
      const value = valueOf(request, done.value)
      step = attempt(() => exec.slice(slice, value))
    }
  }
  return go(first ?? attempt(() => exec.slice(slice)))
}
