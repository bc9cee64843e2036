/**
 * The table of submitted runs (`<prefix>_runs`): what `status`, `result` and `list` read. The
 * workflow engine keeps the durable state of a run (its journal, its mailbox); this table keeps
 * what a person asks about it, written when a run is submitted, starts, waits, ends.
 */
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { ClusterError } from "./errors.ts"

/** The version of the tables this module writes; a runner refuses tables of another. */
export const schemaVersion = 1

/**
 * Where a run is: `submitted` (stored, not started yet), `running`, `waiting` (on a person's
 * answer), `done`, `failed`, `cancelled`.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { RunState } from "lambdagent/cluster"
 * const finished = (s: RunState) => s === "done" || s === "failed" || s === "cancelled"
 * ```
 */
export type RunState = "submitted" | "running" | "waiting" | "done" | "failed" | "cancelled"

/**
 * What is known of a run: its state, times, the question it waits on, and once ended its result
 * (`outcome`: the value's JSON, the whole run's trace and counters) or its error.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { RunStatus } from "lambdagent/cluster"
 * const line = (s: RunStatus) => `${s.id} ${s.state}`
 * ```
 */
export interface RunStatus {
  readonly id: string
  readonly state: RunState
  readonly submittedAt: string
  readonly finishedAt?: string
  /** The runner that last took the run up (`host:port`, or `single`). */
  readonly runner?: string
  /** The question of a `waiting` run and the key its answer goes to (`answer`). */
  readonly question?: { readonly key: string; readonly question: string }
  readonly outcome?: RunOutcome
  readonly error?: { readonly kind: string; readonly message: string }
}

/**
 * A finished run's result: the value's JSON, the trace of the whole run (one trace, on however
 * many runners it ran) and its counters.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { RunOutcome } from "lambdagent/cluster"
 * const calls = (o: RunOutcome) => o.stats.llmCalls
 * ```
 */
export interface RunOutcome {
  readonly result: unknown
  readonly trace: ReadonlyArray<unknown>
  readonly stats: { readonly steps: number; readonly llmCalls: number; readonly toolCalls: number; readonly tokens: number }
}

export const isFinal = (state: RunState): boolean => state === "done" || state === "failed" || state === "cancelled"

interface Row {
  readonly id: string
  readonly state: RunState
  readonly payload: string
  readonly submitted_at: Date | string
  readonly finished_at: Date | string | null
  readonly runner: string | null
  readonly question: string | null
  readonly outcome: string | null
  readonly error: string | null
}

const iso = (t: Date | string): string => (t instanceof Date ? t.toISOString() : new Date(t).toISOString())

const statusOf = (row: Row): RunStatus => ({
  id: row.id,
  state: row.state,
  submittedAt: iso(row.submitted_at),
  ...(row.finished_at !== null ? { finishedAt: iso(row.finished_at) } : {}),
  ...(row.runner !== null ? { runner: row.runner } : {}),
  ...(row.question !== null ? { question: JSON.parse(row.question) } : {}),
  ...(row.outcome !== null ? { outcome: JSON.parse(row.outcome) } : {}),
  ...(row.error !== null ? { error: JSON.parse(row.error) } : {})
})

/** The run table's operations over one SQL client and table prefix. */
export interface Runs {
  /** Store a submitted run; false when a run with its id is stored already. */
  readonly insert: (id: string, payload: unknown) => Effect.Effect<boolean, SqlError>
  readonly payload: (id: string) => Effect.Effect<unknown, SqlError | ClusterError>
  readonly get: (id: string) => Effect.Effect<RunStatus | undefined, SqlError>
  readonly list: (limit: number) => Effect.Effect<ReadonlyArray<RunStatus>, SqlError>
  /** Move a run that has not ended to `running` on `runner`, or to `waiting` on its question. */
  readonly running: (id: string, runner: string) => Effect.Effect<void, SqlError>
  readonly waiting: (id: string, question: NonNullable<RunStatus["question"]>) => Effect.Effect<void, SqlError>
  /** End a run that has not ended; false when it had. */
  readonly finish: (
    id: string,
    state: "done" | "failed" | "cancelled",
    ended: { outcome?: RunOutcome; error?: RunStatus["error"] }
  ) => Effect.Effect<boolean, SqlError>
}

/**
 * Create the tables when missing and check their version; a table of another version fails with
 * `ClusterError` `SchemaVersion` (a runner of another release must not read or write them).
 */
export const make = (sql: SqlClient.SqlClient, prefix: string): Effect.Effect<Runs, SqlError | ClusterError> =>
  Effect.gen(function* () {
    const runs = sql(`${prefix}_runs`)
    const meta = sql(`${prefix}_meta`)
    yield* sql`CREATE TABLE IF NOT EXISTS ${meta} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`
    yield* sql`INSERT INTO ${meta} (key, value) VALUES ('schema_version', ${String(schemaVersion)}) ON CONFLICT (key) DO NOTHING`
    const [version] = yield* sql<{ value: string }>`SELECT value FROM ${meta} WHERE key = 'schema_version'`
    if (version?.value !== String(schemaVersion)) {
      return yield* new ClusterError({
        reason: "SchemaVersion",
        message: `the cluster tables (prefix ${prefix}) are of schema version ${version?.value ?? "unknown"}; this release reads version ${schemaVersion}: run it against another prefix, or upgrade every runner to one release`
      })
    }
    yield* sql`CREATE TABLE IF NOT EXISTS ${runs} (
      id TEXT PRIMARY KEY,
      state TEXT NOT NULL,
      payload TEXT NOT NULL,
      submitted_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      finished_at TIMESTAMPTZ,
      runner TEXT,
      question TEXT,
      outcome TEXT,
      error TEXT
    )`
    const notEnded = sql`state NOT IN ('done', 'failed', 'cancelled')`
    return {
      insert: (id, payload) =>
        Effect.map(
          sql`INSERT INTO ${runs} (id, state, payload) VALUES (${id}, 'submitted', ${JSON.stringify(payload)}) ON CONFLICT (id) DO NOTHING RETURNING id`,
          (rows) => rows.length > 0
        ),
      payload: (id) =>
        Effect.flatMap(sql<{ payload: string }>`SELECT payload FROM ${runs} WHERE id = ${id}`, ([row]) =>
          row === undefined
            ? Effect.fail(new ClusterError({ reason: "NotFound", message: `no run with id ${JSON.stringify(id)}` }))
            : Effect.succeed(JSON.parse(row.payload))
        ),
      get: (id) => Effect.map(sql<Row>`SELECT * FROM ${runs} WHERE id = ${id}`, ([row]) => (row === undefined ? undefined : statusOf(row))),
      list: (limit) => Effect.map(sql<Row>`SELECT * FROM ${runs} ORDER BY submitted_at DESC, id LIMIT ${limit}`, (rows) => rows.map(statusOf)),
      running: (id, runner) => Effect.asVoid(sql`UPDATE ${runs} SET state = 'running', runner = ${runner}, question = NULL WHERE id = ${id} AND ${notEnded}`),
      waiting: (id, question) =>
        Effect.asVoid(sql`UPDATE ${runs} SET state = 'waiting', question = ${JSON.stringify(question)} WHERE id = ${id} AND ${notEnded}`),
      finish: (id, state, ended) =>
        Effect.map(
          sql`UPDATE ${runs} SET state = ${state}, finished_at = now(), question = NULL,
            outcome = ${ended.outcome === undefined ? null : JSON.stringify(ended.outcome)},
            error = ${ended.error === undefined ? null : JSON.stringify(ended.error)}
            WHERE id = ${id} AND ${notEnded} RETURNING id`,
          (rows) => rows.length > 0
        )
    }
  })
