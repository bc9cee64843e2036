/**
 * The `lambdagent` command line: the one place that wires every command together.
 */
import { registerCheckpoints } from "./checkpoints.ts"
import { registerEval } from "./eval.ts"
import { registerMcp } from "./mcp.ts"
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
import { runProgram } from "./shell.ts"

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
      registerCheckpoints
    ],
    loadPlugins(argv)
  )
