/**
 * The errors of parsing and evaluating terms, and what every lambdagent error shares. Each is a
 * Schema-backed tagged error (`_tag`, a short `message`, typed fields), so it can be encoded as
 * JSON and decoded in another process; match on `_tag` (and `kind`/`budget`), never on message
 * text. {@link isLambdagentError} recognises any of them, from the core or a plugin, across
 * duplicate copies of the package.
 *
 * @since 0.1.0
 * @module
 */
import * as Schema from "effect/Schema"

const Brand: unique symbol = Symbol.for("lambdagent/Error") as never

/**
 * Define an error class of lambdagent's: `Schema.TaggedError` plus the mark
 * {@link isLambdagentError} looks for. Plugins define their errors with it too.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Errors } from "lambdagent"
 * class QuotaExceeded extends Errors.TaggedError<QuotaExceeded>()("QuotaExceeded", { message: Schema.String }) {}
 * Errors.isLambdagentError(new QuotaExceeded({ message: "too many" })) // true
 * ```
 */
export const TaggedError =
  <Self>() =>
  <const Tag extends string, const Fields extends Schema.Struct.Fields>(tag: Tag, fields: Fields) => {
    const Base = Schema.TaggedError<Self>()(tag, fields)
    class Branded extends (Base as unknown as new (...args: ReadonlyArray<any>) => object) {
      get [Brand](): true {
        return true
      }
    }
    return Branded as unknown as typeof Base
  }

/**
 * Whether a value is an error of lambdagent's (core or plugin): an `Error` with a `_tag` and a
 * `message`, defined with {@link TaggedError}. Works across duplicate copies of the package.
 *
 * @since 0.2.0
 * @category guards
 * @example
 * ```ts
 * import { Errors, Term } from "lambdagent"
 * try { Term.parse({ var: 1 }) } catch (e) { Errors.isLambdagentError(e) } // true
 * ```
 */
export const isLambdagentError = (u: unknown): u is Error & { readonly _tag: string; readonly message: string } =>
  typeof u === "object" && u !== null && (u as { readonly [Brand]?: unknown })[Brand] === true

const Path = Schema.Array(Schema.Union([Schema.String, Schema.Number]))

/**
 * A JSON value that is not a well-formed term. `path` locates the offending node from the root
 * (`["app", "func"]`), `expected` says what would have been accepted.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { Errors, Term } from "lambdagent"
 * try {
 *   Term.parse({ app: { func: { var: 1 }, arg: 2 } })
 * } catch (e) {
 *   if (e instanceof Errors.TermParseError) console.log(e.message) // "$.app.func.var: expected a variable name (string), found number"
 * }
 * ```
 */
export class TermParseError extends TaggedError<TermParseError>()("TermParseError", {
  message: Schema.String,
  path: Path,
  expected: Schema.String
}) {}

/**
 * What went wrong while evaluating.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import type { Errors } from "lambdagent"
 * const k: Errors.EvalErrorKind = "DivisionByZero"
 * ```
 */
export type EvalErrorKind = typeof EvalErrorKind.Type

/**
 * The kinds of {@link EvalError}: `Unbound` (a variable nobody bound), `TypeError` (an operation
 * got a value of the wrong type), `ValueError` (a value of the right type it cannot take: `toInt`
 * of `"abc"`), `DivisionByZero`, `EmptyList` (head or tail of `[]`),
 * `Overflow` (an integer left the 64-bit range), `RuntimeError` (self/continue outside a tool,
 * an unknown tool in code_of, …), `InputTooLarge`, `RouteError` (no route matched and there is
 * no default), `ValidationError` (a guard's attempts all failed validation), `OracleError` (an
 * LLM, tool or memory call failed), `Deadlock` (every machine that can use a channel waits on one;
 * the message names the channels and who waits on each).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Errors } from "lambdagent"
 * Errors.EvalErrorKind.literals.includes("Overflow") // true
 * ```
 */
export const EvalErrorKind = Schema.Literals([
  "Unbound",
  "TypeError",
  "ValueError",
  "DivisionByZero",
  "EmptyList",
  "Overflow",
  "RuntimeError",
  "InputTooLarge",
  "RouteError",
  "ValidationError",
  "OracleError",
  "Deadlock"
])

/**
 * A term that went wrong while evaluating. `path` is the JSON path of the failing node when the
 * evaluator could find it; `steps` is how many steps had run.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { Evaluator, Errors, Term } from "lambdagent"
 * try {
 *   Evaluator.evaluate(Term.div(Term.lit(1), Term.lit(0)))
 * } catch (e) {
 *   if (e instanceof Errors.EvalError) console.log(e.kind) // "DivisionByZero"
 * }
 * ```
 */
export class EvalError extends TaggedError<EvalError>()("EvalError", {
  kind: EvalErrorKind,
  message: Schema.String,
  steps: Schema.Number,
  path: Schema.optional(Path),
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * Which budget ran out.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import type { Errors } from "lambdagent"
 * const b: Errors.BudgetKind = "steps"
 * ```
 */
export type BudgetKind = typeof BudgetKind.Type

/**
 * The budgets a run can exhaust: the evaluator's (`steps`, `depth`, `evalDepth`, `time`,
 * `memory`), an agent run's (`llmCalls`, `toolCalls`, `tokens`), and a loop's own maximum when it
 * must meet its exit test (`loop`).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Errors } from "lambdagent"
 * Errors.BudgetKind.literals.length // 9
 * ```
 */
export const BudgetKind = Schema.Literals(["steps", "depth", "evalDepth", "time", "memory", "llmCalls", "toolCalls", "tokens", "loop"])

/**
 * A run stopped because a budget ran out. Carries the limit, the steps used and, for agent
 * runs, the trace recorded so far.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { Evaluator, Errors, Term } from "lambdagent"
 * const omega = Term.lam("x", Term.app(Term.var("x"), Term.var("x")))
 * try {
 *   Evaluator.evaluate(Term.app(omega, omega), { budget: { steps: 10_000 } })
 * } catch (e) {
 *   if (e instanceof Errors.BudgetExceeded) console.log(e.budget, e.steps > 10_000) // "steps" true
 * }
 * ```
 */
export class BudgetExceeded extends TaggedError<BudgetExceeded>()("BudgetExceeded", {
  budget: BudgetKind,
  limit: Schema.Number,
  steps: Schema.Number,
  message: Schema.String,
  /** The run's trace up to the point it stopped. */
  trace: Schema.optional(Schema.Array(Schema.Unknown)),
  /** The run's oracle counters when it stopped. */
  usage: Schema.optional(Schema.Struct({ llmCalls: Schema.Number, toolCalls: Schema.Number, tokens: Schema.Number }))
}) {}

/**
 * Why a checkpoint could not be written or read.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Errors } from "lambdagent"
 * const r: Errors.CheckpointReason = "version"
 * ```
 */
export type CheckpointReason = typeof CheckpointReason.Type

/**
 * The reasons of a {@link CheckpointError}: `missing` (no checkpoint under that name), `format`
 * (not a checkpoint, malformed, or cut short), `version` (another format version), `digest`
 * (edited or damaged), `term` (made for another term), `unsupported` (the run holds state a
 * checkpoint cannot carry), `store` (cannot be saved).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Errors } from "lambdagent"
 * Errors.CheckpointReason.literals.includes("digest") // true
 * ```
 */
export const CheckpointReason = Schema.Literals(["missing", "format", "version", "digest", "term", "unsupported", "store"])

/**
 * A checkpoint that cannot be written, read or resumed: the message is one line saying what is
 * wrong with it.
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { Checkpoint, Errors } from "lambdagent"
 * try {
 *   Checkpoint.decode({ format: "something else" })
 * } catch (e) {
 *   if (e instanceof Errors.CheckpointError) console.log(e.reason) // "format"
 * }
 * ```
 */
export class CheckpointError extends TaggedError<CheckpointError>()("CheckpointError", {
  reason: CheckpointReason,
  message: Schema.String
}) {}

/**
 * A run that stopped at an `ask` form to wait for a person's answer. It is not lost:
 * `checkpoint` (a `Checkpoint.Checkpoint`, plain JSON) holds the whole run, and resuming it with
 * the answer (`runtime.resume(checkpoint, { answer })`, `lambdagent resume FILE --answer …`)
 * goes on from the question, in this process or another, now or days later.
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { createRuntime, Errors, Term } from "lambdagent"
 * const runtime = createRuntime()
 * const approved = await runtime.run(Term.ask("Approve?"), "the plan").catch(async (e) => {
 *   if (!(e instanceof Errors.RunPaused)) throw e
 *   console.log(e.question) // "Approve?"
 *   return runtime.resume(e.checkpoint, { answer: "yes" })
 * })
 * console.log(approved.value) // "yes"
 * ```
 */
export class RunPaused extends TaggedError<RunPaused>()("RunPaused", {
  message: Schema.String,
  question: Schema.String,
  /** The input the question was asked about, as text. */
  input: Schema.String,
  checkpoint: Schema.Unknown
}) {}

/**
 * Why a recording of oracle answers (a trace file's `replay` section) cannot be read.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Errors } from "lambdagent"
 * const r: Errors.ReplayReason = "digest"
 * ```
 */
export type ReplayReason = typeof ReplayReason.Type

/**
 * The reasons of a {@link ReplayError}: `format` (not a recording, truncated or malformed),
 * `version` (another format version), `digest` (edited or damaged), `answer` (an answer the
 * recording cannot give back).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Errors } from "lambdagent"
 * Errors.ReplayReason.literals.includes("version") // true
 * ```
 */
export const ReplayReason = Schema.Literals(["format", "version", "digest", "answer"])

/**
 * A recording that cannot be replayed: the message is one line saying what is wrong with it.
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { Errors, Replay } from "lambdagent"
 * try {
 *   Replay.decode({ format: "something else" })
 * } catch (e) {
 *   if (e instanceof Errors.ReplayError) console.log(e.reason) // "format"
 * }
 * ```
 */
export class ReplayError extends TaggedError<ReplayError>()("ReplayError", {
  reason: ReplayReason,
  message: Schema.String
}) {}

/**
 * A replayed run made an oracle request the recording does not have: the first one that differs.
 * `key` is the request's key, `step` the run's step counter, `form` what was asked (`a call of
 * tool "search"`), `expected` the recorded request (`null`: the recording has none there) and
 * `actual` the new one (`null`: the new run ended before it).
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { Errors } from "lambdagent"
 * const e = new Errors.ReplayDivergence({ key: "1", step: 4, form: "an LLM call", expected: null, actual: null, message: "the run diverged" })
 * ```
 */
export class ReplayDivergence extends TaggedError<ReplayDivergence>()("ReplayDivergence", {
  key: Schema.String,
  step: Schema.Number,
  form: Schema.String,
  expected: Schema.Unknown,
  actual: Schema.Unknown,
  message: Schema.String
}) {}

/**
 * Any error of the term language.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import type { Errors } from "lambdagent"
 * const describe = (e: Errors.LambdaError) => `${e._tag}: ${e.message}`
 * ```
 */
export type LambdaError = TermParseError | EvalError | BudgetExceeded

/**
 * Whether a value is one of this library's term-language errors (checks `_tag`, so it also works
 * across duplicate copies of the package).
 *
 * @since 0.1.0
 * @category guards
 * @example
 * ```ts
 * import { Errors } from "lambdagent"
 * Errors.isLambdaError(new Error("x")) // false
 * ```
 */
export const isLambdaError = (u: unknown): u is LambdaError =>
  typeof u === "object" && u !== null && "_tag" in u && (u._tag === "TermParseError" || u._tag === "EvalError" || u._tag === "BudgetExceeded")

/**
 * The structured form of an error for JSON output: `{kind, message, path?, steps?}`; a budget
 * error adds which budget and its limit, the counters and the partial trace (when it has one).
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { Errors } from "lambdagent"
 * Errors.toJson(new Errors.TermParseError({ message: "bad", path: ["var"], expected: "a string" }))
 * // { kind: "TermParseError", message: "bad", path: ["var"] }
 * ```
 */
export const toJson = (
  error: LambdaError
): {
  kind: string
  message: string
  path?: ReadonlyArray<string | number>
  steps?: number
  budget?: BudgetKind
  limit?: number
  usage?: { readonly llmCalls: number; readonly toolCalls: number; readonly tokens: number }
  trace?: ReadonlyArray<unknown>
} => {
  switch (error._tag) {
    case "TermParseError":
      return { kind: "TermParseError", message: error.message, path: error.path }
    case "EvalError":
      return { kind: error.kind, message: error.message, steps: error.steps, ...(error.path ? { path: error.path } : {}) }
    case "BudgetExceeded":
      return {
        kind: "BudgetExceeded",
        message: error.message,
        steps: error.steps,
        budget: error.budget,
        limit: error.limit,
        ...(error.usage !== undefined ? { usage: error.usage } : {}),
        ...(error.trace !== undefined && error.trace.length > 0 ? { trace: error.trace } : {})
      }
  }
}
