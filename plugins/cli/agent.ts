/**
 * Loading an agent for the command line (a YAML config or a term's JSON) and building the runtime
 * that runs it: its model (or the offline scripted model when no provider is reachable), its tools
 * (shell commands, CLI agents, retrieval, MCP, remote A2A agents, builtins), its memory store and
 * its shared memory.
 */
import { existsSync, statSync } from "node:fs"
import { dirname, resolve } from "node:path"
import * as Effect from "effect/Effect"
import { Agent, CliAgent, createRuntime, type LanguageModel, type MemoryStore, type Plugin, Providers, type Runtime, ShellTool, Term, Tools } from "lambdagent"
import * as z from "zod"
import { isStoreModule, loadStoreModule } from "./customStore.ts"
import { CliError, ExitCode, readTextFile } from "./io.ts"
import { offlineModel, type Unreachable, unreachable } from "./offline.ts"
import { plainHttpTool } from "./plainHttpTool.ts"
import { applySandbox, type SandboxChoice } from "./sandbox.ts"
import { loadStorePlugin, openSharedMemory } from "./stores.ts"

/** An agent ready to run. */
export interface LoadedAgent {
  readonly term: Term.Term
  readonly name: string
  readonly type: string
  readonly file: string
  readonly baseDir: string
  /** The compiled YAML config, when the agent came from one. */
  readonly compiled?: import("lambdagent/yaml").CompiledAgent
  /** How many fields of the Python reference's format the config has that have no effect (lint L051). */
  readonly referenceFields?: number
}

export interface AgentOverrides {
  readonly temperature?: number
  readonly maxSteps?: number
  /** Tools given on the command line: they join a top-level ReAct agent's tool list. */
  readonly tools?: ReadonlyArray<Tools.ToolDefinition>
}

/**
 * `--tool NAME=CMD` specs as shell tools: a malformed spec is a usage error (exit 2), a command that
 * could destroy data is refused (exit 1).
 */
export const shellTools = (specs: ReadonlyArray<string>, options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Array<Tools.ToolDefinition> =>
  specs.map((spec) => {
    try {
      return ShellTool.fromSpec(spec, {
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.env !== undefined ? { env: options.env } : {})
      })
    } catch (error) {
      const tag = (error as { _tag?: string })._tag ?? "InvalidToolSpec"
      throw new CliError((error as Error).message, tag === "DangerousCommand" ? ExitCode.failed : ExitCode.usage, tag)
    }
  })

const isYamlError = (e: unknown): e is { _tag: string; message: string } =>
  typeof e === "object" && e !== null && "_tag" in e && ["ConfigError", "SchemaError", "SemanticError"].includes(String(e._tag))

/** Load `file`: `.json` holds a term; anything else is a YAML agent config. */
export const loadAgent = async (file: string, overrides: AgentOverrides = {}): Promise<LoadedAgent> => {
  if (!existsSync(file)) throw new CliError(`File not found: ${file}`, ExitCode.notFound, "FileNotFound")
  if (statSync(file).isDirectory()) throw new CliError(`${file} is a directory; give an agent file`, ExitCode.notFound, "FileNotFound")
  const baseDir = dirname(resolve(file))
  if (file.endsWith(".json")) {
    let term: Term.Term
    try {
      term = Term.parseText(await readTextFile(file, "agent"))
    } catch (error) {
      throw new CliError(`${file}: ${(error as Error).message}`, ExitCode.compile, "TermParseError")
    }
    return { term, name: file.replace(/^.*\//, "").replace(/\.json$/, ""), type: term._tag.toLowerCase(), file, baseDir }
  }
  const yaml = await import("lambdagent/yaml")
  try {
    const compiled = yaml.loadConfig(
      { path: file },
      {
        ...(overrides.temperature !== undefined ? { temperature: overrides.temperature } : {}),
        ...(overrides.maxSteps !== undefined ? { maxSteps: overrides.maxSteps } : {}),
        ...(overrides.tools !== undefined && overrides.tools.length > 0 ? { tools: overrides.tools } : {})
      }
    )
    const referenceFields = yaml.referenceFields(yaml.readSource(file).value).length
    return {
      term: compiled.term,
      name: compiled.name,
      type: compiled.type,
      file,
      baseDir: compiled.baseDir ?? baseDir,
      compiled,
      ...(referenceFields > 0 ? { referenceFields } : {})
    }
  } catch (error) {
    if (isYamlError(error)) throw new CliError(error.message, ExitCode.compile, error._tag)
    throw error
  }
}

export interface RuntimeChoice {
  readonly runtime: Runtime.Runtime
  readonly tools: ReadonlyArray<Tools.ToolDefinition>
  /** Lines to tell the user (on stderr) about the model and tools the run uses. */
  readonly notices: ReadonlyArray<string>
  /** Whether the LLM calls follow the config's recorded demo plan (no provider was reachable). */
  readonly demo: boolean
  /** Close the runtime and the connections to MCP servers. */
  readonly close: () => Promise<void>
}

export interface RuntimeSettings {
  /** `--model`: every LLM call goes to this spec. */
  readonly model?: string
  /** The input of a single run (`lambdagent run`): the config's demo plan applies to its own input only. */
  readonly input?: string
  /** Tools from the command line (`--tool`) and from loaded plugins. */
  readonly extraTools?: ReadonlyArray<Tools.ToolDefinition>
  /** Plugins the command line loaded (`--plugin`): their providers, stores and layers join the runtime. */
  readonly plugins?: ReadonlyArray<Plugin.Plugin>
  readonly env?: NodeJS.ProcessEnv
  readonly trace?: Runtime.RuntimeOptions["trace"]
  readonly budgets?: Runtime.RuntimeOptions["budgets"]
  /**
   * A store to use instead of a fresh local one when the config asks for `local` memory, so that
   * runtimes rebuilt in one session (the REPL's `:model`, `:temp`, `:reload`) share their memory.
   */
  readonly localStore?: MemoryStore.MemoryStoreShape
  /** The same, for a `local` shared memory (`sharedMemory: {strategy: local}`). */
  readonly localSharedStore?: MemoryStore.MemoryStoreShape
  /** `--sandbox`: a preset for every process-running tool, or `off`; else the config's `sandbox:`. */
  readonly sandbox?: SandboxChoice
  /**
   * Every answer comes from a recording (`lambdagent replay`): no memory store but a local one
   * and no shared memory are opened, so nothing reaches the network.
   */
  readonly offline?: boolean
  /** Told, one line each, what remote A2A tasks do while the agent waits for them. */
  readonly progress?: (line: string) => void
  /** `--otel`: export the spans of runs over OTLP/HTTP (flushed by `close`). */
  readonly otel?: Runtime.RuntimeOptions["otel"]
}

const memoryPlugins = async (strategy: string): Promise<ReadonlyArray<Plugin.Plugin>> => {
  if (strategy === "redis") return [(await loadStorePlugin("redis")).plugin as unknown as Plugin.Plugin]
  if (strategy === "sqlite") return [(await loadStorePlugin("sqlite")).plugin as unknown as Plugin.Plugin]
  return []
}

type MemoryRequirement = import("lambdagent/yaml").MemoryRequirement

/**
 * The store a config's memory uses: `local`, `redis`, `sqlite`, or (`strategy: custom`) the store
 * `customStore` names: a module (`./my-store.js#MyStore`, `my-package#MyStore`), loaded here and
 * returned with the plugin that registers it, or a name a plugin loaded with `--plugin` registers.
 */
const memoryStoreOf = async (
  memory: MemoryRequirement | undefined,
  plugins: ReadonlyArray<Plugin.Plugin>,
  baseDir: string
): Promise<{ readonly strategy: string; readonly plugin?: Plugin.Plugin }> => {
  if (memory === undefined) return { strategy: "local" }
  if (memory.strategy !== "custom") return { strategy: memory.strategy }
  const name = memory.customStore
  if (name === undefined || name === "local" || name === "redis" || name === "sqlite") return { strategy: name ?? "local" }
  if (plugins.some((plugin) => plugin.stores?.[name] !== undefined)) return { strategy: name }
  if (isStoreModule(name)) return { strategy: name, plugin: await loadStoreModule(name, baseDir) }
  const known = plugins.flatMap((plugin) => Object.keys(plugin.stores ?? {}))
  throw new CliError(
    `memory store ${JSON.stringify(name)} (memory.customStore) is not registered by any loaded plugin; load the plugin that registers it with --plugin MODULE, or name a module (./my-store.js#MyStore) (stores: ${["local", "redis", "sqlite", ...known].join(", ")})`,
    ExitCode.usage,
    "UnknownStore"
  )
}

/** A tool that answers with a fixed observation (an MCP server that is not configured or not reachable). */
const unavailableTool = (name: string, observation: string): Tools.ToolDefinition<string> => ({
  name,
  kind: "mcp",
  description: `Unavailable: ${observation}`,
  run: () => observation
})

type YamlToolReference = import("lambdagent/yaml").ToolReference

/**
 * MCP tool references as tools. A server is connected on the first call of one of its tools (so a
 * run that never calls it never reaches it); one that is not configured or not reachable answers
 * with an error observation.
 */
const mcpReferencedTools = (
  refs: ReadonlyArray<YamlToolReference>,
  baseDir: string,
  notices: Array<string>,
  env?: NodeJS.ProcessEnv
): { tools: Array<Tools.ToolDefinition>; close: () => Promise<void> } => {
  const byServer = new Map<string, Array<YamlToolReference>>()
  for (const ref of refs) byServer.set(ref.server ?? "mcp", [...(byServer.get(ref.server ?? "mcp") ?? []), ref])
  const tools: Array<Tools.ToolDefinition> = []
  const connections: Array<Promise<{ close: () => Promise<void> } | undefined>> = []
  for (const [server, serverRefs] of byServer) {
    const connection = serverRefs.find((r) => r.connection !== undefined)?.connection
    if (connection === undefined) {
      for (const ref of serverRefs) tools.push(unavailableTool(ref.name, `[MCP_NOT_CONFIGURED: ${server}/${ref.name}]`))
      notices.push(`[MCP server ${server} has no connection in the config (app.mcp.custom.nodes or mcpServers); its tools answer [MCP_NOT_CONFIGURED]]`)
      continue
    }
    const policy = serverRefs.find((r) => r.policy !== undefined)?.policy as { retryOnFail?: number } | undefined
    const envNumber = (name: string) => {
      const n = Number(process.env[name])
      return process.env[name] !== undefined && Number.isFinite(n) && n >= 0 ? n : undefined
    }
    const timeout = connection.timeout ?? envNumber("LAMBDAGENT_MCP_TIMEOUT")
    const retryOnFail = policy?.retryOnFail ?? envNumber("LAMBDAGENT_MCP_RETRY")
    const common = {
      tools: serverRefs.map((r) => r.name),
      ...(timeout !== undefined ? { timeout } : {}),
      ...(retryOnFail !== undefined ? { retryOnFail } : {})
    }
    const config =
      connection.transport === "stdio"
        ? {
            command: connection.command ?? "",
            ...(connection.args !== undefined ? { args: connection.args } : {}),
            ...(connection.env !== undefined ? { env: connection.env } : {}),
            cwd: baseDir,
            ...common
          }
        : {
            url: `${connection.url ?? ""}${connection.endpoint ?? ""}`,
            ...(connection.headers !== undefined ? { headers: connection.headers } : {}),
            ...common
          }
    let toolset: Promise<Awaited<ReturnType<typeof import("lambdagent/mcp").mcpTools>>> | undefined
    const connect = () => {
      if (toolset === undefined) {
        toolset = import("lambdagent/mcp").then((mcp) => mcp.mcpTools({ [server]: config }))
        connections.push(
          toolset.then(
            (t) => t,
            () => undefined
          )
        )
      }
      return toolset
    }
    const plainOptions = {
      server,
      url: `${connection.url ?? ""}${connection.endpoint ?? ""}`,
      ...(connection.headers !== undefined ? { headers: connection.headers } : {}),
      ...(timeout !== undefined ? { timeout } : {}),
      ...(retryOnFail !== undefined ? { retryOnFail } : {}),
      ...(env !== undefined ? { env } : {})
    }
    if (connection.transport === "http" && connection.protocol === "http") {
      for (const ref of serverRefs) tools.push(plainHttpTool(ref.name, plainOptions))
      continue
    }
    // auto: MCP when the server answers MCP's handshake, else the plain protocol, decided once
    let plain: boolean | undefined
    const detect = async (): Promise<boolean> => {
      if (plain === undefined) {
        try {
          await connect()
          plain = false
        } catch (error) {
          plain = true
          notices.push(
            `[${server} does not speak MCP (${error instanceof Error ? error.message : String(error)}): its tools use the plain HTTP tool protocol, POST {tool, input}]`
          )
        }
      }
      return plain
    }
    for (const ref of serverRefs) {
      const viaPlain = connection.transport === "http" && connection.protocol === "auto" ? plainHttpTool(ref.name, plainOptions) : undefined
      tools.push({
        name: ref.name,
        kind: "mcp",
        description: `The tool ${ref.name} of the MCP server ${server}.`,
        source:
          connection.transport === "stdio"
            ? `${connection.command ?? ""} ${(connection.args ?? []).join(" ")}`.trim()
            : `${connection.url ?? ""}${connection.endpoint ?? ""}`,
        input: z.any(),
        timeoutMs: ((connection.timeout ?? 30) + 30) * 1000,
        run: async (input: unknown, { signal }) => {
          if (viaPlain !== undefined && (await detect())) return Effect.runPromise(Tools.call(viaPlain, input), { signal })
          let found: Tools.ToolDefinition | undefined
          try {
            found = (await connect()).find((t) => t.name === `${server}/${ref.name}`)
          } catch (error) {
            return `[MCP_ERROR: ${server}/${ref.name}: ${error instanceof Error ? error.message : String(error)}]`
          }
          if (found === undefined) return `[MCP_ERROR: ${server}/${ref.name}: the server has no such tool]`
          return Effect.runPromise(Tools.call(found, input), { signal })
        }
      })
    }
  }
  return {
    tools,
    close: async () => {
      for (const c of await Promise.all(connections)) await c?.close()
    }
  }
}

/**
 * `a2a.clients` references as tools. The A2A plugin loads only for a config that has some; each
 * tool fetches its agent's card at its first call.
 */
const a2aReferencedTools = async (refs: ReadonlyArray<YamlToolReference>, settings: RuntimeSettings): Promise<Array<Tools.ToolDefinition>> => {
  const clients = refs.flatMap((ref) => (ref.kind === "a2a" && ref.a2a !== undefined ? [{ name: ref.name, ...ref.a2a }] : []))
  if (clients.length === 0) return []
  const a2a = await import("lambdagent/a2a")
  const progress = settings.progress
  const options = {
    ...(settings.env !== undefined ? { env: settings.env } : {}),
    // status updates say what the remote agent does; its artifact chunks are the answer being written
    ...(progress !== undefined
      ? {
          onProgress: (p: import("lambdagent/a2a").A2AProgress) => {
            if (p.kind === "status") progress(`[a2a ${p.agent}] ${p.state}${p.text !== "" ? `: ${p.text}` : ""}`)
          }
        }
      : {})
  }
  return clients.map((client) => a2a.a2aTool(client, options))
}

/** The tools an agent's config references, made real. */
const referencedTools = async (
  agent: LoadedAgent,
  settings: RuntimeSettings,
  notices: Array<string>
): Promise<{ tools: Array<Tools.ToolDefinition>; close: () => Promise<void> }> => {
  const compiled = agent.compiled
  if (compiled === undefined) return { tools: [], close: async () => {} }
  const yaml = await import("lambdagent/yaml")
  const tools: Array<Tools.ToolDefinition> = []
  const builtins = compiled.tools.filter((t) => t.kind === "builtin")
  if (builtins.length > 0) tools.push(...yaml.builtinTools.filter((b) => builtins.some((t) => t.name === b.name)))
  for (const ref of compiled.tools) {
    if (ref.kind === "cli" && ref.cli !== undefined) {
      tools.push(
        CliAgent.make(ref.name, {
          command: ref.cli.command,
          ...(ref.cli.format !== undefined ? { format: ref.cli.format } : {}),
          ...(ref.cli.timeout !== undefined ? { timeoutMs: ref.cli.timeout * 1000 } : {}),
          ...(ref.cli.retry !== undefined ? { retry: ref.cli.retry } : {}),
          ...(settings.env !== undefined ? { env: settings.env } : {})
        })
      )
    }
  }
  const rag = compiled.tools.find((t) => t.kind === "rag" && t.rag !== undefined)
  if (rag !== undefined) {
    const plugin = await import("lambdagent/rag")
    const retrieval = plugin.fromConfig(rag.rag as Parameters<typeof plugin.fromConfig>[0], agent.baseDir)
    tools.push(retrieval.tool)
    tools.push({
      name: "rag_retrieve_context",
      kind: "rag",
      description: "Prepend the documents retrieved for the input.",
      run: (input: string, { signal }) => retrieval.retrieve(input, { signal })
    })
  }
  const mcp = mcpReferencedTools(
    compiled.tools.filter((t) => t.kind === "mcp"),
    agent.baseDir,
    notices,
    settings.env
  )
  tools.push(...mcp.tools)
  tools.push(...(await a2aReferencedTools(compiled.tools, settings)))
  return { tools, close: mcp.close }
}

/** Build the runtime for an agent: model choice (with the offline fallback), tools, memory. */
export const buildRuntime = async (agent: LoadedAgent, settings: RuntimeSettings): Promise<RuntimeChoice> => {
  const notices: Array<string> = []
  if (agent.referenceFields !== undefined) {
    const n = agent.referenceFields
    notices.push(
      `[${n} field${n === 1 ? "" : "s"} written for the Python reference, dropped or read as ${n === 1 ? "its equivalent" : "their equivalents"} here: lambdagent lint ${agent.file} says why, lambdagent migrate ${agent.file} rewrites the file]`
    )
  }
  let resolveModel: Runtime.RuntimeOptions["resolveModel"]
  let model: LanguageModel.LanguageModelShape | undefined
  let demo = false
  if (settings.model !== undefined) {
    try {
      model = Providers.fromSpec(settings.model, settings.env !== undefined ? { env: settings.env } : {})
    } catch (error) {
      throw new CliError(`--model ${settings.model}: ${(error as Error).message}`, ExitCode.usage, "UsageError")
    }
    const chosen = model
    resolveModel = () => chosen
    if (settings.model.startsWith("scripted")) notices.push(`[model: ${settings.model} — the offline scripted model; no API key needed]`)
  } else {
    const providers = agent.compiled?.providers ?? []
    const missing = new Map<string, Unreachable>()
    for (const provider of providers) {
      const why = await unreachable(provider, agent)
      if (why !== undefined) missing.set(provider, why)
    }
    if (missing.size > 0 || providers.length === 0) {
      const offline = offlineModel(agent, missing, settings.input)
      model = offline.model
      demo = offline.demo
      resolveModel = (settings) => (settings.provider === undefined || missing.has(settings.provider) ? offline.model : undefined)
      notices.push(...offline.notices)
    }
  }
  const sharedRequirement = settings.offline === true ? undefined : agent.compiled?.sharedMemory
  const shared =
    sharedRequirement === undefined
      ? undefined
      : await openSharedMemory(sharedRequirement, agent.baseDir, {
          ...(settings.localSharedStore !== undefined ? { localStore: settings.localSharedStore } : {}),
          notices
        })
  const memory = agent.compiled?.memory[0]
  let strategy: string
  let referenced: Awaited<ReturnType<typeof referencedTools>>
  let plugins: ReadonlyArray<Plugin.Plugin>
  try {
    const store: Awaited<ReturnType<typeof memoryStoreOf>> =
      settings.offline === true ? { strategy: "local" } : await memoryStoreOf(memory, settings.plugins ?? [], agent.baseDir)
    strategy = store.strategy
    plugins = [...(await memoryPlugins(strategy)), ...(store.plugin !== undefined ? [store.plugin] : []), ...(settings.plugins ?? [])]
    referenced = await referencedTools(agent, settings, notices)
  } catch (error) {
    await shared?.close()
    throw error
  }
  let tools: Array<Tools.ToolDefinition>
  try {
    tools = await applySandbox(
      [...referenced.tools, ...(shared?.tools ?? []), ...(settings.extraTools ?? [])],
      settings.sandbox,
      agent.compiled?.runtime.sandbox,
      notices
    )
  } catch (error) {
    await referenced.close()
    await shared?.close()
    throw error
  }
  const maxTokens = Number(process.env.LAMBDAGENT_MAX_TOKENS)
  if (process.env.LAMBDAGENT_MAX_TOKENS !== undefined && Number.isInteger(maxTokens) && maxTokens > 0) {
    // every LLM call answers in at most $LAMBDAGENT_MAX_TOKENS tokens
    const cap = (m: LanguageModel.LanguageModelShape): LanguageModel.LanguageModelShape => ({
      name: m.name,
      chat: (request) => m.chat({ ...request, maxTokens }),
      stream: (request) => m.stream({ ...request, maxTokens })
    })
    const base = model ?? Providers.fromSpec("scripted:echo")
    const chooser = resolveModel
    const builtin = Agent.makeModelResolver()
    model = cap(base)
    resolveModel = (settings) => {
      const chosen = chooser?.(settings) ?? builtin(settings)
      return chosen === undefined ? undefined : cap(chosen)
    }
  }
  const runtime = createRuntime({
    ...(model !== undefined ? { model } : {}),
    ...(resolveModel !== undefined ? { resolveModel } : {}),
    tools,
    plugins,
    memory: strategy === "local" && settings.localStore !== undefined ? settings.localStore : strategy,
    memoryOptions:
      strategy === "sqlite"
        ? { path: resolve(agent.baseDir, ".lambdagent", "memory.db") }
        : strategy !== "local" && strategy !== "redis" && memory !== undefined
          ? { maxEntries: memory.size }
          : {},
    ...(settings.trace !== undefined ? { trace: settings.trace } : {}),
    ...(settings.budgets !== undefined ? { budgets: settings.budgets } : {}),
    ...(settings.otel !== undefined ? { otel: settings.otel } : {})
  })
  return {
    runtime,
    tools,
    notices,
    demo,
    close: async () => {
      await runtime.close()
      await referenced.close()
      await shared?.close()
    }
  }
}
