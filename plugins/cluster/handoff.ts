/**
 * `lambdagent serve --cluster`: the HTTP server hands its runs to the cluster (`ServeOptions.handoff`
 * of `lambdagent/http`), and answers each request once the run has ended or waits on a person.
 *
 * @since 0.2.0
 */
import { setTimeout as delay } from "node:timers/promises"
import { type Budget, Errors } from "lambdagent"
import type { HandoffOutcome, RunHandoff } from "lambdagent/http"
import { ClusterError } from "./errors.ts"
import type { ClusterClient } from "./index.ts"
import type { RunStatus } from "./runs.ts"

/**
 * Options of {@link handoff}: the model spec and budget of the runs it submits (a run's own
 * settings otherwise: the runner's model, the default budget), and how often a run's state is
 * read while the server waits on it (default 100 ms).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { HandoffOptions } from "lambdagent/cluster"
 * const o: HandoffOptions = { model: "openai:gpt-4o-mini", budget: { llmCalls: 20 }, pollMs: 200 }
 * ```
 */
export interface HandoffOptions {
  readonly model?: string
  readonly budget?: Partial<Budget.Budget>
  readonly pollMs?: number
}

const statusOfReason: Record<ClusterError["reason"], 404 | 409 | 422 | 503> = {
  NotFound: 404,
  NotWaiting: 409,
  Invalid: 422,
  Unavailable: 503,
  Listen: 503,
  SchemaVersion: 503,
  Timeout: 503
}

/** A refusal of the cluster as the server answers it; anything else is thrown on (a 500). */
const refused = (error: unknown): HandoffOutcome => {
  if (error instanceof ClusterError) return { _tag: "Failed", status: statusOfReason[error.reason], kind: error.reason, message: error.message }
  if (Errors.isLambdaError(error) && error._tag === "TermParseError") return { _tag: "Failed", status: 422, kind: error._tag, message: error.message }
  throw error
}

/** The outcome of a run in `status`, or `undefined` while it runs (or still waits on `answered`). */
const outcomeOf = (status: RunStatus, answered?: string): HandoffOutcome | undefined => {
  switch (status.state) {
    case "done": {
      const outcome = status.outcome!
      return { _tag: "Done", result: outcome.result, trace: outcome.trace, stats: outcome.stats }
    }
    case "failed": {
      const error = status.error ?? { kind: "Failed", message: "the run failed" }
      return { _tag: "Failed", status: error.kind === "ProviderError" ? 502 : 422, kind: error.kind, message: error.message }
    }
    case "cancelled":
      return { _tag: "Failed", status: 409, kind: "Cancelled", message: `run ${status.id} was cancelled` }
    case "waiting":
      return status.question === undefined || status.question.key === answered
        ? undefined
        : { _tag: "Waiting", runId: status.id, question: status.question.question }
    default:
      return undefined
  }
}

/**
 * A `RunHandoff` for `serve({ handoff })` of `lambdagent/http` that submits each run to the
 * cluster and waits for it: a run that ends answers 200 with its result, trace and counters; one
 * that asks a person answers 202, and `POST /runs/:id/resume` answers it on the cluster; a request
 * cancelled (its client went away, its time ran out, the server closes) cancels its run. Every
 * request is a run of its own: sessions are not kept across requests.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { connect, handoff } from "lambdagent/cluster"
 * import { serve } from "lambdagent/http"
 * const main = async () => {
 *   const cluster = await connect({ pg: "postgres://postgres@127.0.0.1:5432/test", role: "client" })
 *   const server = await serve({ agent: Term.llm({ system: "Be brief." }), handoff: handoff(cluster), port: 8080 })
 *   // … later
 *   await server.close()
 *   await cluster.close()
 * }
 * ```
 */
export const handoff = (cluster: ClusterClient, options: HandoffOptions = {}): RunHandoff => {
  const pollMs = options.pollMs ?? 100
  const follow = async (id: string, signal: AbortSignal, answered?: string): Promise<HandoffOutcome> => {
    for (;;) {
      if (signal.aborted) {
        await cluster.cancel(id).catch(() => undefined)
        throw signal.reason
      }
      const outcome = outcomeOf(await cluster.status(id), answered)
      if (outcome !== undefined) return outcome
      // an abort ends the wait early; the loop's head then cancels the run
      await delay(pollMs, undefined, { signal }).catch(() => undefined)
    }
  }
  return {
    run: async (term, request) => {
      try {
        const { id } = await cluster.submit(term, request.input, {
          ...(options.model !== undefined ? { model: options.model } : {}),
          ...(options.budget !== undefined ? { budget: options.budget } : {}),
          ...(request.trace !== undefined ? { trace: request.trace } : {})
        })
        return await follow(id, request.signal)
      } catch (error) {
        if (request.signal.aborted) throw request.signal.reason
        return refused(error)
      }
    },
    answer: async (runId, answer, signal) => {
      try {
        const before = await cluster.status(runId)
        await cluster.answer(runId, answer)
        return await follow(runId, signal, before.question?.key)
      } catch (error) {
        if (signal.aborted) throw signal.reason
        return refused(error)
      }
    }
  }
}
