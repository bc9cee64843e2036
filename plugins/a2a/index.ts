/**
 * `lambdagent/a2a`: agents talk to agents over the A2A protocol, both ways, on the official SDK
 * (`@a2a-js/sdk`).
 *
 * - `serve({ agent, runtimeOptions, name, skills, port, token })` publishes an agent as an A2A
 *   server: its agent card, `message/send`, `message/stream` (the run's steps and tokens as task
 *   updates), `tasks/get`, `tasks/cancel`, for A2A 1.0 and 0.3 clients, and `input-required` tasks
 *   when `inputRequired` says a run asked a question; `serveCommand` is the same behind
 *   `lambdagent serve <config> --a2a`.
 * - `a2aTool({ name, url, timeout, headers })` makes a remote A2A agent a tool: it sends the
 *   input, follows the task and answers its artifacts as text; failures are `[A2A_ERROR: …]` and
 *   `[A2A_TIMEOUT: …]` observations. `fetchCard` reads a remote agent's card.
 *
 * The protocol mapping is documented in `docs/a2a.md`.
 *
 * @since 0.2.0
 * @module lambdagent/a2a
 */
export { type CardSpec, agentCard, agentCardJson, legacyAgentCardJson, type SkillSpec } from "./card.ts"
export { type A2AClientConfig, type A2AProgress, a2aTool, type A2AToolOptions, probe, type TaskReply } from "./client.ts"
export { defaultCommandPort, serveCommand, type ServeCommandOptions } from "./command.ts"
export { cardUrlOf, fetchCard, type FetchCardOptions, networkDetail, readCard, type RemoteCard } from "./discovery.ts"
export { A2AClientError, A2AFailure, isRetryable, observationOf } from "./errors.ts"
export { RunExecutor, type RunExecutorOptions, RunStopped, sessionOf, streamingStateKey } from "./executor.ts"
export { RunRequestHandler } from "./handler.ts"
export {
  artifactRoleKey,
  artifactsText,
  dataPart,
  inputOf,
  mediaTypes,
  message,
  type MessageInput,
  partsText,
  resultParts,
  textPart
} from "./parts.ts"
export { defaults, type RequestLog, serve, type Server, type ServeOptions } from "./server.ts"
export { BoundedTaskStore, defaultMaxTasks, isFinalState, type TaskStoreOptions } from "./tasks.ts"
