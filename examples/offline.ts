/**
 * A YAML agent run from TypeScript without an API key: the config names Anthropic, and
 * `createRuntime({ offline })` answers its calls on the offline scripted model instead of failing
 * with `ProviderError: anthropic: no API key`, saying so once. With `ANTHROPIC_API_KEY` set, the
 * same program calls Anthropic.
 * Run: npx tsx examples/offline.ts
 */
import { fileURLToPath } from "node:url"
import { createRuntime } from "lambdagent"
import { loadConfig } from "lambdagent/yaml"

export async function main(): Promise<{ readonly value: unknown; readonly notices: ReadonlyArray<string> }> {
  const agent = loadConfig(fileURLToPath(new URL("agents/simple.yml", import.meta.url)))
  const notices: Array<string> = []
  // "scripted" alone would echo too, with the notice on stderr
  const runtime = createRuntime({ offline: { model: "scripted:echo", onNotice: (line) => notices.push(line) } })
  const { value } = await runtime.run(agent.term, "Lambda terms make agents inspectable.")
  await runtime.close()
  return { value, notices }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
