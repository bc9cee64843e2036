/**
 * The Ollama provider over the native chat API (`POST /api/chat`), against a local server that
 * speaks its wire format: JSON answers and NDJSON streams, tools with object arguments, `format`
 * for structured output, errors, cancellation, and a ReAct agent calling tools natively.
 */
import * as net from "node:net"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as z from "zod"
import { createRuntime, Ollama, Providers, Term, Tools } from "lambdagent"
import { fromConfig } from "lambdagent/yaml"
import { languageModelConformance } from "../../src/testing/LanguageModelKit.ts"
import { collect, failure, fast, interruptWhen, isInterrupted, run, streamFailure, textOf } from "./helpers.ts"
import type { TestServer } from "./servers/harness.ts"
import { answer, lines, startOllamaServer } from "./servers/ollama.ts"

let server: TestServer
beforeAll(async () => {
  server = await startOllamaServer()
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => server.reset())

const model = (options: Ollama.Options = {}) => Ollama.make({ baseUrl: server.url, ...fast, ...options })
const hello = { messages: [{ role: "user" as const, content: "hello" }] }

describe("Ollama provider (native API)", () => {
  it("chat: posts to /api/chat with the options in `options`, and maps text, usage, model and done_reason", async () => {
    const response = await run(
      model({ model: "llama-default", keepAlive: "10m", options: { num_ctx: 8192 } }).chat({
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hello" }
        ],
        temperature: 0,
        maxTokens: 64,
        topP: 0.5,
        stop: ["END"]
      })
    )
    expect(response).toEqual({ text: "echo: hello", usage: { inputTokens: 13, outputTokens: 7 }, model: "llama-test", finishReason: "stop" })
    const request = server.requests[0]!
    expect([request.method, request.url]).toEqual(["POST", "/api/chat"])
    expect(request.body).toEqual({
      model: "llama-default",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hello" }
      ],
      stream: false,
      options: { num_ctx: 8192, temperature: 0, top_p: 0.5, num_predict: 64, stop: ["END"] },
      keep_alive: "10m"
    })
  })

  it("stream: reads NDJSON lines into text deltas and a Finish with usage and the finish reason", async () => {
    server.enqueue({ kind: "ndjson", lines: lines(["Hel", "lo ", "there"], { doneReason: "length" }) })
    const chunks = await collect(model().stream(hello))
    expect(textOf(chunks)).toBe("Hello there")
    expect(chunks.at(-1)).toEqual({ _tag: "Finish", usage: { inputTokens: 13, outputTokens: 7 }, model: "llama-test", finishReason: "length" })
    expect(server.requests[0]!.body.stream).toBe(true)
  })

  it("tool calls: sends function tools, reads calls with object arguments, and numbers calls without ids", async () => {
    server.enqueue({
      kind: "json",
      body: answer({
        toolCalls: [
          { name: "add", arguments: { a: 1, b: 2 } },
          { name: "add", arguments: { a: 3, b: 4 }, id: "call_from_server" }
        ]
      })
    })
    const parameters = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] }
    const response = await run(model().chat({ ...hello, tools: [{ name: "add", description: "Add.", parameters }], toolChoice: "auto" }))
    expect(response.toolCalls).toEqual([
      { id: "call_0", name: "add", arguments: '{"a":1,"b":2}' },
      { id: "call_from_server", name: "add", arguments: '{"a":3,"b":4}' }
    ])
    expect(server.requests[0]!.body.tools).toEqual([{ type: "function", function: { name: "add", description: "Add.", parameters } }])
    // the native API has no tool choice: `none` sends no tools at all
    await run(model().chat({ ...hello, tools: [{ name: "add", description: "Add.", parameters }], toolChoice: "none" }))
    expect(server.requests[1]!.body.tools).toBeUndefined()
  })

  it("sends a call's arguments back as an object and its result with the tool's name", async () => {
    await run(
      model().chat({
        messages: [
          { role: "user", content: "1+2?" },
          { role: "assistant", content: "", toolCalls: [{ id: "call_0", name: "add", arguments: '{"a":1,"b":2}' }] },
          { role: "tool", toolCallId: "call_0", content: "3" }
        ]
      })
    )
    expect(server.requests[0]!.body.messages.slice(1)).toEqual([
      { role: "assistant", content: "", tool_calls: [{ function: { name: "add", arguments: { a: 1, b: 2 } } }] },
      { role: "tool", content: "3", tool_name: "add" }
    ])
  })

  it("streams a tool call, whole in one line", async () => {
    server.enqueue({ kind: "ndjson", lines: lines([], { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] }) })
    const chunks = await collect(model().stream(hello))
    expect(chunks).toEqual([
      { _tag: "ToolCallDelta", index: 0, id: "call_0", name: "add", arguments: '{"a":1,"b":2}' },
      { _tag: "Finish", usage: { inputTokens: 13, outputTokens: 7 }, model: "llama-test", finishReason: "stop" }
    ])
  })

  it("sends a response format's schema as `format`", async () => {
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
    server.enqueue({ kind: "json", body: answer({ text: '{"city":"Paris"}' }) })
    const runtime = createRuntime({ model: model() })
    const out = await runtime.run(Term.llm({ system: "Where?", output: { schema } }), "the Louvre")
    expect(out.value).toBe('{"city":"Paris"}')
    expect(server.requests[0]!.body.format).toEqual(schema)
    await runtime.close()
  })

  it("a missing model is BadRequest with the server's message; a 500 is Server, retried", async () => {
    server.enqueue({ kind: "json", status: 404, body: { error: "model 'nope' not found" } })
    const missing = await failure(model({ model: "nope" }).chat(hello))
    expect(missing.reason).toBe("BadRequest")
    expect(missing.message).toContain("model 'nope' not found")
    server.reset()
    server.enqueue({ kind: "json", status: 500, body: { error: "out of memory" } }, { kind: "json", body: answer({ text: "recovered" }) })
    expect((await run(model().chat(hello))).text).toBe("recovered")
    expect(server.requests).toHaveLength(2)
  })

  it("a stream cut before `done`, a malformed line and an error line are typed errors", async () => {
    server.enqueue({ kind: "ndjson", lines: lines(["partial"]).slice(0, 1), end: "destroy" })
    const cut = await streamFailure(model().stream(hello))
    expect(cut.chunks).toEqual([{ _tag: "TextDelta", text: "partial" }])
    expect(cut.error.reason).toBe("BadResponse")
    server.enqueue({ kind: "raw", body: '{"message":{"content":"a"},"done":false}\nnot json\n' })
    expect((await streamFailure(model().stream(hello))).error.reason).toBe("BadResponse")
    server.enqueue({ kind: "ndjson", lines: [{ error: "model runner crashed" }] })
    const crashed = await streamFailure(model({ maxRetries: 0 }).stream(hello))
    expect(crashed.error.reason).toBe("Server")
    expect(crashed.error.message).toContain("model runner crashed")
  })

  it("connection refused → Network", async () => {
    const probe = net.createServer()
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve))
    const port = (probe.address() as net.AddressInfo).port
    await new Promise<void>((resolve) => probe.close(() => resolve()))
    const error = await failure(Ollama.make({ baseUrl: `http://127.0.0.1:${port}`, ...fast, maxRetries: 0 }).chat(hello))
    expect(error.reason).toBe("Network")
    expect(error.message).toContain("ECONNREFUSED")
  })

  it("interrupting a call closes the connection", async () => {
    const exit = await interruptWhen(model().chat({ messages: [{ role: "user", content: "__hang__" }] }), () => server.waitForRequests(1))
    expect(isInterrupted(exit)).toBe(true)
    await server.waitForEarlyCloses(1)
  })

  it("Providers.fromSpec builds it as ollama-native:<model>", async () => {
    const built = Providers.fromSpec("ollama-native:qwen-test", { baseUrl: server.url, ...fast })
    expect(built.name).toBe("ollama-native")
    await run(built.chat(hello))
    expect(server.requests[0]!.body.model).toBe("qwen-test")
  })
})

describe("a ReAct agent with native tool calling over Ollama", () => {
  const add = Tools.define({ name: "add", description: "Add two numbers.", input: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => a + b })

  it("runs the YAML agent: tools sent, calls made, results sent back with the tool's name", async () => {
    server.enqueue(
      { kind: "json", body: answer({ toolCalls: [{ name: "add", arguments: { a: 40, b: 2 } }] }) },
      { kind: "json", body: answer({ text: "It is 42." }) }
    )
    const term = fromConfig(`
type: react
systemPrompt: Compute with the tools.
model: {provider: ollama-native, name: llama-test, baseUrl: "${server.url}"}
react: {maxSteps: 3, toolCalling: native}
mcp: {localTools: [add, terminate]}
`)
    const runtime = createRuntime({ tools: [add] })
    const out = await runtime.run(term, "40 + 2?")
    expect(out.value).toBe("It is 42.")
    expect(out.stats.toolCalls).toBe(1)
    expect(server.requests[0]!.body.tools.map((t: any) => t.function.name)).toEqual(["add", "terminate"])
    expect(server.requests[1]!.body.messages.slice(-2)).toEqual([
      { role: "assistant", content: "", tool_calls: [{ function: { name: "add", arguments: { a: 40, b: 2 } } }] },
      { role: "tool", content: "42", tool_name: "add" }
    ])
    await runtime.close()
  })

  it("streams the run: tokens and tool-call deltas arrive as NDJSON lines", async () => {
    server.enqueue(
      { kind: "ndjson", lines: lines([], { toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] }) },
      { kind: "ndjson", lines: lines(["Three", "."]) }
    )
    const runtime = createRuntime({ model: model(), tools: [add] })
    const agent = Term.react({ think: Term.llm({ system: "Use the tools." }), tools: ["add", "terminate"], maxSteps: 3, toolCalling: "native" })
    const tokens: Array<string> = []
    let value: unknown
    for await (const event of runtime.stream(agent, "1 + 2?")) {
      if (event.type === "token") tokens.push(event.text)
      if (event.type === "result") value = event.output.value
    }
    expect(tokens).toEqual(["Three", "."])
    expect(value).toBe("Three.")
    await runtime.close()
  })
})

let conformanceCloses = 0
languageModelConformance("Ollama on a local native-API server", () => model(), {
  request: { messages: [{ role: "user", content: "conformance" }], temperature: 0 },
  expectedText: "echo: conformance",
  slowRequest: { messages: [{ role: "user", content: "__hang__" }] },
  afterInterrupt: async () => {
    conformanceCloses++
    await server.waitForEarlyCloses(conformanceCloses)
  }
})
