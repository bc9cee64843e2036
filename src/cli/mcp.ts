/**
 * `lambdagent mcp [--http PORT] [--host H] [--store PATH]`: the tool-evolving lambda server.
 */
import type { Registration } from "./shell.ts"
import { CliError, ExitCode, onInterrupt } from "./io.ts"

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
    .option("--store <path>", "where evolved tools persist (default ~/.lambdagent/mcp-tools.json; :memory: keeps nothing)")
    .option("--fuel <n>", "the largest step budget a call may ask for")
    .action(async (options: McpOptions) =>
      run(async () => {
        const mcp = await import("lambdagent/mcp")
        const maxFuel = options.fuel === undefined ? undefined : Number(options.fuel)
        if (maxFuel !== undefined && (!Number.isInteger(maxFuel) || maxFuel <= 0)) {
          throw new CliError(`--fuel expects a positive integer, got ${JSON.stringify(options.fuel)}`, ExitCode.failed, "UsageError")
        }
        onInterrupt(() => {})
        await mcp.mcpCommand({
          ...(options.http !== undefined ? { http: options.http } : {}),
          ...(options.host !== undefined ? { host: options.host } : {}),
          ...(options.store !== undefined ? { store: options.store } : {}),
          ...(maxFuel !== undefined ? { maxFuel } : {})
        })
      }, () => "text")
    )
}
