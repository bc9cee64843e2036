/**
 * Where the command line keeps checkpoints: a directory (a path), Redis (`redis://HOST[:PORT][/DB]`
 * or `rediss://…`, with `?prefix=KEYPREFIX`; `redis:` alone for `LAMBDAGENT_REDIS_URL`) or a SQLite
 * file (`sqlite:PATH`). The Redis and SQLite plugins load only when a location names them.
 */
import { resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { CheckpointStore } from "lambdagent"
import { CliError, ExitCode } from "./io.ts"
import { loadStorePlugin } from "./stores.ts"

/** An open location and how to release it. */
export interface OpenLocation {
  readonly location: CheckpointStore.Location
  /** The location as written on the command line, for messages that say how to go on. */
  readonly spec: string
  /** Whether it is a directory (whose checkpoints are named by their file). */
  readonly isDirectory: boolean
  readonly close: () => Promise<void>
}

const usage = (message: string) => new CliError(message, ExitCode.usage, "UsageError")

/**
 * A location as the command line writes it, relative paths made absolute against `baseDir` (the
 * working directory for a flag, the config's folder for a `checkpoint:` block).
 */
export const normalizeLocation = (spec: string, baseDir: string): string => {
  if (/^rediss?:/i.test(spec)) return spec
  if (/^sqlite:/i.test(spec)) {
    const path = spec.slice("sqlite:".length)
    if (path === "") throw usage(`${spec}: give the database file, as in sqlite:./runs.db`)
    return `sqlite:${resolve(baseDir, path)}`
  }
  const other = /^([a-z][a-z0-9+.-]*):\/\//i.exec(spec)?.[1]
  if (other !== undefined) throw usage(`${spec}: ${other}:// is not a checkpoint store; use a directory, redis://HOST[:PORT][?prefix=P] or sqlite:PATH`)
  return resolve(baseDir, spec)
}

const redisParts = (spec: string): { readonly url?: string; readonly keyPrefix?: string } => {
  const q = spec.indexOf("?")
  const params = new URLSearchParams(q < 0 ? "" : spec.slice(q + 1))
  const keyPrefix = params.get("prefix") ?? undefined
  params.delete("prefix")
  const main = q < 0 ? spec : spec.slice(0, q)
  if (keyPrefix === "") throw usage(`${spec}: prefix must not be empty`)
  if (/^rediss?:$/i.test(main)) return keyPrefix !== undefined ? { keyPrefix } : {}
  if (!/^rediss?:\/\//i.test(main)) throw usage(`${spec}: expected redis://HOST[:PORT][/DB][?prefix=P], rediss://…, or redis: for LAMBDAGENT_REDIS_URL`)
  const rest = params.toString()
  return { url: main + (rest === "" ? "" : `?${rest}`), ...(keyPrefix !== undefined ? { keyPrefix } : {}) }
}

/**
 * Open the location `spec` (see the module's description): a store that cannot be reached or
 * written is a one-line {@link CliError} naming it, raised now, before a run's first oracle call.
 * `directory` holds a directory's options (`fsync`).
 */
export const openLocation = async (
  spec: string,
  baseDir: string = process.cwd(),
  directory: CheckpointStore.DirectoryLocationOptions = {}
): Promise<OpenLocation> => {
  const normal = normalizeLocation(spec, baseDir)
  const scope = Scope.makeUnsafe()
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void))
  try {
    let location: CheckpointStore.Location
    if (/^rediss?:/i.test(normal)) {
      const plugin = await loadStorePlugin("redis")
      location = await Effect.runPromise(Scope.provide(plugin.checkpointLocation(redisParts(normal)), scope))
    } else if (normal.startsWith("sqlite:")) {
      const plugin = await loadStorePlugin("sqlite")
      location = await Effect.runPromise(Scope.provide(plugin.checkpointLocation({ path: normal.slice("sqlite:".length) }), scope))
    } else {
      return { location: CheckpointStore.directoryLocation(normal, directory), spec: normal, isDirectory: true, close }
    }
    return { location, spec: normal, isDirectory: false, close }
  } catch (error) {
    await close()
    throw error
  }
}
