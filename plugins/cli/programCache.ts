/**
 * Loading a lean program (one CommonJS bundle) with a V8 code cache taken after it has run. Node's
 * compile cache stores a module's bytecode as compiled at load, which holds only the functions V8
 * compiles eagerly; every function a command then calls is compiled on its first call, in every
 * run. A cache made once the command has run holds the bytecode of those functions too, and only
 * of those: a later run of the command compiles almost nothing and deserializes no more than it
 * uses (`lambdagent lint` starts about 15% faster than with Node's cache of an eagerly compiled
 * bundle, see docs/performance.md).
 *
 * The cache of a program is kept per command, under the compile cache's directory, in a file
 * named by this copy of the bundle and the Node version (see {@link programCacheFile}); V8 itself
 * refuses a cache made under other flags, and a refused or unreadable cache is made again. Nothing here ever fails a command:
 * without a directory, or when a file cannot be read or written, the program loads as usual.
 *
 * @since 0.2.0
 * @module
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import * as nodeModule from "node:module"
import { basename, dirname, join } from "node:path"
import { constants, Script } from "node:vm"

/** How long a program that keeps running (a server) runs before its cache is made, ms. */
const SAVE_AFTER_MS = 2_000

/** A short hash of a text (FNV-1a, 32 bits), in hex: enough to tell two install paths apart. */
const shortHash = (text: string): string => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return (hash >>> 0).toString(16).padStart(8, "0")
}

/**
 * The file of a program's code cache: under `directory`, named by the program, the command, and
 * what identifies this copy of the bundle: its path, size, inode and change time (which every
 * write or install of the file renews; V8 itself checks only a cache's length, flags and version,
 * so a rebuilt bundle must not find the old cache), and the Node version and flags (`runtime`).
 *
 * @since 0.2.0
 * @example
 * ```ts
 * import { programCacheFile } from "./programCache.ts"
 * programCacheFile("/home/ada/.cache/lambdagent/compile-cache", "/app/dist/cli/yaml-main.cjs", "lint", { size: 734395, ino: 42, ctimeMs: 1765000000000 }, "v22.13.0")
 * // "/home/ada/.cache/lambdagent/compile-cache/lambdagent-programs/yaml-main-lint-<hash>.bin"
 * ```
 */
export const programCacheFile = (
  directory: string,
  file: string,
  command: string,
  stat: { readonly size: number; readonly ino: number; readonly ctimeMs: number },
  runtime: string
): string => {
  const identity = shortHash(`${file}\0${stat.size}\0${stat.ino}\0${stat.ctimeMs}\0${runtime}`)
  return join(directory, "lambdagent-programs", `${cachePrefix(file, command)}${identity}.bin`)
}

/** What the cache files of one program's command start with (older copies' included). */
const cachePrefix = (file: string, command: string): string => `${basename(file).replace(/\.c?js$/, "")}-${command.replace(/[^A-Za-z0-9-]/g, "_")}-`

const readCache = (path: string): Buffer | undefined => {
  try {
    return readFileSync(path)
  } catch {
    return undefined
  }
}

/** How many caches of one program's command are kept: this copy's and the most recent others'. */
const KEPT_COPIES = 4

/**
 * Write `data` to `path` whole or not at all (another process may be writing or reading it), and
 * remove all but the most recent of the caches of other copies of the program (same `prefix`):
 * rebuilt or reinstalled bundles, or other installs used in turn.
 */
const writeCache = (path: string, prefix: string, data: Uint8Array): void => {
  try {
    const directory = dirname(path)
    mkdirSync(directory, { recursive: true, mode: 0o700 })
    const temporary = `${path}.${process.pid}.tmp`
    writeFileSync(temporary, data, { mode: 0o600 })
    renameSync(temporary, path)
    const others = readdirSync(directory)
      .filter((name) => name.startsWith(prefix) && name.endsWith(".bin") && join(directory, name) !== path)
      .map((name) => ({ path: join(directory, name), modified: statSync(join(directory, name)).mtimeMs }))
      .sort((a, b) => b.modified - a.modified)
    for (const old of others.slice(KEPT_COPIES - 1)) rmSync(old.path, { force: true })
  } catch {
    // a cache that cannot be written means compiling again next time, never a failing command
  }
}

/**
 * Load the CommonJS bundle `file` and return its exports, using (and, when missing or refused,
 * making) the code cache of `command` under `directory`. Without a directory it is a plain
 * `require`.
 *
 * @since 0.2.0
 * @example
 * ```ts
 * import { loadProgram } from "./programCache.ts"
 * const program = loadProgram(new URL("./yaml-main.cjs", import.meta.url).pathname, "lint", undefined)
 * ```
 */
export const loadProgram = (file: string, command: string, directory: string | undefined): unknown => {
  const require = nodeModule.createRequire(file)
  if (directory === undefined) return require(file)
  const source = readFileSync(file, "utf8")
  // V8 refuses a cache made under other flags: runs with other flags keep a cache of their own
  const runtime = `${process.version} ${process.execArgv.join(" ")} ${process.env.NODE_OPTIONS ?? ""}`
  const cacheFile = programCacheFile(directory, file, command, statSync(file), runtime)
  const cachedData = readCache(cacheFile)
  const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, {
    filename: file,
    ...(cachedData !== undefined ? { cachedData } : {}),
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER
  })
  if (cachedData === undefined || script.cachedDataRejected === true) {
    // at exit, or once a program that keeps running (a server) has started and answered
    let saved = false
    const save = () => {
      if (saved) return
      saved = true
      writeCache(cacheFile, cachePrefix(file, command), script.createCachedData())
    }
    process.once("exit", save)
    setTimeout(save, SAVE_AFTER_MS).unref()
  }
  const module = { exports: {} as unknown }
  const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown, filename: string, dirname: string) => void
  wrapper.call(module.exports, module.exports, require, module, file, dirname(file))
  return module.exports
}
