/**
 * Node's compile cache for the `lambdagent` command: V8 keeps the bytecode of the programs the
 * launcher loads between runs, so a start compiles little. Node's own variables come first:
 * `NODE_DISABLE_COMPILE_CACHE` turns the cache off and `NODE_COMPILE_CACHE` names its directory.
 * Otherwise the cache lives in the user's cache directory, or in a directory of the user's own
 * under the temporary directory when that one cannot be used. A cache that cannot be opened (a
 * read-only file system, a file in the way) leaves the command running without one.
 *
 * @since 0.2.0
 * @module
 */
import { lstatSync, mkdirSync } from "node:fs"
import * as nodeModule from "node:module"
import { homedir, tmpdir } from "node:os"
import { isAbsolute, join } from "node:path"

/**
 * What the cache's place depends on, read from the process by default.
 *
 * @since 0.2.0
 * @example
 * ```ts
 * import type { CacheHost } from "./compileCache.ts"
 * const host: CacheHost = { env: {}, platform: "linux", home: "/home/ada", tmp: "/tmp", uid: 1000 }
 * ```
 */
export interface CacheHost {
  readonly env: NodeJS.ProcessEnv
  readonly platform: NodeJS.Platform
  /** The user's home directory; `""` when unknown. */
  readonly home: string
  readonly tmp: string
  /** The user's id, or `undefined` where there is none (Windows). */
  readonly uid: number | undefined
}

/**
 * A directory to try for the cache. `shared`: it sits in a directory other users can write (the
 * temporary directory), so it is used only when it is the user's own and closed to others.
 *
 * @since 0.2.0
 * @example
 * ```ts
 * import type { CacheDirectory } from "./compileCache.ts"
 * const dir: CacheDirectory = { path: "/tmp/lambdagent-compile-cache-1000", shared: true }
 * ```
 */
export interface CacheDirectory {
  readonly path: string
  readonly shared: boolean
}

/** Where each platform keeps a user's caches. */
const userCacheRoot = (host: CacheHost): string | undefined => {
  if (host.platform === "win32") return host.env.LOCALAPPDATA || (host.home === "" ? undefined : join(host.home, "AppData", "Local"))
  if (host.platform === "darwin") return host.home === "" ? undefined : join(host.home, "Library", "Caches")
  const xdg = host.env.XDG_CACHE_HOME
  if (xdg !== undefined && isAbsolute(xdg)) return xdg
  return host.home === "" ? undefined : join(host.home, ".cache")
}

/**
 * The directories to try for the cache, in order: `NODE_COMPILE_CACHE` alone when set; else
 * `lambdagent/compile-cache` in the user's cache directory (`$XDG_CACHE_HOME` or `~/.cache`,
 * `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows), then `lambdagent-compile-cache-<uid>`
 * in the temporary directory. None when `NODE_DISABLE_COMPILE_CACHE` is set.
 *
 * @since 0.2.0
 * @example
 * ```ts
 * import { compileCacheDirectories } from "./compileCache.ts"
 * compileCacheDirectories({ env: {}, platform: "linux", home: "/home/ada", tmp: "/tmp", uid: 1000 })
 * // [{ path: "/home/ada/.cache/lambdagent/compile-cache", shared: false },
 * //  { path: "/tmp/lambdagent-compile-cache-1000", shared: true }]
 * ```
 */
export const compileCacheDirectories = (host: CacheHost): ReadonlyArray<CacheDirectory> => {
  if ((host.env.NODE_DISABLE_COMPILE_CACHE ?? "") !== "") return []
  const chosen = host.env.NODE_COMPILE_CACHE ?? ""
  if (chosen !== "") return [{ path: chosen, shared: false }]
  const root = userCacheRoot(host)
  const temporary = { path: join(host.tmp, `lambdagent-compile-cache-${host.uid ?? "user"}`), shared: true }
  return root === undefined ? [temporary] : [{ path: join(root, "lambdagent", "compile-cache"), shared: false }, temporary]
}

/**
 * Whether `path`, in a directory others can write, is this user's alone (bytecode read from a
 * directory another user can write would run as this user); creates it, mode 0700, when missing.
 */
const isPrivateDirectory = (path: string, uid: number | undefined): boolean => {
  try {
    mkdirSync(path, { mode: 0o700 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false
  }
  const stat = lstatSync(path)
  return stat.isDirectory() && (uid === undefined || (stat.uid === uid && (stat.mode & 0o022) === 0))
}

const currentHost = (): CacheHost => {
  let home = ""
  try {
    home = homedir()
  } catch {
    // a user without a home directory: the temporary directory serves
  }
  return { env: process.env, platform: process.platform, home, tmp: tmpdir(), uid: process.getuid?.() }
}

/**
 * Turn on Node's compile cache in the first of {@link compileCacheDirectories} that opens. The
 * directory in use, or `undefined` when the command runs without the cache (turned off, or no
 * directory could be opened). Never throws.
 *
 * @since 0.2.0
 * @example
 * ```ts
 * import { enableCompileCache } from "./compileCache.ts"
 * const directory = enableCompileCache()
 * ```
 */
export const enableCompileCache = (host: CacheHost = currentHost()): string | undefined => {
  const { ENABLED, ALREADY_ENABLED } = nodeModule.constants.compileCacheStatus
  for (const { path, shared } of compileCacheDirectories(host)) {
    try {
      if (shared && !isPrivateDirectory(path, host.uid)) continue
      const result = nodeModule.enableCompileCache(path)
      if (result.status === ENABLED || result.status === ALREADY_ENABLED) return result.directory ?? path
    } catch {
      // an unusable directory means running without the cache, never a failing command
    }
  }
  return undefined
}
