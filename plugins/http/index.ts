/**
 * `lambdagent/http`: serve an agent over HTTP, server-sent events and WebSocket.
 *
 * `serve({ agent, runtimeOptions, port, token })` starts a server with `POST /run`, `POST /stream`,
 * `/ws`, `GET /health` and `GET /`; `serveCommand` is the same behind `lambdagent serve`, with
 * status lines and graceful shutdown on SIGTERM. The protocol is documented in `docs/http.md`.
 *
 * @since 0.1.0
 * @module lambdagent/http
 */
export { defaultCommandPort, serveCommand, type ServeCommandOptions } from "./command.ts"
export type { HandoffOutcome, HandoffRequest, RunHandoff } from "./handoff.ts"
export { agentOf, checkIntegerOption, type CommandControl, listen, ListenError, serveUntilStopped, startupWarnings } from "./hosting.ts"
export {
  type ErrorBody,
  failureOf,
  HttpFailure,
  parseResumeRequest,
  parseRunRequest,
  RunAborted,
  type RunRequest,
  type SocketMessage
} from "./protocol.ts"
export { bearerCheck, readBody } from "./internal/request.ts"
export { SseWriter } from "./internal/sse.ts"
export { defaults, type RequestLog, serve, type ServeOptions, type Server } from "./serve.ts"
