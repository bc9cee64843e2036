import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { createRuntime, LanguageModel, Providers, Scripted, Term } from "lambdagent"

const thisFile = "Runtime.offline.test.ts"
const openai = Term.llm({ system: "Answer.", model: { provider: "openai", name: "gpt-4o-mini" } })

beforeEach(() => {
  vi.stubEnv("OPENAI_API_KEY", "")
  vi.stubEnv("ANTHROPIC_API_KEY", "")
})
afterEach(() => vi.unstubAllEnvs())

describe("Providers.missingKey", () => {
  it("names the variable of a provider that needs a key and has none", () => {
    expect(Providers.missingKey("openai", {})).toBe("OPENAI_API_KEY")
    expect(Providers.missingKey("anthropic", { ANTHROPIC_API_KEY: "" })).toBe("ANTHROPIC_API_KEY")
    expect(Providers.missingKey("deepseek", {})).toBe("DEEPSEEK_API_KEY")
    expect(Providers.missingKey("openai", { OPENAI_API_KEY: "sk-x" })).toBeUndefined()
    expect(Providers.missingKey("ollama", {})).toBeUndefined()
    expect(Providers.missingKey("scripted", {})).toBeUndefined()
  })
})

describe("createRuntime({ offline })", () => {
  it("answers a term's key-less provider on the scripted echo model, announcing it once", async () => {
    const notices: Array<string> = []
    const runtime = createRuntime({ offline: { onNotice: (line) => notices.push(line) } })
    expect((await runtime.run(openai, "first")).value).toBe("first")
    expect((await runtime.run(openai, "second")).value).toBe("second")
    await runtime.close()
    expect(notices).toEqual(["[openai: no OPENAI_API_KEY is set; running on the offline model scripted:echo. For a real model: export OPENAI_API_KEY=….]"])
  })

  it('"scripted" writes the notice to stderr', async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    try {
      const runtime = createRuntime({ offline: "scripted" })
      expect((await runtime.run(openai, "hello")).value).toBe("hello")
      await runtime.close()
      expect(errors.mock.calls).toEqual([
        ["[openai: no OPENAI_API_KEY is set; running on the offline model scripted:echo. For a real model: export OPENAI_API_KEY=….]"]
      ])
    } finally {
      errors.mockRestore()
    }
  })

  it("replaces the runtime's default model when its provider has no key, with the model it is given", async () => {
    const notices: Array<string> = []
    const runtime = createRuntime({
      model: "anthropic:claude-haiku-4-5",
      offline: { model: Scripted.fixed("offline"), onNotice: (line) => notices.push(line) }
    })
    expect((await runtime.run(Term.llm({ system: "Answer." }), "hi")).value).toBe("offline")
    await runtime.close()
    expect(notices).toEqual(["[anthropic: no ANTHROPIC_API_KEY is set; running on the offline model scripted. For a real model: export ANTHROPIC_API_KEY=….]"])
  })

  it("leaves providers that can answer alone: a key set, no key needed, a plugin's provider", async () => {
    vi.stubEnv("OPENAI_API_KEY", "sk-test")
    const notices: Array<string> = []
    const runtime = createRuntime({
      model: "ollama:llama3",
      plugins: [{ name: "mine", providers: { anthropic: () => Scripted.fixed("from the plugin") } }],
      offline: { onNotice: (line) => notices.push(line) }
    })
    const anthropic = Term.llm({ system: "Answer.", model: { provider: "anthropic" } })
    expect((await runtime.run(anthropic, "hi")).value).toBe("from the plugin")
    await runtime.close()
    expect(notices).toEqual([])
  })

  it("without it, a key-less provider's run rejects with ProviderError Auth", async () => {
    const runtime = createRuntime()
    const error = await runtime.run(openai, "hi").catch((e: unknown) => e)
    await runtime.close()
    expect(error).toBeInstanceOf(LanguageModel.ProviderError)
    expect(error).toMatchObject({ reason: "Auth", message: "openai: no API key: set OPENAI_API_KEY" })
  })
})

describe("a run's error", () => {
  /** The first stack frame below the error's message line. */
  const firstFrame = (error: unknown) => ((error as Error).stack ?? "").split("\n").find((line) => line.trimStart().startsWith("at "))

  it("points at the run call that failed, not at createRuntime", async () => {
    const runtime = createRuntime({ model: "openai:gpt-4o-mini" })
    const failingCall = () => runtime.run(Term.llm({ system: "Answer." }), "hi")
    const error = await failingCall().catch((e: unknown) => e)
    await runtime.close()
    expect((error as Error).stack?.split("\n")[0]).toBe("ProviderError: openai: no API key: set OPENAI_API_KEY")
    expect(firstFrame(error)).toMatch(new RegExp(`at failingCall .*${thisFile.replace(/\./g, "\\.")}`))
  })

  it("points at the run call whether the run fails at once or after a wait", async () => {
    // an exhausted script fails the call it cannot answer: the first, or the second after a wait
    const atOnce = createRuntime({ model: Scripted.sequence([]) })
    const later = createRuntime({ model: Scripted.sequence(["one"], { latencyMs: 5 }) })
    const twoCalls = Term.compose([Term.llm({ system: "Answer." }), Term.llm({ system: "Answer." })])
    const failsAtOnce = () => atOnce.run(Term.llm({ system: "Answer." }), "hi")
    const failsLater = () => later.run(twoCalls, "hi")
    const errors = [await failsAtOnce().catch((e: unknown) => e), await failsLater().catch((e: unknown) => e)]
    await Promise.all([atOnce.close(), later.close()])
    for (const error of errors) expect(error).toBeInstanceOf(LanguageModel.ProviderError)
    expect(firstFrame(errors[0])).toMatch(new RegExp(`at failsAtOnce .*${thisFile.replace(/\./g, "\\.")}`))
    expect(firstFrame(errors[1])).toMatch(new RegExp(`at failsLater .*${thisFile.replace(/\./g, "\\.")}`))
  })

  it("of a stream points at the stream call", async () => {
    const runtime = createRuntime()
    const streamedCall = async () => {
      for await (const _ of runtime.stream(openai, "hi")) {
        // events until the failure
      }
    }
    const error = await streamedCall().catch((e: unknown) => e)
    await runtime.close()
    expect(firstFrame(error)).toMatch(new RegExp(`at streamedCall .*${thisFile.replace(/\./g, "\\.")}`))
  })

  it("is the run's own: two failed runs do not share an error", async () => {
    const runtime = createRuntime()
    const [a, b] = await Promise.all([runtime.run(openai, "a").catch((e: unknown) => e), runtime.run(openai, "b").catch((e: unknown) => e)])
    await runtime.close()
    expect(a).toBeInstanceOf(LanguageModel.ProviderError)
    expect(a).not.toBe(b)
  })
})
