import * as net from "node:net"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { LanguageModel, OpenAI, Providers } from "lambdagent"
import { languageModelConformance } from "../../src/testing/LanguageModelKit.ts"
import { collect, failure, fast, interruptWhen, isInterrupted, recordingSleeps, run, streamFailure, textOf } from "./helpers.ts"
import type { TestServer } from "./servers/harness.ts"
import { completion, done, startOpenAIServer, textFrames, toolCallFrames } from "./servers/openai.ts"

const key = "sk-test-secret-0123456789"

let server: TestServer
beforeAll(async () => {
  server = await startOpenAIServer()
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => server.reset())

const model = (options: OpenAI.Options = {}) => OpenAI.make({ preset: "openai", baseUrl: `${server.url}/v1`, apiKey: key, ...fast, ...options })

const hello = { messages: [{ role: "user" as const, content: "hello" }] }

describe("OpenAI provider", () => {
  it("chat: sends a Chat Completions request and maps text, usage and model", async () => {
    const response = await run(
      model({ model: "gpt-test-model" }).chat({
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hello" }
        ],
        temperature: 0,
        maxTokens: 64,
        topP: 0.5,
        stop: ["\n\n"]
      })
    )
    expect(response).toEqual({ text: "echo: hello", usage: { inputTokens: 5, outputTokens: 3 }, model: "gpt-test", finishReason: "stop" })
    expect(server.requests).toHaveLength(1)
    const request = server.requests[0]!
    expect(request.method).toBe("POST")
    expect(request.url).toBe("/v1/chat/completions")
    expect(request.headers.authorization).toBe(`Bearer ${key}`)
    expect(request.body).toMatchObject({
      model: "gpt-test-model",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hello" }
      ],
      temperature: 0,
      max_completion_tokens: 64,
      top_p: 0.5,
      stop: ["\n\n"]
    })
    expect(request.body.stream).toBeUndefined()
  })

  it("chat: a compatible endpoint (custom baseUrl) needs no key and gets max_tokens", async () => {
    const custom = OpenAI.make({ baseUrl: `${server.url}/v1`, model: "local-model", env: {}, ...fast })
    expect(custom.name).toBe("openai-compatible")
    const response = await run(custom.chat({ ...hello, maxTokens: 10 }))
    expect(response.text).toBe("echo: hello")
    expect(server.requests[0]!.body).toMatchObject({ model: "local-model", max_tokens: 10 })
    expect(server.requests[0]!.body.max_completion_tokens).toBeUndefined()
  })

  it("stream: reads SSE chunks into text deltas and a Finish with usage", async () => {
    server.enqueue({ kind: "sse", frames: textFrames(["Hel", "lo", " world"], { prompt_tokens: 12, completion_tokens: 4 }) })
    const chunks = await collect(model().stream(hello))
    expect(chunks).toEqual([
      { _tag: "TextDelta", text: "Hel" },
      { _tag: "TextDelta", text: "lo" },
      { _tag: "TextDelta", text: " world" },
      { _tag: "Finish", usage: { inputTokens: 12, outputTokens: 4 }, model: "gpt-test", finishReason: "stop" }
    ])
    expect(server.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } })
  })

  it("tool calls: sends tools and tool messages, maps tool_calls back", async () => {
    server.enqueue({
      kind: "json",
      body: completion({ text: null, toolCalls: [{ id: "call_2", name: "search", arguments: '{"q":"more"}' }] })
    })
    const response = await run(
      model().chat({
        messages: [
          { role: "user", content: "find effect" },
          { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "search", arguments: '{"q":"effect"}' }] },
          { role: "tool", content: "results…", toolCallId: "call_1" }
        ],
        tools: [{ name: "search", description: "Search", parameters: { type: "object", properties: { q: { type: "string" } } } }]
      })
    )
    expect(response.text).toBe("")
    expect(response.toolCalls).toEqual([{ id: "call_2", name: "search", arguments: '{"q":"more"}' }])
    const body = server.requests[0]!.body
    expect(body.tools).toEqual([
      {
        type: "function",
        function: { name: "search", description: "Search", parameters: { type: "object", properties: { q: { type: "string" } } } }
      }
    ])
    expect(body.messages[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "search", arguments: '{"q":"effect"}' } }]
    })
    expect(body.messages[2]).toEqual({ role: "tool", content: "results…", tool_call_id: "call_1" })
  })

  it("tool calls: streams tool_calls deltas", async () => {
    server.enqueue({ kind: "sse", frames: toolCallFrames({ id: "call_9", name: "search", arguments: "" }, ['{"q":', '"effect"}']) })
    const chunks = await collect(model().stream(hello))
    const deltas = chunks.filter((c) => c._tag === "ToolCallDelta")
    expect(deltas[0]).toEqual({ _tag: "ToolCallDelta", index: 0, id: "call_9", name: "search", arguments: "" })
    expect(deltas.map((d) => (d._tag === "ToolCallDelta" ? d.arguments : "")).join("")).toBe('{"q":"effect"}')
    expect(chunks[chunks.length - 1]).toEqual({ _tag: "Finish", usage: { inputTokens: 7, outputTokens: 9 }, model: "gpt-test", finishReason: "tool_calls" })
  })

  it("401 → Auth, not retried, and the key never appears in the error", async () => {
    server.enqueue({
      kind: "json",
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${key}.`, type: "invalid_request_error", code: "invalid_api_key" } }
    })
    const error = await failure(model().chat(hello))
    expect(error.reason).toBe("Auth")
    expect(error.status).toBe(401)
    expect(error.message).toContain("OPENAI_API_KEY")
    expect(error.message).not.toContain(key)
    expect(String(error)).not.toContain(key)
    expect(String(error.cause)).not.toContain(key)
    expect(server.requests).toHaveLength(1)
  })

  it("429 with Retry-After: waits the server's delay, retries and succeeds", async () => {
    server.enqueue({ kind: "json", status: 429, headers: { "retry-after": "1" }, body: { error: { message: "slow down" } } })
    const { effect, sleeps } = recordingSleeps(model({ backoffBaseMs: 1, backoffMaxMs: 5_000 }).chat(hello))
    const response = await run(effect)
    expect(response.text).toBe("echo: hello")
    expect(server.requests).toHaveLength(2)
    expect(sleeps).toContain(1_000)
  })

  it("429 with no retries left → RateLimited carrying retryAfter", async () => {
    server.enqueue({ kind: "json", status: 429, headers: { "retry-after": "7" }, body: { error: { message: "slow down" } } })
    const error = await failure(model({ maxRetries: 0 }).chat(hello))
    expect(error.reason).toBe("RateLimited")
    expect(error.retryAfter).toBe(7)
    expect(server.requests).toHaveLength(1)
  })

  it("500 then success: retried", async () => {
    server.enqueue({ kind: "json", status: 500, body: { error: { message: "boom" } } })
    const response = await run(model().chat(hello))
    expect(response.text).toBe("echo: hello")
    expect(server.requests).toHaveLength(2)
  })

  it("persistent 503 → Server after maxRetries + 1 attempts; 400 → BadRequest, not retried", async () => {
    for (let i = 0; i < 3; i++) server.enqueue({ kind: "json", status: 503, body: { error: { message: "overloaded" } } })
    const error = await failure(model({ maxRetries: 2 }).chat(hello))
    expect(error.reason).toBe("Server")
    expect(error.status).toBe(503)
    expect(server.requests).toHaveLength(3)

    server.reset()
    server.enqueue({ kind: "json", status: 400, body: { error: { message: "bad model" } } })
    const bad = await failure(model().chat(hello))
    expect(bad.reason).toBe("BadRequest")
    expect(bad.message).toContain("bad model")
    expect(server.requests).toHaveLength(1)
  })

  it("malformed JSON → BadResponse, not retried", async () => {
    server.enqueue({ kind: "raw", body: '{"id": "x", "choices": [' })
    const error = await failure(model().chat(hello))
    expect(error.reason).toBe("BadResponse")
    expect(server.requests).toHaveLength(1)
  })

  it("a JSON body that is not a completion → BadResponse", async () => {
    server.enqueue({ kind: "json", body: { hello: "world" } })
    const error = await failure(model().chat(hello))
    expect(error.reason).toBe("BadResponse")
  })

  it("malformed SSE chunk → BadResponse after the good chunks", async () => {
    const frames = textFrames(["ok"])
    server.enqueue({ kind: "sse", frames: [frames[0]!, frames[1]!, "data: {not json\n\n", done] })
    const { chunks, error } = await streamFailure(model().stream(hello))
    expect(error.reason).toBe("BadResponse")
    expect(textOf(chunks)).toBe("ok")
  })

  it("body cut off mid-stream → BadResponse", async () => {
    const frames = textFrames(["partial ", "answer"])
    server.enqueue({ kind: "sse", frames: frames.slice(0, 2), end: "destroy" })
    const { chunks, error } = await streamFailure(model().stream(hello))
    expect(error.reason).toBe("BadResponse")
    expect(textOf(chunks)).toBe("partial ")
    expect(chunks.some((c) => c._tag === "Finish")).toBe(false)
  })

  it("a stream that ends before finish_reason → BadResponse", async () => {
    server.enqueue({ kind: "sse", frames: textFrames(["a", "b"]).slice(0, 3) })
    const { error } = await streamFailure(model().stream(hello))
    expect(error.reason).toBe("BadResponse")
    expect(error.message).toContain("ended before")
  })

  it("a JSON body cut off → BadResponse", async () => {
    server.enqueue({ kind: "truncated", body: JSON.stringify(completion({ text: "long answer" })) })
    const error = await failure(model().chat(hello))
    expect(error.reason).toBe("BadResponse")
  })

  it("a server that never answers → Timeout, not retried", async () => {
    const error = await failure(model({ timeoutMs: 150 }).chat({ messages: [{ role: "user", content: "__hang__" }] }))
    expect(error.reason).toBe("Timeout")
    expect(server.requests).toHaveLength(1)
    await server.waitForEarlyCloses(1)
  })

  it("a stream that stalls between chunks → Timeout", async () => {
    server.enqueue({ kind: "sse", frames: textFrames(["first"]).slice(0, 2), end: "hang" })
    const { chunks, error } = await streamFailure(model({ timeoutMs: 200 }).stream(hello))
    expect(textOf(chunks)).toBe("first")
    expect(error.reason).toBe("Timeout")
    await server.waitForEarlyCloses(1)
  })

  it("cancellation: interrupting chat aborts the HTTP request", async () => {
    const exit = await interruptWhen(model().chat({ messages: [{ role: "user", content: "__hang__" }] }), () => server.waitForRequests(1))
    expect(isInterrupted(exit)).toBe(true)
    await server.waitForEarlyCloses(1)
  })

  it("cancellation: interrupting a stream mid-way closes the socket", async () => {
    server.enqueue({ kind: "sse", frames: textFrames(["one "]).slice(0, 2), end: "hang" })
    const received: Array<string> = []
    let gotFirst!: () => void
    const first = new Promise<void>((resolve) => (gotFirst = resolve))
    const exit = await interruptWhen(
      Stream.runForEach(model().stream(hello), (chunk) =>
        Effect.sync(() => {
          if (chunk._tag === "TextDelta") received.push(chunk.text)
          gotFirst()
        })
      ),
      () => first
    )
    expect(isInterrupted(exit)).toBe(true)
    expect(received).toEqual(["one "])
    await server.waitForEarlyCloses(1)
  })

  it("connection refused → Network, retried", async () => {
    const probe = net.createServer()
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve))
    const port = (probe.address() as net.AddressInfo).port
    await new Promise<void>((resolve) => probe.close(() => resolve()))
    const closed = OpenAI.make({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      apiKey: key,
      model: "m",
      ...fast,
      backoffBaseMs: 50,
      backoffMaxMs: 1_000,
      maxRetries: 2
    })
    const { effect, sleeps } = recordingSleeps(closed.chat(hello))
    const error = await failure(effect)
    expect(error.reason).toBe("Network")
    expect(error.message).toContain("ECONNREFUSED")
    // three attempts, so two backoff delays: 50 ms + 100 ms
    expect(sleeps.filter((ms) => ms !== fast.timeoutMs)).toEqual([50, 100])
  })

  it("a custom endpoint without any model → BadRequest before sending", async () => {
    const error = await failure(OpenAI.make({ baseUrl: `${server.url}/v1`, ...fast }).chat(hello))
    expect(error.reason).toBe("BadRequest")
    expect(error.message).toContain("no model")
    expect(server.requests).toHaveLength(0)
  })

  it("a missing key fails every call with Auth naming the variable, without a request", async () => {
    const noKey = OpenAI.make({ preset: "deepseek", baseUrl: `${server.url}/v1`, env: {}, ...fast })
    expect(noKey.name).toBe("deepseek")
    const error = await failure(noKey.chat(hello))
    expect(error.reason).toBe("Auth")
    expect(error.message).toContain("DEEPSEEK_API_KEY")
    const streamed = await streamFailure(noKey.stream(hello))
    expect(streamed.error.reason).toBe("Auth")
    expect(server.requests).toHaveLength(0)
  })

  it("presets point at the documented endpoints and key variables", () => {
    expect(OpenAI.presets.openai).toMatchObject({ baseUrl: "https://api.openai.com/v1", apiKeyEnv: "OPENAI_API_KEY" })
    expect(OpenAI.presets.ollama.baseUrl).toBe("http://localhost:11434/v1")
    expect(OpenAI.presets.ollama.apiKeyEnv).toBeUndefined()
    expect(OpenAI.presets.deepseek).toMatchObject({ baseUrl: "https://api.deepseek.com/v1", apiKeyEnv: "DEEPSEEK_API_KEY" })
    expect(OpenAI.presets.moonshot).toMatchObject({ baseUrl: "https://api.moonshot.cn/v1", apiKeyEnv: "MOONSHOT_API_KEY" })
    expect(OpenAI.presets.zhipu).toMatchObject({ baseUrl: "https://open.bigmodel.cn/api/paas/v4", apiKeyEnv: "ZHIPU_API_KEY" })
    expect(OpenAI.presets.dashscope).toMatchObject({
      baseUrl: "https://dashscope.aliyuncs.com/compatible-mode/v1",
      apiKeyEnv: "DASHSCOPE_API_KEY"
    })
  })

  it("reads the key from the preset's environment variable", async () => {
    const fromEnv = OpenAI.make({ preset: "moonshot", baseUrl: `${server.url}/v1`, env: { MOONSHOT_API_KEY: "moon-key-123" }, ...fast })
    await run(fromEnv.chat(hello))
    expect(server.requests[0]!.headers.authorization).toBe("Bearer moon-key-123")
    expect(server.requests[0]!.body.model).toBe("moonshot-v1-8k")
  })

  it("Providers.fromSpec builds OpenAI-compatible models", async () => {
    const ollama = Providers.fromSpec("ollama:llama3", { baseUrl: `${server.url}/v1`, env: {}, ...fast })
    expect(ollama.name).toBe("ollama")
    expect((await run(ollama.chat(hello))).text).toBe("echo: hello")
    expect(server.requests[0]!.body.model).toBe("llama3")
    const gpt = Providers.fromSpec("openai:gpt-4o-mini", { baseUrl: `${server.url}/v1`, env: { OPENAI_API_KEY: key }, ...fast })
    await run(gpt.chat(hello))
    expect(server.requests[1]!.body.model).toBe("gpt-4o-mini")
    expect(server.requests[1]!.headers.authorization).toBe(`Bearer ${key}`)
  })

  it("layer provides the LanguageModel service", async () => {
    const program = LanguageModel.LanguageModel.use((m) => m.chat(hello))
    const response = await Effect.runPromise(program.pipe(Effect.provide(OpenAI.layer({ baseUrl: `${server.url}/v1`, model: "m", ...fast }))))
    expect(response.text).toBe("echo: hello")
  })
})

let conformanceCloses = 0
languageModelConformance("OpenAI on a local Chat Completions server", () => model(), {
  request: { messages: [{ role: "user", content: "conformance" }], temperature: 0 },
  expectedText: "echo: conformance",
  slowRequest: { messages: [{ role: "user", content: "__hang__" }] },
  afterInterrupt: async () => {
    conformanceCloses++
    await server.waitForEarlyCloses(conformanceCloses)
  },
  failing: { make: () => model({ apiKey: "" as string, env: {} }), reason: "Auth" }
})
