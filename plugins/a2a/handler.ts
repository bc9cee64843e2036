/**
 * The SDK's request handler with one rule of lambdagent's runs: a run takes its input when it
 * starts, so a message for a task that is still running is refused (the protocol's "unsupported
 * operation" error, naming the task) instead of reaching the executor, where it would share the
 * running task's event stream. A message for a task waiting for input is its answer, and one
 * answer at a time is let through.
 *
 * @since 0.2.0
 * @module
 */
import type { AgentCard, Message, SendMessageRequest, StreamResponse, Task } from "@a2a-js/sdk"
import { TaskState } from "@a2a-js/sdk"
import { UnsupportedOperationError } from "@a2a-js/sdk/errors"
import { DefaultRequestHandler, type ServerCallContext, type TaskStore } from "@a2a-js/sdk/server"
import type { RunExecutor } from "./executor.ts"
import { isFinalState } from "./tasks.ts"

/**
 * A `DefaultRequestHandler` (validating input media types) over a {@link RunExecutor}, refusing
 * messages for running tasks (see the module documentation).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { createRuntime, Term } from "lambdagent"
 * import { agentCard, BoundedTaskStore, RunExecutor, RunRequestHandler } from "lambdagent/a2a"
 * const executor = new RunExecutor({ runtime: createRuntime(), term: () => Term.llm({ system: "Repeat." }), timeoutMs: 0 })
 * const handler = new RunRequestHandler(agentCard({ name: "echo", url: "http://127.0.0.1:8000/" }), new BoundedTaskStore(), executor)
 * ```
 */
export class RunRequestHandler extends DefaultRequestHandler {
  constructor(
    card: AgentCard,
    private readonly tasks: TaskStore,
    private readonly runs: RunExecutor
  ) {
    super(card, tasks, runs, undefined, undefined, undefined, undefined, undefined, { validateInputModes: true })
  }

  /** `message/send`, answering a task that waits for input under a reservation. */
  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const claimed = await this.claimAnswered(params, context)
    try {
      return await super.sendMessage(params, context)
    } finally {
      if (claimed !== undefined) this.runs.release(claimed)
    }
  }

  /** `message/stream`, answering a task that waits for input under a reservation. */
  override async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const claimed = await this.claimAnswered(params, context)
    try {
      yield* super.sendMessageStream(params, context)
    } finally {
      if (claimed !== undefined) this.runs.release(claimed)
    }
  }

  /** The task a message answers, reserved for it; refuses a message for a task that is running. */
  private async claimAnswered(params: SendMessageRequest, context: ServerCallContext): Promise<string | undefined> {
    const taskId = params.message?.taskId
    if (taskId === undefined || taskId === "") return undefined
    const task = await this.tasks.load(taskId, context)
    // unknown and finished tasks get the SDK's own errors
    if (task === undefined || isFinalState(task.status?.state)) return undefined
    if (task.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED || !this.runs.claim(taskId)) {
      throw new UnsupportedOperationError(`task ${taskId} is still running; send a new message without a taskId, or cancel the task`)
    }
    return taskId
  }
}
