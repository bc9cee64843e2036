/**
 * The compiler: an agent file to a term of the core language.
 *
 * | YAML | term |
 * |---|---|
 * | `type: simple` | `llm` (λx. LLM_{θ,p}(x)) |
 * | `type: react` | `react` (Y_n(λself. λstate. …)) over the declared tools |
 * | `type: chain` | `compose` of the steps |
 * | `type: router` | `route` (CASE) over compiled sub-agents |
 * | `type: parallel` | `par` with a tuple, concat or LLM merge |
 * | `guard` | `guard` with a compiled validator (wraps the core) |
 * | `memory` | `memory` (wraps everything: core → guard → memory) |
 * | `rag` | a `rag_retrieve` tool (agentic react) or a `rag_retrieve_context` stage first |
 * | `sharedMemory` | a `shared_memory_context` stage first, `shared_*` tools for react agents, a `shared_publish` call after each agent |
 * | `receive` / `send` | a `receive` stage before the agent / a `send` stage after it (outermost) |
 * | `channels` | a `channels` scope around the whole term |
 *
 * Tools are references by name; {@link CompiledAgent.tools} says where each comes from (an MCP
 * server, a CLI agent, a builtin, …) so that a runtime can provide them. The same file always
 * gives the same term, byte for byte, in `Term.toJsonText`.
 *
 * @since 0.1.0
 * @module
 */
import { dirname, relative as relativePath, resolve as resolvePath } from "node:path"
import type { Budget, LanguageModel, MemoryStore, Sandbox, Tools } from "lambdagent"
import { SharedMemory, Term } from "lambdagent"
import { parserToolNames, isBuiltinTool } from "./builtins.ts"
import { type FieldPath, formatFieldPath, type Issue, schemaError, semanticError } from "./errors.ts"
import type {
  A2AClientConfig,
  A2AServerConfig,
  AgentConfig,
  AgentFile,
  AgentType,
  CliAgentConfig,
  CliPipelineConfig,
  GuardConfig,
  McpConfig,
  ModelConfig,
  SharedMemoryConfig,
  SkillConfig,
  OutputConfig,
  StepConfig,
  SubAgentConfig
} from "./schema.ts"
import { knownProviders } from "./schema.ts"
import { sandboxIssues, sandboxPolicy } from "./sandbox.ts"
import { parseSource, readSource, type Source } from "./source.ts"
import { agentsOf, validateConfig } from "./validate.ts"
import { compileValidatorExpr, parseValidator } from "./validators.ts"

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

/**
 * What a caller can change without editing the file (the CLI's `--model`, `--temperature`,
 * `--max-steps`, `--tool`), and implementations a runtime should use.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Overrides } from "lambdagent/yaml"
 * const o: Overrides = { model: "openai:gpt-4o-mini", temperature: 0, maxSteps: 5 }
 * ```
 */
export interface Overrides {
  /**
   * The model of every LLM call: a name (`gpt-4o-mini`) or `provider:name` when the prefix is a
   * provider (`ollama:llama3:8b`). Changing the provider drops the file's `baseUrl`.
   */
  readonly model?: string
  /** The temperature of every LLM call. */
  readonly temperature?: number
  /** The `maxSteps` of every react agent. */
  readonly maxSteps?: number
  /**
   * Extra tools: names or definitions. They count as declared (for chain tool steps and lint)
   * and join the tool list of the top-level agent when it is a react agent.
   */
  readonly tools?: ReadonlyArray<string | Tools.ToolDefinition>
  /** The memory store to use; also satisfies `strategy: custom`. */
  readonly memoryStore?: MemoryStore.MemoryStoreShape
  /** The store of the shared memory; also satisfies `sharedMemory.strategy: custom`. */
  readonly sharedMemoryStore?: MemoryStore.MemoryStoreShape
  /** Extra providers by name; `model.provider` may name them. */
  readonly providers?: Readonly<Record<string, LanguageModel.LanguageModelShape>>
}

/**
 * Where a referenced tool comes from.
 *
 * - `mcp`: a tool of an MCP server (`mcp.onlineTool` or `mcpServers`), see `server`/`connection`;
 * - `cli`: a program from `cli.agents`, see `cli`;
 * - `a2a`: a remote agent from `a2a.clients`, see `a2a`;
 * - `rag`: `rag_retrieve` (agentic) or `rag_retrieve_context` (retrieval before the agent), see `rag`;
 * - `builtin`: a `__builtin_*` string operation (see `builtinTools`);
 * - `terminate`: the identity λx.x, the ReAct base case;
 * - `injected`: passed in `overrides.tools`, see `definition`;
 * - `shared`: a tool of the shared memory (`sharedMemory`; see `SharedMemory.tools`);
 * - `local`: provided by the runtime by name (`mcp.localTools`).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ToolReferenceKind } from "lambdagent/yaml"
 * const k: ToolReferenceKind = "mcp"
 * ```
 */
export type ToolReferenceKind = "mcp" | "cli" | "a2a" | "rag" | "builtin" | "terminate" | "injected" | "shared" | "local"

/**
 * Whether a tool name is the ReAct loop's `terminate`, which the loop recognises in any letter case
 * (`Terminate`, `TERMINATE`).
 *
 * @since 0.1.0
 * @category tools
 * @example
 * ```ts
 * import { isTerminateName } from "lambdagent/yaml"
 * isTerminateName("Terminate") // true
 * ```
 */
export const isTerminateName = (name: string): boolean => name.toLowerCase() === "terminate"

/**
 * How to reach an MCP server.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { McpConnection } from "lambdagent/yaml"
 * const c: McpConnection = { transport: "http", url: "https://mcp.example.com", endpoint: "/mcp" }
 * ```
 */
export interface McpConnection {
  readonly transport: "http" | "stdio"
  readonly url?: string
  readonly endpoint?: string
  readonly headers?: Readonly<Record<string, string>>
  /** Seconds. */
  readonly timeout?: number
  readonly command?: string
  readonly args?: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
  /** For `app.mcp.custom.nodes`: `mcp` (default), `http` (plain `POST {tool, input}` → `{output}`) or `auto`. */
  readonly protocol?: "mcp" | "http" | "auto"
}

/**
 * A tool the compiled term calls, and what a runtime needs to provide it.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { loadConfig } from "lambdagent/yaml"
 * const agent = loadConfig("examples/agents/react.yml")
 * for (const t of agent.tools) console.log(t.name, t.kind, t.server ?? "")
 * ```
 */
export interface ToolReference {
  readonly name: string
  readonly kind: ToolReferenceKind
  /** The fields that reference it. */
  readonly usedAt: ReadonlyArray<string>
  /** Whether the file (or the overrides) declares it; `local` tools of chain steps may not be. */
  readonly declared: boolean
  /** For `mcp`: the server name. */
  readonly server?: string
  /** For `mcp`: the connection from `app.mcp.custom.nodes` or `mcpServers`, when the file gives one. */
  readonly connection?: McpConnection
  /** For `mcp`: `mcp.policy` of the agent that lists it. */
  readonly policy?: NonNullable<McpConfig["policy"]>
  /** For `cli`: the command and how to call it. */
  readonly cli?: CliAgentConfig
  /** For `a2a`: the remote agent, as its `a2a.clients` entry gives it. */
  readonly a2a?: Omit<A2AClientConfig, "name">
  /** For `rag`: the `rag:` block, to pass to the retrieval plugin (paths relative to `baseDir`). */
  readonly rag?: Readonly<Record<string, unknown>>
  /** For `injected`: the definition passed in the overrides, when one was. */
  readonly definition?: Tools.ToolDefinition
}

/**
 * A memory store the term needs (one per `memory` node).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { MemoryRequirement } from "lambdagent/yaml"
 * const m: MemoryRequirement = { path: "memory", strategy: "redis", size: 20, ttl: 7200, scope: "session" }
 * ```
 */
export interface MemoryRequirement {
  readonly path: string
  readonly strategy: "local" | "redis" | "sqlite" | "custom"
  readonly customStore?: string
  readonly size: number
  readonly ttl: number
  readonly scope: "session" | "user" | "global"
}

/**
 * The shared memory a file asks for (its `sharedMemory:` block with the defaults applied), for
 * the runtime to open and pass to `SharedMemory.make` and `SharedMemory.tools`.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { SharedMemoryRequirement } from "lambdagent/yaml"
 * const s: SharedMemoryRequirement = {
 *   strategy: "sqlite", path: ".lambdagent/shared-memory.db", namespace: "shared", appendOnly: true,
 *   initial: { goal: "a report" }, size: 1000, inject: true, publish: false
 * }
 * ```
 */
export interface SharedMemoryRequirement {
  readonly strategy: "local" | "redis" | "sqlite" | "custom"
  /** The store namespace of the bindings. */
  readonly namespace: string
  readonly appendOnly: boolean
  /** The `store:` bindings, as text, written where a key has no value yet. */
  readonly initial: Readonly<Record<string, string>>
  /** Most entries kept (`SharedMemory` `historyLimit`). */
  readonly size: number
  /** Whether every simple, react and chain agent sees the bindings before its input. */
  readonly inject: boolean
  /** Whether every agent's answer is recorded under its name. */
  readonly publish: boolean
  /** For `sqlite`: the database file, relative to `CompiledAgent.baseDir` unless absolute. */
  readonly path?: string
  /** For `redis`: the server URL, when the file gives one. */
  readonly url?: string
  /** For `custom`: the store's name. */
  readonly customStore?: string
}

/**
 * The sqlite file of a shared memory whose block gives no `path`, relative to the agent file.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { defaultSharedMemoryPath } from "lambdagent/yaml"
 * defaultSharedMemoryPath // ".lambdagent/shared-memory.db"
 * ```
 */
export const defaultSharedMemoryPath = ".lambdagent/shared-memory.db"

/** The requirement of an enabled `sharedMemory:` block. */
const sharedRequirement = (block: SharedMemoryConfig | undefined): SharedMemoryRequirement | undefined => {
  if (block === undefined || block.enabled === false) return undefined
  const strategy = block.strategy ?? "local"
  return {
    strategy,
    namespace: block.namespace ?? SharedMemory.defaultNamespace,
    appendOnly: block.appendOnly ?? false,
    initial: Object.fromEntries(Object.entries(block.store ?? {}).map(([k, v]) => [k, String(v)])),
    size: block.size ?? 1000,
    inject: block.inject ?? true,
    publish: block.publish ?? false,
    ...(strategy === "sqlite" ? { path: block.path ?? defaultSharedMemoryPath } : {}),
    ...(strategy === "redis" && block.url !== undefined ? { url: block.url } : {}),
    ...(strategy === "custom" && block.customStore !== undefined ? { customStore: block.customStore } : {})
  }
}

/**
 * The result of compiling a file: the term and everything a runtime needs around it.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { loadConfig } from "lambdagent/yaml"
 * const agent = loadConfig("examples/agents/simple.yml")
 * console.log(agent.name, agent.type, Term.pretty(agent.term))
 * ```
 */
export interface CompiledAgent {
  readonly term: Term.Term
  readonly name: string
  readonly type: AgentType
  readonly file?: string
  /** Directory that relative paths in the file (rag.source) are relative to. */
  readonly baseDir?: string
  readonly config: AgentFile
  readonly tools: ReadonlyArray<ToolReference>
  readonly memory: ReadonlyArray<MemoryRequirement>
  /** The shared memory of the file's agents, when `sharedMemory:` enables one. */
  readonly sharedMemory?: SharedMemoryRequirement
  /** The run's budget from `runtime:` (only what the file sets). */
  readonly budget: Partial<Budget.Budget>
  /** Runtime settings the term does not carry. */
  readonly runtime: {
    readonly engine?: string
    readonly checkpoint?: Readonly<Record<string, unknown>>
    readonly cliServer?: Readonly<Record<string, unknown>>
    readonly a2aServer?: A2AServerConfig
    /** The policy of an enabled `sandbox:` block, for every tool that runs a process (the term is unchanged). */
    readonly sandbox?: Sandbox.Policy
    /** `runtime.otel`: where the spans of runs go (OTLP/HTTP). */
    readonly otel?: { readonly url: string; readonly serviceName?: string; readonly headers?: Readonly<Record<string, string>> }
  }
  /** Providers named by the LLM calls, in first-use order. */
  readonly providers: ReadonlyArray<string>
  readonly overrides: Overrides
  /** The field each agent node of the term was compiled from. */
  readonly origins: ReadonlyMap<Term.Term, FieldPath>
  /** Locate a field in the source, when the config came from YAML text. */
  readonly locate: (path: FieldPath) => { readonly line: number; readonly column: number } | undefined
}

// ---------------------------------------------------------------------------------------------
// Declarations and semantic checks
// ---------------------------------------------------------------------------------------------

interface Declaration {
  readonly kind: "mcp" | "cli" | "a2a" | "injected" | "shared"
  readonly path: FieldPath
  readonly server?: string
}

const sameSource = (a: Declaration, b: Declaration) => a.kind === b.kind && a.server === b.server

const toolName = (t: string | Tools.ToolDefinition) => (typeof t === "string" ? t : t.name)

/** Every tool a file (and the overrides) declares, by name, in file order. */
const declarationsOf = (file: AgentFile, overrides: Overrides): Map<string, Array<Declaration>> => {
  const out = new Map<string, Array<Declaration>>()
  const add = (name: string, d: Declaration) => {
    const list = out.get(name)
    if (list === undefined) out.set(name, [d])
    else if (!list.some((x) => sameSource(x, d))) list.push(d)
  }
  for (const { agent, path } of agentsOf(file)) {
    for (const [server, tools] of Object.entries(agent.mcp?.onlineTool ?? {})) {
      tools.forEach((t, i) => add(t, { kind: "mcp", server, path: [...path, "mcp", "onlineTool", server, i] }))
    }
  }
  file.mcpServers?.forEach((s, i) => s.tools?.forEach((t, j) => add(t, { kind: "mcp", server: s.name, path: ["mcpServers", i, "tools", j] })))
  for (const name of Object.keys(file.cli?.agents ?? {})) add(name, { kind: "cli", path: ["cli", "agents", name] })
  file.a2a?.clients?.forEach((c, i) => add(c.name, { kind: "a2a", path: ["a2a", "clients", i, "name"] }))
  overrides.tools?.forEach((t, i) => add(toolName(t), { kind: "injected", path: ["overrides", "tools", i] }))
  const shared = sharedRequirement(file.sharedMemory)
  if (shared !== undefined) for (const name of sharedToolsOf(shared)) add(name, { kind: "shared", path: ["sharedMemory"] })
  return out
}

/** The tools of a shared memory that agents call: read, write and, append-only, append. */
const sharedToolsOf = (shared: SharedMemoryRequirement): ReadonlyArray<string> =>
  shared.appendOnly
    ? [SharedMemory.toolNames.read, SharedMemory.toolNames.write, SharedMemory.toolNames.append]
    : [SharedMemory.toolNames.read, SharedMemory.toolNames.write]

/** Every tool name of a shared memory, including the ones the compiler inserts. */
const allSharedTools: ReadonlySet<string> = new Set(Object.values(SharedMemory.toolNames))

const blank = (s: string | undefined) => s === undefined || s.trim() === ""

const describeDeclaration = (d: Declaration) =>
  d.kind === "mcp"
    ? `MCP server ${JSON.stringify(d.server)}`
    : d.kind === "cli"
      ? "cli.agents"
      : d.kind === "a2a"
        ? "a2a.clients"
        : d.kind === "shared"
          ? "sharedMemory"
          : "the overrides"

/**
 * The problems that make a file impossible to compile even though its shape is right; each names
 * its lint rule (L001, L003, L005, L006, L023, L034, L035, L036, L046, L047, L050). Lint reports the same problems
 * as errors.
 *
 * @since 0.1.0
 * @category validation
 * @example
 * ```ts
 * import { semanticIssues } from "lambdagent/yaml"
 * semanticIssues({ type: "chain", chain: { steps: [] } }).map((i) => i.rule) // ["L006"]
 * ```
 */
export const semanticIssues = (
  file: AgentFile,
  options: { readonly overrides?: Overrides; readonly locate?: (path: FieldPath) => { line: number; column: number } | undefined } = {}
): Array<Issue> => {
  const overrides = options.overrides ?? {}
  const out: Array<Issue> = []
  const add = (rule: string, path: FieldPath, message: string, expected?: string, actual?: string) => {
    const pos = options.locate?.(path)
    out.push({
      rule,
      path,
      field: formatFieldPath(path),
      ...(pos !== undefined ? { line: pos.line, column: pos.column } : {}),
      message,
      ...(expected !== undefined ? { expected } : {}),
      ...(actual !== undefined ? { actual } : {})
    })
  }
  for (const { agent, path, type } of agentsOf(file)) {
    if (type === "simple" && blank(agent.systemPrompt)) {
      add(
        "L001",
        [...path, "systemPrompt"],
        "a simple agent needs a systemPrompt: without one it has no behaviour",
        "a non-empty systemPrompt",
        agent.systemPrompt === undefined ? "missing" : "an empty string"
      )
    }
    if (type === "react" && agent.react?.thinkPrompt !== undefined) {
      // thinkPrompt replaces systemPrompt, so a blank one leaves the think step without instruction.
      if (blank(agent.react.thinkPrompt))
        add(
          "L001",
          [...path, "react", "thinkPrompt"],
          "react.thinkPrompt is empty: it replaces systemPrompt, so the think step has no instruction",
          "a non-empty thinkPrompt",
          "an empty string"
        )
    } else if (type === "react" && blank(agent.systemPrompt)) {
      add(
        "L001",
        [...path, "systemPrompt"],
        "a react agent needs a systemPrompt (or react.thinkPrompt) for its think step",
        "a non-empty systemPrompt",
        agent.systemPrompt === undefined ? "missing" : "an empty string"
      )
    }
    agent.chain?.steps.forEach((step, i) => {
      if (step.prompt !== undefined && blank(step.prompt)) {
        add("L001", [...path, "chain", "steps", i, "prompt"], "the step's prompt is empty", "a non-empty prompt", "an empty string")
      }
    })
    if (agent.router !== undefined && blank(agent.router.classifier.prompt)) {
      add("L001", [...path, "router", "classifier", "prompt"], "the classifier's prompt is empty", "a non-empty prompt", "an empty string")
    }
    if (agent.parallel?.merge === "custom" && agent.parallel.mergePrompt !== undefined && blank(agent.parallel.mergePrompt)) {
      add("L001", [...path, "parallel", "mergePrompt"], "the mergePrompt is empty", "a non-empty mergePrompt", "an empty string")
    }
    if (type === "react" && agent.react?.maxSteps === 0 && overrides.maxSteps === undefined) {
      add("L003", [...path, "react", "maxSteps"], "react.maxSteps is 0: the agent would never run", "maxSteps ≥ 1", "0")
    }
    if (type === "router" && agent.router !== undefined && Object.keys(agent.router.routes ?? {}).length === 0) {
      add("L005", [...path, "router", agent.router.routes === undefined ? "classifier" : "routes"], "the router has no routes", "at least one route", "none")
    }
    if (type === "chain" && agent.chain !== undefined && agent.chain.steps.length === 0) {
      add("L006", [...path, "chain", "steps"], "the chain has no steps", "at least one step", "none")
    }
    for (const [label, route] of Object.entries(agent.router?.routes ?? {})) {
      if (typeof route === "string" && blank(route))
        add(
          "L023",
          [...path, "router", "routes", label],
          `route ${JSON.stringify(label)} answers an empty string`,
          "a sub-agent or a non-empty answer",
          "an empty string"
        )
    }
    if (typeof agent.router?.default === "string" && blank(agent.router.default)) {
      add("L023", [...path, "router", "default"], "the default route answers an empty string", "a sub-agent or a non-empty answer", "an empty string")
    }
    const memory = agent.memory
    if (
      memory !== undefined &&
      memory.enabled !== false &&
      memory.strategy === "custom" &&
      memory.customStore === undefined &&
      overrides.memoryStore === undefined
    ) {
      add("L035", [...path, "memory", "strategy"], "strategy custom needs customStore (or a memory store passed in the overrides)", "customStore", "missing")
    }
  }
  sandboxIssues(file, add)
  channelIssues(file, add)
  outputIssues(file, add)
  const shared = file.sharedMemory
  if (
    shared !== undefined &&
    shared.enabled !== false &&
    shared.strategy === "custom" &&
    shared.customStore === undefined &&
    overrides.sharedMemoryStore === undefined
  ) {
    add(
      "L036",
      ["sharedMemory", "strategy"],
      "sharedMemory strategy custom needs customStore (or a shared memory store passed in the overrides)",
      "customStore",
      "missing"
    )
  }
  for (const [name, decls] of declarationsOf(file, overrides)) {
    for (const d of decls.slice(1)) {
      add(
        "L034",
        d.path,
        `tool ${JSON.stringify(name)} is declared by ${describeDeclaration(decls[0]!)} and by ${describeDeclaration(d)}; a tool name must have one source`,
        "a unique tool name",
        name
      )
    }
  }
  return out
}

/** L050: an `output:` schema the runtime cannot check answers against. */
const outputIssues = (file: AgentFile, add: (rule: string, path: FieldPath, message: string, expected: string, actual: string) => void): void => {
  const check = (output: OutputConfig | undefined, at: FieldPath) => {
    if (output === undefined) return
    try {
      Term.parse({ llm: { system: "", output: termOutput(output) } })
    } catch (error) {
      const expected = typeof error === "object" && error !== null && "expected" in error ? String(error.expected) : String(error)
      add("L050", [...at, "output", "schema"], `output.schema cannot be checked: expected ${expected}`, "a JSON Schema", "an unreadable schema")
    }
  }
  for (const { agent, path } of agentsOf(file)) {
    check(agent.output, path)
    agent.chain?.steps.forEach((step, i) => check(step.output, [...path, "chain", "steps", i]))
  }
}

/** L046: a send or receive naming a channel `channels:` does not declare; L047: a name declared twice. */
const channelIssues = (file: AgentFile, add: (rule: string, path: FieldPath, message: string, expected: string, actual: string) => void): void => {
  const declared = new Map<string, number>()
  file.channels?.forEach((c, i) => {
    const first = declared.get(c.name)
    if (first === undefined) declared.set(c.name, i)
    else
      add("L047", ["channels", i, "name"], `channel ${JSON.stringify(c.name)} is declared twice (first at channels[${first}])`, "a unique channel name", c.name)
  })
  const list = [...declared.keys()].map((n) => JSON.stringify(n)).join(", ")
  for (const { agent, path } of agentsOf(file)) {
    for (const op of ["receive", "send"] as const) {
      const channel = agent[op]
      if (channel === undefined || declared.has(channel)) continue
      const message =
        file.channels === undefined
          ? `${op} names channel ${JSON.stringify(channel)}, but the file has no channels: block`
          : `${op} names channel ${JSON.stringify(channel)}, which channels: does not declare (it declares ${list})`
      add("L046", [...path, op], message, "a channel of channels:", channel)
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Compiling
// ---------------------------------------------------------------------------------------------

const MODEL_HISTORY_CAP = 80_000

/** `runtime.otel` as the runtime's setting (the fields it wrote). */
const otelOf = (otel: NonNullable<NonNullable<AgentFile["runtime"]>["otel"]>): NonNullable<CompiledAgent["runtime"]["otel"]> => ({
  url: otel.url,
  ...(otel.serviceName !== undefined ? { serviceName: otel.serviceName } : {}),
  ...(otel.headers !== undefined ? { headers: otel.headers } : {})
})

/** An `output:` block as the `llm` term's output (the fields it wrote). */
const termOutput = (output: OutputConfig): Term.Output => ({
  schema: output.schema,
  ...(output.name !== undefined ? { name: output.name } : {}),
  ...(output.description !== undefined ? { description: output.description } : {}),
  ...(output.strict !== undefined ? { strict: output.strict } : {}),
  ...(output.retries !== undefined ? { retries: output.retries } : {})
})

/** The system prompt of the LLM call that gives a non-simple agent's answer the shape of its `output:`. */
const OUTPUT_PROMPT = "Give the result below as the JSON value the output schema asks for. Keep its content; change only its form."

const mergeModel = (parent: ModelConfig | undefined, child: ModelConfig | undefined): ModelConfig | undefined => {
  if (child === undefined) return parent
  if (parent === undefined) return child
  const out: Record<string, unknown> = { ...parent }
  for (const [k, v] of Object.entries(child)) if (v !== undefined) out[k] = v
  return out as ModelConfig
}

/** Split a `--model` override into a provider and a name. */
const parseModelOverride = (spec: string, providers: ReadonlySet<string>): { provider?: string; name: string } => {
  const colon = spec.indexOf(":")
  if (colon > 0 && providers.has(spec.slice(0, colon))) {
    const name = spec.slice(colon + 1)
    return name === "" ? { provider: spec.slice(0, colon), name } : { provider: spec.slice(0, colon), name }
  }
  return { name: spec }
}

/** Whether applying the term always gives a string (so branch results can be labelled as text). */
const yieldsText = (t: Term.Term): boolean => {
  switch (t._tag) {
    case "Llm":
    case "React":
      return true
    case "Compose": {
      const last = t.stages[t.stages.length - 1]!
      return isPublisher(last) && t.stages.length > 1 ? yieldsText(t.stages[t.stages.length - 2]!) : yieldsText(last)
    }
    case "Route":
      return t.routes.every(([, a]) => yieldsText(a)) && (t.default === undefined || yieldsText(t.default))
    case "Guard":
      return yieldsText(t.agent) && (typeof t.fallback === "string" || (t.fallback.value._tag === "Lit" && typeof t.fallback.value.value === "string"))
    case "Memory":
      return yieldsText(t.agent)
    case "Lam":
      return t.body._tag === "Lit" && typeof t.body.value === "string"
    case "Par":
      return t.merge === "concat" || (typeof t.merge === "object" && yieldsText(t.merge))
    case "Tool":
      return t.name === "rag_retrieve_context" || t.name === parserToolNames.json
    default:
      return false
  }
}

/** `λy. (λpublished. y) (shared_publish [name, y])`: record the output under `name`, pass it on. */
const publisher = (name: string, tool: Term.Term): Term.Term =>
  Term.lam("y", Term.app(Term.lam("published", Term.var("y")), Term.app(tool, Term.list([Term.lit(name), Term.var("y")]))))

/** Whether a stage is a {@link publisher}. */
const isPublisher = (t: Term.Term): boolean =>
  t._tag === "Lam" &&
  t.body._tag === "App" &&
  t.body.arg._tag === "App" &&
  t.body.arg.func._tag === "Tool" &&
  t.body.arg.func.name === SharedMemory.toolNames.publish

/** `λrs. "[a]:\n" ++ rs[0] ++ "\n\n---\n\n" ++ "[b]:\n" ++ rs[1] …` */
const labelledJoin = (names: ReadonlyArray<string>): Term.Term => {
  let element: Term.Term = Term.var("rs")
  const parts: Array<Term.Term> = []
  names.forEach((name, i) => {
    if (i > 0) parts.push(Term.lit("\n\n---\n\n"))
    parts.push(Term.lit(`[${name}]:\n`), Term.head(element))
    element = Term.tail(element)
  })
  return Term.lam(
    "rs",
    parts.reduce((a, b) => Term.concat(a, b))
  )
}

/** An `a2a.clients` entry without its name: how to reach the remote agent. */
const a2aConnection = ({ name: _name, ...connection }: A2AClientConfig): Omit<A2AClientConfig, "name"> => connection

interface RefBuilder {
  kind: ToolReferenceKind
  declared: boolean
  usedAt: Array<string>
  server?: string
  policy?: ToolReference["policy"]
  rag?: Readonly<Record<string, unknown>>
}

/**
 * The tool name of a sub-agent: its `tool`, else `call_<name>` without a trailing `-agent`.
 *
 * @since 0.2.0
 * @category compiling
 * @example
 * ```ts
 * import { subAgentToolName } from "lambdagent/yaml"
 * subAgentToolName("research-agent", {}) // "call_research"
 * ```
 */
export const subAgentToolName = (name: string, sub: SubAgentConfig): string => sub.tool ?? `call_${name.replace(/-agent$/, "")}`

const skillText = (skill: SkillConfig): string | undefined => {
  const parts: Array<string> = []
  if (skill.description !== undefined) parts.push(skill.description)
  if (skill.inputType !== undefined || skill.outputType !== undefined) parts.push(`(${skill.inputType ?? "Str"} → ${skill.outputType ?? "Str"})`)
  skill.examples?.forEach((e) => parts.push(`Example: ${JSON.stringify(e.input)} → ${JSON.stringify(e.output)}.`))
  return parts.length === 0 ? undefined : parts.join(" ")
}

interface AgentTool {
  readonly kind: "subagent" | "skill" | "pipeline"
  readonly key: string
  readonly path: FieldPath
  readonly description: string | undefined
  readonly config?: SubAgentConfig
  readonly skill?: SkillConfig
  readonly pipeline?: CliPipelineConfig
  term?: Term.Term
}

/** How the model is told what an agent tool without a description does. */
const agentToolSummary = (tool: AgentTool): string =>
  tool.pipeline !== undefined
    ? `the pipeline ${tool.pipeline.steps.join(tool.pipeline.parallel === true ? " ∥ " : " >> ")}`
    : `the ${tool.kind === "skill" ? "skill" : "sub-agent"} ${tool.key}`

/** Where a file sits among the sub-agent files being compiled (to refuse cycles). */
interface FileContext {
  readonly baseDir?: string
  /** The agent files being compiled, outermost first. */
  readonly files: ReadonlyArray<string>
}

const cycleError = (path: FieldPath, cycle: ReadonlyArray<string>) =>
  semanticError([
    {
      path,
      field: formatFieldPath(path),
      message: `sub-agent cycle: ${cycle.join(" → ")}`,
      expected: "sub-agents that do not call themselves",
      actual: cycle.join(" → ")
    }
  ])

class Compiler {
  readonly origins = new Map<Term.Term, FieldPath>()
  readonly refs = new Map<string, RefBuilder>()
  readonly memory: Array<MemoryRequirement> = []
  readonly providers: Array<string> = []
  readonly shared: SharedMemoryRequirement | undefined
  private readonly declarations: Map<string, Array<Declaration>>
  private readonly modelOverride: { provider?: string; name: string } | undefined

  /** Sub-agents and skills by tool name; their terms are compiled when an agent first uses them. */
  private readonly agentTools = new Map<string, AgentTool>()
  /** Tool names whose terms are being compiled, innermost last (a repeat is a cycle). */
  private readonly building: Array<string> = []

  constructor(
    private readonly file: AgentFile,
    private readonly overrides: Overrides,
    private readonly context: FileContext = { files: [] }
  ) {
    for (const [name, sub] of Object.entries(file.subAgents ?? {})) {
      this.agentTools.set(subAgentToolName(name, sub), { kind: "subagent", key: name, path: ["subAgents", name], description: sub.description, config: sub })
    }
    for (const [name, pipeline] of Object.entries(file.cli?.pipelines ?? {})) {
      if (!this.agentTools.has(name))
        this.agentTools.set(name, { kind: "pipeline", key: name, path: ["cli", "pipelines", name], description: pipeline.description, pipeline })
    }
    file.skills?.forEach((skill, i) => {
      if (!this.agentTools.has(skill.name))
        this.agentTools.set(skill.name, { kind: "skill", key: skill.name, path: ["skills", i], description: skillText(skill), skill })
    })
    this.shared = sharedRequirement(file.sharedMemory)
    this.declarations = declarationsOf(file, overrides)
    const providers = new Set<string>([...knownProviders, ...Object.keys(overrides.providers ?? {})])
    this.modelOverride = overrides.model === undefined ? undefined : parseModelOverride(overrides.model, providers)
  }

  private mark(term: Term.Term, path: FieldPath): Term.Term {
    this.origins.set(term, path)
    return term
  }

  private useTool(name: string, path: FieldPath, agent: AgentConfig, listedLocally: boolean, rag?: Readonly<Record<string, unknown>>): void {
    let builder = this.refs.get(name)
    if (builder === undefined) {
      builder = this.resolve(name, agent, listedLocally, rag)
      this.refs.set(name, builder)
    }
    const at = formatFieldPath(path)
    if (!builder.usedAt.includes(at)) builder.usedAt.push(at)
  }

  private resolve(name: string, agent: AgentConfig, listedLocally: boolean, rag?: Readonly<Record<string, unknown>>): RefBuilder {
    if (rag !== undefined) return { kind: "rag", declared: true, usedAt: [], rag }
    if (isTerminateName(name)) return { kind: "terminate", declared: true, usedAt: [] }
    if (isBuiltinTool(name)) return { kind: "builtin", declared: true, usedAt: [] }
    if (this.shared !== undefined && allSharedTools.has(name)) return { kind: "shared", declared: true, usedAt: [] }
    const ownServer = Object.entries(agent.mcp?.onlineTool ?? {}).find(([, tools]) => tools.includes(name))?.[0]
    const policy = agent.mcp?.policy
    if (ownServer !== undefined) return { kind: "mcp", declared: true, usedAt: [], server: ownServer, ...(policy !== undefined ? { policy } : {}) }
    const declared = this.declarations.get(name)?.[0]
    if (declared !== undefined) {
      return {
        kind: declared.kind,
        declared: true,
        usedAt: [],
        ...(declared.server !== undefined ? { server: declared.server } : {}),
        ...(declared.kind === "mcp" && policy !== undefined ? { policy } : {})
      }
    }
    return { kind: "local", declared: listedLocally, usedAt: [] }
  }

  private llm(system: string, name: string, model: ModelConfig | undefined, path: FieldPath, conversationDefault?: boolean, output?: OutputConfig): Term.Term {
    const settings: Record<string, unknown> = {}
    const override = this.modelOverride
    const provider = override?.provider ?? model?.provider
    const baseUrlKept = override?.provider === undefined || override.provider === model?.provider
    const entries: Array<[string, unknown]> = [
      ["provider", provider],
      ["name", override !== undefined && override.name !== "" ? override.name : model?.name],
      ["temperature", this.overrides.temperature ?? model?.temperature],
      ["maxTokens", model?.maxTokens],
      ["topP", model?.topP],
      ["stop", model?.stopSequences],
      ["baseUrl", baseUrlKept ? model?.baseUrl : undefined],
      ["timeout", model?.timeout],
      ["session", model?.session]
    ]
    for (const [k, v] of entries) if (v !== undefined) settings[k] = v
    if (provider !== undefined && !this.providers.includes(provider)) this.providers.push(provider)
    // a structured answer keeps no conversation (lint reports a conversation: true beside it)
    const conversation = output !== undefined ? undefined : (model?.conversation ?? conversationDefault)
    const maxHistoryTokens =
      conversation === false || output !== undefined
        ? undefined
        : (model?.maxHistoryTokens ?? (model?.contextWindow !== undefined ? Math.min(Math.floor(model.contextWindow / 2), MODEL_HISTORY_CAP) : undefined))
    const term = Term.llm({
      system,
      name,
      ...(Object.keys(settings).length > 0 ? { model: settings as Term.ModelSettings } : {}),
      ...(conversation !== undefined ? { conversation } : {}),
      ...(maxHistoryTokens !== undefined && maxHistoryTokens >= 1 ? { maxHistoryTokens } : {}),
      ...(output !== undefined ? { output: termOutput(output) } : {})
    })
    return this.mark(term, path)
  }

  private tool(name: string, path: FieldPath, agent: AgentConfig, listedLocally: boolean, rag?: Readonly<Record<string, unknown>>): Term.Term {
    this.useTool(name, path, agent, listedLocally, rag)
    return this.mark(Term.tool(name), path)
  }

  /** `react.earlyStop`: a validator expression over the step's observation `x`. */
  private earlyStop(expression: string, path: FieldPath): Term.Term {
    const predicate = this.mark(compileValidatorExpr(parseValidator(expression)), path)
    this.visitBuiltins(predicate, path)
    return predicate
  }

  private guard(core: Term.Term, guard: GuardConfig, path: FieldPath): Term.Term {
    const checks: Array<Term.Term> = []
    if (guard.validator !== undefined) {
      const validator = compileValidatorExpr(parseValidator(guard.validator)) as Term.Of<"Lam">
      checks.push(validator.body)
      this.visitBuiltins(validator, [...path, "validator"])
    }
    if (guard.maxOutputLength !== undefined) checks.push(Term.lte(Term.length(Term.var("x")), Term.lit(guard.maxOutputLength)))
    const validate = Term.lam(
      "x",
      checks.reduce((a, b) => Term.and(a, b))
    )
    const f = guard.fallback
    const fallback: Term.Fallback =
      f === undefined
        ? "error"
        : typeof f === "string"
          ? f === "error" || f === "empty" || f === "last"
            ? f
            : { value: Term.lit(f) }
          : { value: Term.lit(f.value) }
    return this.mark(Term.guard({ agent: core, validate, retry: guard.retry ?? 0, fallback }), path)
  }

  private visitBuiltins(term: Term.Term, path: FieldPath): void {
    const stack = [term]
    while (stack.length > 0) {
      const t = stack.pop()!
      if (t._tag === "Tool") this.useTool(t.name, path, {}, true)
      const kids = Term.children(t)
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!)
    }
  }

  private reactTools(agent: AgentConfig, path: FieldPath, isRoot: boolean, ragBlock: Readonly<Record<string, unknown>> | undefined): ReadonlyArray<string> {
    const names: Array<string> = []
    const push = (name: string, at: FieldPath, listedLocally: boolean, rag?: Readonly<Record<string, unknown>>) => {
      if (!names.includes(name)) names.push(name)
      if (!this.isAgentTool(name)) this.useTool(name, at, agent, listedLocally, rag)
    }
    const disabled = agent.mcp?.policy?.mode === "disable"
    for (const [server, tools] of Object.entries(agent.mcp?.onlineTool ?? {})) {
      if (!disabled) tools.forEach((t, i) => push(t, [...path, "mcp", "onlineTool", server, i], true))
    }
    agent.mcp?.localTools?.forEach((t, i) => {
      // the loop ends on a call to terminate in any letter case, so the file may spell it so too
      if (isTerminateName(t)) push("terminate", [...path, "mcp", "localTools", i], true)
      else if (!disabled) push(t, [...path, "mcp", "localTools", i], true)
    })
    if (this.shared !== undefined && !disabled) for (const t of sharedToolsOf(this.shared)) push(t, ["sharedMemory"], true)
    if (isRoot && !disabled) {
      this.file.mcpServers?.forEach((s, i) => s.tools?.forEach((t, j) => push(t, ["mcpServers", i, "tools", j], true)))
      for (const name of Object.keys(this.file.cli?.agents ?? {})) push(name, ["cli", "agents", name], true)
      for (const name of Object.keys(this.file.cli?.pipelines ?? {})) push(name, ["cli", "pipelines", name], true)
      this.file.a2a?.clients?.forEach((c, i) => push(c.name, ["a2a", "clients", i, "name"], true))
      this.overrides.tools?.forEach((t) => push(toolName(t), [...path, "type"], true))
      for (const [name, sub] of Object.entries(this.file.subAgents ?? {})) push(subAgentToolName(name, sub), ["subAgents", name], true)
    }
    if (ragBlock !== undefined && !disabled) push("rag_retrieve", [...path, "rag"], true, ragBlock)
    return names
  }

  agent(
    agent: AgentConfig,
    path: FieldPath,
    parentModel: ModelConfig | undefined,
    fallbackName: string,
    isRoot: boolean,
    conversationDefault?: boolean
  ): Term.Term {
    const type = agent.type ?? "simple"
    const name = agent.name ?? agent.agentId ?? fallbackName
    const model = mergeModel(parentModel, agent.model)
    const rag = agent.rag !== undefined && agent.rag.enabled !== false ? (agent.rag as Readonly<Record<string, unknown>>) : undefined
    const agenticRag = rag !== undefined && type === "react" && agent.rag?.agentic !== false
    let core: Term.Term
    switch (type) {
      case "simple":
        core = this.llm(agent.systemPrompt ?? "", name, model, path, conversationDefault, agent.output)
        break
      case "react": {
        const tools = this.reactTools(agent, path, isRoot, agenticRag ? rag : undefined)
        const agentTools = tools.filter((t) => this.isAgentTool(t))
        const think = this.llm(
          `${agent.react?.thinkPrompt ?? agent.systemPrompt ?? ""}${this.agentToolDocs(agentTools)}`,
          `${name}.think`,
          model,
          agent.react?.thinkPrompt !== undefined ? [...path, "react", "thinkPrompt"] : [...path, "systemPrompt"]
        )
        const r = agent.react
        core = this.mark(
          Term.react({
            think,
            tools,
            ...(agentTools.length > 0 ? { agents: agentTools.map((t) => [t, this.agentToolTerm(t)] as const) } : {}),
            maxSteps: this.overrides.maxSteps ?? r?.maxSteps ?? 10,
            ...(r?.toolTimeout !== undefined ? { toolTimeout: r.toolTimeout } : {}),
            ...(r?.observationEnabled !== undefined ? { observe: r.observationEnabled } : {}),
            ...(r?.toolCalling !== undefined ? { toolCalling: r.toolCalling } : {}),
            ...(r?.maxToolCalls !== undefined ? { maxToolCalls: r.maxToolCalls } : {}),
            ...(r?.earlyStop !== undefined ? { earlyStop: this.earlyStop(r.earlyStop, [...path, "react", "earlyStop"]) } : {})
          }),
          [...path, "react"]
        )
        break
      }
      case "chain":
        core = this.mark(Term.compose(agent.chain!.steps.map((step, i) => this.step(step, i, agent, path, model))), [...path, "chain"])
        break
      case "router":
        core = this.router(agent, path, model, name)
        break
      case "parallel":
        core = this.parallel(agent, path, model, name)
        break
      case "groupchat":
        core = this.groupChat(agent, path, model, name)
        break
      case "handoff":
        core = this.handoff(agent, path, model, name)
        break
      case "skill":
        core = this.skillAgent(agent, path, model, name)
        break
    }
    if (agent.output !== undefined && type !== "simple") {
      // any other agent's answer is put in the schema's shape by one more LLM call
      const format = this.llm(OUTPUT_PROMPT, `${name}.output`, model, [...path, "output"], false, agent.output)
      core = this.mark(Term.compose(core._tag === "Compose" ? [...core.stages, format] : [core, format]), [...path, "output"])
    }
    const shared = this.shared
    if (shared?.inject && (type === "simple" || type === "react" || type === "chain")) {
      // the bindings go right before the core, after retrieval (whose query stays the plain input)
      const show = this.tool(SharedMemory.toolNames.context, ["sharedMemory"], agent, true)
      core = this.mark(Term.compose(core._tag === "Compose" ? [show, ...core.stages] : [show, core]), ["sharedMemory"])
    }
    if (rag !== undefined && !agenticRag) {
      const retrieve = this.tool("rag_retrieve_context", [...path, "rag"], agent, true, rag)
      core = this.mark(Term.compose(core._tag === "Compose" ? [retrieve, ...core.stages] : [retrieve, core]), [...path, "rag"])
    }
    if (agent.guard !== undefined) core = this.guard(core, agent.guard, [...path, "guard"])
    if (shared?.publish) {
      const record = publisher(name, this.tool(SharedMemory.toolNames.publish, ["sharedMemory"], agent, true))
      core = this.mark(Term.compose(core._tag === "Compose" ? [...core.stages, record] : [core, record]), ["sharedMemory"])
    }
    const memory = agent.memory
    if (memory !== undefined && memory.enabled !== false) {
      const requirement: MemoryRequirement = {
        path: formatFieldPath([...path, "memory"]),
        strategy: memory.strategy ?? "local",
        ...(memory.customStore !== undefined ? { customStore: memory.customStore } : {}),
        size: memory.size ?? 10,
        ttl: memory.ttl ?? 0,
        scope: memory.scope ?? "session"
      }
      this.memory.push(requirement)
      core = this.mark(Term.memory({ agent: core, size: requirement.size, ttl: requirement.ttl, scope: requirement.scope }), [...path, "memory"])
    }
    if (agent.receive !== undefined) {
      const receive = this.mark(Term.receive(agent.receive), [...path, "receive"])
      core = this.mark(Term.compose(core._tag === "Compose" ? [receive, ...core.stages] : [receive, core]), [...path, "receive"])
    }
    if (agent.send !== undefined) {
      const send = this.mark(Term.send(agent.send), [...path, "send"])
      core = this.mark(Term.compose(core._tag === "Compose" ? [...core.stages, send] : [core, send]), [...path, "send"])
    }
    return core
  }

  /** The file's term inside the scope of its `channels:`, when it declares any. */
  scoped(file: AgentFile, term: Term.Term): Term.Term {
    const declared = file.channels
    if (declared === undefined) return term
    return this.mark(
      Term.channels(
        declared.map((c) => ({ name: c.name, capacity: c.capacity ?? 0 })),
        term
      ),
      ["channels"]
    )
  }

  private step(step: StepConfig, i: number, agent: AgentConfig, path: FieldPath, model: ModelConfig | undefined): Term.Term {
    const at = [...path, "chain", "steps", i]
    const name = step.name ?? `step${i + 1}`
    let core =
      step.tool !== undefined
        ? this.isAgentTool(step.tool)
          ? this.mark(this.agentToolTerm(step.tool), [...at, "tool"])
          : this.tool(step.tool, [...at, "tool"], agent, agent.mcp?.localTools?.includes(step.tool) ?? false)
        : step.ask !== undefined
          ? this.mark(Term.ask(step.ask), [...at, "ask"])
          : this.llm(step.prompt ?? "", name, mergeModel(model, step.model), at, undefined, step.output)
    const parser = step.outputParser
    if (parser !== undefined && parser !== "text") {
      core = this.mark(Term.compose([core, this.tool(parserToolNames[parser], [...at, "outputParser"], agent, true)]), at)
    }
    if (step.guard !== undefined) core = this.guard(core, step.guard, [...at, "guard"])
    return core
  }

  private router(agent: AgentConfig, path: FieldPath, model: ModelConfig | undefined, name: string): Term.Term {
    const router = agent.router!
    const routes = Object.entries(router.routes ?? {})
    const categories = router.classifier.categories ?? routes.map(([label]) => label)
    const prompt = categories.length === 0 ? router.classifier.prompt : `${router.classifier.prompt}\n\nAnswer with exactly one of: ${categories.join(", ")}.`
    const classifyPath = [...path, "router", "classifier"]
    const classify = this.llm(prompt, `${name}.classifier`, mergeModel(model, router.classifier.model), classifyPath, false)
    const target = (value: string | AgentConfig, at: FieldPath, label: string): Term.Term =>
      typeof value === "string" ? this.mark(Term.lam("x", Term.lit(value)), at) : this.agent(value, at, model, label, false)
    return this.mark(
      Term.route({
        classify,
        routes: routes.map(([label, value]) => [label, target(value, [...path, "router", "routes", label], label)] as const),
        ...(router.default !== undefined ? { default: target(router.default, [...path, "router", "default"], "default") } : {})
      }),
      [...path, "router"]
    )
  }

  private parallel(agent: AgentConfig, path: FieldPath, model: ModelConfig | undefined, name: string): Term.Term {
    const parallel = agent.parallel!
    const names = parallel.agents.map((a, i) => a.name ?? a.agentId ?? `agent${i + 1}`)
    const branches = parallel.agents.map((a, i) => this.agent(a, [...path, "parallel", "agents", i], model, names[i]!, false))
    let merge: Term.Merge = parallel.merge === "concat" ? "concat" : "tuple"
    if (parallel.merge === "custom") {
      const merger = this.llm(parallel.mergePrompt ?? "", `${name}.merge`, model, [...path, "parallel", "mergePrompt"])
      merge = branches.every(yieldsText) ? this.mark(Term.compose([labelledJoin(names), merger]), [...path, "parallel", "merge"]) : merger
    }
    return this.mark(Term.par(branches, merge), [...path, "parallel"])
  }

  /** Whether `name` is a sub-agent or skill of the file. */
  isAgentTool(name: string): boolean {
    return this.agentTools.has(name)
  }

  /** The term of a sub-agent or skill, compiled on first use. */
  agentToolTerm(name: string): Term.Term {
    const tool = this.agentTools.get(name)!
    if (tool.term !== undefined) return tool.term
    if (this.building.includes(name)) throw cycleError(tool.path, [...this.building.slice(this.building.indexOf(name)), name])
    this.building.push(name)
    try {
      tool.term =
        tool.pipeline !== undefined
          ? this.pipeline(tool.pipeline, tool.path)
          : tool.skill !== undefined
            ? this.agent(tool.skill.agent, [...tool.path, "agent"], this.file.model, tool.key, false)
            : tool.config!.inline !== undefined
              ? this.agent(tool.config!.inline, [...tool.path, "inline"], this.file.model, tool.key, false)
              : this.subAgentFile(tool)
    } finally {
      this.building.pop()
    }
    return tool.term
  }

  /** A pipeline of `cli.pipelines`: its steps composed (`a >> b`), or run side by side and joined. */
  private pipeline(pipeline: CliPipelineConfig, path: FieldPath): Term.Term {
    const steps = pipeline.steps.map((step, i) => {
      const at = [...path, "steps", i]
      return this.isAgentTool(step) ? this.mark(this.agentToolTerm(step), at) : this.tool(step, at, {}, false)
    })
    return this.mark(pipeline.parallel === true ? Term.par(steps, "concat") : Term.compose(steps), path)
  }

  private subAgentFile(tool: AgentTool): Term.Term {
    const path = [...tool.path, "config"]
    const file = resolvePath(this.context.baseDir ?? ".", tool.config!.config ?? "")
    if (this.context.files.includes(file))
      throw cycleError(
        path,
        [...this.context.files.slice(this.context.files.indexOf(file)), file].map((f) => relativePath(this.context.baseDir ?? ".", f) || f)
      )
    const source = readSource(file)
    const sub = validateConfig(source)
    const issues = semanticIssues(sub, { overrides: this.overrides, locate: (p) => source.locate(p) })
    if (issues.length > 0) throw semanticError(issues, source.file)
    const compiler = new Compiler(sub, this.overrides, { baseDir: dirname(file), files: [...this.context.files, file] })
    const term = compiler.scoped(sub, compiler.agent(sub, [], undefined, sub.name ?? tool.key, true))
    // what the sub-agent needs is needed by the file that calls it
    for (const [name, ref] of compiler.refs) if (!this.refs.has(name)) this.refs.set(name, ref)
    this.memory.push(...compiler.memory)
    for (const provider of compiler.providers) if (!this.providers.includes(provider)) this.providers.push(provider)
    return term
  }

  private agentToolDocs(names: ReadonlyArray<string>): string {
    const lines = names.flatMap((n) => {
      const tool = this.agentTools.get(n)
      return tool === undefined ? [] : [`- ${n}: ${tool.description ?? agentToolSummary(tool)} Arguments: {"task": "<what to do>"}`]
    })
    return lines.length === 0 ? "" : `\n\n## Agents you can call as tools\n${lines.join("\n")}`
  }

  private skillAgent(agent: AgentConfig, path: FieldPath, model: ModelConfig | undefined, name: string): Term.Term {
    const block = agent.skill!
    const candidates = (this.file.skills ?? []).filter((s) => block.tags === undefined || s.tags?.some((t) => block.tags!.includes(t)))
    if (block.select === "tag" || candidates.length === 1) return this.mark(this.agentToolTerm(candidates[0]!.name), [...path, "skill"])
    const list = candidates.map((s) => `- ${s.name}: ${s.description ?? s.name}`).join("\n")
    const prompt = `${block.prompt ?? "Pick the skill that fits the input."}\n\n${list}\n\nAnswer with exactly one of: ${candidates.map((s) => s.name).join(", ")}.`
    const classify = this.llm(prompt, `${name}.selector`, mergeModel(model, block.model), [...path, "skill"], false)
    return this.mark(Term.route({ classify, routes: candidates.map((s) => [s.name, this.agentToolTerm(s.name)] as const) }), [...path, "skill"])
  }

  private groupChat(agent: AgentConfig, path: FieldPath, model: ModelConfig | undefined, name: string): Term.Term {
    const chat = agent.groupchat!
    const at = [...path, "groupchat"]
    const names = chat.agents.map((a, i) => a.name ?? a.agentId ?? `agent${i + 1}`)
    // each turn sees the transcript in its input, so a speaker keeps no conversation of its own
    const agents = chat.agents.map((a, i) => [names[i]!, this.agent(a, [...at, "agents", i], model, names[i]!, false, false)] as const)
    const kind = chat.scheduler ?? "round_robin"
    const scheduler: Term.Scheduler =
      kind === "round_robin"
        ? kind
        : kind === "random"
          ? { random: chat.seed ?? 0 }
          : {
              llm: this.llm(
                `${chat.schedulerPrompt ?? "Name the participant who should speak next."}\n\nAnswer with exactly one of: ${names.join(", ")}.`,
                `${name}.scheduler`,
                mergeModel(model, chat.schedulerModel),
                [...at, "schedulerPrompt"],
                false
              )
            }
    let until: Term.Term | undefined
    if (chat.termination?.custom !== undefined) {
      until = this.mark(compileValidatorExpr(parseValidator(chat.termination.custom)), [...at, "termination", "custom"])
      this.visitBuiltins(until, [...at, "termination", "custom"])
    }
    const summary = chat.summaryAgent === undefined ? undefined : this.agent(chat.summaryAgent, [...at, "summaryAgent"], model, `${name}.summary`, false, false)
    const history =
      model?.maxHistoryTokens ?? (model?.contextWindow !== undefined ? Math.min(Math.floor(model.contextWindow / 2), MODEL_HISTORY_CAP) : undefined)
    return this.mark(
      Term.groupChat({
        agents,
        maxRounds: chat.maxRounds ?? 10,
        scheduler,
        keywords: chat.termination?.keywords ?? Term.defaultKeywords,
        ...(until !== undefined ? { until } : {}),
        ...(summary !== undefined ? { summary } : {}),
        ...(history !== undefined && history >= 1 ? { maxHistoryTokens: history } : {})
      }),
      at
    )
  }

  private handoff(agent: AgentConfig, path: FieldPath, model: ModelConfig | undefined, name: string): Term.Term {
    const h = agent.handoff!
    const at = [...path, "handoff"]
    const entries = Object.entries(h.registry)
    const targets = h.selector.targets ?? entries.map(([label]) => label)
    const prompt = targets.length === 0 ? h.selector.prompt : `${h.selector.prompt}\n\nAnswer with exactly one of: ${targets.join(", ")}.`
    const select = this.llm(prompt, `${name}.selector`, mergeModel(model, h.selector.model), [...at, "selector"], false)
    return this.mark(
      Term.handoff({
        select,
        registry: entries.map(([label, a]) => [label, this.agent(a, [...at, "registry", label], model, label, false)] as const),
        ...(h.fallback !== undefined ? { fallback: this.agent(h.fallback, [...at, "fallback"], model, "fallback", false) } : {}),
        maxDepth: h.maxDepth ?? 3
      }),
      at
    )
  }

  references(file: AgentFile): Array<ToolReference> {
    const nodes = file.app?.mcp?.custom.nodes ?? {}
    const out: Array<ToolReference> = []
    for (const [name, b] of this.refs) {
      let connection: McpConnection | undefined
      if (b.kind === "mcp" && b.server !== undefined) {
        const node = nodes[b.server]
        const server = file.mcpServers?.find((s) => s.name === b.server)
        if (server !== undefined) {
          connection = {
            transport: server.transport,
            ...(server.url !== undefined ? { url: server.url } : {}),
            ...(server.headers !== undefined ? { headers: server.headers } : {}),
            ...(server.timeout !== undefined ? { timeout: server.timeout } : {}),
            ...(server.command !== undefined ? { command: server.command } : {}),
            ...(server.args !== undefined ? { args: server.args } : {}),
            ...(server.env !== undefined ? { env: server.env } : {})
          }
        } else if (node !== undefined) {
          connection = {
            transport: "http",
            url: node.url,
            ...(node.endpoint !== undefined ? { endpoint: node.endpoint } : {}),
            ...(node.headers !== undefined ? { headers: node.headers } : {}),
            ...(node.timeout !== undefined ? { timeout: node.timeout } : {}),
            ...(node.protocol !== undefined ? { protocol: node.protocol } : {})
          }
        }
      }
      const cli = b.kind === "cli" ? file.cli?.agents?.[name] : undefined
      const client = b.kind === "a2a" ? file.a2a?.clients?.find((c) => c.name === name) : undefined
      const definition =
        b.kind === "injected" ? this.overrides.tools?.find((t): t is Tools.ToolDefinition => typeof t !== "string" && t.name === name) : undefined
      out.push({
        name,
        kind: b.kind,
        usedAt: b.usedAt,
        declared: b.declared,
        ...(b.server !== undefined ? { server: b.server } : {}),
        ...(connection !== undefined ? { connection } : {}),
        ...(b.policy !== undefined ? { policy: b.policy } : {}),
        ...(cli !== undefined ? { cli } : {}),
        ...(client !== undefined ? { a2a: a2aConnection(client) } : {}),
        ...(b.rag !== undefined ? { rag: b.rag } : {}),
        ...(definition !== undefined ? { definition } : {})
      })
    }
    return out
  }
}

// ---------------------------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------------------------

/**
 * Compile a file that passed {@link validateConfig}, without the semantic checks: every
 * schema-valid file gives a term (an empty chain gives an empty `compose`, which the term parser
 * would reject). Lint uses it to analyse files that {@link compileConfig} refuses.
 *
 * @since 0.1.0
 * @category compiling
 * @example
 * ```ts
 * import { compileChecked } from "lambdagent/yaml"
 * compileChecked({ type: "simple", systemPrompt: "Hi" }, {}).term._tag // "Llm"
 * ```
 */
export const compileChecked = (
  file: AgentFile,
  overrides: Overrides,
  where: { readonly baseDir?: string; readonly file?: string } = {}
): {
  readonly term: Term.Term
  readonly tools: ReadonlyArray<ToolReference>
  readonly memory: ReadonlyArray<MemoryRequirement>
  readonly sharedMemory?: SharedMemoryRequirement
  readonly providers: ReadonlyArray<string>
  readonly origins: ReadonlyMap<Term.Term, FieldPath>
} => {
  const files = where.file !== undefined ? [resolvePath(where.file)] : []
  const compiler = new Compiler(file, overrides, where.baseDir === undefined ? { files } : { baseDir: where.baseDir, files })
  const term = compiler.scoped(file, compiler.agent(file, [], undefined, "agent", true))
  return {
    term,
    tools: compiler.references(file),
    memory: compiler.memory,
    ...(compiler.shared !== undefined ? { sharedMemory: compiler.shared } : {}),
    providers: compiler.providers,
    origins: compiler.origins
  }
}

const checkOverrides = (overrides: Overrides): void => {
  const issues: Array<Issue> = []
  const bad = (key: string, expected: string, actual: unknown) =>
    issues.push({
      path: ["overrides", key],
      field: `overrides.${key}`,
      message: `expected ${expected}, got ${JSON.stringify(actual)}`,
      expected,
      actual: JSON.stringify(actual)
    })
  const t = overrides.temperature
  if (t !== undefined && (typeof t !== "number" || !Number.isFinite(t) || t < 0 || t > 2)) bad("temperature", "a number from 0 to 2", t)
  const m = overrides.maxSteps
  if (m !== undefined && (typeof m !== "number" || !Number.isInteger(m) || m < 1)) bad("maxSteps", "an integer ≥ 1", m)
  if (overrides.model !== undefined && (typeof overrides.model !== "string" || overrides.model.trim() === "")) bad("model", "a model name", overrides.model)
  overrides.tools?.forEach((tool, i) => {
    const name = typeof tool === "string" ? tool : tool?.name
    if (typeof name !== "string" || name === "") bad(`tools[${i}]`, "a tool name or definition", tool)
  })
  if (issues.length > 0) throw schemaError(issues)
}

/**
 * Options of {@link compileConfig}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { CompileOptions } from "lambdagent/yaml"
 * const o: CompileOptions = { overrides: { temperature: 0 }, file: "agent.yml" }
 * ```
 */
export interface CompileOptions {
  readonly overrides?: Overrides
  /** The YAML the value came from, for error positions (its value is compiled when `config` is `undefined`). */
  readonly source?: Source
  /** The file name for messages, when there is no source. */
  readonly file?: string
  /** Directory for relative paths; default the file's directory. */
  readonly baseDir?: string
}

/**
 * Compile an already-parsed agent file (a plain object, as YAML or JSON gives it). Throws
 * `SchemaError` for a wrong shape and `SemanticError` for an agent that cannot run.
 *
 * @since 0.1.0
 * @category compiling
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { compileConfig } from "lambdagent/yaml"
 * const agent = compileConfig({ type: "simple", systemPrompt: "Summarize text.", model: { name: "claude-sonnet" } })
 * Term.pretty(agent.term) // 'agent:LLM_{claude-sonnet}("Summarize text.")'
 * ```
 */
export const compileConfig = (config: unknown, options: CompileOptions = {}): CompiledAgent => {
  const overrides = options.overrides ?? {}
  checkOverrides(overrides)
  // With a source, positions come from it; its value is used when no value is passed.
  const source: Source =
    options.source !== undefined
      ? config === undefined
        ? options.source
        : { ...options.source, value: config }
      : {
          ...(options.file !== undefined ? { file: options.file } : {}),
          text: "",
          value: config,
          locate: () => undefined,
          locateInString: () => undefined
        }
  const file = validateConfig(source, { providers: Object.keys(overrides.providers ?? {}) })
  const issues = semanticIssues(file, { overrides, locate: (p) => source.locate(p) })
  if (issues.length > 0) throw semanticError(issues, source.file)
  const baseDir = options.baseDir ?? (source.file !== undefined ? dirname(source.file) : undefined)
  const { term, tools, memory, sharedMemory, providers, origins } = compileChecked(file, overrides, {
    ...(baseDir !== undefined ? { baseDir } : {}),
    ...(source.file !== undefined ? { file: source.file } : {})
  })
  const runtime = file.runtime
  const budget: Record<string, number> = {}
  if (runtime?.maxSteps !== undefined) budget.steps = runtime.maxSteps
  if (runtime?.timeout !== undefined) budget.timeMs = Math.round(runtime.timeout * 1000)
  if (runtime?.maxLlmCalls !== undefined) budget.llmCalls = runtime.maxLlmCalls
  if (runtime?.maxToolCalls !== undefined) budget.toolCalls = runtime.maxToolCalls
  if (runtime?.maxTokens !== undefined) budget.tokens = runtime.maxTokens
  if (runtime?.maxDepth !== undefined) budget.depth = runtime.maxDepth
  if (runtime?.maxEvalDepth !== undefined) budget.evalDepth = runtime.maxEvalDepth
  if (runtime?.maxMemoryMb !== undefined) budget.memory = runtime.maxMemoryMb * 1024 * 1024
  if (runtime?.maxInputBytes !== undefined) budget.inputBytes = runtime.maxInputBytes
  const sandbox = sandboxPolicy(file.sandbox, baseDir)
  return {
    term,
    name: file.name ?? file.agentId ?? "agent",
    type: file.type,
    ...(source.file !== undefined ? { file: source.file } : {}),
    ...(baseDir !== undefined ? { baseDir } : {}),
    config: file,
    tools,
    memory,
    ...(sharedMemory !== undefined ? { sharedMemory } : {}),
    budget: budget as Partial<Budget.Budget>,
    runtime: {
      ...(runtime?.engine !== undefined ? { engine: runtime.engine } : {}),
      ...(file.checkpoint !== undefined ? { checkpoint: file.checkpoint } : {}),
      ...(file.cli?.server !== undefined ? { cliServer: file.cli.server } : {}),
      ...(file.a2a?.server !== undefined ? { a2aServer: file.a2a.server } : {}),
      ...(sandbox !== undefined ? { sandbox } : {}),
      ...(runtime?.otel !== undefined ? { otel: otelOf(runtime.otel) } : {})
    },
    providers,
    overrides,
    origins,
    locate: (path) => source.locate(path)
  }
}

/**
 * Where a configuration comes from: a file path, or YAML text. A plain string is a path when it
 * is one line ending in `.yml` or `.yaml`, and YAML text otherwise.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ConfigInput } from "lambdagent/yaml"
 * const a: ConfigInput = "agents/support.yml"
 * const b: ConfigInput = { text: "type: simple\nsystemPrompt: Hi\n", file: "inline.yml" }
 * ```
 */
export type ConfigInput = string | { readonly path: string } | { readonly text: string; readonly file?: string }

/**
 * Read a {@link ConfigInput} into a parsed {@link Source}.
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import { loadSource } from "lambdagent/yaml"
 * loadSource("type: simple\nsystemPrompt: Hi\n").value // { type: "simple", systemPrompt: "Hi" }
 * ```
 */
export const loadSource = (input: ConfigInput): Source => {
  if (typeof input === "string") {
    return !input.includes("\n") && /\.ya?ml$/i.test(input.trim()) ? readSource(input.trim()) : parseSource(input)
  }
  return "path" in input ? readSource(input.path) : parseSource(input.text, input.file)
}

/**
 * Read, check and compile an agent file, keeping everything a runtime needs (tools, memory
 * stores, budget). Throws `ConfigError`, `SchemaError` or `SemanticError`.
 *
 * @since 0.1.0
 * @category compiling
 * @example
 * ```ts
 * import { loadConfig } from "lambdagent/yaml"
 * const agent = loadConfig("examples/agents/router.yml", { temperature: 0 })
 * console.log(agent.type, agent.tools.length)
 * ```
 */
export const loadConfig = (input: ConfigInput, overrides: Overrides = {}): CompiledAgent => compileConfig(undefined, { source: loadSource(input), overrides })

/**
 * Compile an agent file (a path or YAML text) to a term. The same file always gives the same
 * term. Throws `ConfigError` (YAML), `SchemaError` (shape) or `SemanticError` (meaning), each
 * naming the field and its line and column.
 *
 * @since 0.1.0
 * @category compiling
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { fromConfig } from "lambdagent/yaml"
 * const term = fromConfig("type: simple\nsystemPrompt: Summarize text.\nmodel: {name: claude-sonnet}\n")
 * Term.pretty(term) // 'agent:LLM_{claude-sonnet}("Summarize text.")'
 * ```
 */
export const fromConfig = (input: ConfigInput, overrides: Overrides = {}): Term.Term => loadConfig(input, overrides).term

/**
 * The tools a compiled agent calls and where each comes from, for a runtime to set up. Takes a
 * compiled agent, a path or YAML text, or an already-parsed agent file.
 *
 * @since 0.1.0
 * @category compiling
 * @example
 * ```ts
 * import { loadConfig, toolReferences } from "lambdagent/yaml"
 * toolReferences(loadConfig("examples/agents/react.yml")).map((t) => `${t.name}:${t.kind}`)
 * // ["web_search:mcp", "calculator:local", "terminate:terminate", "summarizer:cli"]
 * toolReferences({ type: "react", systemPrompt: "x", mcp: { localTools: ["terminate"] } }).length // 1
 * ```
 */
export const toolReferences = (agent: CompiledAgent | ConfigInput | AgentFile, overrides: Overrides = {}): ReadonlyArray<ToolReference> => {
  if (typeof agent === "string") return loadConfig(agent, overrides).tools
  if ("term" in agent) return agent.tools
  if ("path" in agent || "text" in agent) return loadConfig(agent as ConfigInput, overrides).tools
  return compileConfig(agent, { overrides }).tools
}
