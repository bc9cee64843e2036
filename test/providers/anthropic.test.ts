import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Anthropic, LanguageModel, Providers } from "lambdagent"
import { languageModelConformance } from "../../src/testing/LanguageModelKit.ts"
import { collect, failure, fast, interruptWhen, isInterrupted, recordingSleeps, run, streamFailure, textOf } from "./helpers.ts"
import { event, message, startAnthropicServer, textEvents, toolUseEvents } from "./servers/anthropic.ts"
import type { TestServer } from "./servers/harness.ts"

const key = "sk-ant-test-secret-0123456789"

let server: TestServer
beforeAll(async () => {
  server = await startAnthropicServer()
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => server.reset())

const model = (options: Anthropic.Options = {}) => Anthropic.make({ baseUrl: server.url, apiKey: key, ...fast, ...options })

const hello = { messages: [{ role: "user" as const, content: "hello" }] }

describe("Anthropic provider", () => {
  it("chat: system prompt goes to the top-level field; text, usage and model are mapped", async () => {
    const response = await run(
      model().chat({
        messages: [
          { role: "system", content: "Be brief." },
          { role: "system", content: "Be kind." },
          { role: "user", content: "hello" }
        ],
        model: "claude-x",
        maxTokens: 99,
        stop: ["END"]
      })
    )
    expect(response).toEqual({ text: "echo: hello", usage: { inputTokens: 11, outputTokens: 4 }, model: "claude-test", finishReason: "end_turn" })
    expect(server.requests).toHaveLength(1)
    const request = server.requests[0]!
    expect(request.url).toBe("/v1/messages")
    expect(JSON.stringify(request.headers)).toContain(key)
    expect(request.headers["anthropic-version"]).toBeDefined()
    expect(request.body).toEqual({
      model: "claude-x",
      max_tokens: 99,
      system: "Be brief.\n\nBe kind.",
      messages: [{ role: "user", content: "hello" }],
      stop_sequences: ["END"]
    })
  })

  it("chat: defaults model and max_tokens", async () => {
    await run(model().chat(hello))
    expect(server.requests[0]!.body).toMatchObject({ model: Anthropic.defaultModel, max_tokens: Anthropic.defaultMaxTokens })
    expect(server.requests[0]!.body.system).toBeUndefined()
  })

  it("stream: reads the SSE event stream into text deltas and a Finish with usage", async () => {
    server.enqueue({ kind: "sse", frames: textEvents(["Hel", "lo", " world"], 21, 6) })
    const chunks = await collect(model().stream(hello))
    expect(chunks).toEqual([
      { _tag: "TextDelta", text: "Hel" },
      { _tag: "TextDelta", text: "lo" },
      { _tag: "TextDelta", text: " world" },
      { _tag: "Finish", usage: { inputTokens: 21, outputTokens: 6 }, model: "claude-test", finishReason: "end_turn" }
    ])
    expect(server.requests[0]!.body.stream).toBe(true)
  })

  it("tool calls: tools, tool_use and tool_result blocks round-trip", async () => {
    server.enqueue({ kind: "json", body: message({ text: "Let me look.", toolUses: [{ id: "toolu_2", name: "search", input: { q: "more" } }] }) })
    const response = await run(
      model().chat({
        messages: [
          { role: "user", content: "find effect" },
          { role: "assistant", content: "Searching.", toolCalls: [{ id: "toolu_1", name: "search", arguments: '{"q":"effect"}' }] },
          { role: "tool", content: "result one", toolCallId: "toolu_1" },
          { role: "tool", content: "result two", toolCallId: "toolu_1b" }
        ],
        tools: [{ name: "search", description: "Search", parameters: { type: "object", properties: { q: { type: "string" } } } }]
      })
    )
    expect(response.text).toBe("Let me look.")
    expect(response.toolCalls).toEqual([{ id: "toolu_2", name: "search", arguments: '{"q":"more"}' }])
    const body = server.requests[0]!.body
    expect(body.tools).toEqual([{ name: "search", description: "Search", input_schema: { type: "object", properties: { q: { type: "string" } } } }])
    expect(body.messages).toEqual([
      { role: "user", content: "find effect" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Searching." },
          { type: "tool_use", id: "toolu_1", name: "search", input: { q: "effect" } }
        ]
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "result one" },
          { type: "tool_result", tool_use_id: "toolu_1b", content: "result two" }
        ]
      }
    ])
  })

  it("tool calls: streams input_json_delta as tool call deltas numbered from 0", async () => {
    server.enqueue({ kind: "sse", frames: toolUseEvents("Looking.", { id: "toolu_9", name: "search" }, ['{"q":', '"effect"}']) })
    const chunks = await collect(model().stream(hello))
    expect(textOf(chunks)).toBe("Looking.")
    const deltas = chunks.filter((c) => c._tag === "ToolCallDelta")
    expect(deltas[0]).toEqual({ _tag: "ToolCallDelta", index: 0, id: "toolu_9", name: "search", arguments: "" })
    expect(deltas.every((d) => d._tag === "ToolCallDelta" && d.index === 0)).toBe(true)
    expect(deltas.map((d) => (d._tag === "ToolCallDelta" ? d.arguments : "")).join("")).toBe('{"q":"effect"}')
    expect(chunks[chunks.length - 1]).toEqual({ _tag: "Finish", usage: { inputTokens: 20, outputTokens: 15 }, model: "claude-test", finishReason: "tool_use" })
  })

  it("401 → Auth, not retried, and the key never appears in the error", async () => {
    server.enqueue({
      kind: "json",
      status: 401,
      body: { type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${key}` } }
    })
    const error = await failure(model().chat(hello))
    expect(error.reason).toBe("Auth")
    expect(error.status).toBe(401)
    expect(error.message).toContain("ANTHROPIC_API_KEY")
    expect(error.message).toContain("invalid x-api-key")
    expect(error.message).not.toContain(key)
    expect(String(error.cause)).not.toContain(key)
    expect(server.requests).toHaveLength(1)
  })

  it("429 with Retry-After: waits the server's delay, retries and succeeds", async () => {
    server.enqueue({
      kind: "json",
      status: 429,
      headers: { "retry-after": "1" },
      body: { type: "error", error: { type: "rate_limit_error", message: "slow down" } }
    })
    const { effect, sleeps } = recordingSleeps(model({ backoffBaseMs: 1, backoffMaxMs: 5_000 }).chat(hello))
    const response = await run(effect)
    expect(response.text).toBe("echo: hello")
    expect(server.requests).toHaveLength(2)
    expect(sleeps).toContain(1_000)
  })

  it("Retry-After above the cap is capped by backoffMaxMs", async () => {
    server.enqueue({
      kind: "json",
      status: 429,
      headers: { "retry-after": "30" },
      body: { type: "error", error: { type: "rate_limit_error", message: "slow down" } }
    })
    const { effect, sleeps } = recordingSleeps(model({ backoffMaxMs: 50 }).chat(hello))
    await run(effect)
    expect(server.requests).toHaveLength(2)
    expect(sleeps).toContain(50)
    expect(sleeps).not.toContain(30_000)
  })

  it("500 then success: retried; 529 overloaded is a Server error too", async () => {
    server.enqueue({ kind: "json", status: 500, body: { type: "error", error: { type: "api_error", message: "boom" } } })
    expect((await run(model().chat(hello))).text).toBe("echo: hello")
    expect(server.requests).toHaveLength(2)

    server.reset()
    server.enqueue({ kind: "json", status: 529, body: { type: "error", error: { type: "overloaded_error", message: "busy" } } })
    const error = await failure(model({ maxRetries: 0 }).chat(hello))
    expect(error.reason).toBe("Server")
  })

  it("streaming connect: 500 then success is retried before any chunk", async () => {
    server.enqueue({ kind: "json", status: 500, body: { type: "error", error: { type: "api_error", message: "boom" } } })
    const chunks = await collect(model().stream(hello))
    expect(textOf(chunks)).toBe("echo: hello")
    expect(server.requests).toHaveLength(2)
  })

  it("an error event mid-stream → typed by its error type", async () => {
    const frames = textEvents(["partial"])
    server.enqueue({
      kind: "sse",
      frames: [...frames.slice(0, 4), event("error", { error: { type: "overloaded_error", message: "Overloaded" } })]
    })
    const { chunks, error } = await streamFailure(model().stream(hello))
    expect(textOf(chunks)).toBe("partial")
    expect(error.reason).toBe("Server")
    expect(server.requests).toHaveLength(1)
  })

  it("malformed JSON → BadResponse, not retried", async () => {
    server.enqueue({ kind: "raw", body: '{"type": "message", "content": [' })
    const error = await failure(model().chat(hello))
    expect(error.reason).toBe("BadResponse")
    expect(server.requests).toHaveLength(1)
  })

  it("malformed SSE data → BadResponse", async () => {
    const frames = textEvents(["ok"])
    server.enqueue({ kind: "sse", frames: [...frames.slice(0, 4), "event: content_block_delta\ndata: {oops\n\n"] })
    const { chunks, error } = await streamFailure(model().stream(hello))
    expect(error.reason).toBe("BadResponse")
    expect(textOf(chunks)).toBe("ok")
  })

  it("body cut off mid-stream → BadResponse", async () => {
    server.enqueue({ kind: "sse", frames: textEvents(["partial ", "answer"]).slice(0, 4), end: "destroy" })
    const { chunks, error } = await streamFailure(model().stream(hello))
    expect(error.reason).toBe("BadResponse")
    expect(textOf(chunks)).toBe("partial ")
  })

  it("a stream that ends without message_stop → BadResponse", async () => {
    const frames = textEvents(["a"])
    server.enqueue({ kind: "sse", frames: frames.slice(0, frames.length - 1) })
    const { error } = await streamFailure(model().stream(hello))
    expect(error.reason).toBe("BadResponse")
    expect(error.message).toContain("message_stop")
  })

  it("a JSON body cut off → BadResponse", async () => {
    server.enqueue({ kind: "truncated", body: JSON.stringify(message({ text: "a long answer" })) })
    const error = await failure(model().chat(hello))
    expect(error.reason).toBe("BadResponse")
  })

  it("a server that never answers → Timeout", async () => {
    const error = await failure(model({ timeoutMs: 150 }).chat({ messages: [{ role: "user", content: "__hang__" }] }))
    expect(error.reason).toBe("Timeout")
    expect(server.requests).toHaveLength(1)
    await server.waitForEarlyCloses(1)
  })

  it("a stream that never answers → Timeout", async () => {
    const { error } = await streamFailure(model({ timeoutMs: 150 }).stream({ messages: [{ role: "user", content: "__hang__" }] }))
    expect(error.reason).toBe("Timeout")
    await server.waitForEarlyCloses(1)
  })

  it("cancellation: interrupting chat aborts the HTTP request", async () => {
    const exit = await interruptWhen(model().chat({ messages: [{ role: "user", content: "__hang__" }] }), () => server.waitForRequests(1))
    expect(isInterrupted(exit)).toBe(true)
    await server.waitForEarlyCloses(1)
  })

  it("cancellation: taking the first chunk of a long stream closes the socket", async () => {
    server.enqueue({ kind: "sse", frames: textEvents(["one "]).slice(0, 4), end: "hang" })
    const chunks = await collect(model().stream(hello).pipe(Stream.take(1)))
    expect(chunks).toEqual([{ _tag: "TextDelta", text: "one " }])
    await server.waitForEarlyCloses(1)
  })

  it("a missing key fails every call with Auth naming ANTHROPIC_API_KEY, without a request", async () => {
    const noKey = Anthropic.make({ baseUrl: server.url, env: {}, ...fast })
    const error = await failure(noKey.chat(hello))
    expect(error.reason).toBe("Auth")
    expect(error.message).toContain("ANTHROPIC_API_KEY")
    expect((await streamFailure(noKey.stream(hello))).error.reason).toBe("Auth")
    expect(server.requests).toHaveLength(0)
  })

  it("Providers.fromSpec builds Anthropic models", async () => {
    const claude = Providers.fromSpec("anthropic:claude-haiku-4-5", { baseUrl: server.url, env: { ANTHROPIC_API_KEY: key }, ...fast })
    expect(claude.name).toBe("anthropic")
    await run(claude.chat(hello))
    expect(server.requests[0]!.body.model).toBe("claude-haiku-4-5")
  })

  it("layer provides the LanguageModel service", async () => {
    const program = LanguageModel.LanguageModel.use((m) => m.chat(hello))
    const response = await Effect.runPromise(program.pipe(Effect.provide(Anthropic.layer({ baseUrl: server.url, apiKey: key, ...fast }))))
    expect(response.text).toBe("echo: hello")
  })
})

let conformanceCloses = 0
languageModelConformance("Anthropic on a local Messages server", () => model(), {
  request: { messages: [{ role: "user", content: "conformance" }] },
  expectedText: "echo: conformance",
  slowRequest: { messages: [{ role: "user", content: "__hang__" }] },
  afterInterrupt: async () => {
    conformanceCloses++
    await server.waitForEarlyCloses(conformanceCloses)
  },
  failing: { make: () => Anthropic.make({ baseUrl: server.url, env: {}, ...fast }), reason: "Auth" }
})
