/**
 * What the machine offers an agent form's reduction rules (see {@link AgentStep} in `Form.ts`).
 */
import type * as Budget from "../Budget.ts"
import type { Code } from "../internal/code.ts"
import type { Request } from "../Oracle.ts"
import type * as Trace from "../Trace.ts"
import type * as Value from "../Value.ts"

/** A node the machine cannot reduce by itself; see `Oracle.Request`. */
export type OracleRequest = Request

/**
 * The machine as an agent step sees it. A step ends by doing one of: {@link call} or
 * {@link evaluate} (continue with a child), {@link done} (return a value), or returning an oracle
 * request. It may {@link push} a frame first, to be resumed with the child's (or the oracle's)
 * value.
 */
export interface AgentMachine {
  readonly budget: Budget.Budget
  /** Whether agent-level events are recorded (`agent` or `beta` trace). */
  readonly tracing: boolean
  /** Steps used so far. */
  readonly steps: number
  /** The id of the next oracle request this machine makes. */
  nextRequestId(): number
  /** Push a frame of `code`'s form holding `state`; the next value returned to it goes to the form's `resume`. */
  push(code: Code, state: unknown): void
  /**
   * Like {@link push}, and an error the term raises while the frame is below the top (a type
   * error, an integer overflow, a failed guard…, never an exhausted budget) unwinds to it and goes
   * to the form's `raised` instead of stopping the run.
   */
  pushCatching(code: Code, state: unknown): void
  /** Evaluate `child` in the closure's scope, then apply the result to `arg`. */
  call(child: Code, fn: Value.Closure, arg: Value.Value): void
  /** Evaluate `child` in the closure's scope. */
  evaluate(child: Code, fn: Value.Closure): void
  /** Return `value` to the frame below. */
  done(value: Value.Value): void
  /** Record an agent-level trace event (call only when {@link tracing}). */
  record(event: Trace.TraceEvent): void
  /** Stop with a runtime error of the term (an `EvalError` pointing at `code`). */
  fail(kind: "TypeError" | "RouteError" | "ValidationError" | "RuntimeError", message: string): never
  /** Stop because a budget ran out (a `BudgetExceeded` carrying the trace so far). */
  exhausted(budget: "loop", limit: number, message: string): never
  /** Whether a value is a boolean `true`; anything but a boolean is a type error naming `what`. */
  isTrue(value: Value.Value, what: string): boolean
}
