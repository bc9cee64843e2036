/**
 * Plugins the command line loads besides its own: `--plugin <module>` (repeatable) and
 * `$LAMBDAGENT_PLUGINS` (module specifiers separated by commas). A module's default export (or
 * its `plugin` export) is a `Plugin.Plugin` or a list of them: its `commands` become commands of
 * `lambdagent`, and its tools, providers, stores and layer join every runtime the commands build.
 */
import type { Plugin, Tools } from "lambdagent"

/** What the command line hosts: the plugins it loaded, for commands that build runtimes. */
export interface Host {
  readonly plugins: ReadonlyArray<Plugin.Plugin>
}

/** No plugins: what a program hosts when none are loaded. */
export const noPlugins: Host = { plugins: [] }

/** The tools the loaded plugins contribute (they join a top-level ReAct agent's tools, as `--tool` ones do). */
export const pluginTools = (host: Host): Array<Tools.ToolDefinition> => host.plugins.flatMap((plugin) => plugin.tools ?? [])

/** The `--plugin` values of `argv` (`--plugin M` or `--plugin=M`), wherever they stand. */
export const pluginArguments = (argv: ReadonlyArray<string>): Array<string> => {
  const found: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--") break
    if (arg === "--plugin" && i + 1 < argv.length) found.push(argv[++i]!)
    else if (arg.startsWith("--plugin=")) found.push(arg.slice("--plugin=".length))
  }
  return found
}

/** `argv` without its `--plugin` options, for the command parser. */
export const withoutPluginArguments = (argv: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--") {
      out.push(...argv.slice(i))
      break
    }
    if (arg === "--plugin" && i + 1 < argv.length) i++
    else if (!arg.startsWith("--plugin=")) out.push(arg)
  }
  return out
}
