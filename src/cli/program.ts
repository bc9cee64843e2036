/**
 * The `lambdagent` command line: the one place that wires commands (and, later, plugins) together.
 */
import { Command, CommanderError } from "commander"
import { registerEval } from "./eval.ts"
import { registerMcp } from "./mcp.ts"
import { registerRag } from "./rag.ts"
import { registerRun } from "./run.ts"
import { registerServe } from "./serve.ts"
import { registerYaml } from "./yaml.ts"
import { registerTrace } from "./trace.ts"
import { registerTools } from "./tools.ts"
import { registerRepl } from "./repl.ts"
import { exitCodeOf, ExitCode, installInterrupt, reportError } from "./io.ts"

export const VERSION = "0.1.0"

/** Run an action, turning any failure into a one-line report and an exit code. */
const runAction = async (action: () => Promise<void>, format: () => "json" | "text"): Promise<void> => {
  try {
    await action()
  } catch (error) {
    reportError(error, format())
    process.exitCode = exitCodeOf(error)
  }
}

export const buildProgram = (): Command => {
  const program = new Command()
    .name("lambdagent")
    .description("Build, check and run LLM agents as terms of a small JSON lambda calculus.")
    .version(VERSION, "-v, --version")
    .showHelpAfterError()
    .exitOverride()
  program
    .command("version")
    .description("print the version of lambdagent and of Node.js")
    .action(() => {
      process.stdout.write(`lambdagent ${VERSION}\nnode ${process.version}\n`)
    })
  registerEval(program, runAction)
  registerRun(program, runAction)
  registerYaml(program, runAction)
  registerServe(program, runAction)
  registerRag(program, runAction)
  registerMcp(program, runAction)
  registerTrace(program, runAction)
  registerRepl(program, runAction)
  registerTools(program, runAction)
  return program
}

export const main = async (argv: ReadonlyArray<string>): Promise<void> => {
  installInterrupt()
  const program = buildProgram()
  try {
    await program.parseAsync(argv as Array<string>)
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander has already printed its message (usage errors, --help, --version)
      process.exitCode = error.exitCode === 0 ? ExitCode.ok : ExitCode.compile
      return
    }
    reportError(error, "text")
    process.exitCode = exitCodeOf(error)
  }
}
