/**
 * Budgets: the hard limits every run is held to.
 *
 * `steps` counts every node the evaluator reduces (loops and folds included); `depth` bounds the
 * evaluator's continuation stack (non-tail recursion), `evalDepth` the nesting of `eval`,
 * `timeMs` the wall time, `memory` the size of any value the run builds (a string's characters, a
 * list's cells). Agent runs add `llmCalls`, `toolCalls` and `tokens`, checked before each call.
 * `inputBytes` bounds the size of an input or term text.
 *
 * @since 0.1.0
 * @module
 */

/**
 * The limits of one run.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Budget } from "lambdagent"
 * const b: Partial<Budget.Budget> = { steps: 1_000_000, timeMs: 5_000 }
 * ```
 */
export interface Budget {
  readonly steps: number
  readonly depth: number
  readonly evalDepth: number
  readonly timeMs: number
  readonly llmCalls: number
  readonly toolCalls: number
  readonly tokens: number
  readonly inputBytes: number
  /** Bytes: the largest value (string, list) a run may build. */
  readonly memory: number
}

/**
 * The default limits: 10 million steps, a stack of 1 million continuation frames, `eval` nested
 * 100 deep, 60 seconds, 100 LLM calls, 500 tool calls, 2 million tokens, 64 MiB of input, and
 * values of at most 64 MiB.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { Budget } from "lambdagent"
 * console.log(Budget.defaults.evalDepth) // 100
 * ```
 */
export const defaults: Budget = {
  steps: 10_000_000,
  depth: 1_000_000,
  evalDepth: 100,
  timeMs: 60_000,
  llmCalls: 100,
  toolCalls: 500,
  tokens: 2_000_000,
  inputBytes: 64 * 1024 * 1024,
  memory: 64 * 1024 * 1024
}

/**
 * The defaults with some limits replaced.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Budget } from "lambdagent"
 * Budget.make({ steps: 1000 }).steps // 1000
 * ```
 */
export const make = (overrides: Partial<Budget> = {}): Budget => ({ ...defaults, ...overrides })
