import { TaskState } from "@a2a-js/sdk"
import { DefaultRequestHandler, ServerCallContext } from "@a2a-js/sdk/server"
import { createRuntime, Scripted, Term } from "lambdagent"
import { afterEach, describe, expect, it } from "vitest"
import { agentCard } from "./card.ts"
import { RunExecutor } from "./executor.ts"
import { message, textPart } from "./parts.ts"
import { BoundedTaskStore } from "./tasks.ts"

const runtime = createRuntime({ model: Scripted.echo({ latencyMs: 60_000 }) })
afterEach(() => runtime.close())

describe("RunExecutor behind the SDK's own DefaultRequestHandler", () => {
  it("leaves a running task alone when a message for it gets through (RunRequestHandler refuses those)", async () => {
    const executor = new RunExecutor({ runtime, term: () => Term.llm({ system: "Repeat." }), timeoutMs: 0 })
    const store = new BoundedTaskStore()
    const handler = new DefaultRequestHandler(agentCard({ name: "echo", url: "http://127.0.0.1:1/" }), store, executor)
    const context = new ServerCallContext()
    const request = (text: string, taskId = "") => ({
      tenant: "",
      message: message("user", [textPart(text)], { taskId }),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined
    })
    const running = await handler.sendMessage(request("first"), context)
    if ("messageId" in running) throw new Error("expected a task")
    expect(executor.inFlight).toBe(1)
    // the second message waits for the run instead of publishing on its bus (it is cancelled
    // once the executor has it, however quickly the run then ends)
    const execute = executor.execute
    const reached = new Promise<void>((resolve) => {
      executor.execute = (...args) => {
        resolve()
        return execute(...args)
      }
    })
    const second = handler.sendMessage(request("second", running.id), context)
    await reached
    expect(executor.inFlight).toBe(1)
    expect((await handler.cancelTask({ tenant: "", id: running.id, metadata: undefined }, context)).status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    expect(executor.inFlight).toBe(0)
    // and then it sees the task as it ended
    expect(await second).toMatchObject({ id: running.id, status: { state: TaskState.TASK_STATE_CANCELED } })
    expect((await store.load(running.id))?.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
  })
})
