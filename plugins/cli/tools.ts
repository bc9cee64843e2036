/**
 * `lambdagent tools <config> [--test NAME [input]] [--discover SERVER] [--tool NAME=CMD]… [--format text|json]`:
 * the tools an agent can use, where each comes from and whether it can be reached; call one by hand.
 */
import { existsSync, statSync } from "node:fs"
import { delimiter, isAbsolute, join, resolve } from "node:path"
import { type Host, noPlugins, pluginTools } from "./plugins.ts"
import type { Registration } from "./shell.ts"
import * as Effect from "effect/Effect"
import { type Tools as ToolsNs, Tools, Value } from "lambdagent"
import type { McpConnection } from "lambdagent/yaml"
import { buildRuntime, type LoadedAgent, loadAgent, shellTools } from "./agent.ts"
import { parseSandboxFlag, SANDBOX_FLAGS, SANDBOX_HELP } from "./sandbox.ts"
import { CliError, ExitCode, onInterrupt, readStdin } from "./io.ts"
import { positive, textOrJson, usageError } from "./options.ts"

/** Whether a tool can be reached from here: `true`, `false`, or `undefined` when nothing can be checked. */
export interface Reachability {
  readonly ok: boolean | undefined
  readonly detail: string
  /** How long an HTTP check took. */
  readonly ms?: number
  /** For `a2a`: what the remote agent's card says. */
  readonly card?: {
    readonly name: string
    readonly description: string
    readonly endpoint: string
    readonly skills: ReadonlyArray<{ readonly id: string; readonly name: string; readonly description: string }>
  }
}

/** One tool of an agent, from its config or its runtime. */
export interface ToolEntry {
  readonly name: string
  /** `mcp`, `cli`, `shell`, `builtin`, `terminate`, `rag`, `local`, `injected`, `a2a`, `shared`, or a runtime tool's kind. */
  readonly kind: string
  /** Where it comes from: a server and its URL, a command, `builtin`, … */
  readonly source: string
  readonly description?: string
  /** For `mcp`: the server name and how to reach it. */
  readonly server?: string
  readonly connection?: McpConnection
  /** For `shell` and `cli`: the command line. */
  readonly command?: string
  /** For `rag`: the files or directories indexed. */
  readonly ragSource?: ReadonlyArray<string>
  /** For `a2a`: the remote agent's entry in `a2a.clients`. */
  readonly a2a?: import("lambdagent/yaml").A2AClientConfig
  /** Whether this build's runtime can call it (MCP and A2A tools need a client plugin). */
  readonly callable: boolean
  readonly reachability?: Reachability
}

/** The URL of an MCP connection: `url` joined with `endpoint`. */
export const mcpUrl = (connection: McpConnection): string | undefined => {
  if (connection.url === undefined) return undefined
  if (connection.endpoint === undefined || connection.endpoint === "") return connection.url
  return connection.url.replace(/\/+$/, "") + "/" + connection.endpoint.replace(/^\/+/, "")
}

const describeConnection = (connection: McpConnection | undefined): string => {
  if (connection === undefined) return "no connection configured"
  if (connection.transport === "stdio") return [connection.command ?? "", ...(connection.args ?? [])].join(" ").trim() || "stdio"
  return mcpUrl(connection) ?? "http (no url)"
}

const sourcesOf = (rag: Readonly<Record<string, unknown>> | undefined): ReadonlyArray<string> => {
  const source = rag?.source
  return typeof source === "string" ? [source] : Array.isArray(source) ? source.filter((s): s is string => typeof s === "string") : []
}

/**
 * Every tool of an agent: the config's references (in file order), then the runtime's tools the
 * config does not name (`--tool` shell commands, plugin tools).
 */
export const listTools = (agent: LoadedAgent, runtimeTools: ReadonlyArray<ToolsNs.ToolDefinition>): ReadonlyArray<ToolEntry> => {
  const byName = new Map(runtimeTools.map((t) => [t.name, t]))
  const entries: Array<ToolEntry> = []
  const seen = new Set<string>()
  for (const ref of agent.compiled?.tools ?? []) {
    seen.add(ref.name)
    const def = byName.get(ref.name)
    const description = def?.description ?? ref.cli?.description
    const base = { name: ref.name, ...(description !== undefined ? { description } : {}), callable: def !== undefined }
    switch (ref.kind) {
      case "mcp":
        entries.push({
          ...base,
          kind: "mcp",
          source: `${ref.server ?? "?"}  ${describeConnection(ref.connection)}`,
          ...(ref.server !== undefined ? { server: ref.server } : {}),
          ...(ref.connection !== undefined ? { connection: ref.connection } : {})
        })
        break
      case "cli":
        entries.push({ ...base, kind: "cli", source: ref.cli?.command ?? "", ...(ref.cli !== undefined ? { command: ref.cli.command } : {}) })
        break
      case "terminate":
        entries.push({ ...base, kind: "terminate", source: "λx.x (base case)", callable: true })
        break
      case "builtin":
        entries.push({ ...base, kind: "builtin", source: "builtin" })
        break
      case "rag": {
        const sources = sourcesOf(ref.rag)
        entries.push({ ...base, kind: "rag", source: sources.length > 0 ? `rag ${sources.join(", ")}` : "rag (prebuilt index)", ragSource: sources })
        break
      }
      case "a2a":
        entries.push({ ...base, kind: "a2a", source: ref.a2a?.url ?? "", ...(ref.a2a !== undefined ? { a2a: { name: ref.name, ...ref.a2a } } : {}) })
        break
      default:
        entries.push({
          ...base,
          kind: def !== undefined && (def.kind === "shell" || !builtinKinds.has(def.kind)) ? def.kind : ref.kind,
          source: def?.source ?? (def !== undefined ? def.kind : "not provided"),
          ...(def?.kind === "shell" && def.source !== undefined ? { command: def.source } : {})
        })
    }
  }
  for (const def of runtimeTools) {
    if (seen.has(def.name)) continue
    seen.add(def.name)
    entries.push({
      name: def.name,
      kind: def.kind,
      source: def.source ?? def.kind,
      description: def.description,
      ...(def.kind === "shell" || def.kind === "cli" ? (def.source !== undefined ? { command: def.source } : {}) : {}),
      callable: true
    })
  }
  return entries
}

/** The tool kinds of the core and its first-party plugins; any other kind is a plugin's own, shown as it is. */
const builtinKinds: ReadonlySet<string> = new Set(["host", "shell", "cli", "mcp", "a2a", "rag", "term"])

/** Shell builtins a command may start with: reachable without a binary. */
const shellBuiltins = new Set([
  "echo",
  "printf",
  "test",
  "[",
  "cd",
  "read",
  "true",
  "false",
  ":",
  "export",
  "set",
  "exit",
  "pwd",
  "eval",
  "exec",
  "type",
  "command"
])

/** The first word of a command line, skipping `VAR=value` assignments. */
const firstWord = (command: string): string | undefined => {
  const words = command.trim().split(/\s+/)
  const word = words.find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w))
  return word?.replace(/^["']|["']$/g, "")
}

/** Where `program` is: a path that exists, or a file of that name in a `PATH` directory. */
export const findExecutable = (program: string, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  if (program.includes("/")) return existsSync(program) ? program : undefined
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue
    const candidate = join(dir, program)
    try {
      if (statSync(candidate).isFile()) return candidate
    } catch {
      // not here
    }
  }
  return undefined
}

const commandReachability = (command: string | undefined): Reachability => {
  const program = command === undefined ? undefined : firstWord(command)
  if (program === undefined || program === "") return { ok: false, detail: "no command" }
  if (shellBuiltins.has(program)) return { ok: true, detail: `${program} is a shell builtin` }
  const found = findExecutable(program)
  return found !== undefined ? { ok: true, detail: `${program} found` } : { ok: false, detail: `${program} not found on PATH` }
}

/** Reachable if the server answers at all (any HTTP status) within `timeoutMs`. */
const httpReachability = async (url: string, timeoutMs: number): Promise<Reachability> => {
  const started = performance.now()
  try {
    const response = await fetch(url, { method: "GET", signal: AbortSignal.timeout(timeoutMs), redirect: "manual" })
    await response.body?.cancel().catch(() => {})
    const ms = Math.round(performance.now() - started)
    return { ok: true, detail: `HTTP ${response.status}`, ms }
  } catch (cause) {
    const error = cause as Error & { cause?: { code?: string; message?: string } }
    const why = error.name === "TimeoutError" ? `no answer in ${timeoutMs / 1000}s` : (error.cause?.code ?? error.cause?.message ?? error.message)
    return { ok: false, detail: why }
  }
}

/** Reachable if the agent's card can be fetched and read within `timeoutMs`; the card's skills come along. */
const a2aReachability = async (client: import("lambdagent/yaml").A2AClientConfig, timeoutMs: number): Promise<Reachability> => {
  const a2a = await import("lambdagent/a2a")
  const started = performance.now()
  try {
    const card = await a2a.probe(client, { timeoutMs })
    const ms = Math.round(performance.now() - started)
    const skills = card.skills.map((s) => ({ id: s.id, name: s.name, description: s.description }))
    return {
      ok: true,
      detail: `agent card ${JSON.stringify(card.name)}`,
      ms,
      card: { name: card.name, description: card.description, endpoint: card.endpoint, skills }
    }
  } catch (error) {
    return { ok: false, detail: error instanceof a2a.A2AClientError ? error.message : String(error) }
  }
}

/**
 * Check whether one tool can be reached: a shell or CLI command's program is on `PATH`, an HTTP MCP
 * server answers within `timeoutMs` (default 2 s), a stdio MCP server's command exists, a remote
 * A2A agent's card can be fetched and read (with its skills), a RAG source exists (relative to
 * `baseDir`).
 */
export const checkReachability = async (entry: ToolEntry, baseDir: string, timeoutMs = 2000): Promise<Reachability> => {
  switch (entry.kind) {
    case "shell":
    case "cli":
      return commandReachability(entry.command)
    case "mcp": {
      const connection = entry.connection
      if (connection === undefined) return { ok: undefined, detail: "no connection configured" }
      if (connection.transport === "stdio") return commandReachability(connection.command)
      const url = mcpUrl(connection)
      if (url === undefined) return { ok: false, detail: "no url" }
      return httpReachability(url, timeoutMs)
    }
    case "rag": {
      const sources = entry.ragSource ?? []
      if (sources.length === 0) return { ok: undefined, detail: "prebuilt index" }
      const missing = sources.filter((s) => !existsSync(isAbsolute(s) ? s : resolve(baseDir, s)))
      return missing.length === 0 ? { ok: true, detail: "source found" } : { ok: false, detail: `missing ${missing.join(", ")}` }
    }
    case "a2a":
      return entry.a2a === undefined ? { ok: undefined, detail: "no a2a.clients entry" } : a2aReachability(entry.a2a, timeoutMs)
    case "builtin":
    case "terminate":
      return { ok: true, detail: "built in" }
    default:
      return entry.callable ? { ok: true, detail: "in process" } : { ok: false, detail: "not provided by this runtime" }
  }
}

const kindTag = (kind: string): string => {
  const tags: Record<string, string> = {
    mcp: "MCP",
    cli: "CLI",
    shell: "Shell",
    builtin: "Builtin",
    terminate: "Local",
    rag: "RAG",
    local: "Local",
    injected: "Injected",
    a2a: "A2A",
    shared: "Shared"
  }
  return `[${tags[kind] ?? kind}]`
}

const mark = (r: Reachability | undefined): string => {
  if (r === undefined) return ""
  const symbol = r.ok === true ? "✓" : r.ok === false ? "✗" : "?"
  const word = r.ok === true ? "reachable" : r.ok === false ? "unreachable" : "unknown"
  return `${symbol} ${word} (${r.detail}${r.ms !== undefined ? `, ${r.ms}ms` : ""})`
}

/** The text table of {@link listTools} entries, with an endpoint section for MCP servers. */
export const formatToolTable = (agentName: string, entries: ReadonlyArray<ToolEntry>): string => {
  if (entries.length === 0) return `Tools for ${agentName}: none\n`
  const rows = entries.map((e) => [kindTag(e.kind), e.name, e.kind === "mcp" ? (e.server ?? "") : e.source, e.kind === "mcp" ? "" : mark(e.reachability)])
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)))
  const lines = [`Tools for ${agentName}:`]
  for (const row of rows) lines.push(("  " + row.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]!) : cell)).join("  ")).trimEnd())
  const servers = new Map<string, ToolEntry>()
  for (const e of entries) if (e.kind === "mcp" && !servers.has(e.server ?? "")) servers.set(e.server ?? "", e)
  if (servers.size > 0) {
    lines.push("", "MCP endpoints:")
    for (const [server, e] of servers) {
      lines.push(`  ${server}: ${describeConnection(e.connection)}`)
      if (e.reachability !== undefined) lines.push(`    Status: ${mark(e.reachability)}`)
    }
    if ([...servers.values()].some((e) => !e.callable)) lines.push("  (this build has no MCP client: the agent cannot call MCP tools here)")
  }
  const agents = entries.filter((e) => e.kind === "a2a" && e.reachability?.card !== undefined)
  if (agents.length > 0) {
    lines.push("", "A2A agents:")
    for (const e of agents) {
      const card = e.reachability!.card!
      lines.push(`  ${e.name}: ${card.name}${card.description !== "" ? ` (${card.description})` : ""}, endpoint ${card.endpoint}`)
      for (const skill of card.skills)
        lines.push(`    skill ${skill.name}${skill.description !== "" && skill.description !== skill.name ? `: ${skill.description}` : ""}`)
    }
  }
  return lines.join("\n") + "\n"
}

/** A tool's output as text: strings as they are, anything else as JSON. */
export const toolOutputText = (output: unknown): string => {
  if (typeof output === "string") return output
  try {
    return Value.toText(output as Value.Value)
  } catch {
    return JSON.stringify(output)
  }
}

/**
 * Call one tool by name as the runtime would (`Tools.call`: input validation, timeout), with a
 * signal that cancels it. `terminate` answers its input. Throws a {@link CliError} (exit 1) for an
 * unknown tool or one this build cannot call.
 */
export const callTool = async (agent: LoadedAgent, tools: ToolsNs.ToolsShape, name: string, input: string, signal?: AbortSignal): Promise<unknown> => {
  const def = tools.get(name)
  if (def === undefined) {
    const ref = agent.compiled?.tools.find((t) => t.name === name)
    if (ref?.kind === "terminate") return input
    if (ref !== undefined) {
      throw new CliError(
        `tool ${name} (${ref.kind}) is named by the config but this runtime cannot call it${ref.kind === "mcp" ? ": no MCP client in this build" : ""}`,
        ExitCode.failed,
        "ToolUnavailable"
      )
    }
    const known = tools.list().map((t) => t.name)
    throw new CliError(
      `unknown tool ${JSON.stringify(name)}${known.length > 0 ? `; known: ${known.join(", ")}` : "; this agent has no callable tools"}`,
      ExitCode.usage,
      "UnknownTool"
    )
  }
  return Effect.runPromise(Tools.call(def, input), signal !== undefined ? { signal } : {}).catch((error: unknown) => {
    throw signal?.aborted === true ? new CliError("interrupted", ExitCode.interrupted, "Interrupted") : error
  })
}

interface ToolsOptions {
  readonly test?: string
  readonly discover?: string
  readonly tool: Array<string>
  readonly format: "text" | "json"
  readonly timeout?: number
  readonly sandbox?: string
}

/** A module that may not be part of this build; the specifier is a variable so bundlers leave it alone. */
const optionalImport = async (specifier: string): Promise<Record<string, unknown> | undefined> => {
  try {
    return (await import(specifier)) as Record<string, unknown>
  } catch {
    return undefined
  }
}

const discover = async (agent: LoadedAgent, server: string, format: "text" | "json"): Promise<void> => {
  const refs = (agent.compiled?.tools ?? []).filter((t) => t.kind === "mcp" && t.server === server)
  const servers = [...new Set((agent.compiled?.tools ?? []).filter((t) => t.kind === "mcp").map((t) => t.server ?? ""))]
  if (refs.length === 0) {
    throw new CliError(
      `no MCP server ${JSON.stringify(server)} in ${agent.file}${servers.length > 0 ? `; servers: ${servers.join(", ")}` : ""}`,
      ExitCode.usage,
      "UnknownServer"
    )
  }
  const mcp = await optionalImport("lambdagent/mcp")
  const discoverFn = mcp?.discover
  if (typeof discoverFn !== "function") {
    throw new CliError(`MCP client not available in this build: cannot discover the tools of ${server}`, ExitCode.failed, "McpUnavailable")
  }
  const found = (await (discoverFn as (connection: McpConnection | undefined, options: { server: string }) => Promise<unknown>)(refs[0]!.connection, {
    server
  })) as ReadonlyArray<{ name: string; description?: string }>
  if (format === "json") {
    process.stdout.write(JSON.stringify({ server, tools: found }) + "\n")
    return
  }
  const lines = [`Tools of ${server}:`, ...found.map((t) => `  ${t.name}${t.description !== undefined ? `  ${t.description}` : ""}`)]
  process.stdout.write(lines.join("\n") + "\n")
}

/** `lambdagent tools`: list (with reachability), `--test` one tool, or `--discover` a server's tools. */
export const toolsCommand = async (config: string, positional: string | undefined, options: ToolsOptions, host: Host = noPlugins): Promise<void> => {
  if (positional !== undefined && options.test === undefined) {
    throw usageError(`unexpected argument ${JSON.stringify(positional)} (an input goes with --test NAME)`)
  }
  const extraTools = [...shellTools(options.tool), ...pluginTools(host)]
  const agent = await loadAgent(config, { tools: extraTools })
  if (options.discover !== undefined) return discover(agent, options.discover, options.format)
  const sandbox = parseSandboxFlag(options.sandbox)
  const { close, runtime, tools } = await buildRuntime(agent, { extraTools, plugins: host.plugins, ...(sandbox !== undefined ? { sandbox } : {}) })
  try {
    if (options.test !== undefined) {
      const input =
        positional === "-" || (positional === undefined && process.stdin.isTTY !== true) ? (await readStdin()).replace(/\n$/, "") : (positional ?? "")
      const controller = new AbortController()
      onInterrupt(() => controller.abort())
      const started = performance.now()
      try {
        const output = await callTool(agent, runtime.tools, options.test, input, controller.signal)
        const durationMs = Math.round(performance.now() - started)
        if (options.format === "json") process.stdout.write(JSON.stringify({ tool: options.test, input, output, durationMs }) + "\n")
        else process.stdout.write(toolOutputText(output) + "\n")
      } finally {
        onInterrupt(undefined)
      }
      return
    }
    const entries = listTools(agent, tools)
    const timeout = (options.timeout ?? 2) * 1000
    const checked = await Promise.all(entries.map(async (e) => ({ ...e, reachability: await checkReachability(e, agent.baseDir, timeout) })))
    if (options.format === "json") process.stdout.write(JSON.stringify({ agent: agent.name, type: agent.type, tools: checked }) + "\n")
    else process.stdout.write(formatToolTable(agent.name, checked))
  } finally {
    await close()
  }
}

const collect = (value: string, previous: Array<string>) => [...previous, value]

/** Register `lambdagent tools`. */
export const registerTools: Registration = (program, run, host) => {
  program
    .command("tools")
    .description("list an agent's tools with their source and reachability; call one with --test")
    .argument("<config>", "the agent: a .yml/.yaml config or a .json term")
    .argument("[input]", "the input of --test (- or piped stdin reads standard input)")
    .option("--test <name>", "call this tool with the input and print its output")
    .option("--discover <server>", "list the tools an MCP server offers (needs the MCP client plugin)")
    .option("--tool <NAME=CMD>", "a shell command as a tool; {} stands for the input, passed as one argument (repeatable)", collect, [])
    .option(SANDBOX_FLAGS, SANDBOX_HELP)
    .option("--timeout <seconds>", "how long to wait for an MCP server or an A2A agent's card (default 2)", positive("--timeout", "seconds"))
    .option("--format <format>", "text (default) or json", textOrJson, "text")
    .action(async (config: string, input: string | undefined, options: ToolsOptions) =>
      run(
        () => toolsCommand(config, input, options, host),
        () => options.format
      )
    )
}
