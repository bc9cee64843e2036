/**
 * The `simple` backend: an embedded BM25 index (MiniSearch), kept in memory and persisted as one
 * JSON file per index, with no server and no API key.
 *
 * Text is split into Unicode words (each CJK character is a word of its own), lower-cased, stripped
 * of English stop words and of plural endings. A chunk's section path and file name are indexed as
 * separate, boosted fields, so a query naming a section finds it. Scores are BM25 scores: 0 and up,
 * unbounded, comparable only within one index.
 *
 * Persisted indexes are written to a temporary file, flushed, then renamed over the old one, so a
 * reader in another process sees the old index or the new one, never a partial file. A query
 * notices when another process replaced the file and reloads it.
 *
 * @since 0.1.0
 * @module
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import MiniSearch, { type Options as MiniSearchOptions } from "minisearch"
import type { Chunk } from "./chunk.ts"
import { errorMessage, RagError, throwIfAborted } from "./RagError.ts"
import {
  batches,
  type BuildReport,
  type CallOptions,
  checkQueryArgs,
  type RetrievalIndex,
  type SearchHit
} from "./RetrievalIndex.ts"
import { processTerm, tokenize } from "./terms.ts"

const fileTitle = (source: string): string => path.basename(source, path.extname(source)).replace(/[-_.]+/g, " ")

const miniSearchOptions: MiniSearchOptions<Chunk> = {
  idField: "id",
  fields: ["text", "heading", "title"],
  storeFields: [],
  extractField: (chunk, field) => {
    switch (field) {
      case "id":
        return chunk.id
      case "text":
        return chunk.text
      case "heading":
        return chunk.metadata.section?.join(" ") ?? ""
      case "title":
        return fileTitle(chunk.metadata.source)
      default:
        return undefined
    }
  },
  tokenize,
  processTerm: (term) => processTerm(term) ?? false,
  searchOptions: {
    boost: { text: 1, heading: 1.5, title: 1.2 },
    prefix: (term) => term.length >= 6,
    fuzzy: false,
    combineWith: "OR"
  }
}

const fileFormat = "lambdagent-rag-simple"
const fileVersion = 1

interface State {
  readonly search: MiniSearch<Chunk>
  readonly chunks: Map<string, Chunk>
  readonly fingerprint: string | undefined
  /** Identity of the file this state was read from, to notice replacements by other processes. */
  readonly stamp: string | undefined
}

const emptyState = (): State => ({
  search: new MiniSearch<Chunk>(miniSearchOptions),
  chunks: new Map(),
  fingerprint: undefined,
  stamp: undefined
})

const stampOf = (stat: { readonly ino: number; readonly size: number; readonly mtimeMs: number }): string =>
  `${stat.ino}:${stat.size}:${stat.mtimeMs}`

/**
 * Options of the `simple` backend.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { SimpleIndexOptions } from "lambdagent/rag"
 * const o: SimpleIndexOptions = { persistDirectory: ".rag", name: "docs" }
 * ```
 */
export interface SimpleIndexOptions {
  /** Directory holding `<name>.json`; absent: the index lives in memory only. */
  readonly persistDirectory?: string
  /** Index name, `[A-Za-z0-9._-]`; default `"default"`. */
  readonly name?: string
}

/**
 * The path of the file a persisted `simple` index lives in.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { SimpleIndex } from "lambdagent/rag"
 * console.log(SimpleIndex.filePath(".rag", "docs")) // ".rag/docs.json"
 * ```
 */
export const filePath = (persistDirectory: string, name: string): string => path.join(persistDirectory, `${name}.json`)

/**
 * Check an index name: 1 to 100 of `[A-Za-z0-9._-]`, starting with a letter or digit.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { SimpleIndex } from "lambdagent/rag"
 * SimpleIndex.checkName("docs-v2") // ok; "../x" throws InvalidConfig
 * ```
 */
export const checkName = (name: string): string => {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) {
    throw new RagError({
      reason: "InvalidConfig",
      message: `invalid index name ${JSON.stringify(name)}: use 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit`
    })
  }
  return name
}

/**
 * Open a `simple` index. With `persistDirectory`, the index is read from `<dir>/<name>.json` on
 * first use (a missing file is an empty index) and every change is written back atomically.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { SimpleIndex, ingest } from "lambdagent/rag"
 * const index = SimpleIndex.make({ persistDirectory: ".rag", name: "docs" })
 * await index.rebuild((await ingest("docs")).chunks)
 * const hits = await index.query("how do I install it?", 3, 0)
 * ```
 */
export const make = (options?: SimpleIndexOptions): RetrievalIndex => {
  const name = checkName(options?.name ?? "default")
  const dir = options?.persistDirectory
  const file = dir === undefined ? undefined : filePath(dir, name)
  let state: State = emptyState()
  let loaded = dir === undefined

  /** Read the persisted file when it is new or was replaced since it was read. */
  const current = async (): Promise<State> => {
    if (file === undefined) return state
    let stat
    try {
      stat = await fs.stat(file)
    } catch (cause) {
      if ((cause as { code?: unknown }).code === "ENOENT") {
        if (loaded && state.stamp !== undefined) state = emptyState() // removed by another process
        loaded = true
        return state
      }
      throw new RagError({ reason: "IndexCorrupt", message: `cannot read index ${file}: ${errorMessage(cause)}`, path: file, cause })
    }
    const stamp = stampOf(stat)
    if (loaded && state.stamp === stamp) return state
    state = await load(file, stamp)
    loaded = true
    return state
  }

  const persist = async (next: Omit<State, "stamp">): Promise<State> => {
    if (file === undefined || dir === undefined) return { ...next, stamp: undefined }
    await fs.mkdir(dir, { recursive: true }).catch((cause: unknown) => {
      throw new RagError({
        reason: "InvalidConfig",
        message: `cannot create persistDirectory ${dir}: ${errorMessage(cause)}`,
        path: dir,
        cause
      })
    })
    const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`
    try {
      const handle = await fs.open(temp, "w")
      try {
        const header = {
          format: fileFormat,
          version: fileVersion,
          name,
          createdAt: new Date().toISOString(),
          ...(next.fingerprint === undefined ? {} : { fingerprint: next.fingerprint })
        }
        await handle.write(`${JSON.stringify(header).slice(0, -1)},"chunks":[`)
        let first = true
        for (const batch of chunkBatches([...next.chunks.values()], 1000)) {
          const body = batch.map((c) => JSON.stringify(c)).join(",")
          await handle.write(first ? body : `,${body}`)
          first = false
        }
        await handle.write(`],"index":${JSON.stringify(next.search)}}`)
        await handle.sync()
      } finally {
        await handle.close()
      }
      await fs.rename(temp, file)
    } catch (cause) {
      await fs.rm(temp, { force: true })
      throw new RagError({
        reason: "BackendFailed",
        message: `cannot write index ${file}: ${errorMessage(cause)}`,
        path: file,
        cause
      })
    }
    const stat = await fs.stat(file)
    return { ...next, stamp: stampOf(stat) }
  }

  /** Adds chunks (replacing those with the same id) to a search index and its chunk map; how many came. */
  const addChunks = async (
    search: MiniSearch<Chunk>,
    map: Map<string, Chunk>,
    chunks: Parameters<RetrievalIndex["add"]>[0],
    signal: AbortSignal | undefined
  ): Promise<number> => {
    let count = 0
    for await (const batch of batches(chunks, 1000)) {
      throwIfAborted(signal)
      for (const chunk of batch) {
        if (search.has(chunk.id)) search.discard(chunk.id)
        map.set(chunk.id, chunk)
      }
      search.addAll(dedupe(batch))
      count += batch.length
    }
    return count
  }

  const add: RetrievalIndex["add"] = async (chunks, callOptions) => {
    const started = performance.now()
    const base = await current()
    // Work on a copy, so a failure part-way leaves the current state untouched.
    const copy = MiniSearch.loadJS<Chunk>(JSON.parse(JSON.stringify(base.search)), miniSearchOptions)
    const map = new Map(base.chunks)
    const added = await addChunks(copy, map, chunks, callOptions?.signal)
    state = await persist({ search: copy, chunks: map, fingerprint: undefined })
    return { chunks: added, ms: performance.now() - started }
  }

  const rebuild: RetrievalIndex["rebuild"] = async (chunks, callOptions) => {
    const started = performance.now()
    const search = new MiniSearch<Chunk>(miniSearchOptions)
    const map = new Map<string, Chunk>()
    await addChunks(search, map, chunks, callOptions?.signal)
    state = await persist({ search, chunks: map, fingerprint: callOptions?.fingerprint })
    loaded = true
    return { chunks: map.size, ms: performance.now() - started }
  }

  const query: RetrievalIndex["query"] = async (text, topK, minScore, callOptions) => {
    checkQueryArgs(topK, minScore)
    throwIfAborted(callOptions?.signal)
    const { chunks, search } = await current()
    if (chunks.size === 0 || text.trim() === "") return []
    const hits: Array<SearchHit> = []
    for (const result of search.search(text)) {
      if (hits.length >= topK) break
      if (result.score < minScore) continue
      const chunk = chunks.get(String(result.id))
      if (chunk !== undefined) hits.push({ chunk, score: result.score })
    }
    return hits
  }

  return {
    backend: "simple",
    name,
    add,
    rebuild,
    query,
    count: async () => (await current()).chunks.size,
    fingerprint: async () => (await current()).fingerprint,
    clear: async () => {
      if (file !== undefined) {
        await fs.rm(file, { force: true }).catch((cause: unknown) => {
          throw new RagError({ reason: "BackendFailed", message: `cannot remove ${file}: ${errorMessage(cause)}`, path: file, cause })
        })
      }
      state = emptyState()
    },
    close: async () => {}
  }
}

/**
 * An index that lives in memory only.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { SimpleIndex } from "lambdagent/rag"
 * const index = SimpleIndex.memory("scratch")
 * console.log(await index.count()) // 0
 * ```
 */
export const memory = (name = "default"): RetrievalIndex => make({ name })

const dedupe = (batch: ReadonlyArray<Chunk>): Array<Chunk> => {
  const byId = new Map<string, Chunk>()
  for (const chunk of batch) byId.set(chunk.id, chunk)
  return [...byId.values()]
}

function* chunkBatches<A>(items: ReadonlyArray<A>, size: number): Generator<ReadonlyArray<A>> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size)
}

const load = async (file: string, stamp: string): Promise<State> => {
  const corrupt = (detail: string, cause?: unknown): RagError =>
    new RagError({ reason: "IndexCorrupt", message: `index ${file} is unreadable: ${detail}`, path: file, cause })
  let raw: string
  try {
    raw = await fs.readFile(file, "utf8")
  } catch (cause) {
    throw corrupt(errorMessage(cause), cause)
  }
  let parsed: {
    readonly format?: unknown
    readonly version?: unknown
    readonly fingerprint?: unknown
    readonly chunks?: unknown
    readonly index?: unknown
  }
  try {
    parsed = JSON.parse(raw)
  } catch (cause) {
    throw corrupt(`not JSON (${errorMessage(cause)})`, cause)
  }
  if (parsed.format !== fileFormat) throw corrupt(`not a ${fileFormat} file`)
  if (parsed.version !== fileVersion) throw corrupt(`unsupported version ${String(parsed.version)} (expected ${fileVersion})`)
  if (!Array.isArray(parsed.chunks) || typeof parsed.index !== "object" || parsed.index === null) {
    throw corrupt("missing chunks or index")
  }
  let search: MiniSearch<Chunk>
  try {
    search = MiniSearch.loadJS<Chunk>(parsed.index as Parameters<typeof MiniSearch.loadJS>[0], miniSearchOptions)
  } catch (cause) {
    throw corrupt(errorMessage(cause), cause)
  }
  const chunks = new Map<string, Chunk>()
  for (const chunk of parsed.chunks as Array<Chunk>) chunks.set(chunk.id, chunk)
  return {
    search,
    chunks,
    fingerprint: typeof parsed.fingerprint === "string" ? parsed.fingerprint : undefined,
    stamp
  }
}
