/**
 * Where an A2A server keeps its tasks: in memory, at most `maxTasks` of them. Past the bound the
 * oldest finished task goes first (completed, failed, canceled or rejected), then the oldest one
 * waiting for input; a running task is never dropped. When the last task of a context goes, the
 * context is forgotten too (the server then drops that conversation's history).
 *
 * Tasks are not scoped by caller: a server has one principal (its bearer token), so every client
 * that holds the token sees every task.
 *
 * @since 0.2.0
 * @module
 */
import type { ListTasksRequest, ListTasksResponse, Task } from "@a2a-js/sdk"
import { TaskState } from "@a2a-js/sdk"
import type { TaskStore } from "@a2a-js/sdk/server"

/**
 * Options of {@link BoundedTaskStore}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { TaskStoreOptions } from "lambdagent/a2a"
 * const o: TaskStoreOptions = { maxTasks: 500, onContextForgotten: (id) => console.log(`forgot ${id}`) }
 * ```
 */
export interface TaskStoreOptions {
  /** Most tasks kept; default {@link defaultMaxTasks}. */
  readonly maxTasks?: number
  /** Told when the last task of a context is dropped. */
  readonly onContextForgotten?: (contextId: string) => void
}

/**
 * Tasks a server keeps by default.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { defaultMaxTasks } from "lambdagent/a2a"
 * console.log(defaultMaxTasks) // 1000
 * ```
 */
export const defaultMaxTasks = 1000

const finished: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED
])
const waiting: ReadonlySet<TaskState> = new Set([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED])

/**
 * Whether a task state is final: completed, failed, canceled or rejected.
 *
 * @since 0.2.0
 * @category predicates
 * @example
 * ```ts
 * import { TaskState } from "@a2a-js/sdk"
 * import { isFinalState } from "lambdagent/a2a"
 * isFinalState(TaskState.TASK_STATE_COMPLETED) // true
 * isFinalState(TaskState.TASK_STATE_INPUT_REQUIRED) // false
 * ```
 */
export const isFinalState = (state: TaskState | undefined): boolean => state !== undefined && finished.has(state)

const DEFAULT_PAGE_SIZE = 50
const MAX_PAGE_SIZE = 100

const cursorOf = (task: Task): string => Buffer.from(`${task.status?.timestamp ?? ""}\u0000${task.id}`, "utf8").toString("base64url")

/** Newest status first; ties by id, so that pages are stable. */
const newestFirst = (a: Task, b: Task): number => {
  const ta = a.status?.timestamp ?? ""
  const tb = b.status?.timestamp ?? ""
  return ta !== tb ? tb.localeCompare(ta) : b.id.localeCompare(a.id)
}

/**
 * An in-memory `TaskStore` of the A2A SDK with a bound on the tasks it keeps (see the module
 * documentation). Tasks are copied in and out, so no caller shares an object with the store.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { BoundedTaskStore } from "lambdagent/a2a"
 * const store = new BoundedTaskStore({ maxTasks: 100 })
 * console.log(store.size) // 0
 * ```
 */
export class BoundedTaskStore implements TaskStore {
  /** By id, least recently saved first. */
  private readonly tasks = new Map<string, Task>()
  /** How many kept tasks each context has. */
  private readonly contexts = new Map<string, number>()
  private readonly maxTasks: number

  constructor(private readonly options: TaskStoreOptions = {}) {
    const max = options.maxTasks ?? defaultMaxTasks
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxTasks must be a positive integer, got ${String(max)}`)
    this.maxTasks = max
  }

  /** Tasks kept now. */
  get size(): number {
    return this.tasks.size
  }

  /** Whether a context still has tasks here. */
  hasContext(contextId: string): boolean {
    return this.contexts.has(contextId)
  }

  async save(task: Task): Promise<void> {
    const known = this.tasks.delete(task.id)
    this.tasks.set(task.id, structuredClone(task))
    if (!known) {
      this.contexts.set(task.contextId, (this.contexts.get(task.contextId) ?? 0) + 1)
      this.evict()
    }
  }

  async load(taskId: string): Promise<Task | undefined> {
    const task = this.tasks.get(taskId)
    return task === undefined ? undefined : structuredClone(task)
  }

  async list(params: ListTasksRequest): Promise<ListTasksResponse> {
    const after = params.statusTimestampAfter === undefined || params.statusTimestampAfter === "" ? undefined : Date.parse(params.statusTimestampAfter)
    const matching = [...this.tasks.values()]
      .filter(
        (task) =>
          (params.contextId === "" || task.contextId === params.contextId) &&
          (params.status === TaskState.TASK_STATE_UNSPECIFIED || task.status?.state === params.status) &&
          (after === undefined || Number.isNaN(after) || Date.parse(task.status?.timestamp ?? "") > after)
      )
      .sort(newestFirst)
    const pageSize = Math.min(Math.max(1, params.pageSize ?? DEFAULT_PAGE_SIZE), MAX_PAGE_SIZE)
    const start = params.pageToken === "" ? 0 : matching.findIndex((task) => cursorOf(task) === params.pageToken) + 1
    const page = start === 0 && params.pageToken !== "" ? [] : matching.slice(start, start + pageSize)
    const more = start + page.length < matching.length && page.length > 0
    return {
      tasks: page.map((task) => ({ ...structuredClone(task), ...(params.includeArtifacts === true ? {} : { artifacts: [] }) })),
      nextPageToken: more ? cursorOf(page[page.length - 1]!) : "",
      pageSize,
      totalSize: matching.length
    }
  }

  /** Drop tasks past the bound: finished ones first, then waiting ones, oldest first. */
  private evict(): void {
    for (const evictable of [finished, waiting]) {
      for (const [id, task] of this.tasks) {
        if (this.tasks.size <= this.maxTasks) return
        const state = task.status?.state
        if (state !== undefined && evictable.has(state)) this.drop(id, task)
      }
    }
  }

  private drop(id: string, task: Task): void {
    this.tasks.delete(id)
    const left = (this.contexts.get(task.contextId) ?? 1) - 1
    if (left > 0) {
      this.contexts.set(task.contextId, left)
      return
    }
    this.contexts.delete(task.contextId)
    this.options.onContextForgotten?.(task.contextId)
  }
}
