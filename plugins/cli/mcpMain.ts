/**
 * The lean program behind `lambdagent mcp` when it serves pure tools from memory or a JSON file
 * (see `leanMcp.ts`; the launcher sends every other server to the full CLI). The build bundles it
 * with the MCP plugin's server and just the parts of the core it uses, so a server answers its
 * first request without loading the agent runtime, its providers, the store plugins or telemetry.
 */
import { bearerCheck } from "lambdagent/http"
import { mcpCommand } from "lambdagent/mcp"
import { mcpRegistration } from "./mcp.ts"
import { usageError } from "./options.ts"
import { runProgram } from "./shell.ts"
import { parseRegistryStore } from "./storeSpecs.ts"

const fullProgramOnly = (what: string) => usageError(`${what} needs the full lambdagent program: start the server with the lambdagent command`)

const registerMcp = mcpRegistration({
  serve: mcpCommand,
  openStore: async (value) => {
    if (parseRegistryStore(value) !== undefined) throw fullProgramOnly(`--store ${value}`)
    return { store: value, close: async () => {} }
  },
  grant: async () => {
    throw fullProgramOnly("granting capabilities")
  },
  loadBearerCheck: async () => bearerCheck
})

export const main = (argv: ReadonlyArray<string>): Promise<void> => runProgram(argv, [registerMcp])
