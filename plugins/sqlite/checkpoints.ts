/**
 * Checkpoints in a SQLite file: a `CheckpointStore.Location` on Node's built-in `node:sqlite`,
 * one row per journal entry (a whole checkpoint or a delta, with the sequence of the base it
 * extends) in the table `lambdagent_checkpoints`. A write — the row and the pruning of the run's
 * oldest — is one transaction with `synchronous = FULL`, so a crash (of the process or the
 * machine) leaves the file with the whole entry or without it, never a torn one.
 */
import { dirname } from "node:path"
import type { DatabaseSync } from "node:sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { CheckpointStore, Errors } from "lambdagent"
import { describeError } from "./errors.ts"
import { nodeSqlite } from "./nodeSqlite.ts"

/**
 * Options of {@link checkpointLocation}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { SqliteCheckpointOptions } from "lambdagent/sqlite"
 * const o: SqliteCheckpointOptions = { path: "runs.db", busyTimeoutMs: 2_000 }
 * ```
 */
export interface SqliteCheckpointOptions {
  /** The database file (its folder is created if missing). */
  readonly path: string
  /** How long a write waits for another connection's write lock before failing, in ms. Default 5000. */
  readonly busyTimeoutMs?: number
}

/**
 * The statements that create the checkpoint table (idempotent), for tools that inspect the file.
 *
 * @since 0.2.0
 * @category internals
 * @example
 * ```ts
 * import { DatabaseSync } from "node:sqlite"
 * import { checkpointSchema } from "lambdagent/sqlite"
 * new DatabaseSync(":memory:").exec(checkpointSchema)
 * ```
 */
export const checkpointSchema = `
CREATE TABLE IF NOT EXISTS lambdagent_checkpoints (
  run_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  base INTEGER NOT NULL,
  body TEXT NOT NULL,
  written_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, sequence)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lambdagent_checkpoints_probe (pid INTEGER PRIMARY KEY, at INTEGER NOT NULL);
`

/**
 * Checkpoints kept in a SQLite file (see the module's description), as a
 * `CheckpointStore.Location`; the file closes when the scope closes. Fails with a
 * `CheckpointError` (`store`) naming the file when it cannot be opened or written (a read-only
 * file, a folder that cannot be created, not a database), so a run fails before its first oracle
 * call.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { CheckpointStore, createRuntime, Term } from "lambdagent"
 * import { checkpointLocation } from "lambdagent/sqlite"
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const location = yield* checkpointLocation({ path: "runs.db" })
 *   const store = yield* CheckpointStore.open(location, { runId: "order-42" })
 *   return yield* Effect.promise(() => createRuntime().run(Term.llm({ system: "Summarize." }), "text", { checkpoint: { save: store.save } }))
 * }))
 * ```
 */
export const checkpointLocation = (options: SqliteCheckpointOptions): Effect.Effect<CheckpointStore.Location, Errors.CheckpointError, Scope.Scope> =>
  Effect.gen(function* () {
    const path = options.path
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000
    const description = `SQLite file ${path}`
    const storeError = (what: string, cause: unknown) =>
      new Errors.CheckpointError({ reason: "store", message: `${description}: ${what} failed: ${describeError(cause, busyTimeoutMs)}` })
    const attempt = <A>(what: string, f: () => A): Effect.Effect<A, Errors.CheckpointError> => Effect.try({ try: f, catch: (cause) => storeError(what, cause) })
    /** `body` in a write transaction: all of it or none. */
    const transaction =
      (db: DatabaseSync) =>
      <A>(body: () => A): A => {
        db.exec("BEGIN IMMEDIATE")
        try {
          const result = body()
          db.exec("COMMIT")
          return result
        } catch (error) {
          if (db.isTransaction) db.exec("ROLLBACK")
          throw error
        }
      }
    const db = yield* Effect.acquireRelease(
      attempt("opening", () => {
        CheckpointStore.makeDirectory(dirname(path))
        const db = new (nodeSqlite().DatabaseSync)(path)
        try {
          db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`)
          db.prepare("PRAGMA journal_mode = WAL").get()
          db.exec("PRAGMA synchronous = FULL")
          db.exec(checkpointSchema)
          // a file from before journals: its rows are whole checkpoints of an older format (read as such, and refused)
          const columns = db.prepare("PRAGMA table_info(lambdagent_checkpoints)").all()
          if (!columns.some((c) => c["name"] === "base")) db.exec("ALTER TABLE lambdagent_checkpoints ADD COLUMN base INTEGER NOT NULL DEFAULT -1")
        } catch (error) {
          db.close()
          throw error
        }
        return db
      }),
      (db) => Effect.sync(() => db.isOpen && db.close())
    )
    const inTransaction = transaction(db)
    const insert = db.prepare("INSERT OR REPLACE INTO lambdagent_checkpoints (run_id, sequence, base, body, written_at) VALUES (?, ?, ?, ?, ?)")
    const pruneRun = db.prepare("DELETE FROM lambdagent_checkpoints WHERE run_id = ? AND sequence < ?")
    const listAll = db.prepare(
      "SELECT run_id, sequence, base, length(CAST(body AS BLOB)) AS bytes, written_at FROM lambdagent_checkpoints ORDER BY written_at, run_id, sequence"
    )
    const baseOf = db.prepare("SELECT base FROM lambdagent_checkpoints WHERE run_id = ? AND sequence = ?")
    const readSegment = db.prepare("SELECT sequence, body FROM lambdagent_checkpoints WHERE run_id = ? AND sequence BETWEEN ? AND ? ORDER BY sequence")
    const removeOne = db.prepare("DELETE FROM lambdagent_checkpoints WHERE run_id = ? AND sequence = ?")
    const probe = db.prepare("INSERT OR REPLACE INTO lambdagent_checkpoints_probe (pid, at) VALUES (?, ?)")
    const notFound = (key: string) => new Errors.CheckpointError({ reason: "missing", message: `${description}: ${key}: not found` })
    const location: CheckpointStore.Location = {
      description,
      ensureWritable: attempt("a test write", () => inTransaction(() => probe.run(process.pid, Date.now()))),
      write: (runId, sequence, base, text, keepFrom) =>
        attempt("writing a checkpoint", () =>
          inTransaction(() => {
            insert.run(runId, sequence, base, text, Date.now())
            if (Number.isFinite(keepFrom)) pruneRun.run(runId, keepFrom)
            return CheckpointStore.keyOf(runId, sequence)
          })
        ),
      list: attempt("listing checkpoints", () =>
        listAll.all().map((row) => {
          const runId = String(row["run_id"])
          const sequence = Number(row["sequence"])
          const base = Number(row["base"])
          return {
            key: CheckpointStore.keyOf(runId, sequence),
            runId,
            sequence,
            base: base < 0 ? sequence : base,
            bytes: Number(row["bytes"]),
            modified: new Date(Number(row["written_at"]))
          }
        })
      ),
      readEntries: (key) => {
        const parsed = CheckpointStore.parseKey(key)
        if (parsed === undefined) return Effect.fail(notFound(key))
        const { runId, sequence } = parsed
        return Effect.flatMap(
          attempt(`reading ${key}`, () => {
            const row = baseOf.get(runId, sequence)
            if (row === undefined) return undefined
            const base = Number(row["base"])
            return readSegment.all(runId, base < 0 ? sequence : base, sequence).map((r) => ({ sequence: Number(r["sequence"]), text: String(r["body"]) }))
          }),
          (entries) => (entries === undefined ? Effect.fail(notFound(key)) : Effect.succeed(entries))
        )
      },
      remove: (keys) =>
        attempt("deleting checkpoints", () =>
          inTransaction(() => {
            for (const key of keys) {
              const parsed = CheckpointStore.parseKey(key)
              if (parsed !== undefined) removeOne.run(parsed.runId, parsed.sequence)
            }
          })
        )
    }
    return location
  })

/**
 * A layer of `CheckpointStore.CheckpointLocation` in a SQLite file (see {@link checkpointLocation});
 * the file closes with the layer.
 *
 * @since 0.2.0
 * @category layers
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { CheckpointStore } from "lambdagent"
 * import { checkpointLayer } from "lambdagent/sqlite"
 * const runs = CheckpointStore.CheckpointLocation.use((l) => l.list)
 * Effect.runPromise(runs.pipe(Effect.provide(checkpointLayer({ path: "runs.db" }))))
 * ```
 */
export const checkpointLayer = (options: SqliteCheckpointOptions): Layer.Layer<CheckpointStore.CheckpointLocation, Errors.CheckpointError> =>
  Layer.effect(CheckpointStore.CheckpointLocation, checkpointLocation(options))
