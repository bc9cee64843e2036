import type { ListTasksRequest, Task } from "@a2a-js/sdk"
import { TaskState } from "@a2a-js/sdk"
import { describe, expect, it } from "vitest"
import { BoundedTaskStore, isFinalState } from "./tasks.ts"

const task = (id: string, contextId: string, state: TaskState, timestamp = "2026-01-01T00:00:00.000Z"): Task => ({
  id,
  contextId,
  status: { state, message: undefined, timestamp },
  artifacts: [{ artifactId: "result", name: "result", description: "", parts: [], metadata: undefined, extensions: [] }],
  history: [],
  metadata: undefined
})

const everything: ListTasksRequest = { tenant: "", contextId: "", status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: "", statusTimestampAfter: undefined }

describe("BoundedTaskStore", () => {
  it("copies tasks in and out", async () => {
    const store = new BoundedTaskStore()
    const t = task("a", "c", TaskState.TASK_STATE_WORKING)
    await store.save(t)
    t.status!.state = TaskState.TASK_STATE_FAILED
    const loaded = (await store.load("a"))!
    expect(loaded.status?.state).toBe(TaskState.TASK_STATE_WORKING)
    loaded.history.push({ messageId: "m", contextId: "c", taskId: "a", role: 1, parts: [], metadata: undefined, extensions: [], referenceTaskIds: [] })
    expect((await store.load("a"))!.history).toEqual([])
    expect(await store.load("nope")).toBeUndefined()
  })

  it("drops the oldest finished task first, then the oldest waiting one, never a running one; forgets emptied contexts", async () => {
    const forgotten: Array<string> = []
    const store = new BoundedTaskStore({ maxTasks: 2, onContextForgotten: (c) => forgotten.push(c) })
    await store.save(task("run", "c1", TaskState.TASK_STATE_WORKING))
    await store.save(task("wait", "c2", TaskState.TASK_STATE_INPUT_REQUIRED))
    await store.save(task("done", "c2", TaskState.TASK_STATE_COMPLETED))
    expect(await store.load("done")).toBeUndefined()
    expect(forgotten).toEqual([])
    await store.save(task("new", "c3", TaskState.TASK_STATE_SUBMITTED))
    expect(await store.load("wait")).toBeUndefined()
    expect(forgotten).toEqual(["c2"])
    expect(store.hasContext("c2")).toBe(false)
    await store.save(task("third", "c4", TaskState.TASK_STATE_WORKING))
    expect(store.size).toBe(3) // every task is running: none is dropped
    await store.save(task("run", "c1", TaskState.TASK_STATE_COMPLETED))
    await store.save(task("fourth", "c5", TaskState.TASK_STATE_WORKING))
    expect(await store.load("run")).toBeUndefined()
    expect(forgotten).toEqual(["c2", "c1"])
  })

  it("lists newest first, filters by context, state and time, pages with a cursor, leaves artifacts out unless asked", async () => {
    const store = new BoundedTaskStore()
    for (let i = 1; i <= 5; i++)
      await store.save(
        task(`t${i}`, i % 2 === 0 ? "even" : "odd", i === 5 ? TaskState.TASK_STATE_WORKING : TaskState.TASK_STATE_COMPLETED, `2026-01-01T00:00:0${i}.000Z`)
      )
    const all = await store.list(everything)
    expect(all.tasks.map((t) => t.id)).toEqual(["t5", "t4", "t3", "t2", "t1"])
    expect(all.totalSize).toBe(5)
    expect(all.tasks[0]!.artifacts).toEqual([])
    expect((await store.list({ ...everything, includeArtifacts: true })).tasks[0]!.artifacts).toHaveLength(1)
    expect((await store.list({ ...everything, contextId: "even" })).tasks.map((t) => t.id)).toEqual(["t4", "t2"])
    expect((await store.list({ ...everything, status: TaskState.TASK_STATE_WORKING })).tasks.map((t) => t.id)).toEqual(["t5"])
    expect((await store.list({ ...everything, statusTimestampAfter: "2026-01-01T00:00:03.000Z" })).tasks.map((t) => t.id)).toEqual(["t5", "t4"])
    const first = await store.list({ ...everything, pageSize: 2 })
    expect(first.tasks.map((t) => t.id)).toEqual(["t5", "t4"])
    const second = await store.list({ ...everything, pageSize: 2, pageToken: first.nextPageToken })
    expect(second.tasks.map((t) => t.id)).toEqual(["t3", "t2"])
    const third = await store.list({ ...everything, pageSize: 2, pageToken: second.nextPageToken })
    expect(third).toMatchObject({ nextPageToken: "", tasks: [expect.objectContaining({ id: "t1" })] })
    expect((await store.list({ ...everything, pageToken: "not-a-cursor" })).tasks).toEqual([])
  })

  it("refuses a bound that is not a positive integer", () => {
    expect(() => new BoundedTaskStore({ maxTasks: 0 })).toThrow(RangeError)
    expect(isFinalState(TaskState.TASK_STATE_CANCELED)).toBe(true)
    expect(isFinalState(TaskState.TASK_STATE_WORKING)).toBe(false)
  })
})
