/**
 * `lambdagent mcp [--http PORT] [--host H] [--store STORE]`: the tool-evolving lambda server.
 * STORE is a JSON file, `:memory:`, a Redis URL or `sqlite:PATH` (see `stores.ts`).
 */
import type { Registration } from "./shell.ts"
import { CliError, ExitCode, onInterrupt } from "./io.ts"
import { openRegistryStore } from "./stores.ts"

interface McpOptions {
  readonly http?: string
  readonly host?: string
  readonly store?: string
  readonly fuel?: string
}

export const registerMcp: Registration = (program, run) => {
  program
    .command("mcp")
    .description("serve the tool-evolving lambda calculus over MCP (stdio by default)")
    .option("--http <port>", "serve Streamable HTTP on this port instead of stdio")
    .option("--host <host>", "address to listen on with --http (default 127.0.0.1)")
    .option(
      "--store <store>",
      "where evolved tools persist: a JSON file (default ~/.lambdagent/mcp-tools.json), :memory: (keeps nothing), " +
        "redis://HOST[:PORT][/DB] (redis: alone uses LAMBDAGENT_REDIS_URL) or sqlite:PATH; ?namespace=NAME picks the entry"
    )
    .option("--fuel <n>", "the largest step budget a call may ask for")
    .action(async (options: McpOptions) =>
      run(async () => {
        const mcp = await import("lambdagent/mcp")
        const maxFuel = options.fuel === undefined ? undefined : Number(options.fuel)
        if (maxFuel !== undefined && (!Number.isInteger(maxFuel) || maxFuel <= 0)) {
          throw new CliError(`--fuel expects a positive integer, got ${JSON.stringify(options.fuel)}`, ExitCode.failed, "UsageError")
        }
        const store = options.store === undefined ? undefined : await openRegistryStore(options.store)
        onInterrupt(() => {})
        try {
          await mcp.mcpCommand({
            ...(options.http !== undefined ? { http: options.http } : {}),
            ...(options.host !== undefined ? { host: options.host } : {}),
            ...(store !== undefined ? { store: store.store } : {}),
            ...(maxFuel !== undefined ? { maxFuel } : {})
          })
        } finally {
          await store?.close()
        }
      }, () => "text")
    )
}
