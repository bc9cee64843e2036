/**
 * Ingest: find the documents under a source (files and directories, recursively), read them with
 * a size cap, and cut them into {@link Chunk}s.
 *
 * Text (`.txt`, `.text`), markdown (`.md`, `.markdown`) and JSON (`.json`) are read; any other file
 * met while walking a directory is skipped with a note, as are hidden entries and `node_modules`.
 * Chunks are produced file by file ({@link chunkSource} is an async iterable), so a large tree is
 * never held in memory twice.
 *
 * @since 0.1.0
 * @module
 */
import { createHash } from "node:crypto"
import type { Stats } from "node:fs"
import * as fs from "node:fs/promises"
import type { FileHandle } from "node:fs/promises"
import * as path from "node:path"
import { type Chunk, type ChunkOptions, chunkDocument, type DocumentFormat, resolveChunkOptions } from "./chunk.ts"
import { fromFsError, RagError, throwIfAborted } from "./RagError.ts"

/**
 * Options for reading a source.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { IngestOptions } from "lambdagent/rag"
 * const o: IngestOptions = { chunkSize: 600, chunkOverlap: 80, maxFileBytes: 1_000_000, onFileError: "skip" }
 * ```
 */
export interface IngestOptions extends ChunkOptions {
  /** Files larger than this many bytes are refused (`FileTooLarge`); default {@link defaultMaxFileBytes}. */
  readonly maxFileBytes?: number
  /**
   * What to do when one file under a directory is unreadable, too large or not valid JSON:
   * `"fail"` (the default) rejects the whole ingest, `"skip"` records it in `skipped` and goes on.
   * A missing or unreadable *source* always fails.
   */
  readonly onFileError?: "fail" | "skip"
  /** Relative sources are resolved against this directory; default the working directory. */
  readonly baseDir?: string
  readonly signal?: AbortSignal
}

/**
 * Default largest file: 10 MiB.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { defaultMaxFileBytes } from "lambdagent/rag"
 * console.log(defaultMaxFileBytes) // 10485760
 * ```
 */
export const defaultMaxFileBytes = 10 * 1024 * 1024

/**
 * A document found under a source.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { SourceFile } from "lambdagent/rag"
 * const f: SourceFile = { path: "docs/a.md", absolutePath: "/srv/docs/a.md", format: "markdown", size: 120, mtimeMs: 0 }
 * ```
 */
export interface SourceFile {
  /** The path as reached from the source given; used in chunk metadata. */
  readonly path: string
  readonly absolutePath: string
  readonly format: DocumentFormat
  readonly size: number
  readonly mtimeMs: number
}

/**
 * A file that was left out, and why.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { SkippedFile } from "lambdagent/rag"
 * const s: SkippedFile = { path: "docs/logo.png", reason: "unsupported file type .png" }
 * ```
 */
export interface SkippedFile {
  readonly path: string
  readonly reason: string
}

/**
 * The documents under a source, found without reading them.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { scanSource } from "lambdagent/rag"
 * const scan = await scanSource("docs")
 * console.log(scan.files.length, scan.skipped, scan.fingerprint)
 * ```
 */
export interface SourceScan {
  readonly files: ReadonlyArray<SourceFile>
  readonly skipped: ReadonlyArray<SkippedFile>
  /** A hash of every file's path, size and modification time: equal fingerprints mean an unchanged source. */
  readonly fingerprint: string
}

const formats: Record<string, DocumentFormat> = {
  ".txt": "text",
  ".text": "text",
  ".md": "markdown",
  ".markdown": "markdown",
  ".json": "json"
}

/**
 * The format of a file from its extension, or `undefined` when it is not ingested.
 *
 * @since 0.1.0
 * @category ingest
 * @example
 * ```ts
 * import { formatOf } from "lambdagent/rag"
 * console.log(formatOf("a/b.MD"), formatOf("x.png")) // "markdown" undefined
 * ```
 */
export const formatOf = (file: string): DocumentFormat | undefined => formats[path.extname(file).toLowerCase()]

const toPosix = (p: string): string => p.split(path.sep).join("/")

const normalizeSources = (source: string | ReadonlyArray<string>): ReadonlyArray<string> => {
  const list = typeof source === "string" ? [source] : source
  if (list.length === 0 || list.some((s) => typeof s !== "string" || s.trim() === "")) {
    throw new RagError({ reason: "InvalidConfig", message: "the source must name at least one file or directory" })
  }
  const url = list.find((s) => /^[a-z][a-z0-9+.-]*:\/\//i.test(s))
  if (url !== undefined) {
    throw new RagError({
      reason: "InvalidSource",
      message: `sources are local files or directories; fetch ${url} into a directory first`,
      path: url
    })
  }
  return list
}

/**
 * Find the documents under one or more files or directories, recursively, without reading them.
 * Directory entries are visited in name order, so results are stable. Symbolic links are followed
 * once (a link cycle is skipped). Throws `SourceNotFound` / `SourceUnreadable` for a bad source,
 * `InvalidSource` for a file of an unsupported type named directly.
 *
 * @since 0.1.0
 * @category ingest
 * @example
 * ```ts
 * import { scanSource } from "lambdagent/rag"
 * const { files, skipped } = await scanSource(["docs", "faq.json"], { baseDir: "." })
 * ```
 */
export const scanSource = async (
  source: string | ReadonlyArray<string>,
  options?: Pick<IngestOptions, "baseDir" | "onFileError" | "signal">
): Promise<SourceScan> => {
  const sources = normalizeSources(source)
  const baseDir = options?.baseDir ?? process.cwd()
  const onFileError = options?.onFileError ?? "fail"
  const files: Array<SourceFile> = []
  const skipped: Array<SkippedFile> = []
  const seen = new Set<string>()

  const visit = async (display: string, absolute: string, explicit: boolean): Promise<void> => {
    throwIfAborted(options?.signal)
    let stat: Stats
    try {
      stat = await fs.stat(absolute)
    } catch (cause) {
      const error = fromFsError(cause, display, "open")
      if (explicit || onFileError === "fail") throw error
      skipped.push({ path: display, reason: error.message })
      return
    }
    let real: string
    try {
      real = await fs.realpath(absolute)
    } catch {
      real = absolute
    }
    if (seen.has(real)) {
      if (stat.isDirectory()) skipped.push({ path: display, reason: "directory already visited (link cycle)" })
      return
    }
    seen.add(real)
    if (stat.isDirectory()) {
      let entries: Array<string>
      try {
        entries = (await fs.readdir(absolute)).sort()
      } catch (cause) {
        const error = fromFsError(cause, display, "list")
        if (explicit || onFileError === "fail") throw error
        skipped.push({ path: display, reason: error.message })
        return
      }
      for (const entry of entries) {
        const childDisplay = display === "." ? entry : `${display.replace(/\/+$/, "")}/${entry}`
        if (entry.startsWith(".") || entry === "node_modules") {
          skipped.push({ path: childDisplay, reason: entry === "node_modules" ? "node_modules is not ingested" : "hidden entry" })
          continue
        }
        await visit(childDisplay, path.join(absolute, entry), false)
      }
      return
    }
    if (!stat.isFile()) {
      const error = new RagError({ reason: "SourceUnreadable", message: `not a regular file: ${display}`, path: display })
      if (explicit || onFileError === "fail") throw error
      skipped.push({ path: display, reason: error.message })
      return
    }
    const format = formatOf(display)
    if (format === undefined) {
      const ext = path.extname(display) || "(no extension)"
      if (explicit) {
        throw new RagError({
          reason: "InvalidSource",
          message: `unsupported file type ${ext}: ${display} (supported: ${Object.keys(formats).join(", ")})`,
          path: display
        })
      }
      skipped.push({ path: display, reason: `unsupported file type ${ext}` })
      return
    }
    files.push({ path: display, absolutePath: absolute, format, size: stat.size, mtimeMs: stat.mtimeMs })
  }

  for (const s of sources) {
    await visit(toPosix(path.normalize(s)), path.resolve(baseDir, s), true)
  }
  const hash = createHash("sha256")
  for (const f of files) hash.update(`${f.path}\0${f.size}\0${Math.trunc(f.mtimeMs)}\n`)
  return { files, skipped, fingerprint: hash.digest("hex").slice(0, 32) }
}

/**
 * Read one document with the size cap. Throws `FileTooLarge` above `maxFileBytes` (checked before
 * reading, and again on the bytes read, in case the file grew), `SourceNotFound` or
 * `SourceUnreadable`.
 *
 * @since 0.1.0
 * @category ingest
 * @example
 * ```ts
 * import { readDocument, scanSource } from "lambdagent/rag"
 * const { files } = await scanSource("notes.txt")
 * const text = await readDocument(files[0]!, { maxFileBytes: 1_000_000 })
 * ```
 */
export const readDocument = async (file: SourceFile, options?: Pick<IngestOptions, "maxFileBytes" | "signal">): Promise<string> => {
  const maxFileBytes = resolveMaxFileBytes(options?.maxFileBytes)
  const tooLarge = (size: number): RagError =>
    new RagError({
      reason: "FileTooLarge",
      message: `${file.path} is ${size} bytes, above the limit of ${maxFileBytes} bytes (raise maxFileBytes or split the file)`,
      path: file.path
    })
  if (file.size > maxFileBytes) throw tooLarge(file.size)
  let handle: FileHandle
  try {
    handle = await fs.open(file.absolutePath, "r")
  } catch (cause) {
    throw fromFsError(cause, file.path, "read")
  }
  try {
    // Read at most one byte past the cap, so a file that grew since the scan is caught without
    // reading all of it.
    let buffer = Buffer.alloc(Math.min(maxFileBytes + 1, file.size + 1))
    let length = 0
    for (;;) {
      throwIfAborted(options?.signal)
      if (length === buffer.length) {
        if (length > maxFileBytes) break
        const grown = Buffer.alloc(Math.min(maxFileBytes + 1, buffer.length * 2 + 65_536))
        buffer.copy(grown, 0, 0, length)
        buffer = grown
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length)
      if (bytesRead === 0) break
      length += bytesRead
    }
    if (length > maxFileBytes) throw tooLarge(length)
    return buffer.subarray(0, length).toString("utf8")
  } catch (cause) {
    if (cause instanceof RagError) throw cause
    throw fromFsError(cause, file.path, "read")
  } finally {
    await handle.close()
  }
}

const resolveMaxFileBytes = (value: number | undefined): number => {
  const max = value ?? defaultMaxFileBytes
  if (!Number.isFinite(max) || max <= 0) {
    throw new RagError({ reason: "InvalidConfig", message: `maxFileBytes must be a positive number, got ${max}` })
  }
  return max
}

/**
 * Read and chunk the files of a scan, one file at a time. With `onFileError: "skip"` a file that
 * fails is reported through `onSkip` and left out.
 *
 * @since 0.1.0
 * @category ingest
 * @example
 * ```ts
 * import { chunkFiles, scanSource } from "lambdagent/rag"
 * const scan = await scanSource("docs")
 * for await (const chunk of chunkFiles(scan, { chunkSize: 800 })) console.log(chunk.id)
 * ```
 */
export async function* chunkFiles(scan: SourceScan, options?: IngestOptions & { readonly onSkip?: (skipped: SkippedFile) => void }): AsyncGenerator<Chunk> {
  const sizes = resolveChunkOptions(options)
  resolveMaxFileBytes(options?.maxFileBytes)
  for (const file of scan.files) {
    let chunks: Array<Chunk>
    try {
      const text = await readDocument(file, options)
      chunks = chunkDocument(text, { source: file.path, format: file.format }, sizes)
    } catch (cause) {
      if (options?.onFileError !== "skip" || !(cause instanceof RagError) || cause.reason === "Aborted") throw cause
      options.onSkip?.({ path: file.path, reason: cause.message })
      continue
    }
    yield* chunks
  }
}

/**
 * Scan a source, then read and chunk its files lazily.
 *
 * @since 0.1.0
 * @category ingest
 * @example
 * ```ts
 * import { chunkSource } from "lambdagent/rag"
 * const { scan, chunks } = await chunkSource("docs", { chunkSize: 800 })
 * for await (const c of chunks) console.log(c.metadata.source, c.metadata.index)
 * ```
 */
export const chunkSource = async (
  source: string | ReadonlyArray<string>,
  options?: IngestOptions
): Promise<{ readonly scan: SourceScan; readonly chunks: AsyncIterable<Chunk>; readonly skipped: Array<SkippedFile> }> => {
  resolveChunkOptions(options)
  resolveMaxFileBytes(options?.maxFileBytes)
  const scan = await scanSource(source, options)
  const skipped = [...scan.skipped]
  const chunks = chunkFiles(scan, { ...options, onSkip: (s) => skipped.push(s) })
  return { scan, chunks, skipped }
}

/**
 * Everything one ingest produced.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { ingest } from "lambdagent/rag"
 * const result = await ingest("docs")
 * console.log(result.chunks.length, result.files, result.skipped)
 * ```
 */
export interface IngestResult {
  readonly chunks: ReadonlyArray<Chunk>
  /** Paths of the files that were read. */
  readonly files: ReadonlyArray<string>
  readonly skipped: ReadonlyArray<SkippedFile>
  readonly fingerprint: string
}

/**
 * Read a source and return all of its chunks at once. For large sources prefer
 * {@link chunkSource}, which streams.
 *
 * @since 0.1.0
 * @category ingest
 * @example
 * ```ts
 * import { ingest } from "lambdagent/rag"
 * const { chunks } = await ingest("examples/rag/docs", { chunkSize: 600, chunkOverlap: 60 })
 * console.log(chunks[0]?.metadata)
 * ```
 */
export const ingest = async (source: string | ReadonlyArray<string>, options?: IngestOptions): Promise<IngestResult> => {
  const { chunks, scan, skipped } = await chunkSource(source, options)
  const all: Array<Chunk> = []
  for await (const chunk of chunks) all.push(chunk)
  const skippedPaths = new Set(skipped.map((s) => s.path))
  return {
    chunks: all,
    files: scan.files.map((f) => f.path).filter((p) => !skippedPaths.has(p)),
    skipped,
    fingerprint: scan.fingerprint
  }
}
