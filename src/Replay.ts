/**
 * Offline replay: a run's oracle answers as data, and a run answered from them.
 *
 * A {@link Recording} holds every answer a run was given — LLM replies, tool outputs, memory
 * reads, the messages of `channels` scopes — each with the request it answered (by request key, `Execution.requestKey`), what the
 * call added to the trace and its tokens. {@link recorder} is the driver hook that records them;
 * {@link player} gives the driver handlers that answer a new run of the same term from them, with
 * no provider, tool or store. A request that differs from the recorded one (another prompt,
 * input, tool) is a divergence: the run fails with `ReplayDivergence` saying where, or goes on
 * live from there. A recording is versioned, Schema-checked and carries a digest: a truncated,
 * edited or foreign one is refused with a `ReplayError`. See `docs/durable.md`.
 *
 * @since 0.2.0
 * @module
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Driver from "./Driver.ts"
import { ReplayDivergence, ReplayError, type ReplayReason } from "./Errors.ts"
import { isTerminate } from "./forms/tool.ts"
import { parseExact } from "./internal/json.ts"
import { termHash } from "./internal/snapshot.ts"
import { decodeVersioned } from "./internal/versioned.ts"
import { foldTree } from "./internal/tree.ts"
import type * as LanguageModel from "./LanguageModel.ts"
import * as Oracle from "./Oracle.ts"
import * as Term from "./Term.ts"
import type * as Trace from "./Trace.ts"
import * as Value from "./Value.ts"

/**
 * The format name every recording carries.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Replay } from "lambdagent"
 * console.log(Replay.format) // "lambdagent.replay"
 * ```
 */
export const format = "lambdagent.replay"

/**
 * The format version this build writes and reads.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Replay } from "lambdagent"
 * console.log(Replay.version) // 1
 * ```
 */
export const version = 1

const TraceEventSchema = Schema.Struct({
  step: Schema.Number,
  kind: Schema.String,
  name: Schema.String,
  input: Schema.optionalKey(Schema.String),
  output: Schema.optionalKey(Schema.String),
  durationMs: Schema.optionalKey(Schema.Number),
  tokens: Schema.optionalKey(Schema.Struct({ input: Schema.Number, output: Schema.Number })),
  model: Schema.optionalKey(Schema.String),
  branch: Schema.optionalKey(Schema.String),
  error: Schema.optionalKey(Schema.String)
})

/**
 * The schema of one recorded answer: the request's key and kind, the request as JSON (see
 * {@link requestOf}), the answer (`Value.toJson`; `null` for a memory write, whose answer is its
 * output), and the tokens and trace events of the call. A message of a `channels` scope
 * (`send`, `receive`) also says where it passed (`Driver.Message`: the scope's request key, the
 * channel, the message's number there); its answer is the value passed.
 *
 * @since 0.2.0
 * @category schemas
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Replay } from "lambdagent"
 * const isEntry = Schema.is(Replay.EntrySchema)
 * ```
 */
export const EntrySchema = Schema.Struct({
  key: Schema.String,
  kind: Schema.Literals(["llm", "tool", "tools", "memory-read", "memory-write", "ask", "send", "receive"]),
  request: Schema.Unknown,
  answer: Schema.Unknown,
  tokens: Schema.Number,
  events: Schema.Array(TraceEventSchema),
  message: Schema.optionalKey(Schema.Struct({ scope: Schema.String, channel: Schema.String, seq: Schema.Number })),
  /** Milliseconds of the run's time budget used when the answer came (kept by a durable journal). */
  elapsedMs: Schema.optionalKey(Schema.Number)
})

/**
 * One recorded answer.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Replay } from "lambdagent"
 * const e: Replay.Entry = { key: "1", kind: "tool", request: { kind: "tool", name: "t", input: 1 }, answer: 2, tokens: 0, events: [] }
 * ```
 */
export type Entry = typeof EntrySchema.Type

/**
 * The schema of a recording (format version {@link version}).
 *
 * @since 0.2.0
 * @category schemas
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Replay } from "lambdagent"
 * const isRecording = Schema.is(Replay.RecordingSchema)
 * ```
 */
export const RecordingSchema = Schema.Struct({
  format: Schema.Literal(format),
  version: Schema.Literal(version),
  /** SHA-256 of the rest of the recording: an edited or damaged one is refused. */
  digest: Schema.String,
  /** The content hash of the recorded run's term. */
  term: Schema.String,
  /** Every answer, in the order the run was given them. */
  answers: Schema.Array(EntrySchema),
  /** What the host keeps with the run (the CLI keeps its config, input and tools here). */
  meta: Schema.Record(Schema.String, Schema.Unknown)
})

/**
 * A recording of a run's oracle answers: plain JSON, written with `Term.stringify` (its integers
 * beyond 2^53 exact).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Replay } from "lambdagent"
 * const llmCalls = (r: Replay.Recording) => r.answers.filter((a) => a.kind === "llm").length
 * ```
 */
export type Recording = typeof RecordingSchema.Type

const fail = (reason: ReplayReason, message: string): never => {
  throw new ReplayError({ reason, message })
}

const digestOf = (body: Omit<Recording, "digest">): string => {
  const ordered = { format: body.format, version: body.version, term: body.term, answers: body.answers, meta: body.meta }
  return "sha256:" + createHash("sha256").update(Term.stringify(ordered)).digest("hex")
}

const messageJson = (m: LanguageModel.ChatMessage): Term.Json => ({
  role: m.role,
  content: m.content,
  ...(m.toolCallId !== undefined ? { toolCallId: m.toolCallId } : {}),
  ...(m.toolCalls !== undefined ? { toolCalls: m.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })) } : {})
})

/**
 * A request as JSON: what a replay compares to tell whether a run asks what the recorded one
 * asked. An LLM call is its name, system prompt, model settings (not the transport's `baseUrl`
 * and `timeout`), input text, for a ReAct step its tools and transcript, and for a structured
 * answer its output schema and the turns asking for a repair; a tool call its
 * name and input; a memory access its scope, size, input (and a write's output); a message its
 * channel (and a send's value).
 *
 * @since 0.2.0
 * @category encoding
 * @example
 * ```ts
 * import { Replay } from "lambdagent"
 * Replay.requestOf({ kind: "tool", id: 1, name: "search", input: "effect", observe: false })
 * // { kind: "tool", name: "search", input: "effect" }
 * ```
 */
export const requestOf = (request: Oracle.Request): Term.Json => {
  switch (request.kind) {
    case "llm": {
      const term = request.term
      const { baseUrl: _url, timeout: _timeout, ...model } = term.model ?? {}
      return {
        kind: "llm",
        ...(term.name !== undefined ? { name: term.name } : {}),
        system: term.system,
        ...(Object.keys(model).length > 0 ? { model: model as Term.Json } : {}),
        input: Value.toText(request.input),
        ...(request.tools !== undefined ? { tools: [...request.tools] } : {}),
        ...(request.transcript !== undefined ? { transcript: request.transcript.map(messageJson) } : {}),
        ...(request.toolChoice !== undefined ? { toolChoice: request.toolChoice } : {}),
        ...(request.output !== undefined ? { output: request.output as unknown as Term.Json } : {}),
        ...(request.repair !== undefined ? { repair: request.repair.map(messageJson) } : {})
      }
    }
    case "tool":
      return { kind: "tool", name: request.name, input: Value.toJson(request.input) }
    case "tools":
      return { kind: "tools", calls: request.calls.map((c) => ({ name: c.name, input: Value.toJson(c.input) })) }
    case "memory-read":
      return { kind: "memory-read", scope: request.term.scope, size: request.term.size, input: Value.toText(request.input) }
    case "memory-write":
      return { kind: "memory-write", scope: request.term.scope, input: Value.toText(request.input), output: Value.toJson(request.output) }
    case "ask":
      return { kind: "ask", question: request.question, input: Value.toJson(request.input) }
    case "par":
      return { kind: "par", branches: request.term.branches.length, input: Value.toJson(request.input) }
    case "channels":
      return { kind: "channels", input: Value.toJson(request.input) }
    case "send":
      return { kind: "send", channel: request.channel, value: Value.toJson(request.value) }
    case "receive":
      return { kind: "receive", channel: request.channel }
  }
}

type JsonNode = Term.Json

const isPairJson = (node: JsonNode): node is { readonly pair: readonly [JsonNode, JsonNode] } =>
  typeof node === "object" &&
  node !== null &&
  !Array.isArray(node) &&
  Array.isArray((node as { pair?: unknown }).pair) &&
  (node as { pair: ReadonlyArray<unknown> }).pair.length === 2 &&
  Object.keys(node).length === 1

const answerChildren = (node: JsonNode): ReadonlyArray<JsonNode> => (Array.isArray(node) ? node : isPairJson(node) ? node.pair : [])

/**
 * The value an entry's answer encodes (`Value.toJson` read back); functions cannot be, and fail
 * with `ReplayError`.
 *
 * @since 0.2.0
 * @category decoding
 * @example
 * ```ts
 * import { Replay } from "lambdagent"
 * const value = Replay.entryValue({ key: "3", kind: "tool", request: {}, answer: [1, 2], tokens: 0, events: [] })
 * ```
 */
export const entryValue = (entry: Entry): Value.Value =>
  foldTree<JsonNode, Value.Value>(entry.answer as JsonNode, answerChildren, (node, kids) => {
    if (Array.isArray(node)) return Value.fromArray(kids)
    if (node === null || typeof node !== "object") return node as Value.Value
    if (isPairJson(node)) return new Value.Pair(kids[0]!, kids[1]!)
    if ("quote" in node && Object.keys(node).length === 1) {
      try {
        return new Value.Quoted(Term.parse(node.quote as Term.Json))
      } catch {
        return fail("answer", `the recorded answer of request ${entry.key} holds a malformed quoted term`)
      }
    }
    return fail("answer", `the recorded answer of request ${entry.key} is a function, which a recording cannot give back`)
  })

/**
 * Options of {@link make}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import type { Replay } from "lambdagent"
 * const o: Replay.MakeOptions = { term: Term.llm({ system: "Be brief." }), answers: [], meta: { input: "hi" } }
 * ```
 */
export interface MakeOptions {
  /** The term the run was of. */
  readonly term: Term.Term
  /** The answers, in the order they came (from {@link recorder}). */
  readonly answers: ReadonlyArray<Entry>
  /** What the host keeps with the run. */
  readonly meta?: Readonly<Record<string, unknown>>
}

/**
 * A recording of a run of `term` given `answers`.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Replay, Term } from "lambdagent"
 * const recording = Replay.make({ term: Term.tool("double"), answers: [] })
 * console.log(recording.format) // "lambdagent.replay"
 * ```
 */
export const make = (options: MakeOptions): Recording => {
  const body: Omit<Recording, "digest"> = {
    format,
    version,
    term: termHash(options.term),
    answers: options.answers.slice(),
    meta: { ...options.meta }
  }
  return { ...body, digest: digestOf(body) }
}

/**
 * Check a recording read back: its format and version, its fields (the Schema), its digest.
 * Throws a `ReplayError` whose message is one line.
 *
 * @since 0.2.0
 * @category decoding
 * @example
 * ```ts
 * import { Errors, Replay } from "lambdagent"
 * try {
 *   Replay.decode({ format: "lambdagent.replay", version: 99 })
 * } catch (e) {
 *   if (e instanceof Errors.ReplayError) console.log(e.reason) // "version"
 * }
 * ```
 */
export const decode = (json: unknown): Recording => {
  const recording = decodeVersioned(
    json,
    { format, version, schema: RecordingSchema, noun: "recording", kind: "a lambdagent recording of oracle answers" },
    fail
  )
  const { digest, ...body } = recording
  if (digestOf(body) !== digest) return fail("digest", "the recording does not match its digest (edited or damaged)")
  return recording
}

/**
 * The recording a trace file holds: a recording itself, or any object with one under `replay`
 * (what `lambdagent run --trace-file` writes). Throws a `ReplayError` for anything else.
 *
 * @since 0.2.0
 * @category decoding
 * @example
 * ```ts
 * import { Replay, Term } from "lambdagent"
 * const file = { result: 42, trace: [], replay: Replay.make({ term: Term.tool("double"), answers: [] }) }
 * console.log(Replay.fromTrace(file).answers.length) // 0
 * ```
 */
export const fromTrace = (json: unknown): Recording => {
  if (typeof json === "object" && json !== null && !Array.isArray(json) && !("format" in json)) {
    if (!("replay" in json)) return fail("format", "holds no recording of oracle answers (write one with lambdagent run --trace-file)")
    return decode((json as { replay: unknown }).replay)
  }
  return decode(json)
}

/**
 * Read a trace file's text: {@link fromTrace} after parsing the JSON (integers beyond 2^53 exact).
 *
 * @since 0.2.0
 * @category decoding
 * @example
 * ```ts
 * import { Replay } from "lambdagent"
 * const read = (text: string) => Replay.parse(text)
 * ```
 */
export const parse = (text: string): Recording => {
  if (text.trim() === "") return fail("format", "an empty file, not a trace")
  let json: unknown
  try {
    json = parseExact(text)
  } catch (cause) {
    return fail("format", `not JSON (truncated?): ${(cause as Error).message}`)
  }
  return fromTrace(json)
}

/**
 * What a run adds to its driver handlers to record its answers: `suspended` marks where each
 * call's trace events begin, `answered` makes the {@link Entry}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Replay } from "lambdagent"
 * const hooks = (r: Replay.Recorder) => [r.suspended, r.answered]
 * ```
 */
export interface Recorder {
  /** The driver's hook before each live oracle call. */
  readonly suspended: NonNullable<Driver.Handlers<never, never>["suspended"]>
  /** The driver's hook after each answer. */
  readonly answered: NonNullable<Driver.Handlers<never, never>["answered"]>
}

type Driven = Extract<Oracle.Request, { readonly kind: "par" | "channels" }>
const isDriven = (request: Oracle.Request): request is Driven => request.kind === "par" || request.kind === "channels"

/**
 * A {@link Recorder} telling `onEntry` of every answer (`terminate`, `par` and `channels`, which
 * the driver answers itself, are not recorded), those a resumed run is given from its
 * checkpoint's record included. Messages are recorded with where they passed.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Driver, Evaluator, Replay, Term } from "lambdagent"
 * const term = Term.tool("double")
 * const answers: Array<Replay.Entry> = []
 * await Effect.runPromise(Driver.drive(Evaluator.startApply(term, 21), {
 *   llm: () => Effect.succeed(""),
 *   tool: (request) => Effect.succeed(Number(request.input) * 2),
 *   memory: () => Effect.succeed(null),
 *   ...Replay.recorder((entry) => answers.push(entry))
 * }))
 * const recording = Replay.make({ term, answers })
 * console.log(recording.answers[0]?.answer) // 42
 * ```
 */
export const recorder = (onEntry: (entry: Entry) => void): Recorder => {
  const marks = new Map<string, number>()
  return {
    // the note is taken when the driver asks for the hook, just before the call: no effect to run
    suspended: (request, run) => {
      const exec = run.execution
      marks.set(exec.requestKey(request), exec.events.length)
      return Effect.void
    },
    answered: (request, value, run, recorded, message) => {
      // the driver answers these itself, in a replay as in the run
      if (isDriven(request) || (request.kind === "tool" && isTerminate(request.name))) return
      const exec = run.execution
      const key = exec.requestKey(request)
      if (request.kind === "send" || request.kind === "receive") {
        const m = message ?? recorded?.message
        if (m !== undefined) {
          const where = { scope: m.scope, channel: m.channel, seq: m.seq }
          onEntry({ key, kind: request.kind, request: requestOf(request), answer: Value.toJson(value), tokens: 0, events: [], message: where })
        }
        return
      }
      // an answer a resumed run was given from its checkpoint's record added that record's events
      const events = recorded !== undefined ? recorded.events : exec.events.slice(marks.get(key) ?? exec.events.length)
      marks.delete(key)
      const tokens =
        recorded !== undefined ? recorded.tokens : events.reduce((sum, e) => sum + (e.tokens === undefined ? 0 : e.tokens.input + e.tokens.output), 0)
      onEntry({
        key,
        kind: request.kind,
        request: requestOf(request),
        answer: request.kind === "memory-write" ? null : Value.toJson(value),
        tokens,
        events
      })
    }
  }
}

/**
 * Options of {@link player}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Replay } from "lambdagent"
 * const o: Replay.PlayerOptions<never, never> = { onDivergence: (d) => console.error(d.message) }
 * ```
 */
export interface PlayerOptions<E, R> {
  /** Answer every request from the first divergence on with these handlers (default: fail there). */
  readonly live?: Driver.Handlers<E, R>
  /** Told of the first divergence (with `live`, the run goes on). */
  readonly onDivergence?: (divergence: ReplayDivergence) => void
  /** Told of every answer given from the recording. */
  readonly onReplayed?: (request: Oracle.Request, answer: Value.Value, run: Driver.RunState) => void
}

/**
 * A replay of a recording: the handlers that answer a run from it, and what it found.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Replay } from "lambdagent"
 * const diverged = (p: Replay.Player<never, never>) => p.divergence() !== undefined
 * ```
 */
export interface Player<E, R> {
  /** The driver's handlers: each request is answered from the recorded answer of its key. */
  readonly handlers: Driver.Handlers<E | ReplayDivergence | ReplayError, R>
  /** The first divergence, once there is one. */
  readonly divergence: () => ReplayDivergence | undefined
  /**
   * After the run: when it ended without diverging but the recording has answers it did not ask
   * for, the divergence of the first of them (the new run ended at `steps`).
   */
  readonly leftover: (steps: number) => ReplayDivergence | undefined
  /**
   * The recorded messages of `channels` scopes, by request key, for the driver's `recorded`
   * option: each scope then holds the messages its channels held in the recorded run (those sent
   * and never received), whatever order the replayed branches run in. Throws a `ReplayError` for
   * a message the recording cannot give back.
   */
  readonly messages: () => ReadonlyMap<string, Driver.RecordedAnswer>
}

/**
 * Previews of two texts that differ, each at most `max` characters, both cut from a little
 * before where they start to differ (a long shared beginning is shown as `…`).
 *
 * @since 0.2.0
 * @category formatting
 * @example
 * ```ts
 * import { Replay } from "lambdagent"
 * Replay.contrast("You answer in French.", "You answer in German.") // ["You answer in French.", "You answer in German."]
 * ```
 */
export const contrast = (before: string, after: string, max = 60): readonly [string, string] => {
  let shared = 0
  while (shared < before.length && shared < after.length && before.charCodeAt(shared) === after.charCodeAt(shared)) shared++
  const start = shared > max / 2 ? shared - 10 : 0
  const cut = (text: string) => `${start > 0 ? "…" : ""}${text.slice(start, start + max)}${start + max < text.length ? "…" : ""}`
  return [cut(before), cut(after)]
}

/** What a recorded request asked, in `Oracle.describe`'s words. */
const describeRecorded = (request: unknown): string => {
  const r = (typeof request === "object" && request !== null ? request : {}) as { kind?: unknown; name?: unknown }
  switch (r.kind) {
    case "llm":
      return `an LLM call${typeof r.name === "string" ? ` (${r.name})` : ""}`
    case "tool":
      return `a call of tool ${JSON.stringify(r.name)}`
    case "tools":
      return "tool calls of one turn"
    case "ask":
      return "a question to a person"
    case "send":
    case "receive":
      return `a ${r.kind} on channel ${JSON.stringify((r as { channel?: unknown }).channel)}`
    default:
      return "a memory store"
  }
}

/** The first field in which two requests differ, for a one-line message. */
const difference = (expected: unknown, actual: unknown): string => {
  if (typeof expected !== "object" || expected === null || typeof actual !== "object" || actual === null) return ""
  const e = expected as Record<string, unknown>
  const a = actual as Record<string, unknown>
  if (e.kind !== a.kind) return `: the recording has ${describeRecorded(e)} there`
  for (const key of new Set([...Object.keys(e), ...Object.keys(a)])) {
    const before = Term.stringify(e[key] ?? null)
    const now = Term.stringify(a[key] ?? null)
    if (before !== now) {
      const [recorded, changed] = contrast(before, now)
      return `: ${key} is ${changed}, recorded ${recorded}`
    }
  }
  return ""
}

const divergenceAt = (key: string, step: number, form: string, expected: unknown, actual: unknown): ReplayDivergence =>
  new ReplayDivergence({
    key,
    step,
    form,
    expected: expected ?? null,
    actual: actual ?? null,
    message:
      actual === null
        ? `the run ended at step ${step}; the recording goes on with request ${key}, ${form}`
        : expected === null
          ? `the run diverged at step ${step}, request ${key}: ${form}, which the recording does not have`
          : `the run diverged at step ${step}, request ${key}: ${form} differs from the recorded one${difference(expected, actual)}`
  })

/**
 * Replay `recording`: driver handlers that answer each LLM call, tool call and memory access
 * from the recorded answer of the same request key, when the request is the one recorded (see
 * {@link requestOf}); the recorded trace events and tokens are added to the run as the original
 * call added them. The first request that differs (or is not recorded) is a divergence: the run
 * fails with `ReplayDivergence`, or with `live` is answered live from there on.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Driver, Evaluator, Replay, Term } from "lambdagent"
 * const term = Term.tool("double")
 * const recording = Replay.make({
 *   term,
 *   answers: [{ key: "1", kind: "tool", request: { kind: "tool", name: "double", input: 21 }, answer: 42, tokens: 0, events: [] }]
 * })
 * const value = await Effect.runPromise(Driver.drive(Evaluator.startApply(term, 21), Replay.player(recording).handlers))
 * console.log(value) // 42
 * ```
 */
export const player = <E = never, R = never>(recording: Recording, options: PlayerOptions<E, R> = {}): Player<E, R> => {
  const entries = new Map(recording.answers.map((entry) => [entry.key, entry]))
  const used = new Set<string>()
  const live = options.live
  let diverged: ReplayDivergence | undefined
  const answer = <Q extends Oracle.Request>(
    request: Q,
    run: Driver.RunState,
    liveAnswer: ((request: Q, run: Driver.RunState) => Effect.Effect<unknown, E | ReplayDivergence | ReplayError, R>) | undefined
  ): Effect.Effect<unknown, E | ReplayDivergence | ReplayError, R> => {
    if (diverged !== undefined && liveAnswer !== undefined) return liveAnswer(request, run)
    const exec = run.execution
    const key = exec.requestKey(request)
    const entry = entries.get(key)
    const actual = requestOf(request)
    if (entry === undefined || entry.kind !== request.kind || Term.stringify(entry.request) !== Term.stringify(actual)) {
      const found = divergenceAt(key, exec.steps, describeRecorded(actual), entry?.request, actual)
      if (diverged === undefined) {
        diverged = found
        options.onDivergence?.(found)
      }
      return liveAnswer === undefined ? Effect.fail(found) : liveAnswer(request, run)
    }
    let value: Value.Value
    try {
      value = request.kind === "memory-write" ? request.output : entryValue(entry)
    } catch (error) {
      if (error instanceof ReplayError) return Effect.fail(error)
      throw error
    }
    used.add(key)
    options.onReplayed?.(request, value, run)
    return Driver.answerRecorded(exec, { value, events: entry.events as ReadonlyArray<Trace.TraceEvent>, tokens: entry.tokens })
  }
  const messageOf = (entry: Entry): Driver.RecordedAnswer => {
    const m = entry.message
    if (m === undefined || (entry.kind !== "send" && entry.kind !== "receive")) {
      return fail("answer", `the recorded ${entry.kind} of request ${entry.key} does not say where its message passed`)
    }
    return { value: entryValue(entry), events: [], tokens: 0, message: { op: entry.kind, scope: m.scope, channel: m.channel, seq: m.seq } }
  }
  /** Messages a receive was given from the recording, by scope, channel and number. */
  const delivered = new Set<string>()
  const messageKey = (m: { readonly scope: string; readonly channel: string; readonly seq: number }) => `${m.scope}\u0000${m.channel}\u0000${m.seq}`
  /**
   * A message answered from the recording when it is the one recorded; `undefined`: it passes on
   * its channel — after a divergence with `live` (but a send whose recorded message a receive was
   * already given from the recording is done: its receiver has it), and when the recording has
   * no message under its key (it was still waiting when the recorded run ended, failing: it waits
   * again).
   */
  const message = (request: Oracle.ChannelRequest, run: Driver.RunState): Effect.Effect<Driver.RecordedAnswer | undefined, ReplayDivergence | ReplayError> => {
    const exec = run.execution
    const key = exec.requestKey(request)
    const entry = entries.get(key)
    if (diverged !== undefined && live !== undefined) {
      const m = entry?.message
      if (request.kind !== "send" || entry?.kind !== "send" || m === undefined || !delivered.has(messageKey(m))) return Effect.succeed(undefined)
      return Effect.succeed({ value: request.value, events: [], tokens: 0, message: { op: "send", scope: m.scope, channel: m.channel, seq: m.seq } })
    }
    if (entry === undefined) return Effect.succeed(undefined)
    const actual = requestOf(request)
    if (entry.kind !== request.kind || Term.stringify(entry.request) !== Term.stringify(actual)) {
      const found = divergenceAt(key, exec.steps, describeRecorded(actual), entry.request, actual)
      if (diverged === undefined) {
        diverged = found
        options.onDivergence?.(found)
      }
      return live === undefined ? Effect.fail(found) : Effect.succeed(undefined)
    }
    let recorded: Driver.RecordedAnswer
    try {
      recorded = messageOf(entry)
    } catch (error) {
      if (error instanceof ReplayError) return Effect.fail(error)
      throw error
    }
    used.add(key)
    if (request.kind === "receive") delivered.add(messageKey(recorded.message!))
    options.onReplayed?.(request, recorded.value, run)
    return Effect.succeed(recorded)
  }
  return {
    handlers: {
      llm: (request, run) => answer(request, run, live?.llm),
      tool: (request, run) => answer(request, run, live?.tool),
      // after a divergence the calls are made one by one, each by the live `tool` handler
      tools: (request, run, each) => answer(request, run, live !== undefined ? () => each() : undefined),
      memory: (request, run) => answer(request, run, live?.memory),
      ask: (request, run) => answer(request, run, live?.ask),
      message
    },
    messages: () => new Map(recording.answers.filter((entry) => entry.message !== undefined).map((entry) => [entry.key, messageOf(entry)])),
    divergence: () => diverged,
    leftover: (steps) => {
      if (diverged !== undefined) return undefined
      const next = recording.answers.find((entry) => !used.has(entry.key))
      return next === undefined ? undefined : divergenceAt(next.key, steps, describeRecorded(next.request), next.request, null)
    }
  }
}

/**
 * The LLM replies of a recording, in the order they were given, as a scripted model answers
 * them (`Scripted.sequence`): the text, the tokens and the model that answered.
 *
 * @since 0.2.0
 * @category getters
 * @example
 * ```ts
 * import { Replay, Scripted, Term } from "lambdagent"
 * const model = Scripted.sequence(Replay.llmReplies(Replay.make({ term: Term.llm({ system: "Hi." }), answers: [] })))
 * ```
 */
export const llmReplies = (recording: Recording): ReadonlyArray<LanguageModel.ChatResponse> =>
  recording.answers
    .filter((entry) => entry.kind === "llm")
    .map((entry) => {
      const event = entry.events.find((e) => e.kind === "llm")
      const value = entryValue(entry)
      const native = Oracle.readToolCallAnswer(value)
      return {
        text: native !== undefined ? native.text : Value.toText(value),
        ...(native !== undefined && native.calls.length > 0 ? { toolCalls: native.calls } : {}),
        ...(event?.tokens !== undefined ? { usage: { inputTokens: event.tokens.input, outputTokens: event.tokens.output } } : {}),
        ...(event?.model !== undefined ? { model: event.model } : {})
      }
    })
