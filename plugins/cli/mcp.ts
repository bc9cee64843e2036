/**
 * `lambdagent mcp [--http PORT] [--host H] [--token T] [--allow-host H] [--allow-origin O] [--store STORE]
 * [--allow CAP --model SPEC --tool NAME=CMD | --config FILE] [--otel URL]`: the tool-evolving lambda server. STORE is a JSON file, `:memory:`, a Redis URL or `sqlite:PATH`
 * (see `stores.ts`).
 */
import { HostGuard } from "lambdagent"
import type { AgentPolicy, AnswerOracle, McpCommandOptions, ToolRegistryStore } from "lambdagent/mcp"
import type { Registration } from "./shell.ts"
import { bearerToken, onInterrupt, TOKEN_OPTION_HELP } from "./io.ts"
import { integer, OTEL_FLAGS, port, usageError } from "./options.ts"

export interface McpOptions {
  readonly http?: number
  readonly host?: string
  readonly store?: string
  readonly fuel?: number
  readonly token?: string
  readonly allowHost: Array<string>
  readonly allowOrigin: Array<string>
  readonly allow: Array<string>
  readonly model?: string
  readonly tool: Array<string>
  readonly config?: string
  readonly otel?: string
}

/** `--allow-host` and `--allow-origin` as the HTTP servers' host policy, checked now (a usage error). */
export const hostPolicy = async (options: { readonly allowHost: Array<string>; readonly allowOrigin: Array<string> }) => {
  const policy = {
    ...(options.allowHost.length > 0 ? { allowedHosts: options.allowHost } : {}),
    ...(options.allowOrigin.length > 0 ? { allowedOrigins: options.allowOrigin } : {})
  }
  if (options.allowHost.length + options.allowOrigin.length === 0) return policy
  try {
    HostGuard.hostGuard("127.0.0.1", policy)
  } catch (error) {
    throw usageError((error as Error).message)
  }
  return policy
}

/** `bearerCheck` of `lambdagent/http`, loaded as the program chooses (the check of `--token`). */
export type LoadBearerCheck = () => Promise<(token: string) => (authorization: string | undefined) => void>

/** The security options of an MCP Streamable HTTP server, from the command line; refused with stdio. */
export const httpSecurity = async (
  options: { readonly http?: number; readonly token?: string; readonly allowHost: Array<string>; readonly allowOrigin: Array<string> },
  httpFlag: string,
  loadBearerCheck: LoadBearerCheck
) => {
  if (options.http === undefined) {
    for (const [flag, given] of [
      ["--token", options.token !== undefined],
      ["--allow-host", options.allowHost.length > 0],
      ["--allow-origin", options.allowOrigin.length > 0]
    ] as const) {
      if (given) throw usageError(`${flag} applies to Streamable HTTP only: add ${httpFlag} PORT`)
    }
    return {}
  }
  const token = bearerToken(options.token)
  const bearerCheck = token === undefined ? undefined : await loadBearerCheck()
  return {
    ...(await hostPolicy(options)),
    ...(bearerCheck !== undefined && token !== undefined ? { authorize: bearerCheck(token) } : {})
  }
}

/** The capability words `--allow` takes. */
const CAPABILITY_HELP = "let evolved tools use llm, par or tool:NAME (tool:* any --tool); repeatable; default none (pure tools)"

/** The options that grant evolved tools more than pure computation. */
export type CapabilityOptions = Pick<McpOptions, "allow" | "model" | "tool" | "config" | "otel">

/** What the server may do beyond pure computation, and the runtime that answers it (closed at exit). */
export interface Granted {
  readonly allow: AgentPolicy
  readonly answerOracle?: AnswerOracle
  readonly runtime?: { readonly close: () => Promise<void> }
}

/**
 * Builds the policy and the oracle of granted capabilities. A program passes its own: the full
 * CLI loads the agent runtime for it, the lean `mcp` program (pure tools only) has none.
 */
export type GrantCapabilities = (options: CapabilityOptions) => Promise<Granted>

/** A `--store` value opened: what the server is given, and how to close it at exit. */
export interface OpenedRegistryStore {
  readonly store: string | ToolRegistryStore
  readonly close: () => Promise<void>
}

/**
 * What the `mcp` command runs on. Each program passes its own: the full CLI loads the MCP plugin,
 * the store plugins and the agent runtime when a server needs them; the lean program (pure tools
 * in memory or a file) imports just the plugin's server.
 */
export interface McpHost {
  readonly serve: (options: McpCommandOptions) => Promise<void>
  readonly openStore: (value: string) => Promise<OpenedRegistryStore>
  readonly grant: GrantCapabilities
  readonly loadBearerCheck: LoadBearerCheck
}

/** Whether the options ask for more than pure computation (which needs the agent runtime). */
export const grantsCapabilities = (options: CapabilityOptions): boolean =>
  options.config !== undefined || options.allow.length > 0 || options.model !== undefined || options.tool.length > 0 || options.otel !== undefined

export const collect = (value: string, previous: Array<string>) => [...previous, value]

/** The `mcp` command, served by `host`. */
export const mcpRegistration =
  (host: McpHost): Registration =>
  (program, run) => {
    program
      .command("mcp")
      .description("serve the tool-evolving lambda calculus over MCP (stdio by default)")
      .option("--http <port>", "serve Streamable HTTP on this port instead of stdio", port("--http"))
      .option("--host <host>", "address to listen on with --http (default 127.0.0.1)")
      .option("--token <token>", `with --http: ${TOKEN_OPTION_HELP}`)
      .option("--allow-host <host>", "with --http: also accept this Host header (name or name:port; repeatable)", collect, [])
      .option("--allow-origin <origin>", "with --http: also accept this Origin (e.g. http://localhost:6274; repeatable)", collect, [])
      .option(
        "--store <store>",
        "where evolved tools persist: a JSON file (default ~/.lambdagent/mcp-tools.json), :memory: (keeps nothing), " +
          "redis://HOST[:PORT][/DB] (redis: alone uses LAMBDAGENT_REDIS_URL) or sqlite:PATH; ?namespace=NAME picks the entry"
      )
      .option("--fuel <n>", "the largest step budget a call may ask for", integer("--fuel", 1))
      .option("--allow <capability>", CAPABILITY_HELP, collect, [])
      .option("--model <spec>", "with --allow llm: the model that answers evolved tools' LLM calls (provider:name)")
      .option("--tool <NAME=CMD>", "with --allow tool:NAME: a shell command as a host tool; {} stands for the input (repeatable)", collect, [])
      .option("--config <file>", "a YAML or JSON file with allow, model and tools (the flags add to it and win)")
      .option(OTEL_FLAGS, "with --allow llm or tool: export the spans of evolved tools' LLM and tool calls over OTLP/HTTP (http://host:4318)")
      .action(async (options: McpOptions) =>
        run(
          async () => {
            const maxFuel = options.fuel
            const security = await httpSecurity(options, "--http", host.loadBearerCheck)
            const granted: Granted = grantsCapabilities(options) ? await host.grant(options) : { allow: {} }
            const store = options.store === undefined ? undefined : await host.openStore(options.store)
            onInterrupt(() => {})
            try {
              await host.serve({
                ...(options.http !== undefined ? { http: options.http } : {}),
                ...(options.host !== undefined ? { host: options.host } : {}),
                ...(store !== undefined ? { store: store.store } : {}),
                ...(maxFuel !== undefined ? { maxFuel } : {}),
                allow: granted.allow,
                ...(granted.answerOracle !== undefined ? { answerOracle: granted.answerOracle } : {}),
                ...security
              })
            } finally {
              await store?.close()
              await granted.runtime?.close()
            }
          },
          () => "text"
        )
      )
  }
