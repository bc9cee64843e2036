/**
 * When `lambdagent mcp` can start as the lean program: a server of pure tools whose registry is in
 * memory or a JSON file. Anything that needs the agent runtime (`--allow`, `--model`, `--tool`,
 * `--config`, `--otel`), a store plugin (`--store redis:…`, `--store sqlite:…`) or other plugins
 * (`--plugin`, `$LAMBDAGENT_PLUGINS`) goes to the full CLI, which loads them. The launcher asks this
 * before loading either program, so it imports nothing.
 */

/** `--store` values a store plugin serves (Redis or SQLite), as `stores.ts` reads them. */
export const PLUGIN_STORE = /^(rediss?|sqlite):/i

const FULL_PROGRAM_FLAGS = ["--allow", "--model", "--tool", "--config", "--otel", "--plugin"]

/** Whether `argv` (`node`, the script, then the arguments) and `env` ask for a pure `mcp` server. */
export const servesPureTools = (argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv): boolean => {
  if (argv[2] !== "mcp" || (env.LAMBDAGENT_PLUGINS ?? "").trim() !== "") return false
  for (let i = 3; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--") break
    const flag = arg.split("=", 1)[0]!
    if (FULL_PROGRAM_FLAGS.includes(flag)) return false
    if (flag === "--store") {
      const value = arg === flag ? argv[i + 1] : arg.slice(flag.length + 1)
      if (value !== undefined && PLUGIN_STORE.test(value)) return false
    }
  }
  return true
}
