/**
 * Loading the plugins `--plugin` and `$LAMBDAGENT_PLUGINS` name (see `plugins.ts`): a file relative
 * to the working directory, or a package resolved from it.
 */
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { isAbsolute, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import type { Plugin } from "lambdagent"
import { CliError, ExitCode } from "./io.ts"
import { type Host, pluginArguments } from "./plugins.ts"

const isPlugin = (value: unknown): value is Plugin.Plugin =>
  typeof value === "object" && value !== null && typeof (value as { name?: unknown }).name === "string"

/** Where a specifier points: a file (relative to the working directory) or a package from it. */
const locate = (specifier: string, cwd: string): string => {
  const looksLikePath = specifier.startsWith(".") || isAbsolute(specifier) || /\.[cm]?js$/.test(specifier)
  if (looksLikePath) {
    const file = resolve(cwd, specifier)
    if (!existsSync(file)) throw new CliError(`plugin not found: ${specifier} (no file ${file})`, ExitCode.notFound, "PluginNotFound")
    return pathToFileURL(file).href
  }
  try {
    return pathToFileURL(createRequire(resolve(cwd, "package.json")).resolve(specifier)).href
  } catch {
    throw new CliError(`plugin not found: ${specifier} (install it, or give a path to its module)`, ExitCode.notFound, "PluginNotFound")
  }
}

/** Import one plugin module and check what it exports. */
const load = async (specifier: string, cwd: string): Promise<ReadonlyArray<Plugin.Plugin>> => {
  let module: Record<string, unknown>
  try {
    module = await import(locate(specifier, cwd))
  } catch (error) {
    if (error instanceof CliError) throw error
    throw new CliError(`plugin ${specifier} failed to load: ${error instanceof Error ? error.message : String(error)}`, ExitCode.failed, "PluginError")
  }
  const exported = module.default ?? module.plugin
  const plugins = Array.isArray(exported) ? exported : [exported]
  if (plugins.length === 0 || !plugins.every(isPlugin)) {
    throw new CliError(
      `plugin ${specifier} must export a plugin ({ name, … }) or a list of them, as its default or \`plugin\` export`,
      ExitCode.usage,
      "PluginError"
    )
  }
  return plugins
}

/** The plugins `argv` and the environment name, loaded in that order. */
export const loadPlugins = async (argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Promise<Host> => {
  const specifiers = [
    ...(env.LAMBDAGENT_PLUGINS ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== ""),
    ...pluginArguments(argv)
  ]
  const plugins: Array<Plugin.Plugin> = []
  for (const specifier of specifiers) plugins.push(...(await load(specifier, cwd)))
  return { plugins }
}
