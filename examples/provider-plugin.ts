/**
 * A plugin that adds a model provider: `llm` terms whose model settings name `rot13` (a YAML
 * config's `model: { provider: rot13 }`) are answered by it. The provider here is a small model of
 * its own, written against `LanguageModelShape`; a real one would call a service from `chat` and
 * `stream` and fail with `LanguageModel.ProviderError`.
 * Run: npx tsx examples/provider-plugin.ts
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { createRuntime, type LanguageModel, type Plugin, Term } from "lambdagent"

const rot13 = (text: string) =>
  text.replace(/[a-z]/gi, (c) => {
    const base = c <= "Z" ? 65 : 97
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base)
  })

/** A model that answers with the last user message in ROT13; `settings.name` prefixes the answer. */
const makeRot13 = (settings: Term.ModelSettings): LanguageModel.LanguageModelShape => {
  const answer = (request: LanguageModel.ChatRequest) => `${settings.name ?? "rot13"}: ${rot13(request.messages.at(-1)?.content ?? "")}`
  return {
    name: "rot13",
    chat: (request) => Effect.sync(() => ({ text: answer(request), model: settings.name ?? "rot13" })),
    stream: (request) =>
      Stream.fromArray<LanguageModel.ChatChunk>([
        { _tag: "TextDelta", text: answer(request) },
        { _tag: "Finish", model: settings.name ?? "rot13" }
      ])
  }
}

/** The plugin: a plain value a host passes to `createRuntime({ plugins })` (or the CLI loads with `--plugin`). */
export const plugin: Plugin.Plugin = { name: "rot13", providers: { rot13: makeRot13 } }

export async function main(): Promise<{ readonly value: unknown; readonly streamed: string }> {
  const runtime = createRuntime({ plugins: [plugin] })
  const agent = Term.llm({ system: "Encode the input.", model: { provider: "rot13", name: "caesar" } })
  const { value } = await runtime.run(agent, "Hello, world")
  let streamed = ""
  for await (const event of runtime.stream(agent, "abc")) if (event.type === "token") streamed += event.text
  await runtime.close()
  return { value, streamed }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
