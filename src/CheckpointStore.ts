/**
 * Where checkpoints are kept, as journals: a run's checkpoints are a whole checkpoint (a base)
 * followed by deltas, the answers given since the one before (`Checkpoint.Entry`); a checkpoint is
 * its base extended by the deltas up to it. A **location** keeps the journals of many runs: a
 * directory ({@link directoryLocation}), Redis or SQLite (the plugins' `checkpointLocation`). Each
 * entry is one JSON text; a delta's carries a digest chained to the entry before it, so an
 * edited, reordered or missing entry is refused, never resumed as a different run.
 *
 * In a directory each segment — a base and its deltas — is a file `<run id>.<sequence>.checkpoint.jsonl`,
 * one entry a line: the base written atomically (a temporary file, `fsync`, `rename`, `fsync` of
 * the directory), each delta appended with one `write` and `fdatasync`. A crash leaves the previous
 * checkpoints whole; one that stopped a write leaves at most a last line cut short, which is
 * refused with a message naming the checkpoint before it.
 *
 * @since 0.2.0
 * @module
 */
import { hash } from "node:crypto"
import {
  closeSync,
  constants,
  existsSync,
  fdatasyncSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync
} from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Checkpoint from "./Checkpoint.ts"
import { CheckpointError } from "./Errors.ts"

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
 * old file or the new one, whole: a temporary file, `fsync`, `rename`, `fsync` of the directory
 * (with `sync` false, no `fsync`: whole after a crash of the process, not of the machine). Throws
 * the file system's error.
 *
 * @since 0.2.0
 * @category utils
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const keep = (text: string) => CheckpointStore.writeAtomically("runs", "state.json", text)
 * ```
 */
export const writeAtomically = (dir: string, file: string, text: string, sync = true): void => {
  const tmp = join(dir, `.${file}.${process.pid}.tmp`)
  const fd = openSync(tmp, "w", 0o600)
  try {
    writeWhole(fd, text)
    if (sync) fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, join(dir, file))
  if (sync) fsyncDirectory(dir)
}

/** One `write` of all of `text` (a short write, the disk full, is an error: the line would be torn). */
const writeWhole = (fd: number, text: string) => {
  const bytes = Buffer.from(text)
  if (writeSync(fd, bytes) !== bytes.length) throw Object.assign(new Error("the disk is full"), { code: "ENOSPC" })
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

/**
 * The key of a run's checkpoint: `<run id>.<sequence>`, the sequence six digits or more (in a
 * directory, the key is that name in the directory's path: `runs/3f2a.000007`).
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

// ---------------------------------------------------------------------------------------------
// Journal entries as text
// ---------------------------------------------------------------------------------------------

const sha256 = (text: string) => "sha256:" + hash("sha256", text, "hex")

/** The digest of a delta: SHA-256 of the digest of the entry before it and the delta's text. */
const chained = (previous: string, text: string) => sha256(`${previous}\n${text}`)

/** A stored entry's text, and the digest the next one chains to. */
interface Written {
  readonly text: string
  readonly digest: string
}

/** The text of a journal entry (a delta's with its chained digest, written last). */
const entryText = (entry: Checkpoint.Entry, previous: string | undefined): Written => {
  if (entry._tag === "Base") return { text: Checkpoint.toText(entry.checkpoint), digest: entry.checkpoint.digest }
  if (previous === undefined) throw storeError("a checkpoint delta with no checkpoint before it")
  const body = Checkpoint.deltaText(entry.delta)
  const digest = chained(previous, body)
  return { text: `${body.slice(0, -1)},"digest":${JSON.stringify(digest)}}`, digest }
}

/**
 * A stored journal entry: its sequence and JSON text.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CheckpointStore } from "lambdagent"
 * const e: CheckpointStore.StoredEntry = { sequence: 7, text: "{}" }
 * ```
 */
export interface StoredEntry {
  readonly sequence: number
  readonly text: string
}

const describeEntry = (runId: string | undefined, sequence: number) => (runId === undefined ? `checkpoint ${sequence}` : keyOf(runId, sequence))

/** A segment's entries checked in order, up to the first that is wrong. */
interface Checked {
  readonly base: Checkpoint.Checkpoint | undefined
  readonly deltas: ReadonlyArray<Checkpoint.Delta>
  /** The first entry that is wrong, as a one-line error naming it. */
  readonly failure: CheckpointError | undefined
}

const checkSegment = (entries: ReadonlyArray<StoredEntry>, runId: string | undefined, options: Checkpoint.DecodeOptions): Checked => {
  const [first, ...rest] = entries
  if (first === undefined) return { base: undefined, deltas: [], failure: new CheckpointError({ reason: "missing", message: "not found" }) }
  const fault = (at: StoredEntry, error: CheckpointError) => {
    const cut = at === entries.at(-1) && entries.length > 1 && error.reason === "format" && error.message.startsWith("not JSON")
    const message = cut
      ? `${describeEntry(runId, at.sequence)} is cut short (the run stopped while writing it, or the journal was truncated); ${describeEntry(runId, at.sequence - 1)} before it is whole`
      : `${describeEntry(runId, at.sequence)}: ${error.message}`
    return new CheckpointError({ reason: error.reason, message })
  }
  let base: Checkpoint.Checkpoint
  try {
    base = Checkpoint.parse(first.text, options)
  } catch (error) {
    if (!(error instanceof CheckpointError)) throw error
    // a delta where a whole checkpoint should be: the journal lost its beginning
    const lost = first.text.startsWith(`{"format":"${Checkpoint.deltaFormat}"`)
    const failure = lost
      ? fault(first, new CheckpointError({ reason: "format", message: "a delta whose whole checkpoint before it is missing" }))
      : entries.length > 1
        ? fault(first, error)
        : error
    return { base: undefined, deltas: [], failure }
  }
  const deltas: Array<Checkpoint.Delta> = []
  let previous = base.digest
  let expected = first.sequence
  for (const at of rest) {
    try {
      if (at.sequence !== ++expected) throw new CheckpointError({ reason: "format", message: `${describeEntry(runId, expected)} before it is missing` })
      let json: unknown
      try {
        json = JSON.parse(at.text)
      } catch {
        throw new CheckpointError({ reason: "format", message: "not JSON (truncated or not a checkpoint)" })
      }
      const delta = Checkpoint.decodeDelta(json)
      if ((json as { digest?: unknown }).digest !== chained(previous, Checkpoint.deltaText(delta))) {
        throw new CheckpointError({ reason: "digest", message: "does not match its digest (edited, damaged, or not the entry after the one before it)" })
      }
      previous = (json as { digest: string }).digest
      deltas.push(delta)
    } catch (error) {
      if (error instanceof CheckpointError) return { base, deltas, failure: fault(at, error) }
      throw error
    }
  }
  return { base, deltas, failure: undefined }
}

/**
 * The checkpoint a segment's entries make (its base first, then its deltas up to the checkpoint):
 * each checked — the base as `Checkpoint.decode` does, each delta's digest against the entry
 * before it. Throws a `CheckpointError` naming the entry that is wrong.
 *
 * @since 0.2.0
 * @category decoding
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const newest = (entries: ReadonlyArray<CheckpointStore.StoredEntry>) => CheckpointStore.fromEntries(entries, "3f2a")
 * ```
 */
export const fromEntries = (entries: ReadonlyArray<StoredEntry>, runId?: string, options: Checkpoint.DecodeOptions = {}): Checkpoint.Checkpoint => {
  const { base, deltas, failure } = checkSegment(entries, runId, options)
  if (failure !== undefined) throw failure
  return Checkpoint.extend(base!, deltas)
}

// ---------------------------------------------------------------------------------------------
// Locations: where the checkpoints of many runs are kept (a directory, Redis, SQLite)
// ---------------------------------------------------------------------------------------------

/**
 * A checkpoint as a location lists it. `key` is what {@link readFrom} reads it by; `base` is the
 * sequence of the whole checkpoint it extends (its own, when it is one).
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
  readonly base: number
  readonly bytes: number
  readonly modified: Date
}

/**
 * A place that keeps the checkpoint journals of many runs: a directory ({@link directoryLocation}),
 * a Redis key prefix (`lambdagent/redis`'s `checkpointLocation`), a SQLite file
 * (`lambdagent/sqlite`'s `checkpointLocation`). Texts in, texts out: {@link open} and
 * {@link readFrom} make and check them. Every operation fails with a `CheckpointError` whose
 * one-line message names the location.
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
   * Write entry `sequence` of run `runId`, its JSON text: a whole checkpoint when `base` is
   * `sequence` (it starts a segment), else a delta added to the segment that starts at `base`.
   * Durable and atomic when it succeeds: a crash leaves the location as it was, or with the whole
   * entry listed. Then delete the run's entries before `keepFrom` (a base: whole segments).
   * Returns the checkpoint's key.
   */
  readonly write: (runId: string, sequence: number, base: number, text: string, keepFrom: number) => Effect.Effect<string, CheckpointError>
  /** Every checkpoint kept, oldest first (by time written, run, then sequence). */
  readonly list: Effect.Effect<ReadonlyArray<Listed>, CheckpointError>
  /**
   * The entries that make the checkpoint `key`: its segment from the base up to it, in order. A
   * `CheckpointError` (`format`) when there is no such checkpoint.
   */
  readonly readEntries: (key: string) => Effect.Effect<ReadonlyArray<StoredEntry>, CheckpointError>
  /** Delete these checkpoints: whole segments, as {@link pruneIn} gives them. */
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

const attempt = <A>(f: () => A): Effect.Effect<A, CheckpointError> =>
  Effect.try({ try: f, catch: (error) => (error instanceof CheckpointError ? error : storeError((error as Error).message)) })

// ---------------------------------------------------------------------------------------------
// A directory
// ---------------------------------------------------------------------------------------------

const FILE = /^(.+)\.(\d{6,})\.checkpoint\.jsonl$/

/**
 * A checkpoint found in a directory: its key, the journal file it is a line of, and where in it.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CheckpointStore } from "lambdagent"
 * const name = (e: CheckpointStore.Entry) => `${e.runId}#${e.sequence} in ${e.file}`
 * ```
 */
export interface Entry extends Listed {
  readonly file: string
}

interface Segment {
  readonly file: string
  readonly runId: string
  readonly base: number
  /** Its lines; the last may be cut short (no newline after it). */
  readonly lines: ReadonlyArray<string>
  readonly modified: Date
}

const notFound = (where: string) => new CheckpointError({ reason: "missing", message: `${where}: not found` })

const readSegment = (file: string, runId: string, base: number): Segment => {
  const text = readFileSync(file, "utf8")
  const lines = text.split("\n")
  // a whole file ends with a newline: the last piece is then empty
  if (lines.at(-1) === "") lines.pop()
  return { file, runId, base, lines, modified: statSync(file).mtime }
}

/** The journal files of a directory (of one run), by run then base: their names only. */
const journalsIn = (path: string, runId?: string): Array<{ readonly file: string; readonly runId: string; readonly base: number }> => {
  let names: Array<string>
  try {
    names = readdirSync(path)
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") throw new CheckpointError({ reason: "missing", message: `checkpoint directory ${path}: not found` })
    throw storeError(`checkpoint directory ${path}: ${why(error)}`)
  }
  const journals: Array<{ file: string; runId: string; base: number }> = []
  for (const name of names) {
    const match = FILE.exec(name)
    if (match !== null && (runId === undefined || match[1] === runId)) journals.push({ file: join(path, name), runId: match[1]!, base: Number(match[2]) })
  }
  return journals.sort((a, b) => a.runId.localeCompare(b.runId) || a.base - b.base)
}

/** The journal files of a directory (of one run) read, by run then base. */
const segmentsIn = (path: string, runId?: string): Array<Segment> =>
  journalsIn(path, runId)
    .map((j) => readSegment(j.file, j.runId, j.base))
    .filter((segment) => segment.lines.length > 0)

/**
 * The checkpoints of a directory, oldest first (by time written, run, then sequence).
 *
 * @since 0.2.0
 * @category getters
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const count = (path: string) => CheckpointStore.list(path).length
 * ```
 */
export const list = (path: string): Array<Entry> =>
  segmentsIn(path)
    .flatMap((s) =>
      s.lines.map((line, i) => ({
        key: join(path, keyOf(s.runId, s.base + i)),
        file: s.file,
        runId: s.runId,
        sequence: s.base + i,
        base: s.base,
        bytes: Buffer.byteLength(line) + 1,
        modified: s.modified
      }))
    )
    .sort((a, b) => a.modified.getTime() - b.modified.getTime() || a.runId.localeCompare(b.runId) || a.sequence - b.sequence)

/** The sequence before which a run's checkpoints can go when its newest `keep` stay (with the bases they extend). */
const keepFromOf = (entries: ReadonlyArray<Pick<Listed, "sequence" | "base">>, keep: number): number => {
  if (keep <= 0 || entries.length === 0) return Infinity
  const sorted = [...entries].sort((a, b) => a.sequence - b.sequence)
  return sorted[Math.max(0, sorted.length - keep)]!.base
}

/**
 * Delete each run's checkpoints in a directory but the newest `keep` and the whole checkpoints
 * they extend; returns the journal files deleted.
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
  const deleted: Array<string> = []
  const segments = segmentsIn(path, runId)
  for (const run of new Set(segments.map((s) => s.runId))) {
    const own = segments.filter((s) => s.runId === run)
    const keepFrom = keepFromOf(
      own.flatMap((s) => s.lines.map((_, i) => ({ sequence: s.base + i, base: s.base }))),
      keep
    )
    for (const segment of own) {
      if (segment.base >= keepFrom) continue
      unlinkSync(segment.file)
      deleted.push(segment.file)
    }
  }
  return deleted
}

/** The entries of the checkpoint `key` of a directory: a key path (`runs/3f2a.000007`), or a journal file (its newest). */
const entriesIn = (path: string, key: string): Array<StoredEntry> => {
  const name = basename(key)
  const file = FILE.exec(name)
  if (file !== null) {
    let segment: Segment
    try {
      segment = readSegment(resolve(path, name), file[1]!, Number(file[2]))
    } catch (error) {
      const missing = (error as { code?: string }).code === "ENOENT"
      throw new CheckpointError({ reason: missing ? "missing" : "format", message: `${key}: ${missing ? "not found" : why(error)}` })
    }
    if (segment.lines.length === 0) throw new CheckpointError({ reason: "format", message: `${key}: an empty file, not a checkpoint journal` })
    return segment.lines.map((text, i) => ({ sequence: segment.base + i, text }))
  }
  const parsed = parseKey(name)
  if (parsed === undefined) throw notFound(key)
  const segment = segmentsIn(path, parsed.runId)
    .filter((s) => s.base <= parsed.sequence)
    .at(-1)
  const upTo = segment === undefined ? -1 : parsed.sequence - segment.base
  if (segment === undefined || upTo >= segment.lines.length) throw notFound(key)
  return segment.lines.slice(0, upTo + 1).map((text, i) => ({ sequence: segment.base + i, text }))
}

/**
 * Read a checkpoint of a directory: a journal file (its newest checkpoint) or a key path
 * (`runs/3f2a.000007`). A `CheckpointError` naming it says what is wrong with it.
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
  try {
    return fromEntries(entriesIn(dirname(resolve(file)), file), runIdOf(file), options)
  } catch (error) {
    if (error instanceof CheckpointError && !error.message.startsWith(`${file}:`)) {
      throw new CheckpointError({ reason: error.reason, message: `${file}: ${error.message}` })
    }
    throw error
  }
}

const runIdOf = (key: string): string | undefined => FILE.exec(basename(key))?.[1] ?? parseKey(basename(key))?.runId

/**
 * Options of {@link directoryLocation}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CheckpointStore } from "lambdagent"
 * const o: CheckpointStore.DirectoryLocationOptions = { fsync: false }
 * ```
 */
export interface DirectoryLocationOptions {
  /**
   * `fsync` each entry before the call it precedes (default true; a delta with `fdatasync`): the
   * checkpoint survives a crash of the machine. With `false` it survives a crash of the process
   * (the kernel has it), at a fraction of the cost.
   */
  readonly fsync?: boolean
}

/** Append a line to a segment's journal (which must exist), in one `write`. */
const append = (file: string, text: string, sync: boolean) => {
  const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND)
  try {
    writeWhole(fd, text)
    if (sync) fdatasyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * A directory as a {@link Location}: one journal file per segment (see the module's description).
 * Its keys are paths: `<directory>/<run id>.<sequence>`; {@link readFrom} also reads a journal
 * file by its path (its newest checkpoint).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const runs = CheckpointStore.directoryLocation("runs")
 * ```
 */
export const directoryLocation = (path: string, options: DirectoryLocationOptions = {}): Location => {
  const sync = options.fsync !== false
  const pruned = new Map<string, number>()
  const fileOf = (runId: string, base: number) => join(path, `${keyOf(runId, base)}.checkpoint.jsonl`)
  return {
    description: `checkpoint directory ${path}`,
    ensureWritable: attempt(() => ensureWritable(path)),
    write: (runId, sequence, base, text, keepFrom) =>
      Effect.try({
        try: () => {
          if (sequence === base) writeAtomically(path, basename(fileOf(runId, base)), `${text}\n`, sync)
          else append(fileOf(runId, base), `${text}\n`, sync)
          if (keepFrom > (pruned.get(runId) ?? -Infinity)) {
            for (const journal of journalsIn(path, runId)) if (journal.base < keepFrom) unlinkSync(journal.file)
            pruned.set(runId, keepFrom)
          }
          return join(path, keyOf(runId, sequence))
        },
        catch: (error) =>
          storeError(
            `checkpoint directory ${path}: ${(error as { code?: string }).code === "ENOENT" ? `the journal ${basename(fileOf(runId, base))} is gone` : why(error)}`
          )
      }),
    list: attempt(() => list(path).map(({ file: _, ...rest }) => rest)),
    readEntries: (key) => attempt(() => entriesIn(path, key)),
    remove: (keys) =>
      attempt(() => {
        const doomed = new Set(keys.map((key) => basename(key)))
        for (const journal of journalsIn(path)) if (doomed.has(keyOf(journal.runId, journal.base))) unlinkSync(journal.file)
      })
  }
}

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
export const directoryLayer = (path: string, options: DirectoryLocationOptions = {}): Layer.Layer<CheckpointLocation> =>
  Layer.succeed(CheckpointLocation, directoryLocation(path, options))

/**
 * A {@link Location} in this process's memory: gone when it exits. For tests, and for hosts that
 * hand checkpoints on themselves.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const here = CheckpointStore.memoryLocation()
 * ```
 */
export const memoryLocation = (): Location => {
  const kept = new Map<string, Listed & { readonly text: string }>()
  return {
    description: "checkpoints in memory",
    ensureWritable: Effect.void,
    write: (runId, sequence, base, text, keepFrom) =>
      Effect.sync(() => {
        const key = keyOf(runId, sequence)
        kept.set(key, { key, runId, sequence, base, text, bytes: Buffer.byteLength(text), modified: new Date() })
        for (const [k, e] of kept) if (e.runId === runId && e.sequence < keepFrom) kept.delete(k)
        return key
      }),
    list: Effect.sync(() => [...kept.values()].map(({ text: _, ...listed }) => listed)),
    readEntries: (key) =>
      Effect.suspend(() => {
        const entry = kept.get(key)
        if (entry === undefined) return Effect.fail(notFound(key))
        const entries: Array<StoredEntry> = []
        for (let at = entry.base; at <= entry.sequence; at++) {
          const e = kept.get(keyOf(entry.runId, at))
          if (e !== undefined) entries.push({ sequence: at, text: e.text })
        }
        return Effect.succeed(entries)
      }),
    remove: (keys) => Effect.sync(() => keys.forEach((key) => kept.delete(key)))
  }
}

/**
 * Read the checkpoint `key` of `location` (its base extended by its deltas, each checked): a
 * `CheckpointError` whose message names the location and the key says what is wrong with it
 * (not found, not JSON, cut short, damaged, another version).
 *
 * @since 0.2.0
 * @category getters
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const latest = CheckpointStore.readFrom(CheckpointStore.directoryLocation("runs"), "runs/r1.000003")
 * ```
 */
export const readFrom = (location: Location, key: string, options: Checkpoint.DecodeOptions = {}): Effect.Effect<Checkpoint.Checkpoint, CheckpointError> =>
  Effect.flatMap(
    Effect.mapError(location.readEntries(key), (error) =>
      error.message.startsWith(location.description)
        ? error
        : new CheckpointError({ reason: error.reason, message: `${location.description}: ${error.message}` })
    ),
    (entries) =>
      Effect.try({
        try: () => fromEntries(entries, runIdOf(key), options),
        catch: (error) =>
          error instanceof CheckpointError
            ? new CheckpointError({ reason: error.reason, message: `${location.description}: ${key}: ${error.message}` })
            : storeError(`${location.description}: ${key}: ${(error as Error).message}`)
      })
  )

/**
 * Delete each run's checkpoints in `location` but the newest `keep` (of one run, with `runId`) and
 * the whole checkpoints those extend; returns the keys deleted.
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
      const keepFrom = keepFromOf(entries, keep)
      for (const entry of entries.sort((a, b) => a.sequence - b.sequence)) if (entry.sequence < keepFrom) doomed.push(entry.key)
    }
    if (doomed.length > 0) yield* location.remove(doomed)
    return doomed
  })

/**
 * A checkpoint as {@link inventory} describes it: where it is, when it was taken, what it waits
 * on, its counters and how many answers it holds — or what is wrong with it.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CheckpointStore } from "lambdagent"
 * const line = (s: CheckpointStore.Summary) => `${s.key}: ${s.problem ?? s.waiting?.kind ?? "start"}`
 * ```
 */
export interface Summary extends Listed {
  readonly createdAt?: string
  readonly usage?: Checkpoint.Checkpoint["usage"]
  readonly waiting?: Checkpoint.Checkpoint["waiting"]
  readonly asking?: Checkpoint.Asking
  readonly answers?: number
  /** What is wrong with it (one line), when it cannot be resumed. */
  readonly problem?: string
}

/**
 * Every checkpoint of `location` described (oldest first), each segment read and checked once:
 * what `lambdagent checkpoints list` shows.
 *
 * @since 0.2.0
 * @category getters
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const waiting = CheckpointStore.inventory(CheckpointStore.directoryLocation("runs"))
 * ```
 */
export const inventory = (location: Location): Effect.Effect<ReadonlyArray<Summary>, CheckpointError> =>
  Effect.gen(function* () {
    const listed = yield* location.list
    const segments = new Map<string, Array<Listed>>()
    for (const entry of listed) {
      const id = `${entry.runId}\n${entry.base}`
      segments.set(id, [...(segments.get(id) ?? []), entry])
    }
    const described = new Map<string, Summary>()
    for (const segment of segments.values()) {
      segment.sort((a, b) => a.sequence - b.sequence)
      const last = segment.at(-1)!
      const checked = yield* Effect.match(location.readEntries(last.key), {
        onFailure: (failure): Checked => ({ base: undefined, deltas: [], failure }),
        onSuccess: (entries) => checkSegment(entries, last.runId, {})
      })
      let answers = checked.base?.answers.length ?? 0
      for (const entry of segment) {
        const at = entry.sequence - entry.base
        if (at === 0 && checked.base !== undefined) {
          const b = checked.base
          described.set(entry.key, {
            ...entry,
            createdAt: b.createdAt,
            usage: b.usage,
            ...(b.waiting !== undefined ? { waiting: b.waiting } : {}),
            ...(b.asking !== undefined ? { asking: b.asking } : {}),
            answers
          })
        } else if (at > 0 && at <= checked.deltas.length) {
          const d = checked.deltas[at - 1]!
          answers += d.answers.length
          described.set(entry.key, { ...entry, createdAt: d.createdAt, usage: d.usage, ...(d.waiting !== undefined ? { waiting: d.waiting } : {}), answers })
        } else {
          described.set(entry.key, { ...entry, problem: checked.failure?.message ?? "not found" })
        }
      }
    }
    return listed.map((entry) => described.get(entry.key)!)
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
export interface RunOptions {
  /** The run's id: the prefix of its keys. */
  readonly runId: string
  /**
   * A run's checkpoints kept (default 10): the newest this many, with the whole checkpoints they
   * extend; older ones are deleted as the run goes on.
   */
  readonly maxCheckpoints?: number
  /**
   * The sequence number of the first checkpoint written: a resumed run goes on from its own (its
   * older checkpoints in the location are then pruned with its new ones).
   */
  readonly firstSequence?: number
}

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
  /** Write one entry (a whole checkpoint, or a delta after the last), then prune the run's oldest. */
  readonly save: (entry: Checkpoint.Entry) => Effect.Effect<void, CheckpointError>
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
  Effect.gen(function* () {
    yield* location.ensureWritable
    const keep = Math.max(1, options.maxCheckpoints ?? 10)
    // a resumed run's older checkpoints count towards what is kept
    const written: Array<Pick<Listed, "sequence" | "base">> =
      options.firstSequence === undefined ? [] : (yield* location.list).filter((e) => e.runId === options.runId && e.sequence < options.firstSequence!)
    let sequence = options.firstSequence ?? 1
    let base = -1
    let previous: string | undefined
    let newest = -1
    const store: { lastWritten: string | undefined; save: RunStore["save"] } = {
      lastWritten: undefined,
      // numbered and chained when handed over, so that saves in flight at once (par branches) keep their order
      save: (entry) => {
        let text: Written
        try {
          text = entryText(entry, previous)
        } catch (error) {
          return Effect.fail(error as CheckpointError)
        }
        const at = sequence++
        if (entry._tag === "Base") base = at
        previous = text.digest
        written.push({ sequence: at, base })
        if (written.length > 4 * keep) written.splice(0, written.length - 2 * keep)
        return Effect.map(location.write(options.runId, at, base, text.text, keepFromOf(written, keep)), (key) => {
          if (at > newest) {
            newest = at
            store.lastWritten = key
          }
        })
      }
    }
    return store
  })

/**
 * A directory store for one run (see {@link open}): checks the directory is writable now.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { CheckpointStore } from "lambdagent"
 * const store = () => CheckpointStore.directory({ path: "checkpoints", runId: "r1" })
 * ```
 */
export const directory = (options: RunOptions & { readonly path: string } & DirectoryLocationOptions): RunStore => {
  const { fsync, path, ...run } = options
  return Effect.runSync(open(directoryLocation(path, fsync !== undefined ? { fsync } : {}), run))
}
