/**
 * Checkpoints: a paused run as data. A checkpoint holds the whole state of the run's machine —
 * its continuation frames, environments and closures (by reference into the run's term, which is
 * stored once under its content hash), form states, counters and budgets used, the pending oracle
 * request, the trace so far — and every oracle answer recorded, so a run resumes exactly, in this
 * process or another one, days later. See `docs/durable.md`.
 *
 * {@link capture} takes a checkpoint of an execution waiting on a request (the driver's
 * `suspended` hook is the place: {@link recorder} does it before every oracle call); the result
 * is plain JSON. {@link decode} checks a checkpoint read back (format, version, digest, term hash)
 * and {@link restore} makes the execution again; `Agent.resume` and `runtime.resume` drive it on.
 *
 * @since 0.2.0
 * @module
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Budget from "./Budget.ts"
import type * as Driver from "./Driver.ts"
import { CheckpointError, type CheckpointReason } from "./Errors.ts"
import * as Evaluator from "./Evaluator.ts"
import { Counters, framesFit, Machine, type MachineConfig, type MachineState } from "./internal/machine.ts"
import { decodeGraph, encodeGraph, type GraphJson, isCode, isCtx, isEnv, SnapshotFault, termHash } from "./internal/snapshot.ts"
import type * as Oracle from "./Oracle.ts"
import * as Term from "./Term.ts"
import type * as Trace from "./Trace.ts"
import type * as Value from "./Value.ts"

/**
 * The format name every checkpoint carries.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Checkpoint } from "lambdagent"
 * console.log(Checkpoint.format) // "lambdagent.checkpoint"
 * ```
 */
export const format = "lambdagent.checkpoint"

/**
 * The format version this build writes and reads.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Checkpoint } from "lambdagent"
 * console.log(Checkpoint.version) // 1
 * ```
 */
export const version = 1

const Graph = Schema.Struct({
  terms: Schema.Record(Schema.String, Schema.Unknown),
  units: Schema.Array(Schema.Struct({ term: Schema.String, site: Schema.optionalKey(Schema.Tuple([Schema.Number, Schema.Number])) })),
  heap: Schema.Array(Schema.Unknown),
  roots: Schema.Array(Schema.Unknown)
})

const Count = Schema.Number

/**
 * The schema of a checkpoint (format version {@link version}). Budgets that are unlimited
 * (`Infinity`) are written as `null`.
 *
 * @since 0.2.0
 * @category schemas
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Checkpoint } from "lambdagent"
 * const isCheckpoint = Schema.is(Checkpoint.CheckpointSchema)
 * ```
 */
export const CheckpointSchema = Schema.Struct({
  format: Schema.Literal(format),
  version: Schema.Literal(version),
  /** SHA-256 of the rest of the checkpoint: an edited or damaged file is refused. */
  digest: Schema.String,
  createdAt: Schema.String,
  /** The run's term: its content hash (the term itself is in `graph.terms`). */
  term: Schema.String,
  /** The tool the run runs as (`self`, `continue`), when it does. */
  budget: Schema.Record(Schema.String, Schema.NullOr(Schema.Number)),
  trace: Schema.Literals(["off", "agent", "beta"]),
  usage: Schema.Struct({ steps: Count, llmCalls: Count, toolCalls: Count, tokens: Count, elapsedMs: Count }),
  events: Schema.Array(Schema.Unknown),
  /** The machine and its pending request (`graph.roots[0]`). */
  graph: Graph,
  /** Every oracle answer recorded so far, by request key. */
  answers: Schema.Array(
    Schema.Struct({
      key: Schema.String,
      kind: Schema.String,
      tokens: Count,
      events: Schema.Array(Schema.Unknown),
      value: Graph
    })
  ),
  /** What the host wants to keep with the run (the CLI keeps its config and input here). */
  meta: Schema.Record(Schema.String, Schema.Unknown),
  /** A paused run's question: the `ask` request (by key) waiting for a person's answer. */
  asking: Schema.optionalKey(Schema.Struct({ key: Schema.String, question: Schema.String, input: Schema.String }))
})

/**
 * A checkpoint: plain JSON, ready for `JSON.stringify`.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Checkpoint } from "lambdagent"
 * const steps = (c: Checkpoint.Checkpoint) => c.usage.steps
 * ```
 */
export type Checkpoint = typeof CheckpointSchema.Type

/**
 * An oracle answer as a run records it: the request's key (`Execution.requestKey`), its kind,
 * the answer, and what the call added to the trace and the token count.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Checkpoint } from "lambdagent"
 * const a: Checkpoint.Answer = { key: "1", kind: "llm", value: "hi", events: [], tokens: 3 }
 * ```
 */
export interface Answer extends Driver.RecordedAnswer {
  readonly key: string
  readonly kind: Oracle.Request["kind"]
}

/**
 * Options of {@link capture}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Checkpoint } from "lambdagent"
 * const o: Checkpoint.CaptureOptions = { meta: { input: "hello" } }
 * ```
 */
export interface CaptureOptions {
  readonly answers?: ReadonlyArray<Answer>
  readonly meta?: Readonly<Record<string, unknown>>
}

const fail = (reason: CheckpointReason, message: string): never => {
  throw new CheckpointError({ reason, message })
}

/** The digest of a checkpoint's fields, taken in the schema's order whatever order they came in. */
const digestOf = (body: Omit<Checkpoint, "digest">): string => {
  const { answers, asking, budget, createdAt, events, format, graph, meta, term, trace, usage, version } = body
  const ordered = { format, version, createdAt, term, budget, trace, usage, events, graph, answers, meta, ...(asking !== undefined ? { asking } : {}) }
  return "sha256:" + createHash("sha256").update(JSON.stringify(ordered)).digest("hex")
}

const budgetJson = (budget: Budget.Budget): Record<string, number | null> =>
  Object.fromEntries(Object.entries(budget).map(([k, v]) => [k, Number.isFinite(v) ? v : null]))

const graphOf = (root: Term.Term, roots: ReadonlyArray<unknown>): GraphJson => {
  try {
    return encodeGraph(root, roots)
  } catch (error) {
    if (error instanceof SnapshotFault) return fail("unsupported", `the run cannot be checkpointed: ${error.reason}`)
    throw error
  }
}

/**
 * A checkpoint of `execution`, which is waiting on `pending` (the request it suspended on, not
 * yet answered) or has not started (`undefined`). Throws a `CheckpointError` (`unsupported`) when
 * the run holds state a checkpoint cannot carry.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Checkpoint, Evaluator, Term } from "lambdagent"
 * const exec = Evaluator.startApply(Term.tool("double"), 21)
 * const step = exec.next()
 * const checkpoint = Checkpoint.capture(exec, step._tag === "Suspended" ? step.request : undefined)
 * console.log(checkpoint.usage.toolCalls) // 0
 * ```
 */
export const capture = (execution: Evaluator.Execution, pending: Oracle.Request | undefined, options: CaptureOptions = {}): Checkpoint => {
  const machine = execution.machine
  const root = machine.root
  const budget = execution.budget
  const counters = execution.counters
  const body: Omit<Checkpoint, "digest"> = {
    format,
    version,
    createdAt: new Date().toISOString(),
    term: termHash(root),
    budget: budgetJson(budget),
    trace: execution.traceLevel,
    usage: {
      steps: counters.steps,
      llmCalls: counters.llmCalls,
      toolCalls: counters.toolCalls,
      tokens: counters.tokens,
      elapsedMs: Math.max(0, Date.now() - (counters.deadline - budget.timeMs))
    },
    events: execution.events.slice(),
    graph: graphOf(root, [{ machine: machine.snapshot(), pending }]),
    answers: (options.answers ?? []).map((a) => ({ key: a.key, kind: a.kind, tokens: a.tokens, events: a.events, value: graphOf(root, [a.value]) })),
    meta: { ...options.meta }
  }
  return { ...body, digest: digestOf(body) }
}

/**
 * What a paused run asks: the key of its `ask` request (`Execution.requestKey`), the question, and
 * the input it was asked about (as text).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Checkpoint } from "lambdagent"
 * const a: Checkpoint.Asking = { key: "3", question: "Approve?", input: "the plan" }
 * ```
 */
export type Asking = NonNullable<Checkpoint["asking"]>

/**
 * The checkpoint of a paused run: `checkpoint` (taken before its `ask` request) marked with what it
 * asks, so that resuming it with an answer answers that request.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Checkpoint, Evaluator, Term } from "lambdagent"
 * const exec = Evaluator.startApply(Term.ask("Approve?"), "the plan")
 * const step = exec.next()
 * const pending = step._tag === "Suspended" ? step.request : undefined
 * const paused = Checkpoint.awaiting(Checkpoint.capture(exec, pending), { key: "1", question: "Approve?", input: "the plan" })
 * console.log(paused.asking?.question) // "Approve?"
 * ```
 */
export const awaiting = (checkpoint: Checkpoint, asking: Asking): Checkpoint => {
  const { digest: _, ...rest } = checkpoint
  const body = { ...rest, asking }
  return { ...body, digest: digestOf(body) }
}

/**
 * Options of {@link decode}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import type { Checkpoint } from "lambdagent"
 * const o: Checkpoint.DecodeOptions = { term: Term.llm({ system: "Be brief." }) }
 * ```
 */
export interface DecodeOptions {
  /** The term the run must be of: a checkpoint of another term is refused. */
  readonly term?: Term.Term
}

const describeVersion = (v: unknown) => (typeof v === "number" || typeof v === "string" ? `format version ${v}` : "no format version")

/**
 * Check a checkpoint read back (from `JSON.parse`): the format and version, the digest (an
 * edited or damaged checkpoint is refused), that every stored term has its hash, and — with
 * `options.term` — that it is a checkpoint of that term. Throws a `CheckpointError` whose message
 * is one line.
 *
 * @since 0.2.0
 * @category decoding
 * @example
 * ```ts
 * import { Checkpoint, Errors } from "lambdagent"
 * try {
 *   Checkpoint.decode({ format: "lambdagent.checkpoint", version: 99 })
 * } catch (e) {
 *   if (e instanceof Errors.CheckpointError) console.log(e.reason) // "version"
 * }
 * ```
 */
export const decode = (json: unknown, options: DecodeOptions = {}): Checkpoint => {
  if (typeof json !== "object" || json === null || (json as { format?: unknown }).format !== format) {
    return fail("format", "not a lambdagent checkpoint")
  }
  const v = (json as { version?: unknown }).version
  if (v !== version) return fail("version", `a checkpoint of ${describeVersion(v)}; this lambdagent reads format version ${version}`)
  const decoded = Schema.decodeUnknownExit(CheckpointSchema)(json)
  if (decoded._tag === "Failure") return fail("format", "a malformed checkpoint (its fields are not the checkpoint format's)")
  const checkpoint = decoded.value
  const { digest, ...body } = checkpoint
  if (digestOf(body) !== digest) return fail("digest", "the checkpoint does not match its digest (edited or damaged)")
  const root = rootTerm(checkpoint)
  if (options.term !== undefined && termHash(options.term) !== checkpoint.term) {
    fail("term", `the checkpoint is of term ${short(checkpoint.term)}, not of this term (${short(termHash(options.term))})`)
  }
  void root
  return checkpoint
}

/**
 * Read a checkpoint from its JSON text ({@link decode} after `JSON.parse`).
 *
 * @since 0.2.0
 * @category decoding
 * @example
 * ```ts
 * import { Checkpoint } from "lambdagent"
 * const read = (text: string) => Checkpoint.parse(text)
 * ```
 */
export const parse = (text: string, options: DecodeOptions = {}): Checkpoint => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return fail("format", text.trim() === "" ? "an empty file, not a checkpoint" : "not JSON (truncated or not a checkpoint)")
  }
  return decode(json, options)
}

const short = (hash: string) => hash.slice(0, 19)

const roots = new WeakMap<Checkpoint, Term.Term>()

/**
 * The term a checkpoint is of (parsed from the checkpoint, its hash checked).
 *
 * @since 0.2.0
 * @category getters
 * @example
 * ```ts
 * import { Checkpoint, Term } from "lambdagent"
 * const show = (c: Checkpoint.Checkpoint) => Term.pretty(Checkpoint.rootTerm(c))
 * ```
 */
export const rootTerm = (checkpoint: Checkpoint): Term.Term => {
  let term = roots.get(checkpoint)
  if (term !== undefined) return term
  const json = checkpoint.graph.terms[checkpoint.term]
  if (json === undefined) return fail("term", `the checkpoint does not hold its term ${short(checkpoint.term)}`)
  try {
    term = Term.parse(json)
  } catch {
    return fail("term", "the checkpoint's term is not a well-formed term")
  }
  if (termHash(term) !== checkpoint.term) fail("term", `the checkpoint's term does not have its hash ${short(checkpoint.term)}`)
  roots.set(checkpoint, term)
  return term
}

/**
 * A restored run: the execution, the request it waits on (`undefined`: not started), and the
 * answers recorded before the checkpoint, for the driver's `recorded` option.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Checkpoint } from "lambdagent"
 * const waiting = (r: Checkpoint.Restored) => r.pending?.kind
 * ```
 */
export interface Restored {
  readonly execution: Evaluator.Execution
  readonly pending: Oracle.Request | undefined
  readonly answers: ReadonlyArray<Answer>
  readonly recorded: ReadonlyMap<string, Driver.RecordedAnswer>
}

/**
 * Options of {@link restore}: where the restored run's events go, and tools for `code_of`.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Checkpoint } from "lambdagent"
 * const o: Checkpoint.RestoreOptions = { onEvent: (e) => console.log(e.kind) }
 * ```
 */
export interface RestoreOptions {
  readonly tools?: Evaluator.EvaluateOptions["tools"]
  /** Told of every trace event the resumed run records. */
  readonly onEvent?: (event: Trace.TraceEvent) => void
}

const isMachineState = (v: unknown): v is MachineState => {
  if (typeof v !== "object" || v === null) return false
  const s = v as Record<string, unknown>
  return (
    Array.isArray(s.frames) &&
    typeof s.mode === "string" &&
    ["eval", "return", "apply"].includes(s.mode) &&
    (s.code === undefined || isCode(s.code)) &&
    isEnv(s.env) &&
    isCtx(s.ctx) &&
    typeof s.requests === "number" &&
    framesFit(s.frames, isCode)
  )
}

/**
 * Make the execution a checkpoint holds (from {@link decode}), in this process. Its deadline is
 * the time budget minus the time the run had used. Throws a `CheckpointError` when the snapshot
 * does not fit its term.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Checkpoint, Evaluator, Term } from "lambdagent"
 * const exec = Evaluator.startApply(Term.tool("double"), 21)
 * const step = exec.next()
 * const saved = JSON.stringify(Checkpoint.capture(exec, step._tag === "Suspended" ? step.request : undefined))
 * const { execution, pending } = Checkpoint.restore(Checkpoint.parse(saved))
 * console.log(pending?.kind, execution.resume(42)) // "tool" { _tag: "Done", value: 42 }
 * ```
 */
export const restore = (checkpoint: Checkpoint, options: RestoreOptions = {}): Restored => {
  const root = rootTerm(checkpoint)
  const decodeValue = (graph: GraphJson) => {
    try {
      return decodeGraph(root, graph)
    } catch (error) {
      if (error instanceof SnapshotFault) return fail("format", `the checkpoint's machine state is malformed: ${error.reason}`)
      if (error instanceof Error && error.name === "TermParseError") return fail("format", "the checkpoint holds a malformed term")
      throw error
    }
  }
  const [top] = decodeValue(checkpoint.graph) as [{ machine?: unknown; pending?: Oracle.Request } | undefined]
  if (top === undefined || !isMachineState(top.machine)) return fail("format", "the checkpoint's machine state is malformed")
  const budget = Budget.make(Object.fromEntries(Object.entries(checkpoint.budget).map(([k, v]) => [k, v ?? Infinity])))
  const usage = checkpoint.usage
  const counters = new Counters(Date.now() + budget.timeMs - usage.elapsedMs)
  counters.steps = usage.steps
  counters.llmCalls = usage.llmCalls
  counters.toolCalls = usage.toolCalls
  counters.tokens = usage.tokens
  const tools = options.tools
  const config: MachineConfig = {
    registry: tools === undefined ? new Map() : tools instanceof Map ? tools : new Map(Object.entries(tools)),
    budget,
    trace: checkpoint.trace,
    counters,
    events: checkpoint.events.slice() as Array<Trace.TraceEvent>,
    ...(options.onEvent !== undefined ? { listener: options.onEvent } : {})
  }
  let machine: Machine
  try {
    machine = Machine.restore(config, root, top.machine)
  } catch (error) {
    if (error instanceof Error && !("_tag" in error)) return fail("format", `the checkpoint's machine state is malformed: ${error.message}`)
    throw error
  }
  const answers: Array<Answer> = checkpoint.answers.map((a) => ({
    key: a.key,
    kind: a.kind as Answer["kind"],
    tokens: a.tokens,
    events: a.events as ReadonlyArray<Trace.TraceEvent>,
    value: decodeValue(a.value)[0] as Value.Value
  }))
  return {
    execution: Evaluator.fromMachine(machine, config),
    pending: top.pending,
    answers,
    recorded: new Map(answers.map((a) => [a.key, a]))
  }
}

/**
 * Options of {@link recorder}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Checkpoint } from "lambdagent"
 * const o: Checkpoint.RecorderOptions<never> = { save: (c) => Effect.sync(() => console.log(c.usage.steps)) }
 * ```
 */
export interface RecorderOptions<E> {
  /** Keep a checkpoint (write it to a store); its failure stops the run before the call. */
  readonly save: (checkpoint: Checkpoint) => Effect.Effect<void, E>
  readonly meta?: Readonly<Record<string, unknown>>
  /** Answers recorded before (a resumed run's), kept in every checkpoint it takes. */
  readonly answers?: ReadonlyArray<Answer>
  /**
   * Also save a checkpoint during long pure evaluation: at the first time-slice boundary after
   * every this many steps since the last checkpoint (default: only before oracle calls).
   */
  readonly everySteps?: number
}

/**
 * What a run adds to its driver handlers to checkpoint: `suspended` saves a checkpoint of the run
 * before every oracle call (inside `par` branches: the run waiting on the `par`, with the answers
 * its branches have recorded so far), `answered` records every answer.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Checkpoint } from "lambdagent"
 * const answers = (r: Checkpoint.Recorder<never>) => r.answers.length
 * ```
 */
export interface Recorder<E> {
  /** The driver's hook before each live oracle call: takes the checkpoint. */
  readonly suspended: NonNullable<Driver.Handlers<E, never>["suspended"]>
  /** The driver's hook after each answer: records it for the next checkpoint. */
  readonly answered: NonNullable<Driver.Handlers<E, never>["answered"]>
  /** The driver's hook between time slices: a checkpoint when {@link RecorderOptions.everySteps} have passed. */
  readonly sliced?: NonNullable<Driver.Handlers<E, never>["sliced"]>
  /** The answers recorded so far, in the order they came. */
  readonly answers: ReadonlyArray<Answer>
  /** The checkpoint taken last (before the latest live oracle call), if any. */
  readonly latest: () => Checkpoint | undefined
}

/**
 * A {@link Recorder} for the run of `execution` (the run itself, not a branch).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Checkpoint, Driver, Evaluator, Term } from "lambdagent"
 * const exec = Evaluator.startApply(Term.tool("double"), 21)
 * const saved: Array<Checkpoint.Checkpoint> = []
 * const recorder = Checkpoint.recorder(exec, { save: (c) => Effect.sync(() => void saved.push(c)) })
 * await Effect.runPromise(Driver.drive(exec, {
 *   llm: () => Effect.succeed(""),
 *   tool: (request) => Effect.succeed(Number(request.input) * 2),
 *   memory: () => Effect.succeed(null),
 *   ...recorder
 * }))
 * console.log(saved.length) // 1
 * ```
 */
export const recorder = <E>(execution: Evaluator.Execution, options: RecorderOptions<E>): Recorder<E> => {
  const answers: Array<Answer> = [...(options.answers ?? [])]
  const marks = new Map<string, number>()
  let waiting: Omit<Checkpoint, "digest" | "answers" | "createdAt"> | undefined
  let latest: Checkpoint | undefined
  let savedAt = execution.steps
  const meta = options.meta ?? {}
  /** A checkpoint of the run, `exec` (the run or one of its branches) waiting on `pending`. */
  const take = (exec: Evaluator.Execution, pending: Oracle.Request | undefined): Effect.Effect<void, E> => {
    let checkpoint: Checkpoint
    if (exec.scope === "" || waiting === undefined) {
      checkpoint = capture(execution, pending, { answers, meta })
      const { answers: _a, createdAt: _c, digest: _d, ...rest } = checkpoint
      if (pending !== undefined) waiting = rest
    } else {
      // a branch: the run waiting on its `par`, with the answers its branches have recorded so far
      const body: Omit<Checkpoint, "digest"> = {
        ...waiting,
        createdAt: new Date().toISOString(),
        answers: answers.map((a) => ({ key: a.key, kind: a.kind, tokens: a.tokens, events: a.events, value: graphOf(execution.machine.root, [a.value]) }))
      }
      checkpoint = { ...body, digest: digestOf(body) }
    }
    latest = checkpoint
    savedAt = execution.steps
    return options.save(checkpoint)
  }
  const every = options.everySteps
  return {
    answers,
    latest: () => latest,
    suspended: (request, run) =>
      Effect.suspend(() => {
        marks.set(run.execution.requestKey(request), run.execution.events.length)
        return take(run.execution, request)
      }),
    ...(every !== undefined && every > 0
      ? { sliced: (run: Driver.RunState) => Effect.suspend(() => (execution.steps - savedAt >= every ? take(run.execution, undefined) : Effect.void)) }
      : {}),
    answered: (request, value, run) => {
      const exec = run.execution
      const key = exec.requestKey(request)
      const mark = marks.get(key) ?? exec.events.length
      marks.delete(key)
      const events = exec.events.slice(mark)
      const tokens = events.reduce((sum, e) => sum + (e.tokens === undefined ? 0 : e.tokens.input + e.tokens.output), 0)
      answers.push({ key, kind: request.kind, value, events, tokens })
    }
  }
}
