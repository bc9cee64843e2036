import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import * as Lambdagent from "lambdagent"
import { Providers } from "lambdagent"
import { failure, recordingSleeps, run } from "./helpers.ts"

const hello = { messages: [{ role: "user" as const, content: "hello" }] }

describe("Providers.fromSpec", () => {
  it("missing keys for cloud providers fail the first call with Auth naming the variable", async () => {
    const cases: Array<[string, string]> = [
      ["openai:gpt-4o-mini", "OPENAI_API_KEY"],
      ["deepseek:deepseek-chat", "DEEPSEEK_API_KEY"],
      ["moonshot", "MOONSHOT_API_KEY"],
      ["zhipu:glm-4", "ZHIPU_API_KEY"],
      ["dashscope:qwen-plus", "DASHSCOPE_API_KEY"],
      ["anthropic:claude-sonnet-5-5", "ANTHROPIC_API_KEY"]
    ]
    for (const [spec, variable] of cases) {
      const model = Providers.fromSpec(spec, { env: {} }) // does not throw
      expect(model.name).toBe(spec.split(":")[0])
      const error = await failure(model.chat(hello))
      expect(error.reason, spec).toBe("Auth")
      expect(error.message, spec).toContain(variable)
    }
  })

  it("names each provider", () => {
    expect(Providers.fromSpec("ollama:llama3").name).toBe("ollama")
    expect(Providers.fromSpec("claude-code").name).toBe("claude-code")
    expect(Providers.fromSpec("scripted:echo").name).toBe("scripted")
    expect(Providers.fromSpec("openai-compatible:m", { baseUrl: "http://127.0.0.1:9/v1" }).name).toBe("openai-compatible")
  })

  it("scripted specs work end to end, with optional latency", async () => {
    expect((await run(Providers.fromSpec("scripted:fixed:Hello").chat(hello))).text).toBe("Hello")
    expect((await run(Providers.fromSpec("scripted:echo").chat(hello))).text).toBe("hello")
    const seq = Providers.fromSpec('scripted:sequence:["a","b"]')
    expect((await run(seq.chat(hello))).text).toBe("a")
    expect((await run(seq.chat(hello))).text).toBe("b")
    const { effect, sleeps } = recordingSleeps(Providers.fromSpec("scripted:echo", { latencyMs: 50 }).chat(hello))
    await run(effect)
    expect(sleeps).toEqual([50])
  })

  it("throws SpecError for unknown providers and malformed specs", () => {
    expect(() => Providers.fromSpec("nope:model")).toThrow(Providers.SpecError)
    expect(() => Providers.fromSpec("nope:model")).toThrow(/openai, ollama/)
    expect(() => Providers.fromSpec("openai-compatible:m")).toThrow(/baseUrl/)
    expect(() => Providers.fromSpec("scripted:sequence:not-json")).toThrow(Providers.SpecError)
    expect(Providers.providerNames).toContain("claude-code")
  })
})

describe("public barrel", () => {
  it("exports each provider module as a namespace", () => {
    expect(typeof Lambdagent.OpenAI.make).toBe("function")
    expect(typeof Lambdagent.OpenAI.layer).toBe("function")
    expect(typeof Lambdagent.Anthropic.make).toBe("function")
    expect(typeof Lambdagent.ClaudeCode.make).toBe("function")
    expect(typeof Lambdagent.Scripted.parseSpec).toBe("function")
    expect(typeof Lambdagent.Providers.fromSpec).toBe("function")
    const model = Lambdagent.Providers.fromSpec("scripted:fixed:ok")
    expect(Effect.runSync(model.chat(hello)).text).toBe("ok")
  })
})
