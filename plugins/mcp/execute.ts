/**
 * Running a term for a tool call: the tool protocol (`Evaluator.startRun`) under a step and time
 * budget, with oracle requests (agent forms) answered by an injected callback when the server's
 * policy allows them.
 *
 * @since 0.1.0
 * @module
 */
import type { Budget } from "lambdagent"
import { Errors, Evaluator, Term, Value } from "lambdagent"
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
export type AnswerOracle = (request: Evaluator.OracleRequest, context: OracleContext) => unknown

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
 * The language value for an oracle's answer: values pass through, arrays become lists, `undefined`
 * becomes null, other objects their JSON text, fractions round to integers.
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
export const toValue = (answer: unknown): Value.Value => {
  if (answer === undefined || answer === null) return null
  if (typeof answer === "number") return Number.isInteger(answer) ? answer : Number.isFinite(answer) ? Math.round(answer) : String(answer)
  if (typeof answer === "string" || typeof answer === "boolean" || typeof answer === "bigint") return answer
  if (
    answer instanceof Value.List || answer instanceof Value.Pair || answer instanceof Value.Quoted ||
    answer instanceof Value.Closure || answer instanceof Value.Continuation
  ) return answer
  if (Array.isArray(answer)) return Value.fromArray(answer.map(toValue))
  return JSON.stringify(answer)
}

const oracleError = (message: string, steps: number, cause?: unknown) =>
  new Errors.EvalError({ kind: "OracleError", message, steps, ...(cause !== undefined ? { cause } : {}) })

/** Wait for `promise`, failing with a time budget error when `deadline` passes first. */
const beforeDeadline = async <A>(promise: Promise<A>, deadline: number, limit: number, steps: number, controller: AbortController): Promise<A> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort()
      reject(new Errors.BudgetExceeded({ budget: "time", limit, steps, message: `time budget of ${limit} ms exhausted` }))
    }, Math.max(0, deadline - Date.now()))
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Run `code` on `input` by the tool protocol, answering oracle requests through `request.oracle`
 * (each checked against `request.policy` first). Throws the term language's errors.
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
    ...(request.tool !== undefined ? { tool: request.tool } : {}),
    ...(request.step !== undefined ? { step: request.step } : {})
  })
  const limit = request.budget.timeMs ?? 60_000
  const deadline = Date.now() + limit
  // What oracle requests need (a signal of their own, aborted with the call), made on the first
  // one: most runs never suspend.
  let oracleState: { readonly controller: AbortController; readonly context: OracleContext; readonly abort: () => void } | undefined
  const forOracle = () => {
    if (oracleState === undefined) {
      const controller = new AbortController()
      const abort = () => controller.abort()
      if (request.signal?.aborted === true) controller.abort()
      else request.signal?.addEventListener("abort", abort, { once: true })
      oracleState = { controller, abort, context: { ...(request.tool !== undefined ? { tool: request.tool } : {}), signal: controller.signal } }
    }
    return oracleState
  }

  const drive = async (execution: Evaluator.Execution): Promise<Value.Value> => {
    let step = execution.next()
    while (step._tag === "Suspended") {
      const { context, controller } = forOracle()
      const pending = step.request
      const violation = requestViolation(pending, request.policy)
      if (violation !== undefined) throw oracleError(`capability denied: ${violation}`, execution.steps)
      if (request.oracle === undefined) {
        throw oracleError(`the term needs ${Evaluator.describeRequest(pending)}, and this server has no oracle to answer it`, execution.steps)
      }
      if (controller.signal.aborted) throw oracleError("the call was cancelled", execution.steps)
      let answer: Value.Value
      if (pending.kind === "par") {
        const branches = pending.term.branches.map((_, i) => drive(execution.branch(pending, i)))
        answer = Value.fromArray(await beforeDeadline(Promise.all(branches), deadline, limit, execution.steps, controller))
      } else {
        const oracle = request.oracle
        const answered = (async () => {
          try {
            return toValue(await oracle(pending, context))
          } catch (error) {
            throw oracleError(
              `${Evaluator.describeRequest(pending)} failed: ${error instanceof Error ? error.message : String(error)}`,
              execution.steps,
              error
            )
          }
        })()
        answer = await beforeDeadline(answered, deadline, limit, execution.steps, controller)
      }
      step = execution.resume(answer)
    }
    return step.value
  }

  try {
    const value = await drive(exec)
    return { value, steps: exec.steps }
  } finally {
    if (oracleState !== undefined) request.signal?.removeEventListener("abort", oracleState.abort)
  }
}
