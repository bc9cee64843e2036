/**
 * Handing a server's runs to another executor — a cluster of runners, say — instead of running
 * them in the server's own process (`ServeOptions.handoff`).
 *
 * @since 0.2.0
 */
import type { Term, Trace } from "lambdagent"

/**
 * One run handed off: its input, its session and trace level as the request gave them, and the
 * signal that cancels it (the client went away, the time limit passed, the server is closing).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { HandoffRequest } from "lambdagent/http"
 * const request: HandoffRequest = { input: "hello", signal: new AbortController().signal }
 * ```
 */
export interface HandoffRequest {
  readonly input: unknown
  readonly session?: string
  readonly trace?: Trace.TraceLevel
  readonly signal: AbortSignal
}

/**
 * How a handed-off run ended: `Done` with the body `POST /run` answers (`result`, `trace`,
 * `stats`); `Waiting` on a person's answer to `question` (answered 202; `POST
 * /runs/:runId/resume` gives the answer); `Failed` with the HTTP status, kind and message the
 * server answers — 422 for a run whose term failed, 502 for a provider that failed, as for a run in
 * the server's own process; 404 for an unknown run, 409 for a run that is not waiting, 503 when
 * the executor cannot be reached.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { HandoffOutcome } from "lambdagent/http"
 * const done: HandoffOutcome = { _tag: "Done", result: "hi", trace: [], stats: { steps: 3 } }
 * const lost: HandoffOutcome = { _tag: "Failed", status: 404, kind: "NotFound", message: "no run r1" }
 * ```
 */
export type HandoffOutcome =
  | {
      readonly _tag: "Done"
      readonly result: unknown
      readonly trace: ReadonlyArray<unknown>
      readonly stats: Readonly<Record<string, number>>
    }
  | { readonly _tag: "Waiting"; readonly runId: string; readonly question: string; readonly input?: unknown }
  | { readonly _tag: "Failed"; readonly status: 404 | 409 | 422 | 502 | 503; readonly kind: string; readonly message: string }

/**
 * What runs a server's runs elsewhere. `run` runs the agent's term on a request's input until it
 * ends, fails or waits on a person; `answer` gives the answer to a waiting run and waits again.
 * Both reject only with the signal's reason when it was aborted (the executor cancels the run).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { RunHandoff } from "lambdagent/http"
 * const echo: RunHandoff = {
 *   run: async (_term, request) => ({ _tag: "Done", result: request.input, trace: [], stats: {} }),
 *   answer: async (runId) => ({ _tag: "Waiting", runId, question: "again?" })
 * }
 * ```
 */
export interface RunHandoff {
  /** Run `term` on the request's input until it ends, fails or waits on a person. */
  readonly run: (term: Term.Term, request: HandoffRequest) => Promise<HandoffOutcome>
  /** Give `answer` to the run `runId` waiting on a person, and wait again as `run` does. */
  readonly answer: (runId: string, answer: unknown, signal: AbortSignal) => Promise<HandoffOutcome>
}
