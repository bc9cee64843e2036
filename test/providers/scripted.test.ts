import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { LanguageModel, Providers, Scripted } from "lambdagent"
import { languageModelConformance } from "../../src/testing/LanguageModelKit.ts"

const ask = (content: string): LanguageModel.ChatRequest => ({ messages: [{ role: "user", content }] })

describe("Scripted model", () => {
  it.effect("sequence: replies in order, then fails with Unavailable", () =>
    Effect.gen(function* () {
      const model = Scripted.sequence(["one", "two"])
      assert.strictEqual((yield* model.chat(ask("a"))).text, "one")
      assert.strictEqual((yield* model.chat(ask("b"))).text, "two")
      const error = yield* Effect.flip(model.chat(ask("c")))
      assert.strictEqual(error._tag, "ProviderError")
      assert.strictEqual(error.reason, "Unavailable")
      assert.include(error.message, "exhausted")
    })
  )

  it.effect("plan: replies in order, each quoting the last tool result; then fails with Unavailable", () =>
    Effect.gen(function* () {
      const model = Scripted.plan(['{"tool": "run", "args": {"add": [19, 23]}}', '{"tool": "terminate", "args": "{{observation}}"}'])
      assert.strictEqual((yield* model.chat(ask("What is 19 + 23?"))).text, '{"tool": "run", "args": {"add": [19, 23]}}')
      const state = "[Previous Context]\nWhat is 19 + 23?\n\n[Step 1]\nThought: …\nAction: run\nObservation: 42"
      assert.strictEqual((yield* model.chat(ask(state))).text, '{"tool": "terminate", "args": "42"}')
      const error = yield* Effect.flip(model.chat(ask("again")))
      assert.strictEqual(error.reason, "Unavailable")
      assert.strictEqual(error.message, "scripted: the plan is exhausted (2 steps used)")
    })
  )

  it.effect('plan: a quoted "{{observation}}" becomes a JSON string, so a tool call stays JSON whatever the tool said', () =>
    Effect.gen(function* () {
      const model = Scripted.plan(['{"tool": "terminate", "args": "{{observation}}"}', "Said: {{observation}}"], { exhausted: "repeat-last" })
      const said = 'Observation: [ERROR: "x" is not a number]'
      assert.deepStrictEqual(JSON.parse((yield* model.chat(ask(said))).text), { tool: "terminate", args: '[ERROR: "x" is not a number]' })
      assert.strictEqual((yield* model.chat(ask(said))).text, 'Said: [ERROR: "x" is not a number]')
      assert.strictEqual((yield* model.chat(ask(said))).text, 'Said: [ERROR: "x" is not a number]')
    })
  )

  it("lastObservation: a trailing tool message, else the last Observation: of the last user message, else nothing", () => {
    assert.strictEqual(
      Scripted.lastObservation([
        { role: "user", content: "Q" },
        { role: "tool", content: "7", toolCallId: "1" }
      ]),
      "7"
    )
    assert.strictEqual(
      Scripted.lastObservation([{ role: "user", content: "Observation: 1\nAction: run\nObservation:  two lines\nof text \n" }]),
      "two lines\nof text"
    )
    assert.strictEqual(Scripted.lastObservation([{ role: "user", content: "no tool was called" }]), "")
  })

  it.effect("sequence with exhausted: repeat-last keeps answering the last reply", () =>
    Effect.gen(function* () {
      const model = Scripted.make(["one", "two"], { exhausted: "repeat-last" })
      const texts: Array<string> = []
      for (let i = 0; i < 4; i++) texts.push((yield* model.chat(ask("x"))).text)
      assert.deepStrictEqual(texts, ["one", "two", "two", "two"])
    })
  )

  it.effect("an empty sequence fails even with repeat-last", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Scripted.sequence([], { exhausted: "repeat-last" }).chat(ask("x")))
      assert.strictEqual(error.reason, "Unavailable")
    })
  )

  it.effect("chat and stream share one script cursor", () =>
    Effect.gen(function* () {
      const model = Scripted.sequence(["first reply", "second reply"])
      assert.strictEqual((yield* model.chat(ask("a"))).text, "first reply")
      const chunks = yield* Stream.runCollect(model.stream(ask("b")))
      assert.strictEqual(chunks.map((c) => (c._tag === "TextDelta" ? c.text : "")).join(""), "second reply")
    })
  )

  it.effect("echo answers with the last user message", () =>
    Effect.gen(function* () {
      const response = yield* Scripted.echo().chat({
        messages: [
          { role: "system", content: "sys" },
          { role: "user", content: "first" },
          { role: "assistant", content: "ok" },
          { role: "user", content: "second" },
          { role: "tool", content: "tool output", toolCallId: "1" }
        ]
      })
      assert.strictEqual(response.text, "second")
      assert.strictEqual(response.model, "scripted")
    })
  )

  it.effect("fixed always answers the same", () =>
    Effect.gen(function* () {
      const model = Scripted.fixed("Hello")
      assert.strictEqual((yield* model.chat(ask("a"))).text, "Hello")
      assert.strictEqual((yield* model.chat(ask("b"))).text, "Hello")
    })
  )

  it.effect("a function sees the request; a full ChatResponse passes through, tool calls and usage kept", () =>
    Effect.gen(function* () {
      const model = Scripted.respond((request) =>
        request.messages.length > 1
          ? `saw ${request.messages.length}`
          : { text: "", toolCalls: [{ id: "c1", name: "search", arguments: "{}" }], usage: { inputTokens: 1, outputTokens: 2 } }
      )
      const call = yield* model.chat(ask("x"))
      assert.deepStrictEqual(call.toolCalls, [{ id: "c1", name: "search", arguments: "{}" }])
      assert.deepStrictEqual(call.usage, { inputTokens: 1, outputTokens: 2 })
      const text = yield* model.chat({
        messages: [
          { role: "user", content: "a" },
          { role: "user", content: "b" }
        ]
      })
      assert.strictEqual(text.text, "saw 2")
      const chunks = yield* Stream.runCollect(model.stream(ask("x")))
      assert.deepStrictEqual(chunks, [
        { _tag: "ToolCallDelta", index: 0, id: "c1", name: "search", arguments: "{}" },
        { _tag: "Finish", usage: { inputTokens: 1, outputTokens: 2 }, finishReason: "tool_calls" }
      ])
    })
  )

  it.effect("a throwing function fails with a ProviderError, not a defect", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Scripted.respond(() => {
          throw new Error("script bug")
        }).chat(ask("x"))
      )
      assert.strictEqual(error.reason, "BadResponse")
      assert.include(error.message, "script bug")
    })
  )

  it.effect("usage counts every message of each request, however the conversation changed since the last", () =>
    Effect.gen(function* () {
      const model = Scripted.fixed("ok")
      const system: LanguageModel.ChatMessage = { role: "system", content: "abcd" }
      const turns: Array<LanguageModel.ChatMessage> = [system, { role: "user", content: "efgh" }]
      const inputTokens = (messages: ReadonlyArray<LanguageModel.ChatMessage>) =>
        model.chat({ messages }).pipe(Effect.map((response) => response.usage!.inputTokens))
      assert.strictEqual(yield* inputTokens(turns), 2)
      // the same conversation, grown
      turns.push({ role: "assistant", content: "ijkl" }, { role: "user", content: "mnop" })
      assert.strictEqual(yield* inputTokens([...turns]), 4)
      // a turn in the middle replaced, the same array changed in place, a shorter one, another one
      assert.strictEqual(yield* inputTokens([system, { role: "user", content: "12345678" }, ...turns.slice(2)]), 5)
      turns[1] = { role: "user", content: "" }
      assert.strictEqual(yield* inputTokens(turns), 3)
      turns[1] = { role: "user", content: "1234" }
      assert.strictEqual(yield* inputTokens(turns), 4)
      assert.strictEqual(yield* inputTokens(turns.slice(0, 1)), 1)
      // the longer one again after the shorter: what it had beyond was let go, so it is read again
      assert.strictEqual(yield* inputTokens(turns), 4)
      // one as long with other messages, then the first system message on its own
      assert.strictEqual(yield* inputTokens([{ role: "system", content: "abcdefgh" }, ...turns.slice(1)]), 5)
      assert.strictEqual(yield* inputTokens([system]), 1)
      assert.strictEqual(yield* inputTokens([{ role: "user", content: "x".repeat(40) }]), 10)
      assert.strictEqual(yield* inputTokens([]), 0)
    })
  )

  it.effect("usage is a chars/4 estimate, rounded up", () =>
    Effect.gen(function* () {
      const response = yield* Scripted.fixed("12345").chat({
        messages: [
          { role: "system", content: "abc" },
          { role: "user", content: "defgh" }
        ]
      })
      // input: 8 chars -> 2; output: 5 chars -> 2
      assert.deepStrictEqual(response.usage, { inputTokens: 2, outputTokens: 2 })
      assert.strictEqual(Scripted.estimateTokens(""), 0)
      assert.strictEqual(Scripted.estimateTokens("a"), 1)
      assert.strictEqual(Scripted.estimateTokens("abcd"), 1)
      assert.strictEqual(Scripted.estimateTokens("abcde"), 2)
    })
  )

  it.effect("stream splits the reply into word chunks, then Finish with usage", () =>
    Effect.gen(function* () {
      const chunks = yield* Stream.runCollect(Scripted.fixed("Hello big  world ").stream(ask("hi")))
      assert.deepStrictEqual(chunks, [
        { _tag: "TextDelta", text: "Hello " },
        { _tag: "TextDelta", text: "big  " },
        { _tag: "TextDelta", text: "world " },
        { _tag: "Finish", usage: { inputTokens: 1, outputTokens: 5 }, model: "scripted", finishReason: "stop" }
      ])
      assert.deepStrictEqual(Scripted.words("  lead"), ["  ", "lead"])
      assert.deepStrictEqual(Scripted.words(""), [])
      const empty = yield* Stream.runCollect(Scripted.fixed("").stream(ask("x")))
      assert.deepStrictEqual(
        empty.map((c) => c._tag),
        ["Finish"]
      )
    })
  )

  it.effect("latency is an Effect.sleep, driven by the TestClock", () =>
    Effect.gen(function* () {
      const model = Scripted.fixed("late", { latencyMs: 1_000 })
      const fiber = yield* Effect.forkChild(model.chat(ask("x")))
      yield* TestClock.adjust(999)
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust(1)
      assert.strictEqual((yield* Fiber.join(fiber)).text, "late")

      const streamFiber = yield* Effect.forkChild(Stream.runCollect(model.stream(ask("x"))))
      yield* TestClock.adjust(500)
      assert.isUndefined(streamFiber.pollUnsafe())
      yield* TestClock.adjust(500)
      assert.strictEqual((yield* Fiber.join(streamFiber)).length, 2)
    })
  )

  it("with no latency a call is synchronous (runSync throws on any timer or async step)", () => {
    const model = Scripted.echo()
    const request = ask("ping")
    for (let i = 0; i < 3; i++) assert.strictEqual(Effect.runSync(model.chat(request)).text, "ping")
  })

  describe("spec strings", () => {
    it("parses echo, fixed and sequence", () => {
      assert.deepStrictEqual(Scripted.parseSpec("scripted:echo"), { _tag: "Echo" })
      assert.deepStrictEqual(Scripted.parseSpec("scripted"), { _tag: "Echo" })
      assert.deepStrictEqual(Scripted.parseSpec("echo"), { _tag: "Echo" })
      assert.deepStrictEqual(Scripted.parseSpec("scripted:fixed:Hello"), { _tag: "Fixed", text: "Hello" })
      assert.deepStrictEqual(Scripted.parseSpec("scripted:fixed:a:b c"), { _tag: "Fixed", text: "a:b c" })
      assert.deepStrictEqual(Scripted.parseSpec('scripted:sequence:["a","b"]'), { _tag: "Sequence", replies: ["a", "b"] })
      assert.deepStrictEqual(Scripted.parseSpec('scripted:plan:["a","{{observation}}"]'), { _tag: "Plan", steps: ["a", "{{observation}}"] })
    })

    it("rejects malformed specs with a SpecError that says what is expected", () => {
      for (const spec of ["scripted:nope", "scripted:sequence:[1,2]", 'scripted:sequence:["a"', "scripted:fixed"]) {
        let thrown: unknown
        try {
          Scripted.parseSpec(spec)
        } catch (e) {
          thrown = e
        }
        assert.instanceOf(thrown, Providers.SpecError, spec)
        assert.strictEqual((thrown as Providers.SpecError).spec, spec)
        assert.include((thrown as Providers.SpecError).message, "scripted")
      }
    })

    it.effect("fromSpec builds a working model", () =>
      Effect.gen(function* () {
        const model = Scripted.fromSpec('scripted:sequence:["x","y"]')
        assert.strictEqual((yield* model.chat(ask("1"))).text, "x")
        assert.strictEqual((yield* model.chat(ask("2"))).text, "y")
      })
    )
  })

  it.effect("layer provides the LanguageModel service", () =>
    Effect.gen(function* () {
      const response = yield* LanguageModel.LanguageModel.use((m) => m.chat(ask("hi"))).pipe(
        Effect.provide(Scripted.layer({ _tag: "Fixed", text: "from layer" }))
      )
      assert.strictEqual(response.text, "from layer")
    })
  )
})

languageModelConformance("Scripted echo", () => Scripted.echo(), {
  request: ask("The quick brown fox."),
  expectedText: "The quick brown fox.",
  failing: { make: () => Scripted.sequence([]), reason: "Unavailable" }
})

languageModelConformance("Scripted with latency", () => Scripted.fixed("A fixed answer, slowly.", { latencyMs: 300 }), {
  expectedText: "A fixed answer, slowly.",
  slowRequest: ask("slow")
})

languageModelConformance("Scripted sequence (fresh per make)", () => Scripted.sequence(["first answer", "second"]), {
  expectedText: "first answer"
})
