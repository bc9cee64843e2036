/**
 * Where checkpoints are kept: a directory of JSON files, one per checkpoint, written atomically
 * (a temporary file, `fsync`, `rename`, `fsync` of the directory), so a crash at any moment
 * leaves either the previous checkpoint or the new one, never a torn file. Each run's files are
 * named `<run id>.<sequence>.checkpoint.json`; past `maxCheckpoints` a run's oldest are deleted.
 *
 * @since 0.2.0
 * @module
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Checkpoint from "./Checkpoint.ts"
import { CheckpointError } from "./Errors.ts"

/**
 * Options of {@link directory}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CheckpointStore } from "lambdagent"
 * const o: CheckpointStore.DirectoryOptions = { path: "checkpoints", runId: "r1", maxCheckpoints: 5 }
 * ```
 */
export interface DirectoryOptions {
  readonly path: string
  /** The run's id: the prefix of its files. */
  readonly runId: string
  /** A run's checkpoints kept (default 10); older ones are deleted. */
  readonly maxCheckpoints?: number
  /** The sequence number of the first checkpoint written (a resumed run goes on from its own). */
  readonly firstSequence?: number
}

/**
 * A directory a run writes its checkpoints to.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CheckpointStore } from "lambdagent"
 * const last = (s: CheckpointStore.DirectoryStore) => s.lastWritten
 * ```
 */
export interface DirectoryStore {
  /** Write one checkpoint (atomically), then prune the run's oldest. */
  readonly save: (checkpoint: Checkpoint.Checkpoint) => Effect.Effect<void, CheckpointError>
  /** The file written last, if any. */
  readonly lastWritten: string | undefined
}

const storeError = (message: string) => new CheckpointError({ reason: "store", message })

const why = (error: unknown): string => {
  const code = (error as { code?: string }).code
  if (code === "EACCES" || code === "EPERM" || code === "EROFS") return "not writable"
  if (code === "ENOTDIR" || code === "EEXIST") return "not a directory"
  if (code === "ENOSPC") return "the disk is full"
  return (error as Error).message
}

const fsyncDirectory = (path: string) => {
  const fd = openSync(path, "r")
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Write `text` to the file `name` of the directory `dir` so that a crash at any moment leaves the
 * old file or the new one, whole: a temporary file, `fsync`, `rename`, `fsync` of the directory.
 * Throws the file system's error.
 *
 * @since 0.2.0
 * @category utils
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const keep = (text: string) => CheckpointStore.writeAtomically("runs", "state.json", text)
 * ```
 */
export const writeAtomically = (dir: string, file: string, text: string): void => {
  const tmp = join(dir, `.${file}.${process.pid}.tmp`)
  const fd = openSync(tmp, "w", 0o600)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, join(dir, file))
  fsyncDirectory(dir)
}

/**
 * Create the directory `path` and its missing parents one level at a time (a recursive
 * `mkdirSync` under a pseudo file system such as `/proc` never returns). Throws the file
 * system's error.
 *
 * @since 0.2.0
 * @category utils
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * CheckpointStore.makeDirectory("runs/2026")
 * ```
 */
export const makeDirectory = (path: string): void => {
  const missing: Array<string> = []
  for (let dir = resolve(path); !existsSync(dir); dir = dirname(dir)) {
    missing.push(dir)
    if (dirname(dir) === dir) break
  }
  for (const dir of missing.reverse()) mkdirSync(dir)
}

/**
 * Check that checkpoints can be written to `path` (creating it): a run checks this before its
 * first oracle call, so an unwritable directory fails at once, not after an hour of work.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const ready = (path: string) => CheckpointStore.ensureWritable(path)
 * ```
 */
export const ensureWritable = (path: string): void => {
  try {
    makeDirectory(path)
    writeAtomically(path, `.probe-${process.pid}`, "")
    unlinkSync(join(path, `.probe-${process.pid}`))
  } catch (error) {
    throw storeError(`checkpoint directory ${path}: ${why(error)}`)
  }
}

const FILE = /^(.+)\.(\d{6,})\.checkpoint\.json$/

/**
 * A checkpoint file found in a directory.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CheckpointStore } from "lambdagent"
 * const name = (e: CheckpointStore.Entry) => `${e.runId}#${e.sequence}`
 * ```
 */
export interface Entry {
  readonly file: string
  readonly runId: string
  readonly sequence: number
  readonly bytes: number
  readonly modified: Date
}

/**
 * The checkpoint files of a directory, oldest first (by run, then sequence).
 *
 * @since 0.2.0
 * @category getters
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const count = (path: string) => CheckpointStore.list(path).length
 * ```
 */
export const list = (path: string): Array<Entry> => {
  let names: Array<string>
  try {
    names = readdirSync(path)
  } catch (error) {
    throw storeError(`checkpoint directory ${path}: ${(error as { code?: string }).code === "ENOENT" ? "not found" : why(error)}`)
  }
  const entries: Array<Entry> = []
  for (const name of names) {
    const match = FILE.exec(name)
    if (match === null) continue
    const file = join(path, name)
    const stat = statSync(file)
    entries.push({ file, runId: match[1]!, sequence: Number(match[2]), bytes: stat.size, modified: stat.mtime })
  }
  return entries.sort((a, b) => a.modified.getTime() - b.modified.getTime() || a.runId.localeCompare(b.runId) || a.sequence - b.sequence)
}

/**
 * Delete each run's checkpoints but the newest `keep`; returns the files deleted.
 *
 * @since 0.2.0
 * @category mutations
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const tidy = (path: string) => CheckpointStore.prune(path, 3)
 * ```
 */
export const prune = (path: string, keep: number, runId?: string): Array<string> => {
  const byRun = new Map<string, Array<Entry>>()
  for (const entry of list(path)) {
    if (runId !== undefined && entry.runId !== runId) continue
    byRun.set(entry.runId, [...(byRun.get(entry.runId) ?? []), entry])
  }
  const deleted: Array<string> = []
  for (const entries of byRun.values()) {
    entries.sort((a, b) => a.sequence - b.sequence)
    for (const entry of entries.slice(0, Math.max(0, entries.length - keep))) {
      unlinkSync(entry.file)
      deleted.push(entry.file)
    }
  }
  return deleted
}

/**
 * Read a checkpoint file: a `CheckpointError` naming the file says what is wrong with it.
 *
 * @since 0.2.0
 * @category getters
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const steps = (file: string) => CheckpointStore.read(file).usage.steps
 * ```
 */
export const read = (file: string, options: Checkpoint.DecodeOptions = {}): Checkpoint.Checkpoint => {
  let text: string
  try {
    text = readFileSync(file, "utf8")
  } catch (error) {
    throw new CheckpointError({ reason: "format", message: `${file}: ${(error as { code?: string }).code === "ENOENT" ? "not found" : why(error)}` })
  }
  try {
    return Checkpoint.parse(text, options)
  } catch (error) {
    if (error instanceof CheckpointError) throw new CheckpointError({ reason: error.reason, message: `${file}: ${error.message}` })
    throw error
  }
}

/**
 * A directory store for one run (see the module's description). Checks the directory is
 * writable now.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const open = () => CheckpointStore.directory({ path: "checkpoints", runId: "r1" })
 * ```
 */
export const directory = (options: DirectoryOptions): DirectoryStore => {
  ensureWritable(options.path)
  const { path, ...run } = options
  return Effect.runSync(open({ ...directoryLocation(path), ensureWritable: Effect.void }, run))
}

// ---------------------------------------------------------------------------------------------
// Locations: where the checkpoints of many runs are kept (a directory, Redis, SQLite)
// ---------------------------------------------------------------------------------------------

/**
 * A checkpoint as a location lists it. `key` is what {@link readFrom} reads it by: the file path
 * in a directory, `<run id>.<sequence>` in Redis or SQLite.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CheckpointStore } from "lambdagent"
 * const name = (e: CheckpointStore.Listed) => `${e.key} (${e.bytes} B)`
 * ```
 */
export interface Listed {
  readonly key: string
  readonly runId: string
  readonly sequence: number
  readonly bytes: number
  readonly modified: Date
}

/**
 * A place that keeps the checkpoints of many runs: a directory ({@link directoryLocation}), a
 * Redis key prefix (`lambdagent/redis`'s `checkpointLocation`), a SQLite file
 * (`lambdagent/sqlite`'s `checkpointLocation`). Every operation fails with a `CheckpointError`
 * whose one-line message names the location.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CheckpointStore } from "lambdagent"
 * const where = (l: CheckpointStore.Location) => l.description
 * ```
 */
export interface Location {
  /** Where, for messages: `checkpoint directory runs`, `Redis at redis://…, prefix …`, `SQLite file runs.db`. */
  readonly description: string
  /** Check that a checkpoint can be written now (a run does, before its first oracle call). */
  readonly ensureWritable: Effect.Effect<void, CheckpointError>
  /**
   * Write a run's checkpoint (its JSON text) atomically: a crash leaves the location as it was
   * or with the whole checkpoint listed, never a torn or half-listed one. Then delete the run's
   * oldest past `keep`. Returns the checkpoint's key.
   */
  readonly write: (runId: string, sequence: number, text: string, keep: number) => Effect.Effect<string, CheckpointError>
  /** Every checkpoint kept, oldest first (by time written, run, then sequence). */
  readonly list: Effect.Effect<ReadonlyArray<Listed>, CheckpointError>
  /** The JSON text of the checkpoint `key`; a `CheckpointError` (`format`) when there is none. */
  readonly readText: (key: string) => Effect.Effect<string, CheckpointError>
  /** Delete these checkpoints. */
  readonly remove: (keys: ReadonlyArray<string>) => Effect.Effect<void, CheckpointError>
}

/**
 * The location a program's checkpoints go to, as a service: `lambdagent/redis` and
 * `lambdagent/sqlite` give layers of it (`checkpointLayer`), {@link directoryLayer} one of a
 * directory.
 *
 * @since 0.2.0
 * @category services
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { CheckpointStore } from "lambdagent"
 * const runs = CheckpointStore.CheckpointLocation.use((l) => l.list)
 * Effect.runPromise(runs.pipe(Effect.provide(CheckpointStore.directoryLayer("runs"))))
 * ```
 */
export class CheckpointLocation extends Context.Service<CheckpointLocation, Location>()("lambdagent/CheckpointLocation") {}

/**
 * The key of a run's checkpoint in a keyed location (Redis, SQLite): `<run id>.<sequence>`, the
 * sequence six digits or more, as in a directory's file names.
 *
 * @since 0.2.0
 * @category utils
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * CheckpointStore.keyOf("3f2a", 7) // "3f2a.000007"
 * ```
 */
export const keyOf = (runId: string, sequence: number): string => `${runId}.${String(sequence).padStart(6, "0")}`

const KEY = /^(.+)\.(\d{6,})$/

/**
 * The run id and sequence of a key made by {@link keyOf}, or `undefined`.
 *
 * @since 0.2.0
 * @category utils
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * CheckpointStore.parseKey("3f2a.000007") // { runId: "3f2a", sequence: 7 }
 * ```
 */
export const parseKey = (key: string): { readonly runId: string; readonly sequence: number } | undefined => {
  const match = KEY.exec(key)
  return match === null ? undefined : { runId: match[1]!, sequence: Number(match[2]) }
}

const attempt = <A>(f: () => A): Effect.Effect<A, CheckpointError> =>
  Effect.try({ try: f, catch: (error) => (error instanceof CheckpointError ? error : storeError((error as Error).message)) })

/**
 * A directory as a {@link Location} (the module's functions, as Effects).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const runs = CheckpointStore.directoryLocation("runs")
 * ```
 */
export const directoryLocation = (path: string): Location => ({
  description: `checkpoint directory ${path}`,
  ensureWritable: attempt(() => ensureWritable(path)),
  write: (runId, sequence, text, keep) =>
    Effect.try({
      try: () => {
        const name = `${keyOf(runId, sequence)}.checkpoint.json`
        writeAtomically(path, name, text)
        prune(path, keep, runId)
        return join(path, name)
      },
      catch: (error) => storeError(`checkpoint directory ${path}: ${why(error)}`)
    }),
  list: attempt(() => list(path).map(({ file, ...rest }) => ({ key: file, ...rest }))),
  readText: (key) =>
    Effect.try({
      try: () => readFileSync(key, "utf8"),
      catch: (error) =>
        new CheckpointError({ reason: "format", message: `${key}: ${(error as { code?: string }).code === "ENOENT" ? "not found" : why(error)}` })
    }),
  remove: (keys) => attempt(() => keys.forEach((key) => unlinkSync(key)))
})

/**
 * A layer of {@link CheckpointLocation} for a directory.
 *
 * @since 0.2.0
 * @category layers
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const live = CheckpointStore.directoryLayer("runs")
 * ```
 */
export const directoryLayer = (path: string): Layer.Layer<CheckpointLocation> => Layer.succeed(CheckpointLocation, directoryLocation(path))

/**
 * Read the checkpoint `key` of `location`: a `CheckpointError` whose message names the location
 * and the key says what is wrong with it (not found, not JSON, damaged, another version).
 *
 * @since 0.2.0
 * @category getters
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const latest = CheckpointStore.readFrom(CheckpointStore.directoryLocation("runs"), "runs/r1.000003.checkpoint.json")
 * ```
 */
export const readFrom = (location: Location, key: string, options: Checkpoint.DecodeOptions = {}): Effect.Effect<Checkpoint.Checkpoint, CheckpointError> =>
  Effect.flatMap(location.readText(key), (text) =>
    Effect.try({
      try: () => Checkpoint.parse(text, options),
      catch: (error) =>
        error instanceof CheckpointError
          ? new CheckpointError({ reason: error.reason, message: `${location.description}: ${key}: ${error.message}` })
          : storeError(`${location.description}: ${key}: ${(error as Error).message}`)
    })
  )

/**
 * Delete each run's checkpoints in `location` but the newest `keep` (of one run, with `runId`);
 * returns the keys deleted.
 *
 * @since 0.2.0
 * @category mutations
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const tidy = CheckpointStore.pruneIn(CheckpointStore.directoryLocation("runs"), 3)
 * ```
 */
export const pruneIn = (location: Location, keep: number, runId?: string): Effect.Effect<ReadonlyArray<string>, CheckpointError> =>
  Effect.gen(function* () {
    const byRun = new Map<string, Array<Listed>>()
    for (const entry of yield* location.list) {
      if (runId !== undefined && entry.runId !== runId) continue
      byRun.set(entry.runId, [...(byRun.get(entry.runId) ?? []), entry])
    }
    const doomed: Array<string> = []
    for (const entries of byRun.values()) {
      entries.sort((a, b) => a.sequence - b.sequence)
      for (const entry of entries.slice(0, Math.max(0, entries.length - keep))) doomed.push(entry.key)
    }
    if (doomed.length > 0) yield* location.remove(doomed)
    return doomed
  })

/**
 * Options of {@link open}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CheckpointStore } from "lambdagent"
 * const o: CheckpointStore.RunOptions = { runId: "r1", maxCheckpoints: 5 }
 * ```
 */
export type RunOptions = Omit<DirectoryOptions, "path">

/**
 * One run's checkpoints in a location: `save` for the `checkpoint` call option.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CheckpointStore } from "lambdagent"
 * const last = (s: CheckpointStore.RunStore) => s.lastWritten
 * ```
 */
export interface RunStore {
  /** Write one checkpoint (atomically), then prune the run's oldest. */
  readonly save: (checkpoint: Checkpoint.Checkpoint) => Effect.Effect<void, CheckpointError>
  /** The key of the checkpoint written last, if any. */
  readonly lastWritten: string | undefined
}

/**
 * The store of one run in `location`, checked writable now (so that a run fails before its first
 * oracle call, not after an hour of work).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { CheckpointStore, createRuntime, Term } from "lambdagent"
 * const program = Effect.gen(function* () {
 *   const store = yield* CheckpointStore.open(CheckpointStore.directoryLocation("runs"), { runId: "order-42" })
 *   return yield* Effect.promise(() => createRuntime().run(Term.llm({ system: "Summarize." }), "text", { checkpoint: { save: store.save } }))
 * })
 * ```
 */
export const open = (location: Location, options: RunOptions): Effect.Effect<RunStore, CheckpointError> =>
  Effect.map(location.ensureWritable, () => {
    const keep = options.maxCheckpoints ?? 10
    let sequence = options.firstSequence ?? 1
    const store = {
      lastWritten: undefined as string | undefined,
      save: (checkpoint: Checkpoint.Checkpoint) =>
        Effect.map(location.write(options.runId, sequence, JSON.stringify({ ...checkpoint }), keep), (key) => {
          sequence++
          store.lastWritten = key
        })
    }
    return store
  })
