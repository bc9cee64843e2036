/**
 * The runs a server has in flight: each holds a slot with its own `AbortController` and timeout;
 * the tracker enforces the concurrency limit, refuses new runs once shutdown began, cancels what
 * is left when the grace period ends, and tells when the last run has finished.
 *
 * @since 0.1.0
 * @module
 */
import { HttpFailure, RunAborted } from "../protocol.ts"

/**
 * One run's place in the tracker. `signal` aborts on timeout, on `abort`, or at shutdown; `end`
 * frees the slot (call it once the run's answer is written) and is safe to call twice.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { RunTracker } from "./runs.ts"
 * const slot = new RunTracker({ timeoutMs: 1000 }).acquire()
 * slot.signal.aborted // false
 * slot.end()
 * ```
 */
export interface RunSlot {
  readonly signal: AbortSignal
  readonly abort: (reason: RunAborted) => void
  readonly end: () => void
}

/**
 * Options of a {@link RunTracker}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { RunTrackerOptions } from "./runs.ts"
 * const o: RunTrackerOptions = { timeoutMs: 30_000, maxConcurrent: 8 }
 * ```
 */
export interface RunTrackerOptions {
  /** Milliseconds a run may take before it is cancelled; 0 for no limit. */
  readonly timeoutMs: number
  /** Most runs at once; more are refused with 503 `Overloaded`. Default unlimited. */
  readonly maxConcurrent?: number
}

/**
 * Tracks the runs in flight.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { RunAborted } from "../protocol.ts"
 * import { RunTracker } from "./runs.ts"
 * const runs = new RunTracker({ timeoutMs: 0, maxConcurrent: 1 })
 * const slot = runs.acquire()
 * runs.size // 1
 * runs.abortAll(new RunAborted({ reason: "ShuttingDown", message: "bye" }))
 * slot.signal.aborted // true
 * slot.end()
 * await runs.idle()
 * ```
 */
export class RunTracker {
  private readonly active = new Set<AbortController>()
  private waiters: Array<() => void> = []
  private refusing = false

  constructor(private readonly options: RunTrackerOptions) {}

  /** How many runs are in flight. */
  get size(): number {
    return this.active.size
  }

  /** Refuse new runs from now on (503 `ShuttingDown`). */
  refuseNew(): void {
    this.refusing = true
  }

  /** Whether new runs are refused. */
  get closing(): boolean {
    return this.refusing
  }

  /** A slot for a new run, or a 503 failure when shutting down or at the concurrency limit. */
  acquire(): RunSlot {
    if (this.refusing) throw new HttpFailure({ status: 503, kind: "ShuttingDown", message: "the server is shutting down", headers: { "Retry-After": "5" } })
    const limit = this.options.maxConcurrent
    if (limit !== undefined && this.active.size >= limit) {
      throw new HttpFailure({
        status: 503,
        kind: "Overloaded",
        message: `the server is already running ${limit} runs, its limit; retry later`,
        details: { limit },
        headers: {
          "Retry-After": "1"
        }
      })
    }
    const controller = new AbortController()
    const timeoutMs = this.options.timeoutMs
    const timer =
      timeoutMs > 0
        ? setTimeout(() => controller.abort(new RunAborted({ reason: "Timeout", message: `the run took longer than ${timeoutMs} ms` })), timeoutMs)
        : undefined
    this.active.add(controller)
    let ended = false
    return {
      signal: controller.signal,
      abort: (reason) => {
        if (!ended) controller.abort(reason)
      },
      end: () => {
        if (ended) return
        ended = true
        clearTimeout(timer)
        this.active.delete(controller)
        if (this.active.size === 0) {
          const waiters = this.waiters
          this.waiters = []
          for (const wake of waiters) wake()
        }
      }
    }
  }

  /** Cancel every run in flight with `reason`. */
  abortAll(reason: RunAborted): void {
    for (const controller of this.active) controller.abort(reason)
  }

  /** Resolves once no run is in flight. */
  idle(): Promise<void> {
    if (this.active.size === 0) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push(resolve))
  }
}
