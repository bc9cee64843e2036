/**
 * Traces: what a run did, step by step.
 *
 * Levels: `off` records nothing; `agent` records oracle calls (LLM, tool, memory) and combinator
 * decisions (route, loop, guard, par); `beta` also records every β-reduction of a lambda.
 *
 * @since 0.1.0
 * @module
 */

/**
 * How much a run records.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Trace } from "lambdagent"
 * const level: Trace.TraceLevel = "agent"
 * ```
 */
export type TraceLevel = "off" | "agent" | "beta"

/**
 * The kind of a trace event.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Trace } from "lambdagent"
 * const k: Trace.EventKind = "llm"
 * ```
 */
export type EventKind =
  | "beta"
  | "llm"
  | "tool"
  | "route"
  | "loop"
  | "guard"
  | "memory"
  | "par"
  | "react"
  | "continue"
  | "groupchat"
  | "handoff"
  | "ask"
  | "send"
  | "receive"
  | "output"

/**
 * One recorded event. `step` is the evaluator's step counter when it happened; `input`/`output`
 * are previews (at most {@link previewLength} characters).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Trace } from "lambdagent"
 * const e: Trace.TraceEvent = { step: 3, kind: "beta", name: "x", input: "7" }
 * ```
 */
export interface TraceEvent {
  readonly step: number
  readonly kind: EventKind
  readonly name: string
  readonly input?: string
  readonly output?: string
  readonly durationMs?: number
  readonly tokens?: { readonly input: number; readonly output: number }
  readonly model?: string
  /** For events inside `par`: the branch index path. */
  readonly branch?: string
  readonly error?: string
}

/**
 * Longest preview kept for an event's input or output.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { Trace } from "lambdagent"
 * console.log(Trace.previewLength) // 200
 * ```
 */
export const previewLength = 200

/**
 * Cut text to {@link previewLength} characters, marking the cut with `…`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Trace } from "lambdagent"
 * Trace.preview("x".repeat(500)).length // 201
 * ```
 */
export const preview = (text: string): string => (text.length <= previewLength ? text : text.slice(0, previewLength) + "…")
