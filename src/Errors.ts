/**
 * The errors of parsing and evaluating terms. Each is a tagged error (`_tag`) with a short
 * `message`; match on `_tag` (and `kind`/`budget`), never on message text.
 *
 * @since 0.1.0
 * @module
 */
import * as Data from "effect/Data"

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
export class TermParseError extends Data.TaggedError("TermParseError")<{
  readonly message: string
  readonly path: ReadonlyArray<string | number>
  readonly expected: string
}> {}

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
export type EvalErrorKind =
  | "Unbound" // a variable nobody bound
  | "TypeError" // an operation got a value of the wrong type
  | "DivisionByZero"
  | "EmptyList" // head or tail of []
  | "Overflow" // an integer left the 64-bit range
  | "RuntimeError" // self/continue outside a tool, unknown tool in code_of, …
  | "InputTooLarge" // input above the size limit
  | "RouteError" // no route matched and there is no default
  | "ValidationError" // a guard's attempts all failed validation
  | "OracleError" // an LLM, tool or memory call failed

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
export class EvalError extends Data.TaggedError("EvalError")<{
  readonly kind: EvalErrorKind
  readonly message: string
  readonly steps: number
  readonly path?: ReadonlyArray<string | number>
  readonly cause?: unknown
}> {}

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
export type BudgetKind = "steps" | "depth" | "evalDepth" | "time" | "memory" | "llmCalls" | "toolCalls" | "tokens" | "loop"

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
 *   if (e instanceof Errors.BudgetExceeded) console.log(e.budget, e.steps) // "steps" 10001
 * }
 * ```
 */
export class BudgetExceeded extends Data.TaggedError("BudgetExceeded")<{
  readonly budget: BudgetKind
  readonly limit: number
  readonly steps: number
  readonly message: string
  readonly trace?: ReadonlyArray<unknown>
}> {}

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
  typeof u === "object" && u !== null && "_tag" in u &&
  (u._tag === "TermParseError" || u._tag === "EvalError" || u._tag === "BudgetExceeded")

/**
 * The structured form of an error for JSON output: `{kind, message, path?}`.
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
export const toJson = (error: LambdaError): { kind: string; message: string; path?: ReadonlyArray<string | number>; steps?: number } => {
  switch (error._tag) {
    case "TermParseError":
      return { kind: "TermParseError", message: error.message, path: error.path }
    case "EvalError":
      return { kind: error.kind, message: error.message, steps: error.steps, ...(error.path ? { path: error.path } : {}) }
    case "BudgetExceeded":
      return { kind: "BudgetExceeded", message: error.message, steps: error.steps }
  }
}
