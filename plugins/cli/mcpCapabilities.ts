/**
 * What `lambdagent mcp` lets evolved tools do beyond pure computation: `--allow llm|par|tool:NAME`
 * (or `allow:` in `--config FILE`), answered by a runtime built from `--model` and `--tool`.
 * Nothing is allowed unless asked for.
 */
import { createRuntime, Providers, type Runtime, Term } from "lambdagent"
import type { AgentPolicy, AnswerOracle } from "lambdagent/mcp"
import { parse as parseYaml } from "yaml"
import { shellTools } from "./agent.ts"
import { readTextFile } from "./io.ts"
import type { CapabilityOptions, Granted } from "./mcp.ts"
import { usageError } from "./options.ts"
import { otelOptions } from "./otel.ts"

/** The `--config` file: the same settings as the flags, which win when both are given. */
export interface McpServerConfig {
  readonly allow: ReadonlyArray<string>
  readonly model?: string
  readonly tools: ReadonlyArray<string>
}

const CONFIG_KEYS = ["allow", "model", "tools"]

const stringList = (file: string, key: string, value: unknown): ReadonlyArray<string> => {
  if (value === undefined) return []
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) throw usageError(`${file}: ${key} must be a list of strings`)
  return value as Array<string>
}

/** Read an `lambdagent mcp --config` file (YAML or JSON). */
export const readServerConfig = async (file: string): Promise<McpServerConfig> => {
  let json: unknown
  try {
    json = parseYaml(await readTextFile(file, "MCP server config"))
  } catch (error) {
    throw usageError(`${file}: ${(error as Error).message}`)
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw usageError(`${file}: expected a mapping with ${CONFIG_KEYS.join(", ")}`)
  const record = json as Record<string, unknown>
  const unknown = Object.keys(record).filter((k) => !CONFIG_KEYS.includes(k))
  if (unknown.length > 0) throw usageError(`${file}: unknown key ${unknown.map((k) => JSON.stringify(k)).join(", ")} (known: ${CONFIG_KEYS.join(", ")})`)
  if (record.model !== undefined && typeof record.model !== "string") throw usageError(`${file}: model must be a provider spec string`)
  return {
    allow: stringList(file, "allow", record.allow),
    ...(typeof record.model === "string" ? { model: record.model } : {}),
    tools: stringList(file, "tools", record.tools)
  }
}

/** `--allow` words as the server's policy; a usage error names a word it does not know. */
export const policyOf = (words: ReadonlyArray<string>): AgentPolicy => {
  let llm = false
  let par = false
  const tools: Array<string> = []
  for (const word of words
    .flatMap((w) => w.split(","))
    .map((w) => w.trim())
    .filter((w) => w !== "")) {
    if (word === "llm") llm = true
    else if (word === "par") par = true
    else if (word.startsWith("tool:") && word.length > 5) tools.push(word.slice(5))
    else if (word === "memory")
      throw usageError("--allow memory: memory for evolved tools is granted from code only (createLambdaServer's allow and answerOracle)")
    else throw usageError(`--allow ${JSON.stringify(word)}: expected llm, par, tool:NAME or tool:*`)
  }
  return {
    ...(llm ? { llm: true } : {}),
    ...(par ? { par: true } : {}),
    ...(tools.length > 0 ? { tools: tools.includes("*") ? "*" : tools } : {})
  }
}

/**
 * The policy and the oracle for granted capabilities: LLM calls go to `model`, tool calls to the
 * `tools` shell commands. A granted tool that is not defined is a usage error now, not a failure
 * at the first call.
 */
export const grantedCapabilities = (
  config: McpServerConfig,
  otel?: Runtime.RuntimeOptions["otel"]
): { readonly allow: AgentPolicy; readonly answerOracle?: AnswerOracle; readonly runtime?: Runtime.Runtime } => {
  const allow = policyOf(config.allow)
  if (allow.llm !== true && allow.tools === undefined) {
    if (config.model !== undefined || config.tools.length > 0)
      throw usageError("--model and --tool answer granted capabilities: add --allow llm or --allow tool:NAME")
    return { allow }
  }
  if (allow.llm === true && config.model === undefined) throw usageError("--allow llm needs --model SPEC (e.g. openai:gpt-4o-mini, or scripted:echo offline)")
  const tools = shellTools(config.tools)
  if (Array.isArray(allow.tools)) {
    const defined = new Set(tools.map((t) => t.name))
    const missing = allow.tools.filter((name) => !defined.has(name))
    if (missing.length > 0) throw usageError(`--allow tool:${missing[0]}: no --tool ${missing[0]}=CMD defines it`)
  }
  let model: ReturnType<typeof Providers.fromSpec> | undefined
  try {
    model = config.model === undefined ? undefined : Providers.fromSpec(config.model)
  } catch (error) {
    throw usageError(`--model ${config.model}: ${(error as Error).message}`)
  }
  const runtime = createRuntime({ ...(model !== undefined ? { model, resolveModel: () => model } : {}), tools, ...(otel !== undefined ? { otel } : {}) })
  const answerOracle: AnswerOracle = async (request, context) => {
    const options = { signal: context.signal }
    switch (request.kind) {
      case "llm":
        return (await runtime.run(request.term, request.input, options)).value
      case "tool":
        return (await runtime.run(Term.parse({ tool: request.name }), request.input, options)).value
      default:
        throw new Error(`${request.kind} is not answered by lambdagent mcp`)
    }
  }
  return { allow, answerOracle, runtime }
}

/** The policy and the oracle of `mcp --allow`, `--model`, `--tool`, `--config` and `--otel`. */
export const capabilitiesOf = async (options: CapabilityOptions): Promise<Granted> => {
  const file = options.config === undefined ? undefined : await readServerConfig(options.config)
  const model = options.model ?? file?.model
  const granted = grantedCapabilities(
    {
      allow: [...(file?.allow ?? []), ...options.allow],
      ...(model !== undefined ? { model } : {}),
      tools: [...(file?.tools ?? []), ...options.tool]
    },
    otelOptions(options.otel)
  )
  // pure evaluation makes no calls, and reductions get no span: there would be nothing to export
  if (options.otel !== undefined && granted.runtime === undefined) {
    throw usageError("--otel exports the spans of evolved tools' LLM and tool calls: add --allow llm or --allow tool:NAME")
  }
  return granted
}
