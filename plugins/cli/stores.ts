/**
 * Opening memory stores for the command line: the optional Redis and SQLite plugins are loaded
 * only when a command needs them, with a clear error when one cannot be loaded, and each store
 * lives in its own scope that `close` releases.
 *
 * Also the shared memory of an agent file (`sharedMemory:`), and the `--store` option of `lambdagent mcp`: besides a JSON file and `:memory:`, a registry
 * of evolved tools may live in Redis (`redis://…`, `rediss://…`, or `redis:` for
 * `LAMBDAGENT_REDIS_URL`) or in a SQLite file (`sqlite:PATH`, or `sqlite:` for
 * `LAMBDAGENT_SQLITE_PATH`), with `?namespace=NAME` (and, for Redis, `&prefix=KEYPREFIX`).
 */
import { homedir } from "node:os"
import { join, resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { MemoryStore, SharedMemory, type Tools } from "lambdagent"
import { CliError, ExitCode } from "./io.ts"
import { type PluginStoreKind, parseRegistryStore, type StoreSpec } from "./storeSpecs.ts"

export { parseRegistryStore, type PluginStoreKind, type RegistryStoreSpec, type StoreSpec } from "./storeSpecs.ts"

type RedisPlugin = typeof import("lambdagent/redis")
type SqlitePlugin = typeof import("lambdagent/sqlite")

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * Load the plugin of a store. A missing dependency is a {@link CliError} that says what to
 * install (`ioredis` for Redis; Node 22.5 or newer, for `node:sqlite`, for SQLite).
 */
export async function loadStorePlugin(kind: "redis"): Promise<RedisPlugin>
export async function loadStorePlugin(kind: "sqlite"): Promise<SqlitePlugin>
export async function loadStorePlugin(kind: PluginStoreKind): Promise<RedisPlugin | SqlitePlugin> {
  try {
    return kind === "redis" ? await import("lambdagent/redis") : await import("lambdagent/sqlite")
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const message = messageOf(error)
    if (kind === "redis" && code === "ERR_MODULE_NOT_FOUND" && message.includes("ioredis")) {
      throw new CliError("the redis store needs the ioredis package, which is not installed: run npm install ioredis", ExitCode.failed, "MissingDependency")
    }
    if (kind === "sqlite" && (code === "ERR_UNKNOWN_BUILTIN_MODULE" || message.includes("node:sqlite"))) {
      throw new CliError(`the sqlite store needs node:sqlite (Node 22.5 or newer); this is Node ${process.version}`, ExitCode.failed, "MissingDependency")
    }
    throw new CliError(`cannot load the ${kind} store (lambdagent/${kind}): ${message}`, ExitCode.failed, "MissingDependency")
  }
}

/** An open store and how to release it. */
export interface OpenStore {
  readonly store: MemoryStore.MemoryStoreShape
  /** Where it is, for messages: `redis redis://host:6379`, `sqlite /path/file.db`. */
  readonly description: string
  readonly close: () => Promise<void>
}

const isMemoryError = (u: unknown): u is { readonly _tag: "MemoryError"; readonly message: string } =>
  typeof u === "object" && u !== null && "_tag" in u && u._tag === "MemoryError"

/**
 * Open a Redis or SQLite store in a scope of its own. A store that cannot be opened (Redis not
 * reachable, a file that is not a database, …) is a {@link CliError} with the store's message,
 * which names the URL or the path.
 */
export const openPluginStore = async (spec: StoreSpec, context: string): Promise<OpenStore> => {
  const scope = Scope.makeUnsafe()
  const close = () => Effect.runPromise(Scope.close(scope, Exit.void))
  try {
    if (spec.kind === "redis") {
      const plugin = await loadStorePlugin("redis")
      const url = spec.url ?? process.env.LAMBDAGENT_REDIS_URL ?? plugin.defaultUrl
      const store = await Effect.runPromise(
        Scope.provide(
          plugin.make({
            url,
            ...(spec.keyPrefix !== undefined ? { keyPrefix: spec.keyPrefix } : {}),
            ...(spec.maxEntries !== undefined ? { maxEntries: spec.maxEntries } : {})
          }),
          scope
        )
      )
      return { store, description: `redis ${plugin.redactUrl(url)}`, close }
    }
    const plugin = await loadStorePlugin("sqlite")
    const path = spec.path ?? process.env.LAMBDAGENT_SQLITE_PATH ?? plugin.defaultPath
    const store = await Effect.runPromise(
      Scope.provide(plugin.make({ path, ...(spec.maxEntries !== undefined ? { maxEntries: spec.maxEntries } : {}) }), scope)
    )
    return { store, description: `sqlite ${path}`, close }
  } catch (error) {
    await close()
    if (error instanceof CliError) throw error
    if (isMemoryError(error)) throw new CliError(`${context}: ${error.message}`, ExitCode.failed, "MemoryError")
    throw new CliError(`${context}: ${messageOf(error)}`, ExitCode.failed, "MemoryError")
  }
}

// ---------------------------------------------------------------------------------------------
// `lambdagent mcp --store`
// ---------------------------------------------------------------------------------------------

/** The SQLite file of `--store sqlite:` when `LAMBDAGENT_SQLITE_PATH` is not set. */
export const defaultRegistrySqlitePath = (): string => join(homedir(), ".lambdagent", "mcp-tools.db")

/**
 * The registry store of a `--store` value: the value itself for a JSON file or `:memory:`,
 * else a `memoryStoreRegistryStore` in the Redis or SQLite store it names (opened now, so that an
 * unreachable server fails at start with its URL).
 */
export const openRegistryStore = async (
  value: string
): Promise<{ readonly store: string | import("lambdagent/mcp").ToolRegistryStore; readonly close: () => Promise<void> }> => {
  const spec = parseRegistryStore(value)
  if (spec === undefined) return { store: value, close: async () => {} }
  const opened = await openPluginStore(
    spec.kind === "sqlite" && spec.path === undefined && process.env.LAMBDAGENT_SQLITE_PATH === undefined
      ? { ...spec, path: defaultRegistrySqlitePath() }
      : spec,
    "--store"
  )
  const mcp = await import("lambdagent/mcp")
  const registry = mcp.memoryStoreRegistryStore(opened.store, {
    name: opened.description,
    ...(spec.namespace !== undefined ? { namespace: spec.namespace } : {})
  })
  return { store: registry, close: opened.close }
}

// ---------------------------------------------------------------------------------------------
// `sharedMemory:` of an agent file
// ---------------------------------------------------------------------------------------------

/** A shared memory opened for a run, with its tools. */
export interface OpenSharedMemory {
  readonly memory: SharedMemory.SharedMemory
  readonly tools: ReadonlyArray<Tools.ToolDefinition>
  readonly description: string
  readonly close: () => Promise<void>
}

/**
 * Open the shared memory a compiled file asks for: its store (a `local` one is `localStore` when
 * given, so that runtimes rebuilt in one session share it), then `SharedMemory.make` with the
 * block's settings (writing the initial bindings). The store keeps twice `size` entries, so that
 * writers racing at the limit of an append-only memory never make it evict a version. A
 * `custom` store cannot come from the command line: the memory is then local, with a notice.
 */
export const openSharedMemory = async (
  requirement: import("lambdagent/yaml").SharedMemoryRequirement,
  baseDir: string,
  options: { readonly localStore?: MemoryStore.MemoryStoreShape; readonly notices?: Array<string> } = {}
): Promise<OpenSharedMemory> => {
  const maxEntries = 2 * requirement.size
  let opened: OpenStore
  if (requirement.strategy === "redis" || requirement.strategy === "sqlite") {
    opened = await openPluginStore(
      requirement.strategy === "redis"
        ? { kind: "redis", ...(requirement.url !== undefined ? { url: requirement.url } : {}), maxEntries }
        : { kind: "sqlite", path: resolve(baseDir, requirement.path ?? ".lambdagent/shared-memory.db"), maxEntries },
      "sharedMemory"
    )
  } else {
    if (requirement.strategy === "custom") {
      options.notices?.push(
        `[sharedMemory: strategy custom${requirement.customStore !== undefined ? ` (${requirement.customStore})` : ""} is a store a host program provides; ` +
          "this run keeps the shared memory in process]"
      )
    }
    opened = {
      store: options.localStore ?? MemoryStore.makeLocal({ maxEntries }),
      description: "local (this process)",
      close: async () => {}
    }
  }
  const description = `${opened.description}, namespace ${requirement.namespace}${requirement.appendOnly ? ", append-only" : ""}`
  let memory: SharedMemory.SharedMemory
  try {
    memory = await Effect.runPromise(
      SharedMemory.make(opened.store, {
        namespace: requirement.namespace,
        appendOnly: requirement.appendOnly,
        initial: requirement.initial,
        historyLimit: requirement.size
      })
    )
  } catch (error) {
    await opened.close()
    throw new CliError(`sharedMemory (${description}): ${messageOf(error)}`, ExitCode.failed, isMemoryError(error) ? "MemoryError" : "SharedMemoryError")
  }
  return { memory, tools: SharedMemory.tools(memory, { source: description }), description, close: opened.close }
}
