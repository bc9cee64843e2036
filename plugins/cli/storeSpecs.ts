/**
 * What a `--store` value names: a Redis or SQLite store a plugin keeps, or (for `lambdagent mcp`) a
 * JSON file or `:memory:`, which the MCP plugin reads itself. Parsing loads no store, so the lean
 * `mcp` program can check its `--store` with it.
 */
import { CliError, ExitCode } from "./io.ts"
import { PLUGIN_STORE } from "./leanMcp.ts"

/** A store kept by a plugin: Redis or SQLite. */
export type PluginStoreKind = "redis" | "sqlite"

/** What to open. `url` and `path` default to the plugins' environment variables. */
export interface StoreSpec {
  readonly kind: PluginStoreKind
  /** Redis: the server URL. */
  readonly url?: string
  /** Redis: the key prefix. */
  readonly keyPrefix?: string
  /** SQLite: the database file. */
  readonly path?: string
  readonly maxEntries?: number
}

/** A `--store` value that names a Redis or SQLite store, parsed. */
export interface RegistryStoreSpec extends StoreSpec {
  /** The store namespace of the registry entry. */
  readonly namespace?: string
}

/**
 * Parse a `--store` value: `undefined` for a JSON file path or `:memory:` (the MCP plugin reads
 * those itself), a {@link RegistryStoreSpec} for `redis://…`, `rediss://…`, `redis:`, `sqlite:PATH`
 * and `sqlite:`. Options go in a query: `?namespace=NAME`, and for Redis `&prefix=KEYPREFIX`; the
 * rest of a Redis URL goes to the client as written. Throws a usage {@link CliError} for an
 * option it does not know, and for a URL of any other scheme (`postgres://…`).
 */
export const parseRegistryStore = (value: string): RegistryStoreSpec | undefined => {
  const scheme = PLUGIN_STORE.exec(value)?.[1]?.toLowerCase()
  if (scheme === undefined) {
    // a URL of another service is a mistake, not a file to create under ./postgres:/…
    const other = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]
    if (other !== undefined) {
      throw new CliError(
        `--store ${value}: ${other}:// is not a store; use a JSON file path, :memory:, redis://HOST[:PORT] or sqlite:PATH`,
        ExitCode.usage,
        "UsageError"
      )
    }
    return undefined
  }
  const rest = value.slice(scheme.length + 1)
  const q = rest.indexOf("?")
  const params = new URLSearchParams(q < 0 ? "" : rest.slice(q + 1))
  const main = q < 0 ? rest : rest.slice(0, q)
  const known = scheme === "sqlite" ? ["namespace"] : ["namespace", "prefix"]
  const own: Record<string, string> = {}
  const passed = new URLSearchParams()
  for (const [key, v] of params) {
    if (known.includes(key)) own[key] = v
    else if (scheme === "sqlite") {
      throw new CliError(`--store ${value}: unknown option ${JSON.stringify(key)} (sqlite: takes ?namespace=NAME)`, ExitCode.usage, "UsageError")
    } else passed.append(key, v)
  }
  if (own.namespace === "") throw new CliError(`--store ${value}: namespace must not be empty`, ExitCode.usage, "UsageError")
  const namespace = own.namespace !== undefined ? { namespace: own.namespace } : {}
  if (scheme === "sqlite") return { kind: "sqlite", ...(main !== "" ? { path: main } : {}), ...namespace }
  if (main === "" && passed.size > 0) {
    throw new CliError(`--store ${value}: give the server as redis://HOST:PORT to pass client options`, ExitCode.usage, "UsageError")
  }
  if (main !== "" && !main.startsWith("//")) {
    throw new CliError(
      `--store ${value}: expected redis://HOST[:PORT][/DB], rediss://…, or redis: alone for LAMBDAGENT_REDIS_URL`,
      ExitCode.usage,
      "UsageError"
    )
  }
  const query = passed.toString()
  return {
    kind: "redis",
    ...(main !== "" ? { url: `${scheme}:${main}${query === "" ? "" : `?${query}`}` } : {}),
    ...(own.prefix !== undefined ? { keyPrefix: own.prefix } : {}),
    ...namespace
  }
}
