/**
 * Structured output over the providers' real wire formats, against the local fake OpenAI and
 * Anthropic servers: the schema on the wire (OpenAI's `response_format` json_schema or json_object,
 * Anthropic's forced tool), a valid answer, an invalid answer repaired, repair exhausted, and a
 * streamed answer.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as z from "zod"
import { Anthropic, createRuntime, OpenAI, type Runtime, Term } from "lambdagent"
import { fromConfig } from "lambdagent/yaml"
import { withEnv } from "../fixtures/env.ts"
import { fast } from "./helpers.ts"
import { message, startAnthropicServer, toolUseEvents } from "./servers/anthropic.ts"
import type { TestServer } from "./servers/harness.ts"
import { completion, startOpenAIServer, textFrames } from "./servers/openai.ts"

const Person = z.object({ name: z.string(), age: z.number().int() })
const personSchema = {
  type: "object",
  properties: { name: { type: "string" }, age: { type: "integer" } },
  required: ["name", "age"],
  additionalProperties: false
}
const extract = Term.llm({ system: "Extract the person.", output: { name: "person", schema: Person } })

let openai: TestServer
let anthropic: TestServer
beforeAll(async () => {
  ;[openai, anthropic] = await Promise.all([startOpenAIServer(), startAnthropicServer()])
})
afterAll(async () => {
  await Promise.all([openai.close(), anthropic.close()])
})
beforeEach(() => {
  openai.reset()
  anthropic.reset()
})

const openaiRuntime = (options: Partial<OpenAI.Options> = {}) =>
  createRuntime({ model: OpenAI.make({ baseUrl: `${openai.url}/v1`, apiKey: "sk-test", model: "gpt-test", ...fast, ...options }) })
const anthropicRuntime = () => createRuntime({ model: Anthropic.make({ baseUrl: anthropic.url, apiKey: "sk-ant-test", model: "claude-test", ...fast }) })

/** The tokens and the result of a streamed run. */
const streamed = async (runtime: Runtime.Runtime, term: Term.Term, input: string) => {
  const tokens: Array<string> = []
  for await (const event of runtime.stream(term, input)) {
    if (event.type === "token") tokens.push(event.text)
    if (event.type === "result") return { tokens, output: event.output }
  }
  throw new Error("the stream ended without a result")
}

describe("structured output over the OpenAI wire format", () => {
  it("sends the schema as response_format json_schema, strict, and answers the JSON value", async () => {
    openai.enqueue({ kind: "json", body: completion({ text: '{"name":"Ada","age":36}' }) })
    const result = await openaiRuntime().run(extract, "Ada Lovelace, 36")
    expect(result.value).toBe('{"name":"Ada","age":36}')
    const body = openai.requests[0]!.body
    expect(body.response_format).toEqual({ type: "json_schema", json_schema: { name: "person", schema: personSchema, strict: true } })
    expect(body.messages).toEqual([
      { role: "system", content: "Extract the person." },
      { role: "user", content: "Ada Lovelace, 36" }
    ])
  })

  it("is not strict for a schema strict mode refuses (an optional property)", async () => {
    openai.enqueue({ kind: "json", body: completion({ text: '{"name":"Ada"}' }) })
    const loose = Term.llm({ system: "s", output: { schema: z.object({ name: z.string(), age: z.number().optional() }) } })
    await openaiRuntime().run(loose, "Ada")
    expect(openai.requests[0]!.body.response_format.json_schema).toMatchObject({ name: "output", strict: false })
  })

  it("sends an invalid answer back with what was wrong, and takes the repaired one", async () => {
    openai.enqueue(
      { kind: "json", body: completion({ text: '{"name":"Ada","age":"thirty-six"}' }) },
      { kind: "json", body: completion({ text: '{"name":"Ada","age":36}' }) }
    )
    const result = await openaiRuntime().run(extract, "Ada, 36")
    expect(result.value).toBe('{"name":"Ada","age":36}')
    expect(result.stats.llmCalls).toBe(2)
    const second = openai.requests[1]!.body
    expect(second.response_format.type).toBe("json_schema")
    expect(second.messages.slice(1)).toEqual([
      { role: "user", content: "Ada, 36" },
      { role: "assistant", content: '{"name":"Ada","age":"thirty-six"}' },
      {
        role: "user",
        content:
          "Your answer does not match the required JSON Schema:\n$.age: expected number, received string\nAnswer again with only the corrected JSON value."
      }
    ])
  })

  it("fails with a ValidationError naming the violation when the repairs run out", async () => {
    for (let i = 0; i < 3; i++) openai.enqueue({ kind: "json", body: completion({ text: '{"name":"Ada"}' }) })
    await expect(openaiRuntime().run(extract, "Ada")).rejects.toMatchObject({
      _tag: "EvalError",
      kind: "ValidationError",
      message: 'the answer does not match the output schema "person" after 3 attempts: $.age: missing (expected number)'
    })
    expect(openai.requests).toHaveLength(3)
  })

  it("asks a JSON-mode endpoint (DeepSeek) for json_object, with the schema in a system message", async () => {
    openai.enqueue({ kind: "json", body: completion({ text: '{"name":"Ada","age":36}' }) })
    const runtime = openaiRuntime({ preset: "deepseek", apiKey: "sk-deepseek" })
    expect((await runtime.run(extract, "Ada, 36")).value).toBe('{"name":"Ada","age":36}')
    const body = openai.requests[0]!.body
    expect(body.response_format).toEqual({ type: "json_object" })
    expect(body.messages[0].role).toBe("system")
    expect(body.messages[0].content).toContain("Answer with one JSON value that matches this JSON Schema")
    expect(body.messages[0].content).toContain(JSON.stringify(personSchema.required))
    expect(body.messages[1]).toEqual({ role: "system", content: "Extract the person." })
  })

  it("streams the answer's tokens and checks the whole answer", async () => {
    openai.enqueue({ kind: "sse", frames: textFrames(['{"name":', '"Ada",', '"age":36}']) })
    const { tokens, output } = await streamed(openaiRuntime(), extract, "Ada, 36")
    expect(tokens).toEqual(['{"name":', '"Ada",', '"age":36}'])
    expect(output.value).toBe('{"name":"Ada","age":36}')
    expect(openai.requests[0]!.body.response_format.type).toBe("json_schema")
  })

  it("resolves generateObject with the typed object", async () => {
    openai.enqueue({ kind: "json", body: completion({ text: '{"name":"Ada","age":36}' }) })
    const runtime = openaiRuntime()
    const { object } = await runtime.generateObject({ schema: Person, prompt: "Ada, 36", name: "person" })
    expect(object).toEqual({ name: "Ada", age: 36 })
    expect(openai.requests[0]!.body.response_format.json_schema.name).toBe("person")
    await runtime.close()
  })
})

describe("structured output from a YAML agent", () => {
  const yaml = (provider: string, url: string) => `
type: simple
systemPrompt: Extract the person.
model: {provider: ${provider}, name: test-model, baseUrl: "${url}"}
output:
  name: person
  schema:
    type: object
    properties:
      name: {type: string}
      age: {type: integer}
    required: [name, age]
    additionalProperties: false
`
  withEnv({ OPENAI_API_KEY: "sk-test-yaml", ANTHROPIC_API_KEY: "sk-ant-test-yaml" })

  it("answers the value over OpenAI, and `get` takes it apart", async () => {
    openai.enqueue({ kind: "json", body: completion({ text: '{"name":"Ada","age":36}' }) })
    const agent = fromConfig(yaml("openai", `${openai.url}/v1`))
    const term = Term.compose([agent, Term.lam("p", Term.get(Term.var("p"), Term.lit("age")))])
    expect((await createRuntime().run(term, "Ada, 36")).value).toBe(36)
    expect(openai.requests[0]!.body.response_format.json_schema).toEqual({ name: "person", schema: personSchema, strict: true })
  })

  it("answers the value over Anthropic", async () => {
    anthropic.enqueue({ kind: "json", body: message({ toolUses: [{ id: "toolu_1", name: "person", input: { name: "Ada", age: 36 } }] }) })
    const output = await createRuntime().run(fromConfig(yaml("anthropic", anthropic.url)), "Ada, 36")
    expect(output.value).toBe('{"name":"Ada","age":36}')
    expect(anthropic.requests[0]!.body.tool_choice).toEqual({ type: "tool", name: "person" })
  })
})

describe("structured output over the Anthropic wire format (a forced tool)", () => {
  it("forces a tool whose input schema is the output schema, and answers its input", async () => {
    anthropic.enqueue({ kind: "json", body: message({ toolUses: [{ id: "toolu_1", name: "person", input: { name: "Ada", age: 36 } }] }) })
    const result = await anthropicRuntime().run(extract, "Ada Lovelace, 36")
    expect(result.value).toBe('{"name":"Ada","age":36}')
    const body = anthropic.requests[0]!.body
    expect(body.tools).toEqual([{ name: "person", description: "Give your answer as this tool's input.", input_schema: personSchema }])
    expect(body.tool_choice).toEqual({ type: "tool", name: "person" })
    expect(body.system).toBe("Extract the person.")
  })

  it("wraps a schema that is not an object as the tool's value property", async () => {
    const tags = Term.llm({ system: "Tags.", output: { name: "tags", schema: z.array(z.string()) } })
    anthropic.enqueue({ kind: "json", body: message({ toolUses: [{ id: "toolu_1", name: "tags", input: { value: ["a", "b"] } }] }) })
    const result = await anthropicRuntime().run(tags, "a b")
    expect(result.result).toEqual(["a", "b"])
    expect(anthropic.requests[0]!.body.tools[0].input_schema).toEqual({
      type: "object",
      properties: { value: { type: "array", items: { type: "string" } } },
      required: ["value"]
    })
  })

  it("repairs an answer that does not match: the answer goes back as the assistant's text", async () => {
    anthropic.enqueue(
      { kind: "json", body: message({ toolUses: [{ id: "toolu_1", name: "person", input: { name: "Ada" } }] }) },
      { kind: "json", body: message({ toolUses: [{ id: "toolu_2", name: "person", input: { name: "Ada", age: 36 } }] }) }
    )
    const result = await anthropicRuntime().run(extract, "Ada, 36")
    expect(result.value).toBe('{"name":"Ada","age":36}')
    expect(anthropic.requests[1]!.body.messages).toEqual([
      { role: "user", content: "Ada, 36" },
      { role: "assistant", content: '{"name":"Ada"}' },
      {
        role: "user",
        content: "Your answer does not match the required JSON Schema:\n$.age: missing (expected number)\nAnswer again with only the corrected JSON value."
      }
    ])
  })

  it("streams the forced tool's input as the answer's tokens", async () => {
    anthropic.enqueue({ kind: "sse", frames: toolUseEvents("", { id: "toolu_1", name: "person" }, ['{"name": "Ada",', ' "age": 36}']) })
    const { tokens, output } = await streamed(anthropicRuntime(), extract, "Ada, 36")
    expect(tokens).toEqual(['{"name": "Ada",', ' "age": 36}'])
    expect(output.value).toBe('{"name":"Ada","age":36}')
  })

  it("streams a wrapped answer unwrapped, once its block is complete", async () => {
    const tags = Term.llm({ system: "Tags.", output: { name: "tags", schema: z.array(z.string()) } })
    anthropic.enqueue({ kind: "sse", frames: toolUseEvents("", { id: "toolu_1", name: "tags" }, ['{"value": ["a",', ' "b"]}']) })
    const { tokens, output } = await streamed(anthropicRuntime(), tags, "a b")
    expect(tokens).toEqual(['["a","b"]'])
    expect(output.result).toEqual(["a", "b"])
  })
})
