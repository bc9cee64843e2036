/**
 * The frame every `lambdagent` program shares: name, version, error reporting and exit codes.
 * A program is this frame plus the commands it registers, so the full CLI and the lean YAML
 * program (which starts without loading the runtime) behave the same way.
 */
import { Command, CommanderError } from "commander"
import manifest from "../../package.json" with { type: "json" }
import { exitCodeOf, ExitCode, installInterrupt, reportError } from "./io.ts"

/** The package's version, from package.json at build time. */
export const VERSION: string = manifest.version

/** Runs an action, turning any failure into a one-line report and an exit code. */
export type Action = (action: () => Promise<void>, format: () => "json" | "text") => Promise<void>

/** Adds one group of commands to a program. */
export type Registration = (program: Command, run: Action) => void

const runAction: Action = async (action, format) => {
  try {
    await action()
  } catch (error) {
    reportError(error, format())
    process.exitCode = exitCodeOf(error)
  }
}

export const buildProgram = (registrations: ReadonlyArray<Registration>): Command => {
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
  for (const register of registrations) register(program, runAction)
  return program
}

export const runProgram = async (argv: ReadonlyArray<string>, registrations: ReadonlyArray<Registration>): Promise<void> => {
  installInterrupt()
  const program = buildProgram(registrations)
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
