/**
 * The Anthropic Messages wire protocol: JSON messages and the SSE event stream
 * (`message_start`, `content_block_start/delta/stop`, `message_delta` with usage, `message_stop`).
 */
import { type Behaviour, type Recorded, TestServer } from "./harness.ts"

export interface ToolUseSpec {
  readonly id: string
  readonly name: string
  readonly input: unknown
}

const usageBlock = (input: number, output: number) => ({
  input_tokens: input,
  output_tokens: output,
  cache_creation_input_tokens: null,
  cache_read_input_tokens: null,
  cache_creation: null,
  inference_geo: null,
  server_tool_use: null,
  service_tier: "standard"
})

export const message = (options: {
  readonly text?: string
  readonly toolUses?: ReadonlyArray<ToolUseSpec>
  readonly inputTokens?: number
  readonly outputTokens?: number
  readonly model?: string
}): unknown => ({
  id: "msg_test",
  type: "message",
  role: "assistant",
  model: options.model ?? "claude-test",
  content: [
    ...(options.text !== undefined ? [{ type: "text", text: options.text, citations: null }] : []),
    ...(options.toolUses ?? []).map((t) => ({ type: "tool_use", id: t.id, name: t.name, input: t.input, caller: { type: "direct" } }))
  ],
  stop_reason: options.toolUses !== undefined ? "tool_use" : "end_turn",
  stop_sequence: null,
  stop_details: null,
  container: null,
  diagnostics: null,
  usage: usageBlock(options.inputTokens ?? 11, options.outputTokens ?? 4)
})

export const event = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`

const start = (inputTokens: number): string =>
  event("message_start", {
    message: {
      id: "msg_test",
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usageBlock(inputTokens, 1)
    }
  })

const end = (outputTokens: number, stopReason: string): Array<string> => [
  event("message_delta", {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: outputTokens, input_tokens: null, cache_creation_input_tokens: null, cache_read_input_tokens: null, server_tool_use: null }
  }),
  event("message_stop", {})
]

/** Events of a streamed text answer, one text_delta per piece. */
export const textEvents = (pieces: ReadonlyArray<string>, inputTokens = 11, outputTokens = 4): Array<string> => [
  start(inputTokens),
  event("content_block_start", { index: 0, content_block: { type: "text", text: "", citations: null } }),
  'event: ping\ndata: {"type": "ping"}\n\n',
  ...pieces.map((p) => event("content_block_delta", { index: 0, delta: { type: "text_delta", text: p } })),
  event("content_block_stop", { index: 0 }),
  ...end(outputTokens, "end_turn")
]

/** Events of a text block followed by a tool_use block whose input arrives as JSON pieces. */
export const toolUseEvents = (text: string, tool: { readonly id: string; readonly name: string }, jsonPieces: ReadonlyArray<string>): Array<string> => [
  start(20),
  event("content_block_start", { index: 0, content_block: { type: "text", text: "", citations: null } }),
  event("content_block_delta", { index: 0, delta: { type: "text_delta", text } }),
  event("content_block_stop", { index: 0 }),
  event("content_block_start", { index: 1, content_block: { type: "tool_use", id: tool.id, name: tool.name, input: {}, caller: { type: "direct" } } }),
  ...jsonPieces.map((p) => event("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: p } })),
  event("content_block_stop", { index: 1 }),
  ...end(15, "tool_use")
]

/**
 * Events of several tool_use blocks in one message (after an optional text block), each block's
 * input JSON in two `input_json_delta` pieces; `cut` stops after that many events of the blocks
 * (mid-call, no `message_stop`).
 */
export const toolUsesEvents = (
  text: string,
  uses: ReadonlyArray<{ readonly id: string; readonly name: string; readonly json: string }>,
  options: { readonly cut?: number } = {}
): Array<string> => {
  const first = text === "" ? 0 : 1
  const blocks = uses.flatMap((u, i) => {
    const index = first + i
    const half = Math.ceil(u.json.length / 2)
    return [
      event("content_block_start", { index, content_block: { type: "tool_use", id: u.id, name: u.name, input: {}, caller: { type: "direct" } } }),
      event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: u.json.slice(0, half) } }),
      event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: u.json.slice(half) } }),
      event("content_block_stop", { index })
    ]
  })
  const head = [
    start(20),
    ...(text === ""
      ? []
      : [
          event("content_block_start", { index: 0, content_block: { type: "text", text: "", citations: null } }),
          event("content_block_delta", { index: 0, delta: { type: "text_delta", text } }),
          event("content_block_stop", { index: 0 })
        ])
  ]
  if (options.cut !== undefined) return [...head, ...blocks.slice(0, options.cut)]
  return [...head, ...blocks, ...end(15, "tool_use")]
}

const lastUser = (body: any): string => {
  const messages: Array<{ role: string; content: unknown }> = Array.isArray(body?.messages) ? body.messages : []
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (m.role === "user" && typeof m.content === "string") return m.content
  }
  return ""
}

/** Deterministic default: answer `echo: <last user message>`; `__hang__` never answers. */
export const fallback = (request: Recorded): Behaviour => {
  const text = lastUser(request.body)
  if (text === "__hang__") return { kind: "hang" }
  const answer = `echo: ${text}`
  if (request.body?.stream === true) return { kind: "sse", frames: textEvents(answer.split(/(?<= )/)) }
  return { kind: "json", body: message({ text: answer }) }
}

export const startAnthropicServer = (): Promise<TestServer> => TestServer.start(fallback)
