/**
 * `lambdagent mcp [--http PORT] [--host H] [--token T] [--allow-host H] [--allow-origin O] [--store STORE]
 * [--allow CAP --model SPEC --tool NAME=CMD | --config FILE] [--otel URL]`: the tool-evolving lambda server. STORE is a JSON file, `:memory:`, a Redis URL or `sqlite:PATH`
 * (see `stores.ts`).
 */
import { HostGuard } from "lambdagent"
import type { Registration } from "./shell.ts"
import { bearerToken, onInterrupt, TOKEN_OPTION_HELP } from "./io.ts"
import { CAPABILITY_HELP, grantedCapabilities, readServerConfig } from "./mcpCapabilities.ts"
import { integer, port, usageError } from "./options.ts"
import { OTEL_FLAGS, otelOptions } from "./otel.ts"
import { openRegistryStore } from "./stores.ts"

interface McpOptions {
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

/** The security options of an MCP Streamable HTTP server, from the command line; refused with stdio. */
export const httpSecurity = async (
  options: { readonly http?: number; readonly token?: string; readonly allowHost: Array<string>; readonly allowOrigin: Array<string> },
  httpFlag: string
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
  const http = token === undefined ? undefined : await import("lambdagent/http")
  return {
    ...(await hostPolicy(options)),
    ...(http !== undefined && token !== undefined ? { authorize: http.bearerCheck(token) } : {})
  }
}

export const collect = (value: string, previous: Array<string>) => [...previous, value]

export const registerMcp: Registration = (program, run) => {
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
          const security = await httpSecurity(options, "--http")
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
          const mcp = await import("lambdagent/mcp")
          const store = options.store === undefined ? undefined : await openRegistryStore(options.store)
          onInterrupt(() => {})
          try {
            await mcp.mcpCommand({
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
