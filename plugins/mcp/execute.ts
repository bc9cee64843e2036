/**
 * Running a term for a tool call: the tool protocol (`Evaluator.startRun`) under the run's
 * budgets, with oracle requests (agent forms) answered by an injected callback when the server's
 * policy allows them, through the core `Driver`.
 *
 * @since 0.1.0
 * @module
 */
import type { Budget } from "lambdagent"
import * as Effect from "effect/Effect"
import { Driver, Errors, Evaluator, Oracle, type Term, type Value } from "lambdagent"
import { type AgentPolicy, requestViolation } from "./analysis.ts"

/**
 * What an oracle callback receives besides the request.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { OracleContext } from "lambdagent/mcp"
 * const where = (c: OracleContext) => c.tool ?? "inline code"
 * ```
 */
export interface OracleContext {
  /** The named tool being run, if any. */
  readonly tool?: string
  /** Aborted when the call's time limit passes or the request is cancelled. */
  readonly signal: AbortSignal
}

/**
 * Answers the requests of agent forms (`llm`, `tool`, `memory`) during a run: return the value
 * the form evaluates to. Plain JSON is accepted (arrays become lists, other objects become their
 * JSON text). `par` requests never reach it: the server runs the branches itself and sends their
 * requests here. Throwing fails the run with an `OracleError`.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { AnswerOracle } from "lambdagent/mcp"
 * const oracle: AnswerOracle = async (request) =>
 *   request.kind === "tool" && request.name === "double" ? Number(request.input) * 2 : null
 * ```
 */
export type AnswerOracle = (request: Oracle.Request, context: OracleContext) => unknown

/**
 * One evaluation for a tool call.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import type { ExecuteRequest } from "lambdagent/mcp"
 * const r: ExecuteRequest = { code: Term.lam("x", Term.var("x")), input: 1, tools: new Map(), budget: { steps: 1000 }, policy: {} }
 * ```
 */
export interface ExecuteRequest {
  readonly code: Term.Term
  readonly input: unknown
  /** Run as this named tool (`self`, `continue`, `code_of "self"`). */
  readonly tool?: string
  /** Continuation round trips so far. */
  readonly step?: number
  readonly tools: ReadonlyMap<string, Term.Term>
  readonly budget: Partial<Budget.Budget>
  /** When the call began (`Date.now()` ms), default now: the time budget counts from here. */
  readonly startedAt?: number
  readonly policy: AgentPolicy
  readonly oracle?: AnswerOracle
  readonly signal?: AbortSignal
}

/**
 * The outcome of {@link execute}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ExecuteResult } from "lambdagent/mcp"
 * const show = (r: ExecuteResult) => `${String(r.value)} in ${r.steps} steps`
 * ```
 */
export interface ExecuteResult {
  readonly value: Value.Value
  readonly steps: number
}

/**
 * The language value for an oracle's answer: the core's one rule, `Oracle.toValue` (values pass
 * through, arrays become lists, `undefined` becomes null, other objects their JSON text, a number
 * that is not a safe integer its decimal text).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Value } from "lambdagent"
 * import { toValue } from "lambdagent/mcp"
 * Value.toJson(toValue([1, [2, 3]])) // [1, [2, 3]]
 * ```
 */
export const toValue = Oracle.toValue

const oracleError = (message: string, steps: number, cause?: unknown) =>
  new Errors.EvalError({ kind: "OracleError", message, steps, ...(cause !== undefined ? { cause } : {}) })

/** How long a pure run may compute before it lets other requests (and signals) in, in ms. */
const SLICE_MS = 10

/** The driver's handlers for a server: every request goes to the host's oracle callback. */
const handlersFor = (request: ExecuteRequest): Driver.Handlers<Errors.EvalError, never> => {
  const context = (signal: AbortSignal): OracleContext => ({ ...(request.tool !== undefined ? { tool: request.tool } : {}), signal })
  const ask = (pending: Oracle.Request, run: Driver.RunState) => {
    const oracle = request.oracle
    if (oracle === undefined) {
      return Effect.fail(oracleError(`the term needs ${Oracle.describe(pending)}, and this server has no oracle to answer it`, run.execution.steps))
    }
    return Effect.tryPromise({
      try: async (signal) => await oracle(pending, context(signal)),
      catch: (error) => oracleError(`${Oracle.describe(pending)} failed: ${error instanceof Error ? error.message : String(error)}`, run.execution.steps, error)
    })
  }
  return { llm: ask, tool: ask, memory: ask, admit: (pending) => requestViolation(pending, request.policy) }
}

/**
 * Run `code` on `input` by the tool protocol, answering oracle requests through `request.oracle`
 * (each checked against `request.policy` first) with the core `Driver`: the same budgets,
 * cancellation and value conversion as agent runs. A long evaluation runs in slices of about
 * 10 ms, so one call never keeps a server from answering its other requests. Rejects with the
 * term language's errors.
 *
 * @since 0.1.0
 * @category evaluation
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { execute } from "lambdagent/mcp"
 * const square = Term.parse({ lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } })
 * const { value } = await execute({ code: square, input: 7, tools: new Map(), budget: {}, policy: {} }) // 49
 * ```
 */
export const execute = async (request: ExecuteRequest): Promise<ExecuteResult> => {
  const exec = Evaluator.startRun(request.code, request.input, {
    tools: request.tools,
    budget: request.budget,
    ...(request.startedAt !== undefined ? { startedAt: request.startedAt } : {}),
    ...(request.tool !== undefined ? { tool: request.tool } : {}),
    ...(request.step !== undefined ? { step: request.step } : {})
  })
  // most calls are small and pure: they finish in the first slice without any scheduling
  const first = exec.slice(SLICE_MS)
  if (first._tag === "Done") return { value: first.value, steps: exec.steps }
  // the driver holds the run to its time budget, computing or waiting
  const run = Driver.drive(exec, handlersFor(request), { first, sliceMs: SLICE_MS })
  const signal = request.signal
  try {
    const value = await Effect.runPromise(run, signal !== undefined ? { signal } : {})
    return { value, steps: exec.steps }
  } catch (error) {
    if (signal?.aborted === true && !Errors.isLambdaError(error)) throw oracleError("the call was cancelled", exec.steps)
    throw error
  }
}
