/**
 * A SQLite-backed memory store (`lambdagent/sqlite`) on Node's built-in `node:sqlite`: one file
 * that several processes may share, with no native addon to build.
 *
 * The file runs in WAL mode. Every write is one transaction (`BEGIN IMMEDIATE`), and the LRU
 * eviction happens in the same transaction as the write that overflows the namespace, so
 * concurrent writers (fibers or processes) never lose a write. Expired entries are never
 * returned, deleted when a read meets them, and swept periodically.
 *
 * @since 0.1.0
 * @module lambdagent/sqlite
 */
import { dirname } from "node:path"
import type { DatabaseSync, StatementSync } from "node:sqlite"
import type * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { CheckpointStore, MemoryStore } from "lambdagent"
import { describeError, isBusy, messageOf } from "./errors.ts"
import { nodeSqlite } from "./nodeSqlite.ts"

/**
 * Options of the SQLite store.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { SqliteMemoryOptions } from "lambdagent/sqlite"
 * const o: SqliteMemoryOptions = { path: "data/memory.sqlite", maxEntries: 200, busyTimeoutMs: 2_000 }
 * ```
 */
export interface SqliteMemoryOptions {
  /**
   * The database file (its folder is created if missing), or `":memory:"`. Default:
   * `LAMBDAGENT_SQLITE_PATH`, else {@link defaultPath} in the working directory.
   */
  readonly path?: string
  /** Entries kept per namespace; the least recently used go first. Default 1000. */
  readonly maxEntries?: number
  /** How long a write waits for another connection's write lock before failing, in ms. Default 5000. */
  readonly busyTimeoutMs?: number
  /** How often expired entries are swept, in ms (through Effect's `Clock`); 0 turns sweeping off. Default 60 000. */
  readonly sweepIntervalMs?: number
  /**
   * `"normal"` (default): a committed write survives a crash of the process, and may be lost by a
   * power failure. `"full"`: survives a power failure too, at the price of an fsync per write.
   */
  readonly synchronous?: "normal" | "full"
}

/**
 * The file used when neither the `path` option nor `LAMBDAGENT_SQLITE_PATH` is set.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { defaultPath } from "lambdagent/sqlite"
 * defaultPath // "lambdagent-memory.sqlite"
 * ```
 */
export const defaultPath = "lambdagent-memory.sqlite"

/**
 * The version of the tables this store creates, recorded in the file. A file with a newer
 * version is refused rather than misread.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { schemaVersion } from "lambdagent/sqlite"
 * schemaVersion // 1
 * ```
 */
export const schemaVersion = 1

/**
 * The statements that create the schema (idempotent), exposed for tools that inspect the file.
 *
 * `seq` orders writes (for `listRecent`), `used` orders uses (for LRU); both come from
 * `max(used) + 1` within the namespace, so they stay ordered whatever is deleted. The counts
 * table, kept by triggers, makes the size check O(log n). `nul` marks rows whose key or value
 * holds a NUL character (see {@link sql}).
 *
 * @since 0.1.0
 * @category internals
 * @example
 * ```ts
 * import { DatabaseSync } from "node:sqlite"
 * import { schema } from "lambdagent/sqlite"
 * new DatabaseSync(":memory:").exec(schema)
 * ```
 */
export const schema = `
CREATE TABLE IF NOT EXISTS lambdagent_memory_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lambdagent_memory (
  id INTEGER PRIMARY KEY,
  ns TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  nul INTEGER NOT NULL DEFAULT 0,
  seq INTEGER NOT NULL,
  used INTEGER NOT NULL,
  UNIQUE (ns, key)
);
CREATE INDEX IF NOT EXISTS lambdagent_memory_by_seq ON lambdagent_memory (ns, seq);
CREATE INDEX IF NOT EXISTS lambdagent_memory_by_use ON lambdagent_memory (ns, used);
CREATE INDEX IF NOT EXISTS lambdagent_memory_by_expiry ON lambdagent_memory (ns, expires_at)
  WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS lambdagent_memory_counts (
  ns TEXT PRIMARY KEY,
  n INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS lambdagent_memory_count_insert AFTER INSERT ON lambdagent_memory BEGIN
  INSERT INTO lambdagent_memory_counts (ns, n) VALUES (NEW.ns, 1) ON CONFLICT (ns) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS lambdagent_memory_count_delete AFTER DELETE ON lambdagent_memory BEGIN
  UPDATE lambdagent_memory_counts SET n = n - 1 WHERE ns = OLD.ns;
  DELETE FROM lambdagent_memory_counts WHERE ns = OLD.ns AND n <= 0;
END;
INSERT OR IGNORE INTO lambdagent_memory_meta (key, value) VALUES ('schema_version', '${schemaVersion}');
`

/**
 * The SQL of each operation, for tools (and the benchmark) that issue the same statements
 * without the store. `node:sqlite` cuts text at the first NUL character when it reads it, so
 * the rows marked `nul` are read back `CAST(… AS BLOB)` and decoded as UTF-8 (only those: a
 * blob costs more to hand to JavaScript than a string).
 *
 * @since 0.1.0
 * @category internals
 * @example
 * ```ts
 * import { sql } from "lambdagent/sqlite"
 * sql.listRecent // SELECT … ORDER BY seq DESC LIMIT ?
 * ```
 */
export const sql = {
  /** ns, key, value, created_at, expires_at, nul (0 or 1) */
  upsert: `INSERT INTO lambdagent_memory (ns, key, value, created_at, expires_at, nul, seq, used)
    SELECT ?1, ?2, ?3, ?4, ?5, ?6, s, s
    FROM (SELECT coalesce((SELECT max(used) FROM lambdagent_memory WHERE ns = ?1), 0) + 1 AS s)
    WHERE true
    ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, created_at = excluded.created_at,
      expires_at = excluded.expires_at, nul = excluded.nul, seq = excluded.seq, used = excluded.used`,
  /** ns, key, now: whether the key has a live entry (not a use) */
  live: `SELECT 1 AS live FROM lambdagent_memory WHERE ns = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)`,
  /** ns */
  count: `SELECT n FROM lambdagent_memory_counts WHERE ns = ?`,
  /** ns, now */
  deleteExpiredIn: `DELETE FROM lambdagent_memory WHERE ns = ? AND expires_at IS NOT NULL AND expires_at <= ?`,
  /** ns, how many */
  evict: `DELETE FROM lambdagent_memory WHERE id IN
    (SELECT id FROM lambdagent_memory WHERE ns = ? ORDER BY used LIMIT ?)`,
  /** ns, key, now */
  touch: `UPDATE lambdagent_memory SET used = (SELECT max(used) FROM lambdagent_memory WHERE ns = ?1) + 1
    WHERE ns = ?1 AND key = ?2 AND (expires_at IS NULL OR expires_at > ?3)
    RETURNING CASE WHEN nul THEN CAST(value AS BLOB) ELSE value END AS value, created_at, expires_at`,
  /** ns, key, now */
  findExpired: `SELECT 1 FROM lambdagent_memory WHERE ns = ? AND key = ? AND expires_at <= ?`,
  /** ns, key, now */
  deleteExpired: `DELETE FROM lambdagent_memory WHERE ns = ? AND key = ? AND expires_at <= ?`,
  /** ns, now, limit */
  listRecent: `SELECT CASE WHEN nul THEN CAST(key AS BLOB) ELSE key END AS key,
      CASE WHEN nul THEN CAST(value AS BLOB) ELSE value END AS value, created_at, expires_at
    FROM lambdagent_memory WHERE ns = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY seq DESC LIMIT ?`,
  /** ns */
  clear: `DELETE FROM lambdagent_memory WHERE ns = ?`,
  /** now */
  sweep: `DELETE FROM lambdagent_memory WHERE expires_at IS NOT NULL AND expires_at <= ?`
} as const

type Operation = MemoryStore.MemoryError["operation"]

/** A column read back as text, or as UTF-8 bytes for the rows marked `nul`. */
const text = (column: unknown): string =>
  typeof column === "string"
    ? column
    : column instanceof Uint8Array
      ? Buffer.from(column.buffer, column.byteOffset, column.byteLength).toString("utf8")
      : String(column)

const toEntry = (key: string, row: Record<string, unknown>): MemoryStore.MemoryEntry => {
  const value = text(row["value"])
  const createdAt = Number(row["created_at"])
  const expiresAt = row["expires_at"]
  return expiresAt === null || expiresAt === undefined ? { key, value, createdAt } : { key, value, createdAt, expiresAt: Number(expiresAt) }
}

/** A sleep on real timers: waiting for another process's lock is about wall time, not `TestClock`. */
const realSleep = (ms: number): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(timer))
  })

/** How long SQLite's own busy handler may block the event loop in one attempt. */
const BUSY_SLICE_MS = 25

const positiveInt = (name: string, value: number, allowZero = false): string | undefined =>
  Number.isSafeInteger(value) && (value > 0 || (allowZero && value === 0))
    ? undefined
    : `${name} must be a ${allowZero ? "non-negative" : "positive"} integer, got ${value}`

/**
 * Opens (and if needed creates) the database and returns a store; the file is closed and the
 * sweeper stopped when the scope closes.
 *
 * Fails with a `MemoryError` (operation `"open"`) naming the file when it cannot be opened, is
 * not a SQLite database or is corrupt, or holds a newer schema. A write that cannot get the
 * write lock within `busyTimeoutMs` fails with a `MemoryError` saying the database is locked;
 * a write to a read-only file fails with one saying so. Nothing is ever dropped silently.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import * as SqliteMemory from "lambdagent/sqlite"
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const store = yield* SqliteMemory.make({ path: "memory.sqlite", maxEntries: 20 })
 *   yield* store.put("user:ada", "language", "English")
 *   return yield* store.get("user:ada", "language")
 * }))
 * ```
 */
export const make = (options: SqliteMemoryOptions = {}): Effect.Effect<MemoryStore.MemoryStoreShape, MemoryStore.MemoryError, Scope.Scope> =>
  Effect.gen(function* () {
    const path =
      options.path ??
      (yield* Config.String("LAMBDAGENT_SQLITE_PATH").pipe(
        Config.withDefault(defaultPath),
        Effect.mapError(
          (cause) =>
            new MemoryStore.MemoryError({
              store: "sqlite",
              operation: "open",
              message: `cannot read LAMBDAGENT_SQLITE_PATH: ${cause.message}`,
              cause
            })
        )
      ))
    const maxEntries = options.maxEntries ?? MemoryStore.defaultMaxEntries
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000
    const sweepIntervalMs = options.sweepIntervalMs ?? 60_000
    const synchronous = options.synchronous ?? "normal"

    const describe = (cause: unknown): string => describeError(cause, busyTimeoutMs)
    const fail = (operation: Operation, cause: unknown, message = describe(cause)) =>
      new MemoryStore.MemoryError({
        store: "sqlite",
        operation,
        message: `SQLite store at ${path}: ${operation} failed: ${message}`,
        cause
      })

    const invalid =
      positiveInt("maxEntries", maxEntries) ?? positiveInt("busyTimeoutMs", busyTimeoutMs, true) ?? positiveInt("sweepIntervalMs", sweepIntervalMs, true)
    if (invalid !== undefined) return yield* fail("open", undefined, invalid)

    /**
     * Runs `body` (a transaction when `write`), retrying while another connection holds the
     * lock, until `busyTimeoutMs` has passed. SQLite's busy handler blocks for at most
     * `BUSY_SLICE_MS` per attempt; between attempts the fiber sleeps without blocking.
     */
    const attempt = <A>(db: DatabaseSync, operation: Operation, write: boolean, body: (now: number) => A): Effect.Effect<A, MemoryStore.MemoryError> =>
      Effect.clockWith((clock: Clock.Clock) => {
        const deadline = Date.now() + busyTimeoutMs
        const loop = (): Effect.Effect<A, MemoryStore.MemoryError> => {
          try {
            if (!write) return Effect.succeed(body(clock.currentTimeMillisUnsafe()))
            db.exec("BEGIN IMMEDIATE")
            try {
              const result = body(clock.currentTimeMillisUnsafe())
              db.exec("COMMIT")
              return Effect.succeed(result)
            } catch (error) {
              if (db.isTransaction) {
                try {
                  db.exec("ROLLBACK")
                } catch {
                  // the transaction is gone already
                }
              }
              throw error
            }
          } catch (error) {
            if (isBusy(error) && Date.now() < deadline) {
              return Effect.flatMap(realSleep(2 + Math.floor(Math.random() * 10)), loop)
            }
            return Effect.fail(fail(operation, error))
          }
        }
        return loop()
      })

    if (path !== ":memory:" && !path.startsWith("file:")) {
      try {
        CheckpointStore.makeDirectory(dirname(path))
      } catch (error) {
        return yield* fail("open", error, `cannot create the folder of the file: ${messageOf(error)}`)
      }
    }

    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const db = new (nodeSqlite().DatabaseSync)(path)
          db.exec(`PRAGMA busy_timeout = ${Math.min(busyTimeoutMs, BUSY_SLICE_MS)}`)
          return db
        },
        catch: (cause) => fail("open", cause)
      }),
      (db) => Effect.sync(() => db.isOpen && db.close())
    )
    // reading the header here turns a garbage file into an error at open; another process
    // opening, checkpointing or switching the file to WAL at the same moment is waited for
    yield* attempt(db, "open", false, () => {
      db.prepare("PRAGMA journal_mode = WAL").get()
      db.exec(`PRAGMA synchronous = ${synchronous === "full" ? "FULL" : "NORMAL"}`)
    })

    const hasSchema = yield* attempt(
      db,
      "open",
      false,
      () => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'lambdagent_memory_meta'").get() !== undefined
    )
    if (!hasSchema) yield* attempt(db, "open", true, () => db.exec(schema))
    const version = yield* attempt(db, "open", false, () =>
      Number((db.prepare("SELECT value FROM lambdagent_memory_meta WHERE key = 'schema_version'").get() ?? { value: "0" })["value"])
    )
    if (version !== schemaVersion) {
      return yield* fail(
        "open",
        undefined,
        version > schemaVersion
          ? `the file holds schema version ${version}, newer than this version of lambdagent understands (${schemaVersion})`
          : `the file holds an unknown schema version (${version})`
      )
    }

    const prepared = yield* attempt(db, "open", false, () => {
      const p = {} as { -readonly [K in keyof typeof sql]: StatementSync }
      for (const name of Object.keys(sql) as Array<keyof typeof sql>) p[name] = db.prepare(sql[name])
      return p
    })

    if (sweepIntervalMs > 0) {
      const sweepOnce = attempt(db, "clear", true, (now) => prepared.sweep.run(now)).pipe(
        Effect.catch((error) => Effect.logWarning(`memory sweep failed: ${error.message}`))
      )
      yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Effect.sleep(sweepIntervalMs), () => sweepOnce)))
    }

    const ttlOf = (putOptions: MemoryStore.PutOptions | undefined): Effect.Effect<number, MemoryStore.MemoryError> => {
      const ttlMs = putOptions?.ttlMs ?? 0
      return Number.isFinite(ttlMs) && ttlMs >= 0
        ? Effect.succeed(Math.ceil(ttlMs))
        : Effect.fail(fail("put", undefined, `ttlMs must be a finite number >= 0, got ${ttlMs}`))
    }

    /** Writes an entry and evicts past `maxEntries`; runs inside a write transaction. */
    const write = (ns: string, key: string, value: string, ttl: number, now: number): void => {
      const nul = key.includes("\u0000") || value.includes("\u0000") ? 1 : 0
      prepared.upsert.run(ns, key, value, now, ttl > 0 ? now + ttl : null, nul)
      let n = Number(prepared.count.get(ns)?.["n"] ?? 0)
      if (n > maxEntries) {
        // expired entries leave before live ones are evicted
        prepared.deleteExpiredIn.run(ns, now)
        n = Number(prepared.count.get(ns)?.["n"] ?? 0)
        if (n > maxEntries) prepared.evict.run(ns, n - maxEntries)
      }
    }

    const store: MemoryStore.MemoryStoreShape = {
      name: "sqlite",
      get: (ns, key) =>
        attempt(db, "get", false, (now) => {
          const row = prepared.touch.get(ns, key, now)
          if (row !== undefined) return toEntry(key, row)
          // expiry on read; the delete re-checks the expiry, in case another process rewrote the key
          if (prepared.findExpired.get(ns, key, now) !== undefined) prepared.deleteExpired.run(ns, key, now)
          return undefined
        }),
      put: (ns, key, value, putOptions) => Effect.flatMap(ttlOf(putOptions), (ttl) => attempt(db, "put", true, (now) => write(ns, key, value, ttl, now))),
      putIfAbsent: (ns, key, value, putOptions) =>
        Effect.flatMap(ttlOf(putOptions), (ttl) =>
          attempt(db, "put", true, (now) => {
            // inside the write transaction, so no other process can write the key in between
            if (prepared.live.get(ns, key, now) !== undefined) return false
            write(ns, key, value, ttl, now)
            return true
          })
        ),
      listRecent: (ns, limit) => {
        // a namespace never holds more than maxEntries, which also tames Infinity and huge limits
        const n = Math.min(Math.floor(limit), maxEntries)
        if (!(n > 0)) return Effect.succeed([])
        return attempt(db, "listRecent", false, (now) => prepared.listRecent.all(ns, now, n).map((row) => toEntry(text(row["key"]), row)))
      },
      clear: (ns) => attempt(db, "clear", false, () => void prepared.clear.run(ns))
    }
    return store
  })

/**
 * A layer providing `MemoryStore` backed by a SQLite file (see {@link make}); the file closes
 * with the layer.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MemoryStore } from "lambdagent"
 * import * as SqliteMemory from "lambdagent/sqlite"
 * const program = MemoryStore.MemoryStore.use((s) => s.listRecent("global", 10))
 * Effect.runPromise(program.pipe(Effect.provide(SqliteMemory.layer({ path: "memory.sqlite" }))))
 * ```
 */
export const layer = (options: SqliteMemoryOptions = {}): Layer.Layer<MemoryStore.MemoryStore, MemoryStore.MemoryError> =>
  Layer.effect(MemoryStore.MemoryStore, make(options))

/**
 * The SQLite store's constructors under one name: `SqliteMemory.make`, `SqliteMemory.layer`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { SqliteMemory } from "lambdagent/sqlite"
 * const live = SqliteMemory.layer({ path: "memory.sqlite" })
 * ```
 */
export const SqliteMemory = { make, layer } as const

/**
 * Store factories by `memory.strategy` name, for the plugin registry.
 *
 * @since 0.1.0
 * @category plugins
 * @example
 * ```ts
 * import { stores } from "lambdagent/sqlite"
 * const effect = stores.sqlite({ path: "memory.sqlite" }) // Effect<MemoryStoreShape, MemoryError, Scope>
 * ```
 */
export const stores: {
  /** The SQLite store of {@link make}, for `memory.strategy: sqlite`. */
  readonly sqlite: (options?: SqliteMemoryOptions) => Effect.Effect<MemoryStore.MemoryStoreShape, MemoryStore.MemoryError, Scope.Scope>
} = { sqlite: make }

/**
 * The plugin value: `memory.strategy: sqlite` in an agent's YAML selects `stores.sqlite`.
 *
 * @since 0.1.0
 * @category plugins
 * @example
 * ```ts
 * import { plugin } from "lambdagent/sqlite"
 * plugin.name // "sqlite"
 * ```
 */
export const plugin = { name: "sqlite", stores } as const

export { checkpointLayer, checkpointLocation, checkpointSchema, type SqliteCheckpointOptions } from "./checkpoints.ts"
