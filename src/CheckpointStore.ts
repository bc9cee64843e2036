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
import * as Effect from "effect/Effect"
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

/** Write `text` to `file` so that a crash leaves the old file or the new one, whole. */
const writeAtomically = (dir: string, file: string, text: string) => {
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
 * Create `path` and its missing parents one level at a time (a recursive `mkdirSync` under a
 * pseudo file system such as `/proc` never returns).
 */
const makeDirectory = (path: string) => {
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
  const keep = options.maxCheckpoints ?? 10
  let sequence = options.firstSequence ?? 1
  const store = {
    lastWritten: undefined as string | undefined,
    save: (checkpoint: Checkpoint.Checkpoint) =>
      Effect.try({
        try: () => {
          const name = `${options.runId}.${String(sequence).padStart(6, "0")}.checkpoint.json`
          writeAtomically(options.path, name, JSON.stringify({ ...checkpoint }))
          sequence++
          store.lastWritten = join(options.path, name)
          prune(options.path, keep, options.runId)
        },
        catch: (error) => storeError(`checkpoint directory ${options.path}: ${why(error)}`)
      })
  }
  return store
}
