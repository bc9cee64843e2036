/**
 * The frame every `lambdagent` program shares: name, version, error reporting and exit codes.
 * A program is this frame plus the commands it registers, so the full CLI and the lean YAML
 * program (which starts without loading the runtime) behave the same way.
 */
import { Command, CommanderError } from "commander"
import { CliError, exitCodeOf, ExitCode, installInterrupt, reportError } from "./io.ts"
import { textOrJson } from "./options.ts"
import { type Host, noPlugins, withoutPluginArguments } from "./plugins.ts"
import { VERSION, versionReport } from "./version.ts"

/** Runs an action, turning any failure into a one-line report and an exit code. */
export type Action = (action: () => Promise<void>, format: () => "json" | "text") => Promise<void>

/** Adds one group of commands to a program; `host` holds the plugins the command line loaded. */
export type Registration = (program: Command, run: Action, host: Host) => void

const runAction: Action = async (action, format) => {
  try {
    await action()
  } catch (error) {
    reportError(error, format())
    process.exitCode = exitCodeOf(error)
  }
}

/** The commands plugins contribute (`Plugin.commands`): the arguments after the name go to `run`. */
const registerPluginCommands = (program: Command, host: Host): void => {
  for (const plugin of host.plugins) {
    for (const command of plugin.commands ?? []) {
      if (program.commands.some((c) => c.name() === command.name)) {
        throw new CliError(
          `plugin ${plugin.name}: the command ${JSON.stringify(command.name)} is lambdagent's own or another plugin's`,
          ExitCode.usage,
          "PluginError"
        )
      }
      program
        .command(command.name)
        .description(`${command.description} (plugin ${plugin.name})`)
        .argument("[args...]", "passed to the plugin")
        .allowUnknownOption()
        .helpOption(false)
        .action((args: Array<string>) =>
          runAction(
            async () => {
              process.exitCode = await command.run(args)
            },
            () => "text"
          )
        )
    }
  }
}

export const buildProgram = (registrations: ReadonlyArray<Registration>, host: Host = { plugins: [] }): Command => {
  const program = new Command()
    .name("lambdagent")
    .description("Build, check and run LLM agents as terms of a small JSON lambda calculus.")
    .version(VERSION, "-v, --version")
    .option("--plugin <module>", "load a plugin: its commands, tools, providers and stores (repeatable; also $LAMBDAGENT_PLUGINS)")
    .showHelpAfterError()
    .exitOverride()
  program
    .command("version")
    .description("print the version of lambdagent and of Node.js")
    .option("--format <format>", "text (default) or json: {lambdagent, node}", textOrJson, "text")
    .action((options: { format: "text" | "json" }) => {
      process.stdout.write(versionReport(options.format))
    })
  for (const register of registrations) register(program, runAction, host)
  registerPluginCommands(program, host)
  return program
}

/**
 * Run a program with the plugins it hosts (`host`: the full CLI loads those `--plugin` and
 * `$LAMBDAGENT_PLUGINS` name; the lean YAML program none), on `argv` without its `--plugin`
 * options. `host` may be a promise: loading a plugin that fails is reported like any error.
 */
export const runProgram = async (
  argv: ReadonlyArray<string>,
  registrations: ReadonlyArray<Registration>,
  host: Host | Promise<Host> = noPlugins
): Promise<void> => {
  installInterrupt()
  try {
    const program = buildProgram(registrations, await host)
    await program.parseAsync(withoutPluginArguments(argv))
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander has already printed its message (usage errors, --help, --version)
      if (error.code === "commander.unknownOption") {
        process.stderr.write("(an argument that starts with - is read as an option; put -- before it: lambdagent run CONFIG -- -x)\n")
      }
      process.exitCode = error.exitCode === 0 ? ExitCode.ok : ExitCode.compile
      return
    }
    reportError(error, "text")
    process.exitCode = exitCodeOf(error)
  }
}
