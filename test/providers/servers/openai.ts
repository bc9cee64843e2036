/**
 * The OpenAI Chat Completions wire protocol: JSON completions, SSE chunks (`data: {...}` frames
 * ending with `data: [DONE]`), tool_calls deltas and the final usage chunk.
 */
import { type Behaviour, type Recorded, TestServer } from "./harness.ts"

export interface ToolCallSpec {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

export interface Usage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
}

const created = 1_700_000_000

export const completion = (options: {
  readonly text?: string | null
  readonly toolCalls?: ReadonlyArray<ToolCallSpec>
  readonly usage?: Usage
  readonly model?: string
  readonly finishReason?: string
}): unknown => ({
  id: "chatcmpl-test",
  object: "chat.completion",
  created,
  model: options.model ?? "gpt-test",
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content: options.text === undefined ? "" : options.text,
        ...(options.toolCalls !== undefined
          ? {
              tool_calls: options.toolCalls.map((c) => ({
                id: c.id,
                type: "function",
                function: { name: c.name, arguments: c.arguments }
              }))
            }
          : {})
      },
      logprobs: null,
      finish_reason: options.finishReason ?? (options.toolCalls !== undefined ? "tool_calls" : "stop")
    }
  ],
  usage: {
    prompt_tokens: options.usage?.prompt_tokens ?? 5,
    completion_tokens: options.usage?.completion_tokens ?? 3,
    total_tokens: (options.usage?.prompt_tokens ?? 5) + (options.usage?.completion_tokens ?? 3)
  }
})

const chunk = (delta: unknown, finish: string | null = null, model = "gpt-test"): unknown => ({
  id: "chatcmpl-test",
  object: "chat.completion.chunk",
  created,
  model,
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }]
})

export const frame = (data: unknown): string => `data: ${JSON.stringify(data)}\n\n`
export const done = "data: [DONE]\n\n"

const toolCallUsage: Usage = { prompt_tokens: 7, completion_tokens: 9 }

/** The end of a stream: the finishing chunk, the usage chunk (no choices), [DONE]. */
const streamEnd = (finish: string, usage: Usage): Array<string> => [
  frame(chunk({}, finish)),
  frame({
    id: "chatcmpl-test",
    object: "chat.completion.chunk",
    created,
    model: "gpt-test",
    choices: [],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens }
  }),
  done
]

/** Frames of a streamed text answer: role, one delta per piece, finish, usage chunk, [DONE]. */
export const textFrames = (pieces: ReadonlyArray<string>, usage: Usage = { prompt_tokens: 5, completion_tokens: 3 }): Array<string> => [
  frame(chunk({ role: "assistant", content: "" })),
  ...pieces.map((p) => frame(chunk({ content: p }))),
  ...streamEnd("stop", usage)
]

/** Frames of a streamed tool call whose arguments arrive in pieces. */
export const toolCallFrames = (call: ToolCallSpec, argumentPieces: ReadonlyArray<string>): Array<string> => [
  frame(chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] })),
  ...argumentPieces.map((p) => frame(chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] }))),
  ...streamEnd("tool_calls", toolCallUsage)
]

/**
 * Frames of several tool calls streamed in one turn, as OpenAI sends parallel calls: each call's
 * first delta carries its index, id and name, then its arguments arrive in pieces, interleaved
 * with the other calls'. `cut` stops after that many argument pieces (mid-call, no finish).
 */
export const parallelToolCallFrames = (calls: ReadonlyArray<ToolCallSpec>, options: { readonly cut?: number } = {}): Array<string> => {
  const starts = calls.map((c, index) => frame(chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] })))
  const pieces: Array<string> = []
  const halves = calls.map((c) => [c.arguments.slice(0, Math.ceil(c.arguments.length / 2)), c.arguments.slice(Math.ceil(c.arguments.length / 2))])
  for (let part = 0; part < 2; part++) {
    halves.forEach((h, index) => pieces.push(frame(chunk({ tool_calls: [{ index, function: { arguments: h[part] } }] }))))
  }
  const head = [frame(chunk({ role: "assistant", content: null })), ...starts]
  if (options.cut !== undefined) return [...head, ...pieces.slice(0, options.cut)]
  return [...head, ...pieces, ...streamEnd("tool_calls", toolCallUsage)]
}

const lastUser = (body: any): string => {
  const messages: Array<{ role: string; content: string }> = Array.isArray(body?.messages) ? body.messages : []
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === "user") return String(messages[i]!.content)
  return ""
}

/** Deterministic default: answer `echo: <last user message>`; `__hang__` never answers. */
export const fallback = (request: Recorded): Behaviour => {
  const text = lastUser(request.body)
  if (text === "__hang__") return { kind: "hang" }
  const answer = `echo: ${text}`
  if (request.body?.stream === true) return { kind: "sse", frames: textFrames(answer.split(/(?<= )/)) }
  return { kind: "json", body: completion({ text: answer }) }
}

export const startOpenAIServer = (): Promise<TestServer> => TestServer.start(fallback)
