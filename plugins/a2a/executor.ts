/**
 * The `AgentExecutor` behind a lambdagent A2A server: each task is one run of the agent's term on
 * the message's input, in the runtime session of the task's context id (`a2a:<contextId>`, see
 * {@link sessionOf}), so memory and conversation carry over between the tasks of a context.
 *
 * - A streamed request (`message/stream`, `SendStreamingMessage`) runs with `Runtime.stream`: every
 *   trace event becomes a `working` status update (a text line and the event as data), and the
 *   tokens of each LLM call an artifact of their own, marked as streamed tokens.
 * - A blocking request (`message/send`, `SendMessage`) runs with `Runtime.run` and publishes only
 *   the task and its outcome.
 * - The result is the artifact `result`, then the task is `completed`. A failed run is `failed`
 *   with the error's kind and message; a run over its time limit is `failed` too.
 * - `tasks/cancel` aborts the run's signal (the runtime cancels the model and tool calls in
 *   flight) and the task is `canceled`.
 * - With `inputRequired`, a run whose output is a question for the client ends the task
 *   `input-required` with that question; the client's next message on the task runs the agent
 *   again on the answer, in the same session.
 *
 * @since 0.2.0
 * @module
 */
import type { Artifact, Message, Task, TaskStatus } from "@a2a-js/sdk"
import { TaskState } from "@a2a-js/sdk"
import { AgentEvent, type AgentExecutionEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server"
import * as Schema from "effect/Schema"
import { Errors, type Runtime, type Term, Trace } from "lambdagent"
import { failureOf } from "lambdagent/http"
import { artifactRoleKey, dataPart, inputOf, message, resultParts, textPart } from "./parts.ts"

/**
 * The key of `ServerCallContext.state` that says a request streams (set by the server from the
 * JSON-RPC method).
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { ServerCallContext } from "@a2a-js/sdk/server"
 * import { streamingStateKey } from "lambdagent/a2a"
 * const context = new ServerCallContext({ state: new Map([[streamingStateKey, true]]) })
 * ```
 */
export const streamingStateKey = "lambdagent.streaming"

/**
 * The runtime session of an A2A context: `a2a:<contextId>`. Context ids come from clients, so they
 * get a namespace of their own, apart from the sessions a host's runtime uses for other callers.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { sessionOf } from "lambdagent/a2a"
 * sessionOf("7ed377c5") // "a2a:7ed377c5"
 * ```
 */
export const sessionOf = (contextId: string): string => `a2a:${contextId}`

/**
 * Why the server stopped a run: the client cancelled its task, the run took too long, or the
 * server is shutting down. The reason of the run's `AbortSignal`; a Schema-backed lambdagent error.
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { RunStopped } from "lambdagent/a2a"
 * new AbortController().abort(new RunStopped({ reason: "Timeout", message: "the run took longer than 120 s" }))
 * ```
 */
export class RunStopped extends Errors.TaggedError<RunStopped>()("RunStopped", {
  reason: Schema.Literals(["Canceled", "Timeout", "ShuttingDown"]),
  message: Schema.String
}) {}

/**
 * Options of {@link RunExecutor}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { createRuntime, Term } from "lambdagent"
 * import type { RunExecutorOptions } from "lambdagent/a2a"
 * const o: RunExecutorOptions = { runtime: createRuntime(), term: () => Term.llm({ system: "Be brief." }), timeoutMs: 60_000 }
 * ```
 */
export interface RunExecutorOptions {
  readonly runtime: Runtime.Runtime
  /** The agent, called for every task. */
  readonly term: () => Term.Term
  /** Milliseconds a run may take; 0 for no limit. */
  readonly timeoutMs: number
  /** Told of unexpected errors (a failed run whose error is no agent error). */
  readonly onError?: (error: unknown) => void
  /**
   * Whether a finished run asks the client for more input: the question to put to it, or
   * `undefined` when the output is the answer. Default: runs always answer.
   */
  readonly inputRequired?: (output: Runtime.RunOutput) => string | undefined
}

interface LiveRun {
  readonly controller: AbortController
  readonly done: Promise<void>
}

const status = (state: TaskState, note?: Message): TaskStatus => ({ state, message: note, timestamp: new Date().toISOString() })

/**
 * Runs an agent for the A2A SDK's request handler (see the module documentation). Use it with
 * `RunRequestHandler`, which keeps messages for running tasks away from it.
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
export class RunExecutor implements AgentExecutor {
  private readonly runs = new Map<string, LiveRun>()
  /** Tasks waiting for input whose answer is on its way to `execute`. */
  private readonly claimed = new Set<string>()

  constructor(private readonly options: RunExecutorOptions) {}

  /** Runs in flight. */
  get inFlight(): number {
    return this.runs.size
  }

  /**
   * Reserve a task for a message that continues it; `false` when it is already running or
   * reserved (one answer at a time). `execute` takes the reservation over; `release` drops it.
   */
  claim(taskId: string): boolean {
    if (this.runs.has(taskId) || this.claimed.has(taskId)) return false
    this.claimed.add(taskId)
    return true
  }

  /** Drop the reservation `claim` made, when the message did not start a run. */
  release(taskId: string): void {
    this.claimed.delete(taskId)
  }

  /** Resolves once no run is in flight. */
  async idle(): Promise<void> {
    while (this.runs.size > 0) await Promise.allSettled([...this.runs.values()].map((r) => r.done))
  }

  /** Stop every run in flight; each task ends as the reason says. */
  abortAll(reason: RunStopped): void {
    for (const run of this.runs.values()) run.controller.abort(reason)
  }

  /** Run the agent on the request's message, publishing the task's updates on `bus`. */
  execute = async (request: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { contextId, taskId } = request
    const ids = { taskId, contextId }
    // A message for a task that is running (RunRequestHandler refuses those before they get here):
    // this call publishes nothing on the task's bus, and returns only when the run has ended, so
    // that the SDK does not settle the bus under the run.
    const running = this.runs.get(taskId)
    if (running !== undefined) return running.done
    // a task given here waits for input: this message is its answer
    this.claimed.delete(taskId)
    const given = inputOf(request.userMessage)
    const task = (state: TaskState, note?: Message): Task =>
      request.task !== undefined
        ? { ...request.task, status: status(state, note) }
        : { id: taskId, contextId, status: status(state, note), artifacts: [], history: [], metadata: undefined }
    if ("refused" in given) {
      bus.publish(AgentEvent.task(task(TaskState.TASK_STATE_REJECTED, message("agent", [textPart(given.refused)], ids))))
      bus.finished()
      return
    }
    bus.publish(AgentEvent.task(task(TaskState.TASK_STATE_WORKING)))
    const controller = new AbortController()
    let settle!: () => void
    this.runs.set(taskId, { controller, done: new Promise<void>((resolve) => (settle = resolve)) })
    const timer =
      this.options.timeoutMs > 0
        ? setTimeout(
            () => controller.abort(new RunStopped({ reason: "Timeout", message: `the run took longer than ${this.options.timeoutMs} ms` })),
            this.options.timeoutMs
          )
        : undefined
    const publish = (event: AgentExecutionEvent) => {
      if (!controller.signal.aborted) bus.publish(event)
    }
    const end = (state: TaskState, text?: string) =>
      publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: status(state, text === undefined ? undefined : message("agent", [textPart(text)], ids)),
          metadata: undefined
        })
      )
    try {
      const call: Runtime.CallOptions = { signal: controller.signal, session: sessionOf(contextId) }
      const term = this.options.term()
      const streaming = request.context.state.get(streamingStateKey) === true
      const output = streaming ? await this.stream(term, given.input, call, ids, publish) : await this.options.runtime.run(term, given.input, call)
      const question = this.options.inputRequired?.(output)
      if (question !== undefined) end(TaskState.TASK_STATE_INPUT_REQUIRED, question)
      else {
        const result: Artifact = {
          artifactId: "result",
          name: "result",
          description: "",
          parts: resultParts(output.value, output.result),
          metadata: { [artifactRoleKey]: "result" },
          extensions: []
        }
        publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: result, append: false, lastChunk: true, metadata: undefined }))
        end(TaskState.TASK_STATE_COMPLETED)
      }
    } catch (error) {
      if (!controller.signal.aborted) {
        const failure = failureOf(error)
        if (failure.kind === "Internal") this.options.onError?.(error)
        end(TaskState.TASK_STATE_FAILED, `${failure.kind}: ${failure.message}`)
      }
    } finally {
      // a stopped run ends as its reason says, whether or not it had finished when it was stopped
      const stopped = controller.signal.reason
      if (controller.signal.aborted && stopped instanceof RunStopped) {
        bus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId,
            status: status(
              stopped.reason === "Timeout" ? TaskState.TASK_STATE_FAILED : TaskState.TASK_STATE_CANCELED,
              message("agent", [textPart(`${stopped.reason}: ${stopped.message}`)], ids)
            ),
            metadata: undefined
          })
        )
      }
      clearTimeout(timer)
      this.runs.delete(taskId)
      settle()
      bus.finished()
    }
  }

  /** Stop the task's run; the task ends as canceled. */
  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const run = this.runs.get(taskId)
    if (run === undefined) {
      // a task waiting for input has no run to stop
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId: "", status: status(TaskState.TASK_STATE_CANCELED), metadata: undefined }))
      return
    }
    run.controller.abort(new RunStopped({ reason: "Canceled", message: "the client cancelled the task" }))
    // the run publishes its canceled status as it ends
    await run.done
  }

  /** Run with streaming: trace events as status updates, tokens as artifacts of their own. */
  private async stream(
    term: Term.Term,
    input: unknown,
    call: Runtime.CallOptions,
    ids: { readonly taskId: string; readonly contextId: string },
    publish: (event: AgentExecutionEvent) => void
  ): Promise<Runtime.RunOutput> {
    const started = new Set<string>()
    for await (const event of this.options.runtime.stream(term, input, call)) {
      switch (event.type) {
        case "trace": {
          const e = event.event
          const line = `${e.kind} ${e.name}${e.output !== undefined ? ` → ${Trace.preview(e.output)}` : ""}${e.error !== undefined ? ` ✗ ${e.error}` : ""}`
          publish(
            AgentEvent.statusUpdate({
              ...ids,
              status: status(
                TaskState.TASK_STATE_WORKING,
                message("agent", [textPart(line), dataPart(e)], { ...ids, metadata: { [artifactRoleKey]: "trace" } })
              ),
              metadata: undefined
            })
          )
          break
        }
        case "token": {
          const artifactId = `tokens:${event.name}`
          const artifact: Artifact = {
            artifactId,
            name: `${event.name} (tokens)`,
            description: "",
            parts: [textPart(event.text)],
            metadata: { [artifactRoleKey]: "tokens" },
            extensions: []
          }
          publish(AgentEvent.artifactUpdate({ ...ids, artifact, append: started.has(artifactId), lastChunk: false, metadata: undefined }))
          started.add(artifactId)
          break
        }
        case "result":
          return event.output
      }
    }
    throw new Error("the run's stream ended without a result")
  }
}
