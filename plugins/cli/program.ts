/**
 * The `lambdagent` command line: the one place that wires every command together.
 */
import { registerCheckpoints } from "./checkpoints.ts"
import { registerCluster } from "./cluster.ts"
import { registerEval } from "./eval.ts"
import { mcpRegistration } from "./mcp.ts"
import { registerRag } from "./rag.ts"
import { registerRun } from "./run.ts"
import { registerServe } from "./serve.ts"
import { compileDryRun } from "./compileDryRun.ts"
import { yamlCommands } from "./yaml.ts"
import { registerTrace } from "./trace.ts"
import { registerTools } from "./tools.ts"
import { registerRepl } from "./repl.ts"
import { registerReplay } from "./replay.ts"
import { loadPlugins } from "./pluginLoader.ts"
import { openRegistryStore } from "./stores.ts"
import { runProgram } from "./shell.ts"

const registerMcp = mcpRegistration({
  serve: async (options) => (await import("lambdagent/mcp")).mcpCommand(options),
  openStore: openRegistryStore,
  // the agent runtime, its providers and telemetry load only when a server is granted capabilities
  grant: async (options) => (await import("./mcpCapabilities.ts")).capabilitiesOf(options),
  loadBearerCheck: async () => (await import("lambdagent/http")).bearerCheck
})

export const main = (argv: ReadonlyArray<string>): Promise<void> =>
  runProgram(
    argv,
    [
      registerEval,
      registerRun,
      yamlCommands(compileDryRun),
      registerServe,
      registerRag,
      registerMcp,
      registerTrace,
      registerReplay,
      registerRepl,
      registerTools,
      registerCheckpoints,
      registerCluster
    ],
    loadPlugins(argv)
  )
