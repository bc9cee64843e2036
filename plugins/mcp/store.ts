/**
 * Where evolved tools are kept between runs. A {@link ToolRegistryStore} loads and saves the whole
 * registry; the default is a JSON file written atomically ({@link jsonFileStore}), and any
 * `MemoryStore` service can hold it instead ({@link memoryStoreRegistryStore}).
 *
 * @since 0.1.0
 * @module
 */
import { randomBytes } from "node:crypto"
import { open, readdir, readFile, rename, unlink } from "node:fs/promises"
import { homedir } from "node:os"
import { basename, dirname, join } from "node:path"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { MemoryStore } from "lambdagent"
import { CheckpointStore, Errors, Term } from "lambdagent"

/**
 * One version of an evolved tool, as stored.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { StoredVersion } from "lambdagent/mcp"
 * const v: StoredVersion = { version: 1, description: "Squares", code: { lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } }, createdAt: "2025-01-01T00:00:00.000Z" }
 * ```
 */
export interface StoredVersion {
  /** 1 for the first evolve of a name, then 2, 3, … */
  readonly version: number
  readonly description: string
  /** The term, as canonical JSON (`Term.encode`). */
  readonly code: Term.Json
  /** ISO 8601 time of the evolve. */
  readonly createdAt: string
}

/**
 * An evolved tool with every version it has had, oldest first; the last is the current one.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { StoredTool } from "lambdagent/mcp"
 * const t: StoredTool = { name: "answer", versions: [{ version: 1, description: "42", code: 42, createdAt: new Date().toISOString() }] }
 * ```
 */
export interface StoredTool {
  readonly name: string
  readonly versions: ReadonlyArray<StoredVersion>
}

/**
 * Persistence for the tool registry: `load` returns every tool, `save` replaces them all. A save
 * either fully happens or leaves the previous contents in place.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { StoredTool, ToolRegistryStore } from "lambdagent/mcp"
 * let saved: ReadonlyArray<StoredTool> = []
 * const store: ToolRegistryStore = {
 *   description: "a variable",
 *   load: async () => saved,
 *   save: async (tools) => { saved = tools }
 * }
 * ```
 */
export interface ToolRegistryStore {
  /** Where the tools live, for logs (`file /path/tools.json`, `memory`, …). */
  readonly description: string
  /** Read every stored tool (none when nothing was saved yet). */
  readonly load: () => Promise<ReadonlyArray<StoredTool>>
  /** Replace what is stored with these tools. */
  readonly save: (tools: ReadonlyArray<StoredTool>) => Promise<void>
  /**
   * Store one new version of a tool, after the `load`: the incremental save, which costs the same
   * however many tools there are. When absent, the registry saves everything with `save`.
   */
  readonly append?: (name: string, version: StoredVersion) => Promise<void>
}

/**
 * A store could not be read or written. A store that holds data it cannot read fails to load
 * (it is never overwritten with an empty registry).
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { RegistryStoreError } from "lambdagent/mcp"
 * const e = new RegistryStoreError({ store: "file tools.json", operation: "load", message: "not JSON" })
 * ```
 */
export class RegistryStoreError extends Errors.TaggedError<RegistryStoreError>()("RegistryStoreError", {
  store: Schema.String,
  operation: Schema.Literals(["load", "save"]),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

const FORMAT = "lambdagent/mcp-tools"
const FORMAT_VERSION = 1

/**
 * The JSON text a store writes: `{"format": "lambdagent/mcp-tools", "formatVersion": 1, "tools": [...]}`,
 * integers beyond 2^53 exact.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { encodeRegistry } from "lambdagent/mcp"
 * encodeRegistry([]) // '{"format":"lambdagent/mcp-tools","formatVersion":1,"tools":[]}'
 * ```
 */
export const encodeRegistry = (tools: ReadonlyArray<StoredTool>): string =>
  Term.stringify({
    format: FORMAT,
    formatVersion: FORMAT_VERSION,
    tools: tools.map((t) => ({
      name: t.name,
      versions: t.versions.map((v) => ({ version: v.version, description: v.description, code: v.code, createdAt: v.createdAt }))
    }))
  })

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Read the JSON text written by {@link encodeRegistry}. Throws an `Error` saying what is wrong.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { decodeRegistry, encodeRegistry } from "lambdagent/mcp"
 * decodeRegistry(encodeRegistry([])) // []
 * ```
 */
export const decodeRegistry = (text: string): ReadonlyArray<StoredTool> => {
  const json = Term.parseJsonText(text)
  if (!isRecord(json) || json.format !== FORMAT) throw new Error(`not a ${FORMAT} document`)
  if (json.formatVersion !== FORMAT_VERSION) {
    throw new Error(`format version ${JSON.stringify(json.formatVersion)} is not supported (expected ${FORMAT_VERSION})`)
  }
  if (!Array.isArray(json.tools)) throw new Error('"tools" must be an array')
  return json.tools.map((tool: unknown, i): StoredTool => {
    if (!isRecord(tool) || typeof tool.name !== "string" || !Array.isArray(tool.versions) || tool.versions.length === 0) {
      throw new Error(`tools[${i}] must have a string "name" and a non-empty "versions" array`)
    }
    const versions = tool.versions.map((v: unknown, j): StoredVersion => {
      if (
        !isRecord(v) ||
        typeof v.version !== "number" ||
        !Number.isSafeInteger(v.version) ||
        v.version < 1 ||
        typeof v.description !== "string" ||
        !("code" in v) ||
        typeof v.createdAt !== "string"
      ) {
        throw new Error(`tools[${i}].versions[${j}] must have "version" (integer ≥ 1), "description", "code" and "createdAt"`)
      }
      return { version: v.version, description: v.description, code: v.code as Term.Json, createdAt: v.createdAt }
    })
    return { name: tool.name, versions }
  })
}

let tempCounter = 0

/**
 * Write a file atomically: the text goes to a temporary file in the same directory, is flushed
 * to disk, and is then renamed over the target, so readers see the old or the new contents, never
 * a mix. The directory is created when missing.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { writeFileAtomic } from "lambdagent/mcp"
 * await writeFileAtomic("tools.json", "{}")
 * ```
 */
export const writeFileAtomic = async (path: string, text: string): Promise<void> => {
  CheckpointStore.makeDirectory(dirname(path))
  const temp = `${path}.${process.pid}.${++tempCounter}.${randomBytes(4).toString("hex")}.tmp`
  const handle = await open(temp, "w", 0o600)
  try {
    await handle.writeFile(text, "utf8")
    await handle.sync()
  } catch (error) {
    await handle.close().catch(() => undefined)
    await unlink(temp).catch(() => undefined)
    throw error
  }
  await handle.close()
  try {
    await rename(temp, path)
  } catch (error) {
    await unlink(temp).catch(() => undefined)
    throw error
  }
  // Make the rename itself durable where the platform allows opening a directory.
  const dir = await open(dirname(path), "r").catch(() => undefined)
  if (dir !== undefined)
    await dir
      .sync()
      .catch(() => undefined)
      .finally(() => dir.close())
}

const TEMP_NAME = /^\.(\d+)\.\d+\.[0-9a-f]+\.tmp$/

const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Remove the temporary files {@link writeFileAtomic} left next to `path` when a process died
 * between writing and renaming. A file is removed only when the process that wrote it (its name
 * holds the pid) is gone, so a save in progress elsewhere is never disturbed. Returns the names
 * removed.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { removeOrphanedTempFiles } from "lambdagent/mcp"
 * const removed = await removeOrphanedTempFiles("tools.json") // e.g. ["tools.json.4242.1.9f3a01bc.tmp"]
 * ```
 */
export const removeOrphanedTempFiles = async (path: string): Promise<ReadonlyArray<string>> => {
  const base = basename(path)
  let names: Array<string>
  try {
    names = await readdir(dirname(path))
  } catch {
    return []
  }
  const removed: Array<string> = []
  for (const name of names) {
    if (!name.startsWith(base)) continue
    const match = TEMP_NAME.exec(name.slice(base.length))
    if (match === null || processAlive(Number(match[1]))) continue
    await unlink(join(dirname(path), name)).then(
      () => removed.push(name),
      () => undefined
    )
  }
  return removed
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * A store in one JSON file (see {@link encodeRegistry}), written atomically (temporary file,
 * flush, rename), with a journal next to it (`PATH.journal`, one JSON line per evolved version,
 * flushed before the evolve answers). An evolve appends one line, whatever the number of tools;
 * when the journal has grown larger than the file, the file is rewritten with everything and the
 * journal removed, so the cost per evolve stays constant on average. A missing file is an empty
 * registry; a file or journal line that cannot be read fails the load rather than being replaced
 * (a last journal line cut short by a crash is ignored: its evolve never answered).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { jsonFileStore } from "lambdagent/mcp"
 * const store = jsonFileStore("./.lambdagent/mcp-tools.json")
 * const tools = await store.load()
 * ```
 */
export const jsonFileStore = (path: string): ToolRegistryStore => {
  const description = `file ${path}`
  const journal = `${path}.journal`
  const state = new Map<string, Array<StoredVersion>>()
  let loaded = false
  let fileBytes = 0
  let journalBytes = 0
  const failure = (operation: "load" | "save", message: string, cause: unknown) => new RegistryStoreError({ store: description, operation, message, cause })
  const snapshot = (): Array<StoredTool> => [...state].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, versions]) => ({ name, versions }))
  const remember = (name: string, version: StoredVersion): void => {
    const versions = state.get(name)
    if (versions === undefined) state.set(name, [version])
    else if (version.version > versions[versions.length - 1]!.version) versions.push(version)
    // an entry already in the file (a crash between rewriting it and emptying the journal) is skipped
  }

  const readText = async (file: string): Promise<string | undefined> => {
    try {
      return await readFile(file, "utf8")
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
      throw failure("load", messageOf(error), error)
    }
  }

  const load = async (): Promise<ReadonlyArray<StoredTool>> => {
    await removeOrphanedTempFiles(path)
    state.clear()
    const text = await readText(path)
    let tools: ReadonlyArray<StoredTool> = []
    if (text !== undefined) {
      try {
        tools = decodeRegistry(text)
      } catch (error) {
        throw failure("load", `${path} is not a readable tool registry (${messageOf(error)}); fix or move it, it is never overwritten`, error)
      }
    }
    for (const tool of tools) state.set(tool.name, [...tool.versions])
    fileBytes = text === undefined ? 0 : Buffer.byteLength(text)
    const log = (await readText(journal)) ?? ""
    journalBytes = Buffer.byteLength(log)
    const lines = log.split("\n")
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!
      if (line.trim() === "") continue
      try {
        const entry = decodeJournalLine(line)
        remember(entry.name, entry.version)
      } catch (error) {
        if (i === lines.length - 1) continue // cut short by a crash: that evolve never answered
        throw failure("load", `${journal} line ${i + 1} is not a readable journal entry (${messageOf(error)}); fix or move it, it is never overwritten`, error)
      }
    }
    loaded = true
    return snapshot()
  }

  const rewrite = async (tools: ReadonlyArray<StoredTool>): Promise<void> => {
    const text = encodeRegistry(tools) + "\n"
    await writeFileAtomic(path, text)
    // the file now holds everything the journal did; removing it second keeps every version on a crash
    await unlink(journal).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
    })
    fileBytes = Buffer.byteLength(text)
    journalBytes = 0
  }

  return {
    description,
    load,
    save: async (tools) => {
      try {
        await rewrite(tools)
      } catch (error) {
        throw failure("save", messageOf(error), error)
      }
      state.clear()
      for (const tool of tools) state.set(tool.name, [...tool.versions])
      loaded = true
    },
    append: async (name, version) => {
      if (!loaded) await load()
      const line = encodeJournalLine(name, version) + "\n"
      try {
        CheckpointStore.makeDirectory(dirname(path))
        const handle = await open(journal, "a", 0o600)
        try {
          await handle.writeFile(line, "utf8")
          await handle.sync()
        } finally {
          await handle.close()
        }
      } catch (error) {
        // a line cut short would hide the next one: cut the journal back to what it held
        await truncateTo(journal, journalBytes)
        throw failure("save", messageOf(error), error)
      }
      journalBytes += Buffer.byteLength(line)
      remember(name, version)
      if (journalBytes > Math.max(fileBytes, JOURNAL_MIN_BYTES)) {
        try {
          await rewrite(snapshot())
        } catch {
          // the version is safe in the journal; the next append tries the rewrite again
        }
      }
    }
  }
}

/** Below this size the journal is not folded into the file (small registries rewrite rarely). */
const JOURNAL_MIN_BYTES = 64 * 1024

const truncateTo = async (file: string, bytes: number): Promise<void> => {
  const handle = await open(file, "r+").catch(() => undefined)
  if (handle === undefined) return
  await handle
    .truncate(bytes)
    .catch(() => undefined)
    .finally(() => handle.close())
}

const encodeJournalLine = (name: string, v: StoredVersion): string =>
  Term.stringify({ name, version: v.version, description: v.description, code: v.code, createdAt: v.createdAt })

const decodeJournalLine = (line: string): { name: string; version: StoredVersion } => {
  const json = Term.parseJsonText(line)
  if (
    !isRecord(json) ||
    typeof json.name !== "string" ||
    typeof json.version !== "number" ||
    !Number.isSafeInteger(json.version) ||
    json.version < 1 ||
    typeof json.description !== "string" ||
    !("code" in json) ||
    typeof json.createdAt !== "string"
  ) {
    throw new Error(`expected {"name", "version", "description", "code", "createdAt"}`)
  }
  return { name: json.name, version: { version: json.version, description: json.description, code: json.code as Term.Json, createdAt: json.createdAt } }
}

/**
 * A store in memory (lost when the process ends), optionally starting with some tools. Useful for
 * tests and for servers that should forget.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { memoryRegistryStore } from "lambdagent/mcp"
 * const store = memoryRegistryStore()
 * await store.save([])
 * ```
 */
export const memoryRegistryStore = (
  initial: ReadonlyArray<StoredTool> = []
): ToolRegistryStore & {
  /** What the last save wrote. */
  readonly current: () => ReadonlyArray<StoredTool>
} => {
  // versions are immutable once stored: keeping them (not copies) makes an append O(1)
  const tools = new Map<string, Array<StoredVersion>>()
  const replace = (from: ReadonlyArray<StoredTool>) => {
    tools.clear()
    for (const tool of decodeRegistry(encodeRegistry(from))) tools.set(tool.name, [...tool.versions])
  }
  replace(initial)
  const current = (): ReadonlyArray<StoredTool> =>
    [...tools].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, versions]) => ({ name, versions: [...versions] }))
  return {
    description: "memory",
    load: async () => current(),
    save: async (from) => replace(from),
    append: async (name, version) => {
      const versions = tools.get(name)
      if (versions === undefined) tools.set(name, [version])
      else versions.push(version)
    },
    current
  }
}

/**
 * A store inside a `MemoryStore` service implementation (Redis, SQLite, …): the whole registry is
 * one entry, `key` in `namespace`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import type { MemoryStore } from "lambdagent"
 * import { memoryStoreRegistryStore } from "lambdagent/mcp"
 * declare const redis: MemoryStore.MemoryStoreShape
 * const store = memoryStoreRegistryStore(redis, { namespace: "global", key: "mcp-tools" })
 * ```
 */
export const memoryStoreRegistryStore = (
  store: MemoryStore.MemoryStoreShape,
  options: {
    readonly namespace?: string
    readonly key?: string
    /** What the store is, for messages (default: its `name` and "memory store"), e.g. `sqlite ./tools.db`. */
    readonly name?: string
  } = {}
): ToolRegistryStore => {
  const namespace = options.namespace ?? "global"
  const key = options.key ?? FORMAT
  const description = `${options.name ?? `${store.name} memory store`} (${namespace}/${key})`
  return {
    description,
    load: async () => {
      let entry: Effect.Success<ReturnType<typeof store.get>>
      try {
        entry = await Effect.runPromise(store.get(namespace, key))
      } catch (error) {
        throw new RegistryStoreError({ store: description, operation: "load", message: messageOf(error), cause: error })
      }
      if (entry === undefined) return []
      try {
        return decodeRegistry(entry.value)
      } catch (error) {
        throw new RegistryStoreError({
          store: description,
          operation: "load",
          message: `${description} holds no readable tool registry (${messageOf(error)}); fix or delete that entry, it is never overwritten`,
          cause: error
        })
      }
    },
    save: async (tools) => {
      try {
        await Effect.runPromise(store.put(namespace, key, encodeRegistry(tools)))
      } catch (error) {
        throw new RegistryStoreError({ store: description, operation: "save", message: messageOf(error), cause: error })
      }
    }
  }
}

/**
 * The default store file: `~/.lambdagent/mcp-tools.json` (in the user's home directory, so it
 * does not depend on the directory a client starts the server in).
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { defaultStorePath } from "lambdagent/mcp"
 * console.log(defaultStorePath()) // e.g. /home/ada/.lambdagent/mcp-tools.json
 * ```
 */
export const defaultStorePath = (): string => join(homedir(), ".lambdagent", "mcp-tools.json")

/**
 * Resolve a store option: a store as is, `":memory:"` for {@link memoryRegistryStore}, any other
 * string a {@link jsonFileStore} path, absent the {@link defaultStorePath}.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { resolveStore } from "lambdagent/mcp"
 * resolveStore(":memory:").description // "memory"
 * ```
 */
export const resolveStore = (store: string | ToolRegistryStore | undefined): ToolRegistryStore =>
  store === undefined
    ? jsonFileStore(defaultStorePath())
    : typeof store !== "string"
      ? store
      : store === ":memory:"
        ? memoryRegistryStore()
        : jsonFileStore(store)
