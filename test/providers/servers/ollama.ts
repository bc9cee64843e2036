/**
 * Ollama's native chat protocol (`POST /api/chat`): a JSON answer, or NDJSON lines (each a partial
 * message; the last `done: true` with `done_reason` and the token counts), tool calls whose
 * arguments are objects, and `{"error": "…"}` bodies.
 */
import { type Behaviour, type Recorded, TestServer } from "./harness.ts"

export interface ToolCallSpec {
  readonly name: string
  readonly arguments: unknown
  /** Ollama 0.12 and later number their calls; older servers send none. */
  readonly id?: string
}

const createdAt = "2026-01-01T00:00:00.000000Z"

const callsOf = (calls: ReadonlyArray<ToolCallSpec>) =>
  calls.map((c, index) => ({ ...(c.id !== undefined ? { id: c.id } : {}), function: { index, name: c.name, arguments: c.arguments } }))

/** A whole answer (`stream: false`). */
export const answer = (options: {
  readonly text?: string
  readonly toolCalls?: ReadonlyArray<ToolCallSpec>
  readonly doneReason?: string
  readonly model?: string
}): unknown => ({
  model: options.model ?? "llama-test",
  created_at: createdAt,
  message: {
    role: "assistant",
    content: options.text ?? "",
    ...(options.toolCalls !== undefined ? { tool_calls: callsOf(options.toolCalls) } : {})
  },
  done: true,
  done_reason: options.doneReason ?? "stop",
  total_duration: 1_000_000,
  load_duration: 100_000,
  prompt_eval_count: 13,
  prompt_eval_duration: 200_000,
  eval_count: 7,
  eval_duration: 600_000
})

const partial = (message: unknown) => ({ model: "llama-test", created_at: createdAt, message, done: false })

/** The lines of a streamed answer: one per text piece, a line per tool call turn, then the final line. */
export const lines = (
  pieces: ReadonlyArray<string>,
  options: { readonly toolCalls?: ReadonlyArray<ToolCallSpec>; readonly doneReason?: string } = {}
): Array<unknown> => [
  ...pieces.map((content) => partial({ role: "assistant", content })),
  ...(options.toolCalls !== undefined ? [partial({ role: "assistant", content: "", tool_calls: callsOf(options.toolCalls) })] : []),
  {
    model: "llama-test",
    created_at: createdAt,
    message: { role: "assistant", content: "" },
    done: true,
    done_reason: options.doneReason ?? "stop",
    prompt_eval_count: 13,
    eval_count: 7
  }
]

const lastUser = (body: any): string => {
  const messages: Array<{ role: string; content: string }> = Array.isArray(body?.messages) ? body.messages : []
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === "user") return String(messages[i]!.content)
  return ""
}

/** Deterministic default: answer `echo: <last user message>`; `__hang__` never answers. */
export const fallback = (request: Recorded): Behaviour => {
  if (request.url !== "/api/chat") return { kind: "json", status: 404, body: { error: `unknown path ${request.url}` } }
  const text = lastUser(request.body)
  if (text === "__hang__") return { kind: "hang" }
  const reply = `echo: ${text}`
  if (request.body?.stream !== false) return { kind: "ndjson", lines: lines(reply.split(/(?<= )/)) }
  return { kind: "json", body: answer({ text: reply }) }
}

export const startOllamaServer = (): Promise<TestServer> => TestServer.start(fallback)
