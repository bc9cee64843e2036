/**
 * Checkpoints: a paused run as data. A checkpoint holds a **base** — the whole state of the run's
 * machine at some point (continuation frames, environments and closures by reference into the
 * run's term, form states, counters, the pending request, the trace so far) — and **every oracle
 * answer** the run was given. The run is deterministic given its answers (docs/semantics.md,
 * section 8), so the state at the checkpoint is the base driven on with the answers recorded after
 * it, without calling any oracle; restoring it in this process or another one, days later, ends
 * exactly as the uninterrupted run.
 *
 * A run checkpoints before every oracle call, cheaply: {@link recorder} hands its store a
 * {@link Entry} each time — a whole checkpoint (a new base) now and then, otherwise a
 * {@link Delta}, the answers given since the last entry. A store keeps the entries as a journal
 * (`CheckpointStore`); {@link journal} keeps them in memory. {@link capture} takes a whole
 * checkpoint of any execution; {@link decode} checks one read back (format, version, digest, term
 * hash) and {@link restore} makes the execution again; `Agent.resume` and `runtime.resume` drive
 * it on. See `docs/durable.md`.
 *
 * @since 0.2.0
 * @module
 */
import { hash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Budget from "./Budget.ts"
import * as Driver from "./Driver.ts"
import { CheckpointError, type CheckpointReason } from "./Errors.ts"
import * as Evaluator from "./Evaluator.ts"
import { isTerminate } from "./forms/tool.ts"
import { Counters, framesFit, Machine, type MachineConfig, type MachineState } from "./internal/machine.ts"
import { decodeGraph, encodeGraph, type GraphJson, isCode, isCtx, isEnv, SnapshotFault, termHash } from "./internal/snapshot.ts"
import { decodeVersioned } from "./internal/versioned.ts"
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
 * The format name of a {@link Delta}: the answers a run was given since its previous checkpoint.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Checkpoint } from "lambdagent"
 * console.log(Checkpoint.deltaFormat) // "lambdagent.checkpoint.delta"
 * ```
 */
export const deltaFormat = "lambdagent.checkpoint.delta"

/**
 * The format version this build writes and reads (checkpoints and deltas alike).
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Checkpoint } from "lambdagent"
 * console.log(Checkpoint.version) // 3
 * ```
 */
export const version = 3

const Graph = Schema.Struct({
  terms: Schema.Record(Schema.String, Schema.Unknown),
  units: Schema.Array(Schema.Struct({ term: Schema.String, site: Schema.optionalKey(Schema.Tuple([Schema.Number, Schema.Number])) })),
  heap: Schema.Array(Schema.Unknown),
  roots: Schema.Array(Schema.Unknown)
})

const Usage = Schema.Struct({ steps: Schema.Number, llmCalls: Schema.Number, toolCalls: Schema.Number, tokens: Schema.Number, elapsedMs: Schema.Number })

/** What a checkpoint waits on: the request's key and kind, and its name (a tool's, an LLM term's, a question). */
const Waiting = Schema.Struct({ key: Schema.String, kind: Schema.String, name: Schema.optionalKey(Schema.String) })

/** A message's channel (its scope's request key and name) and its number there. */
const MessageJson = Schema.Struct({ scope: Schema.String, channel: Schema.String, seq: Schema.Number })

const AnswerJson = Schema.Struct({
  key: Schema.String,
  kind: Schema.String,
  tokens: Schema.Number,
  events: Schema.Array(Schema.Unknown),
  value: Graph,
  /** For a `send` or `receive`: where the message passed. */
  message: Schema.optionalKey(MessageJson)
})

/** A machine state a run can be replayed from: the counters and trace there, the machine, and how many answers it had been given. */
const State = Schema.Struct({
  usage: Usage,
  events: Schema.Array(Schema.Unknown),
  /** The machine and the request it waits on (`graph.roots[0]`). */
  graph: Graph,
  /** How many of the checkpoint's `answers` the run had been given there. */
  answers: Schema.Number
})

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
  /** SHA-256 of the rest of the checkpoint: an edited or damaged one is refused. */
  digest: Schema.String,
  createdAt: Schema.String,
  /** The run's term: its content hash. */
  term: Schema.String,
  /** The run's term as JSON (the only copy: the machine states refer to it by hash). */
  root: Schema.Unknown,
  budget: Schema.Record(Schema.String, Schema.NullOr(Schema.Number)),
  trace: Schema.Literals(["off", "agent", "beta"]),
  /** The counters and time used at the checkpoint. */
  usage: Usage,
  /** The request the run waits on at the checkpoint (absent: none, a checkpoint taken between time slices). */
  waiting: Schema.optionalKey(Waiting),
  /** The machine state the run resumes from, given the answers recorded after it. */
  base: State,
  /** The run's start, when the base is later: a run that records its answers for replay resumes from here. */
  origin: Schema.optionalKey(State),
  /** Every oracle answer the run was given, in order. */
  answers: Schema.Array(AnswerJson),
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
 * The schema of a {@link Delta}.
 *
 * @since 0.2.0
 * @category schemas
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Checkpoint } from "lambdagent"
 * const isDelta = Schema.is(Checkpoint.DeltaSchema)
 * ```
 */
export const DeltaSchema = Schema.Struct({
  format: Schema.Literal(deltaFormat),
  version: Schema.Literal(version),
  createdAt: Schema.String,
  usage: Usage,
  waiting: Schema.optionalKey(Waiting),
  /** The answers given since the previous checkpoint, in order. */
  answers: Schema.Array(AnswerJson)
})

/**
 * A checkpoint as what changed since the one before it: the answers the run was given since, and
 * where it is now. {@link extend} makes the whole checkpoint. Plain JSON.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Checkpoint } from "lambdagent"
 * const given = (d: Checkpoint.Delta) => d.answers.length
 * ```
 */
export type Delta = typeof DeltaSchema.Type

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
 * What a checkpointing run hands its store before each oracle call: a whole checkpoint (`Base`,
 * the first and then a new base now and then) or what changed since the previous entry (`Delta`).
 * A checkpoint is its newest base extended by the deltas after it ({@link extend}). `checkpoint`
 * and `delta` are made when first read: a store that keeps entries in memory pays nothing to
 * encode them.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Checkpoint } from "lambdagent"
 * const size = (e: Checkpoint.Entry) => JSON.stringify(e._tag === "Base" ? e.checkpoint : e.delta).length
 * ```
 */
export type Entry = { readonly _tag: "Base"; readonly checkpoint: Checkpoint } | { readonly _tag: "Delta"; readonly delta: Delta }

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

type Body = Omit<Checkpoint, "digest">
type Usage = Checkpoint["usage"]
type State = Checkpoint["base"]
type Waiting = NonNullable<Checkpoint["waiting"]>
type AnswerJson = Checkpoint["answers"][number]

/** A checkpoint's fields in the schema's order (the order its digest is taken in), whatever order they came in. */
const ordered = (body: Body): Body => {
  const { answers, asking, base, budget, createdAt, format, meta, origin, root, term, trace, usage, version, waiting } = body
  return {
    format,
    version,
    createdAt,
    term,
    root,
    budget,
    trace,
    usage,
    ...(waiting !== undefined ? { waiting } : {}),
    base,
    ...(origin !== undefined ? { origin } : {}),
    answers,
    meta,
    ...(asking !== undefined ? { asking } : {})
  }
}

const sha256 = (text: string) => "sha256:" + hash("sha256", text, "hex")

/** The JSON text of checkpoints this module made, so that a store does not stringify them again. */
const texts = new WeakMap<Checkpoint, string>()
/** Checkpoints this module made or checked: {@link decode} takes them as they are. */
const checked = new WeakSet<Checkpoint>()

/** A checkpoint of `body`: its digest is SHA-256 of its fields' JSON in the schema's order, written last. */
const seal = (body: Body): Checkpoint => {
  const fields = ordered(body)
  const text = JSON.stringify(fields)
  const digest = sha256(text)
  const checkpoint = { ...fields, digest } as Checkpoint
  texts.set(checkpoint, `${text.slice(0, -1)},"digest":${JSON.stringify(digest)}}`)
  checked.add(checkpoint)
  return checkpoint
}

/**
 * A checkpoint's JSON text (what `JSON.stringify` gives, made once for a checkpoint this module
 * built).
 *
 * @since 0.2.0
 * @category encoding
 * @example
 * ```ts
 * import { Checkpoint, Evaluator, Term } from "lambdagent"
 * const text = Checkpoint.toText(Checkpoint.capture(Evaluator.startApply(Term.tool("t"), 1), undefined))
 * ```
 */
export const toText = (checkpoint: Checkpoint): string => texts.get(checkpoint) ?? JSON.stringify(checkpoint)

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

const roots = new WeakMap<Term.Term, unknown>()

/** The term's JSON, made once per term. */
const rootJson = (term: Term.Term): unknown => {
  let json = roots.get(term)
  if (json === undefined) roots.set(term, (json = Term.encode(term)))
  return json
}

const EMPTY: ReadonlyArray<never> = []
const NO_TERMS: Readonly<Record<string, never>> = {}
const encodedAnswers = new WeakMap<Answer, AnswerJson>()

/** An answer as JSON, encoded once (a text, the common answer, needs no heap). */
const answerJson = (root: Term.Term, answer: Answer): AnswerJson => {
  let json = encodedAnswers.get(answer)
  if (json === undefined) {
    const v = answer.value
    const value =
      typeof v === "string" || typeof v === "boolean" || v === null ? { terms: NO_TERMS, units: EMPTY, heap: EMPTY, roots: [v] } : graphOf(root, [v])
    const m = answer.message
    json = {
      key: answer.key,
      kind: answer.kind,
      tokens: answer.tokens,
      events: answer.events,
      value,
      ...(m !== undefined ? { message: { scope: m.scope, channel: m.channel, seq: m.seq } } : {})
    }
    encodedAnswers.set(answer, json)
  }
  return json
}

const usageOf = (execution: Evaluator.Execution): Usage => {
  const c = execution.counters
  return {
    steps: c.steps,
    llmCalls: c.llmCalls,
    toolCalls: c.toolCalls,
    tokens: c.tokens,
    elapsedMs: execution.elapsedMs
  }
}

/** The state of `execution` waiting on `pending`, having been given `answers` answers. */
const stateOf = (execution: Evaluator.Execution, pending: Oracle.Request | undefined, answers: number): State => ({
  usage: usageOf(execution),
  events: execution.events.slice(),
  graph: graphOf(execution.machine.root, [{ machine: execution.machine.snapshot(), pending }]),
  answers
})

const nameOf = (request: Oracle.Request): string | undefined => {
  switch (request.kind) {
    case "llm":
      return request.term.name
    case "tool":
      return request.name
    case "tools":
      return request.calls.map((c) => c.name).join(", ")
    case "ask":
      return request.question
    default:
      return undefined
  }
}

const waitingOf = (key: string, request: Oracle.Request): Waiting => {
  const name = nameOf(request)
  return name === undefined ? { key, kind: request.kind } : { key, kind: request.kind, name }
}

/** What every checkpoint of a run shares. */
interface RunParts {
  readonly root: Term.Term
  readonly budget: Budget.Budget
  readonly trace: Trace.TraceLevel
  readonly meta: Readonly<Record<string, unknown>>
  /** The run's answers, only ever appended to. */
  readonly answers: ReadonlyArray<Answer>
}

/**
 * A checkpoint as a run keeps it — the counters copied, the states encoded when first needed — and
 * as its store is handed it: a whole checkpoint (`Base`) or the answers since the entry before
 * (`Delta`, from `from`), made when first read. One object a checkpoint.
 */
class Parts {
  // declared, not defined: assigned once in the constructor (one object shape, no field defaults)
  declare readonly _tag: "Base" | "Delta"
  declare readonly run: RunParts
  /** The request waited on, and its key. */
  declare readonly pending: Oracle.Request | undefined
  declare readonly key: string | undefined
  declare readonly base: () => State
  declare readonly origin: (() => State) | undefined
  /** A delta's first answer among the run's. */
  declare readonly from: number
  declare readonly steps: number
  declare readonly llmCalls: number
  declare readonly toolCalls: number
  declare readonly tokens: number
  declare readonly at: number
  declare readonly elapsedMs: number
  /** How many of the run's answers the checkpoint holds. */
  declare readonly count: number
  declare private made: Checkpoint | Delta | undefined
  constructor(
    tag: "Base" | "Delta",
    run: RunParts,
    execution: Evaluator.Execution,
    pending: Oracle.Request | undefined,
    key: string | undefined,
    base: () => State,
    origin: (() => State) | undefined,
    from: number,
    /** When it was taken (`Date.now()`). */
    at: number
  ) {
    const c = execution.counters
    const elapsed = at - (c.deadline - run.budget.timeMs)
    this._tag = tag
    this.run = run
    this.pending = pending
    this.key = key
    this.base = base
    this.origin = origin
    this.from = from
    this.steps = c.steps
    this.llmCalls = c.llmCalls
    this.toolCalls = c.toolCalls
    this.tokens = c.tokens
    this.at = at
    this.elapsedMs = Math.max(elapsed, 0)
    this.count = run.answers.length
    this.made = undefined
  }
  get usage(): Usage {
    return { steps: this.steps, llmCalls: this.llmCalls, toolCalls: this.toolCalls, tokens: this.tokens, elapsedMs: this.elapsedMs }
  }
  get checkpoint(): Checkpoint {
    return (this.made ??= assemble(this)) as Checkpoint
  }
  get delta(): Delta {
    return (this.made ??= {
      format: deltaFormat,
      version,
      createdAt: new Date(this.at).toISOString(),
      usage: this.usage,
      ...(this.pending !== undefined ? { waiting: waitingOf(this.key!, this.pending) } : {}),
      answers: this.run.answers.slice(this.from, this.count).map((a) => answerJson(this.run.root, a))
    }) as Delta
  }
}

const assemble = (parts: Parts): Checkpoint => {
  const run = parts.run
  const base = parts.base()
  const origin = parts.origin?.()
  return seal({
    format,
    version,
    createdAt: new Date(parts.at).toISOString(),
    term: termHash(run.root),
    root: rootJson(run.root),
    budget: budgetJson(run.budget),
    trace: run.trace,
    usage: parts.usage,
    ...(parts.pending !== undefined ? { waiting: waitingOf(parts.key!, parts.pending) } : {}),
    base,
    ...(origin !== undefined && origin !== base ? { origin } : {}),
    answers: run.answers.slice(0, parts.count).map((a) => answerJson(run.root, a)),
    meta: { ...run.meta }
  })
}

/**
 * A checkpoint of `execution`, which is waiting on `pending` (the request it suspended on, not
 * yet answered) or has not started (`undefined`): its base is the execution as it is now. Throws a
 * `CheckpointError` (`unsupported`) when the run holds state a checkpoint cannot carry.
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
  const answers = options.answers ?? []
  const base = stateOf(execution, pending, answers.length)
  const key = pending === undefined ? undefined : execution.requestKey(pending)
  const run: RunParts = { root: execution.machine.root, budget: execution.budget, trace: execution.traceLevel, meta: options.meta ?? {}, answers }
  return assemble(new Parts("Base", run, execution, pending, key, () => base, undefined, 0, Date.now()))
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
  return seal({ ...rest, asking })
}

/**
 * The checkpoint `deltas` make of `checkpoint`, the one before the first of them: its answers
 * followed by theirs, where the last delta says the run is. (A paused checkpoint's question is
 * dropped: the run went on.)
 *
 * @since 0.2.0
 * @category combinators
 * @example
 * ```ts
 * import { Checkpoint } from "lambdagent"
 * const newest = (base: Checkpoint.Checkpoint, deltas: ReadonlyArray<Checkpoint.Delta>) => Checkpoint.extend(base, deltas)
 * ```
 */
export const extend = (checkpoint: Checkpoint, deltas: ReadonlyArray<Delta>): Checkpoint => {
  const last = deltas.at(-1)
  if (last === undefined) return checkpoint
  const { asking: _a, digest: _d, waiting: _w, ...rest } = checkpoint
  return seal({
    ...rest,
    createdAt: last.createdAt,
    usage: last.usage,
    ...(last.waiting !== undefined ? { waiting: last.waiting } : {}),
    answers: checkpoint.answers.concat(...deltas.map((d) => d.answers))
  })
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

/**
 * Check a checkpoint read back (from `JSON.parse`): the format and version, the digest (an
 * edited or damaged checkpoint is refused), that its term has its hash, and — with
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
  let checkpoint: Checkpoint
  if (checked.has(json as Checkpoint)) checkpoint = json as Checkpoint
  else {
    checkpoint = decodeVersioned(json, { format, version, schema: CheckpointSchema, noun: "checkpoint", kind: "a lambdagent checkpoint" }, fail)
    const { digest, ...body } = checkpoint
    if (sha256(JSON.stringify(ordered(body))) !== digest) return fail("digest", "the checkpoint does not match its digest (edited or damaged)")
    rootTerm(checkpoint)
    checked.add(checkpoint)
  }
  if (options.term !== undefined && termHash(options.term) !== checkpoint.term) {
    fail("term", `the checkpoint is of term ${short(checkpoint.term)}, not of this term (${short(termHash(options.term))})`)
  }
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

/**
 * Check a delta read back (from `JSON.parse`): its format, version and fields. Throws a
 * `CheckpointError` whose message is one line. (Whether it belongs after the checkpoint before it
 * is the store's to check: a journal chains its entries' digests.)
 *
 * @since 0.2.0
 * @category decoding
 * @example
 * ```ts
 * import { Checkpoint } from "lambdagent"
 * const read = (text: string) => Checkpoint.decodeDelta(JSON.parse(text))
 * ```
 */
export const decodeDelta = (json: unknown): Delta =>
  decodeVersioned(json, { format: deltaFormat, version, schema: DeltaSchema, noun: "checkpoint delta", kind: "a lambdagent checkpoint delta" }, fail)

/**
 * A delta's fields as JSON text in the schema's order (the text its digest is taken over in a
 * journal), whatever order they came in.
 *
 * @since 0.2.0
 * @category encoding
 * @example
 * ```ts
 * import { Checkpoint } from "lambdagent"
 * const text = (d: Checkpoint.Delta) => Checkpoint.deltaText(d)
 * ```
 */
export const deltaText = (delta: Delta): string => {
  const { answers, createdAt, format, usage, version, waiting } = delta
  return JSON.stringify({ format, version, createdAt, usage, ...(waiting !== undefined ? { waiting } : {}), answers })
}

const short = (digest: string) => digest.slice(0, 19)

const terms = new WeakMap<Checkpoint, Term.Term>()

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
  let term = terms.get(checkpoint)
  if (term !== undefined) return term
  try {
    term = Term.parse(checkpoint.root as Term.Json)
  } catch {
    return fail("term", "the checkpoint's term is not a well-formed term")
  }
  if (termHash(term) !== checkpoint.term) fail("term", `the checkpoint's term does not have its hash ${short(checkpoint.term)}`)
  roots.set(term, checkpoint.root)
  terms.set(checkpoint, term)
  return term
}

/**
 * A restored run: the execution, the request it waits on (`undefined`: none yet), and every answer
 * the checkpoint recorded, by key for the driver's `recorded` option: driven with them, the
 * execution reaches the checkpoint without calling any oracle, and goes on live from there.
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
 * Options of {@link restore}: which state to restore, where the restored run's events go, and
 * tools for `code_of`.
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
  /**
   * `base` (default): the checkpoint's base, the quickest to drive to the checkpoint. `origin`:
   * the run's start (the base when the checkpoint does not hold it), so that driving it asks every
   * request of the run again, each answered from the record — a run recording its answers for
   * replay resumes so.
   */
  readonly from?: "base" | "origin"
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
 * Make the execution a checkpoint holds (from {@link decode}), in this process: the machine of its
 * base (or, with `from: "origin"`, of the run's start), with the counters and trace it had there.
 * Its deadline is the time budget minus the time the run had used at the checkpoint. Throws a
 * `CheckpointError` when the snapshot does not fit its term.
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
  const state = options.from === "origin" ? (checkpoint.origin ?? checkpoint.base) : checkpoint.base
  const [top] = decodeValue(state.graph) as [{ machine?: unknown; pending?: Oracle.Request } | undefined]
  if (top === undefined || !isMachineState(top.machine)) return fail("format", "the checkpoint's machine state is malformed")
  const budget = Budget.make(Object.fromEntries(Object.entries(checkpoint.budget).map(([k, v]) => [k, v ?? Infinity])))
  const counters = new Counters(Date.now() + budget.timeMs - checkpoint.usage.elapsedMs)
  counters.steps = state.usage.steps
  counters.llmCalls = state.usage.llmCalls
  counters.toolCalls = state.usage.toolCalls
  counters.tokens = state.usage.tokens
  const tools = options.tools
  const config: MachineConfig = {
    registry: tools === undefined ? new Map() : tools instanceof Map ? tools : new Map(Object.entries(tools)),
    budget,
    trace: checkpoint.trace,
    counters,
    events: state.events.slice() as Array<Trace.TraceEvent>,
    ...(options.onEvent !== undefined ? { listener: options.onEvent } : {})
  }
  let machine: Machine
  try {
    machine = Machine.restore(config, root, top.machine)
  } catch (error) {
    if (error instanceof Error && !("_tag" in error)) return fail("format", `the checkpoint's machine state is malformed: ${error.message}`)
    throw error
  }
  const answers = checkpoint.answers.map((json): Answer => {
    const m = json.message
    if (m !== undefined && json.kind !== "send" && json.kind !== "receive")
      fail("format", `the checkpoint's answer ${json.key} is a ${json.kind}, not a message`)
    const answer: Answer = {
      key: json.key,
      kind: json.kind as Answer["kind"],
      tokens: json.tokens,
      events: json.events as ReadonlyArray<Trace.TraceEvent>,
      value: decodeValue(json.value)[0] as Value.Value,
      ...(m !== undefined ? { message: { op: json.kind as "send" | "receive", scope: m.scope, channel: m.channel, seq: m.seq } } : {})
    }
    encodedAnswers.set(answer, json)
    return answer
  })
  return {
    execution: Evaluator.fromMachine(machine, config),
    pending: top.pending,
    answers,
    recorded: new Map(answers.map((a) => [a.key, a]))
  }
}

/** What stops {@link traceTo} at the first request the checkpoint has no answer for. */
class Reached {
  readonly _tag = "Reached"
}

/**
 * The trace of the run up to `checkpoint`: its base driven on with the recorded answers, without
 * calling any oracle, up to the request it waits on (inside `par` branches still running at the
 * checkpoint, their events are not in it: they join the trace when the `par` ends).
 *
 * @since 0.2.0
 * @category getters
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Checkpoint } from "lambdagent"
 * const steps = (c: Checkpoint.Checkpoint) => Effect.runPromise(Checkpoint.traceTo(c)).then((trace) => trace.length)
 * ```
 */
export const traceTo = (checkpoint: Checkpoint): Effect.Effect<ReadonlyArray<Trace.TraceEvent>, CheckpointError> =>
  Effect.suspend(() => {
    let restored: Restored
    try {
      restored = restore(checkpoint)
    } catch (error) {
      if (error instanceof CheckpointError) return Effect.fail(error)
      throw error
    }
    const exec = restored.execution
    const reached = Effect.fail(new Reached())
    const drive = Driver.drive(
      exec,
      { llm: () => reached, tool: () => reached, memory: () => reached, ask: () => reached, suspended: () => reached },
      { recorded: restored.recorded, ...(restored.pending !== undefined ? { first: { _tag: "Suspended", request: restored.pending } } : {}) }
    )
    // the run's own failure (a budget) ends the trace too
    return Effect.as(Effect.ignore(drive), exec.events)
  })

/**
 * Options of {@link recorder}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Checkpoint } from "lambdagent"
 * const o: Checkpoint.RecorderOptions<never> = { save: (entry) => Effect.sync(() => console.log(entry._tag)) }
 * ```
 */
export interface RecorderOptions<E> {
  /**
   * Keep an entry (write it to a store); its failure stops the run before the call. Without it,
   * nothing is handed on: the recorder only keeps the run ready for {@link Recorder.latest}.
   * A save that returns a completed effect (`Effect.void` after its work) keeps a zero-latency
   * call synchronous.
   */
  readonly save?: (entry: Entry) => Effect.Effect<void, E>
  readonly meta?: Readonly<Record<string, unknown>>
  /**
   * A run resumed from `checkpoint`, with these answers (the checkpoint's, and the answer to its
   * question when it asked one): its base and answers carry on into the run's checkpoints.
   */
  readonly resumed?: { readonly checkpoint: Checkpoint; readonly answers: ReadonlyArray<Answer> }
  /**
   * Also save a checkpoint during long pure evaluation: at the first time-slice boundary after
   * every this many steps since the last checkpoint (default: only before oracle calls). Such a
   * checkpoint is a new base: it keeps the computation.
   */
  readonly everySteps?: number
}

/**
 * What a run adds to its driver handlers to checkpoint: `suspended` hands the store an entry
 * before every oracle call, `answered` records every answer.
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
  /** The checkpoint taken last (before the latest live oracle call), made whole now; `undefined` before the first. */
  readonly latest: () => Checkpoint | undefined
}

/**
 * When a run takes a new base, in the unit of a machine step (tens of nanoseconds): replaying from
 * the last base costs its steps since and about {@link ANSWER_STEPS} for each answer given since;
 * taking a base costs about {@link NODE_STEPS} for each node of the machine's heap, trace event and
 * answer it writes. A new base is taken once replaying would cost {@link REPLAY_PER_BASE} times as
 * much as taking one, and at least {@link MIN_REPLAY_STEPS} (replaying that much takes about a
 * millisecond, less than most model calls); and at the latest after {@link BASE_EVERY_ANSWERS}
 * answers. Counted in steps, not measured in time, so that where bases fall is the same in every
 * run of a term.
 */
const ANSWER_STEPS = 64
const NODE_STEPS = 32
const REPLAY_PER_BASE = 10
const MIN_REPLAY_STEPS = 40_000
const BASE_EVERY_ANSWERS = 256

/** What taking `state` cost, in steps (see {@link ANSWER_STEPS}). */
const costOf = (state: State): number => NODE_STEPS * (state.graph.heap.length + state.events.length + state.answers)

/**
 * A {@link Recorder} for the run of `execution` (the run itself, not a branch), made before its
 * first step (or with `resumed`).
 *
 * Before every oracle call it hands `save` an {@link Entry}. The first is a whole checkpoint
 * whose base is the run's start (encoded only when read: nothing in it changes). The next ones
 * are deltas — the answers since — except that a new base (the machine encoded as it is) is taken
 * before a call of the run itself (not inside `par` branches or `channels` scopes) when replaying
 * from the last base would cost about ten times as much as taking a new one (counted in steps and
 * answers, so bases fall at the same places in every run), after 256 answers, and for the
 * checkpoints of {@link RecorderOptions.everySteps}. The messages of `channels` scopes are
 * recorded as answers too, each when its channel decides it, with where it passed
 * (`Driver.Message`).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Checkpoint, Driver, Evaluator, Term } from "lambdagent"
 * const exec = Evaluator.startApply(Term.tool("double"), 21)
 * const saved: Array<Checkpoint.Entry> = []
 * const recorder = Checkpoint.recorder(exec, { save: (entry) => (saved.push(entry), Effect.void) })
 * await Effect.runPromise(Driver.drive(exec, {
 *   llm: () => Effect.succeed(""),
 *   tool: (request) => Effect.succeed(Number(request.input) * 2),
 *   memory: () => Effect.succeed(null),
 *   ...recorder
 * }))
 * console.log(saved.map((e) => e._tag)) // ["Base"]
 * ```
 */
export const recorder = <E>(execution: Evaluator.Execution, options: RecorderOptions<E> = {}): Recorder<E> => {
  const root = execution.machine.root
  const save = options.save
  const from = options.resumed?.checkpoint
  const answers: Array<Answer> = [...(options.resumed?.answers ?? [])]
  const run: RunParts = { root, budget: execution.budget, trace: execution.traceLevel, meta: options.meta ?? {}, answers }
  let base: () => State
  let baseAnswers: number
  let origin: (() => State) | undefined
  if (from !== undefined) {
    const fromBase = from.base
    const fromOrigin = from.origin
    base = () => fromBase
    baseAnswers = fromBase.answers
    origin = fromOrigin === undefined ? undefined : () => fromOrigin
  } else if (execution.steps === 0 && execution.events.length === 0) {
    // the run's start: nothing the machine holds yet changes, so it is encoded only when read
    const start = { machine: execution.machine.snapshot(), pending: undefined }
    const usage = usageOf(execution)
    let state: State | undefined
    base = () => (state ??= { usage, events: [], graph: graphOf(root, [start]), answers: 0 })
    baseAnswers = 0
  } else {
    const state = stateOf(execution, undefined, answers.length)
    base = () => state
    baseAnswers = answers.length
  }
  let first = true
  let handed = answers.length
  let latest: Parts | undefined
  let baseSteps = from !== undefined ? from.base.usage.steps : execution.steps
  let replayLimit = Math.max(MIN_REPLAY_STEPS, from !== undefined ? REPLAY_PER_BASE * costOf(from.base) : 0)
  let stepsAt = execution.steps
  const every = options.everySteps ?? 0
  /** The run's own request waiting for its answer (one at a time), its key and where its trace events begin. */
  let ownRequest: Oracle.Request | undefined
  let ownKey = ""
  let ownMark = 0
  /** The same for `par` branches' requests, by key. */
  const marks = new Map<string, number>()

  const rebase = (pending: Oracle.Request | undefined) => {
    const state = stateOf(execution, pending, answers.length)
    origin ??= base
    base = () => state
    baseAnswers = answers.length
    baseSteps = execution.steps
    replayLimit = Math.max(MIN_REPLAY_STEPS, REPLAY_PER_BASE * costOf(state))
  }

  const take = (own: boolean, pending: Oracle.Request | undefined, key: string | undefined): Effect.Effect<void, E> => {
    const since = answers.length - baseAnswers
    let rebased = false
    if (own && (pending === undefined || since >= BASE_EVERY_ANSWERS || execution.steps - baseSteps + ANSWER_STEPS * since >= replayLimit)) {
      // the first entry too, when it is due: the start alone would replay all of that
      rebase(pending)
      rebased = true
    } else if (pending === undefined) return Effect.void
    stepsAt = execution.steps
    // before a request, the driver has just read the clock (Counters.now): a clock read costs as much as the rest
    const clock = execution.counters.now
    const at = pending !== undefined && clock > 0 ? clock : Date.now()
    const parts = new Parts(first || rebased ? "Base" : "Delta", run, execution, pending, key, base, origin, handed, at)
    latest = parts
    if (save === undefined) return Effect.void
    first = false
    handed = parts.count
    return save(parts as Entry)
  }

  return {
    answers,
    latest: () => (latest === undefined ? undefined : assemble(latest)),
    suspended: (request, run) => {
      const exec = run.execution
      if (exec.scope === "") {
        ownRequest = request
        ownKey = String(request.id)
        ownMark = exec.events.length
        return take(true, request, ownKey)
      }
      const key = exec.requestKey(request)
      marks.set(key, exec.events.length)
      return take(false, request, key)
    },
    ...(every > 0
      ? {
          sliced: (run: Driver.RunState) =>
            execution.steps - stepsAt >= every && (from === undefined || execution.steps > from.usage.steps)
              ? take(run.execution.scope === "", undefined, undefined)
              : Effect.void
        }
      : {}),
    answered: (request, value, run, recorded, message) => {
      // an answer replayed from the record is recorded already
      if (recorded !== undefined) return
      const kind = request.kind
      const exec = run.execution
      if (message !== undefined) {
        answers.push({ key: exec.requestKey(request), kind, value, events: EMPTY, tokens: 0, message })
        return
      }
      if (kind !== "llm" && (kind === "tool" ? isTerminate(request.name) : kind === "par" || kind === "channels")) return
      let key: string
      let mark: number | undefined
      if (request === ownRequest) {
        key = ownKey
        mark = ownMark
        ownRequest = undefined
      } else {
        key = exec.requestKey(request)
        mark = marks.get(key)
        marks.delete(key)
      }
      const events = mark === undefined || mark === exec.events.length ? EMPTY : exec.events.slice(mark)
      let tokens = 0
      for (let i = 0; i < events.length; i++) {
        const used = events[i]!.tokens
        if (used !== undefined) tokens += used.input + used.output
      }
      answers.push({ key, kind, value, events, tokens })
    }
  }
}

/**
 * A run's checkpoint entries kept in memory: `save` for the `checkpoint` call option, and every
 * checkpoint they make.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Checkpoint } from "lambdagent"
 * const newest = (j: Checkpoint.Journal) => j.checkpoints().at(-1)
 * ```
 */
export interface Journal {
  /** Keep an entry (for the `checkpoint` call option's `save`). */
  readonly save: (entry: Entry) => Effect.Effect<void>
  /** The entries saved, oldest first. */
  readonly entries: ReadonlyArray<Entry>
  /** The checkpoint each entry makes (its base extended by the deltas up to it), oldest first. */
  readonly checkpoints: () => Array<Checkpoint>
}

/**
 * An in-memory {@link Journal}.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Checkpoint, createRuntime, Scripted, Term } from "lambdagent"
 * const journal = Checkpoint.journal()
 * await createRuntime({ model: Scripted.echo() }).run(Term.llm({ system: "Repeat." }), "hi", { checkpoint: { save: journal.save } })
 * console.log(journal.checkpoints().length) // 1
 * ```
 */
export const journal = (): Journal => {
  const entries: Array<Entry> = []
  return {
    entries,
    save: (entry) => {
      entries.push(entry)
      return Effect.void
    },
    checkpoints: () => {
      const out: Array<Checkpoint> = []
      let base: Checkpoint | undefined
      let deltas: Array<Delta> = []
      for (const entry of entries) {
        if (entry._tag === "Base") {
          base = entry.checkpoint
          deltas = []
          out.push(base)
        } else if (base !== undefined) {
          deltas.push(entry.delta)
          out.push(extend(base, deltas))
        }
      }
      return out
    }
  }
}
