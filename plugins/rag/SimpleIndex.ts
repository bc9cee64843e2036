/**
 * The `simple` backend: an embedded BM25 index (MiniSearch) and, when it is given an embedder,
 * one vector per chunk beside it; kept in memory and persisted as one JSON file per index, with
 * no server and no API key. A query ranks by BM25, by vector similarity, or by both fused (see
 * `fusion.ts`); with an embedder the default is `hybrid`.
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
import type { Stats } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { CheckpointStore } from "lambdagent"
import MiniSearch, { type Options as MiniSearchOptions } from "minisearch"
import type { Chunk } from "./chunk.ts"
import type { Embeddings } from "./Embeddings.ts"
import { checkFusion, type FusionCandidate, type FusionOptions, fuseScores, type RetrievalMode, retrievalModes, vectorShare } from "./fusion.ts"
import { errorMessage, RagError, throwIfAborted } from "./RagError.ts"
import { batches, checkQueryArgs, type RetrievalIndex, type SearchHit } from "./RetrievalIndex.ts"
import { processTerm, tokenize } from "./terms.ts"
import { embeddingText, embedUnit, encodeVector, makeMatrix, nearest, topRows, type VectorMatrix } from "./VectorStore.ts"

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
/**
 * Version 2 added the optional `vectors` record; version 3 marks files whose vectors may come from
 * the word-vector embedder (`use-lite-words-128`), which lambdagent versions reading only 1 and 2
 * must not mistake for theirs. Files of versions 1 and 2 still load: their BM25 index answers, and
 * their vectors (of another embedder) make `vector` and `hybrid` ask for a rebuild.
 */
const fileVersion = 3

interface State {
  readonly search: MiniSearch<Chunk>
  readonly chunks: Map<string, Chunk>
  /** One unit vector per chunk id, when the index was built with an embedder. */
  readonly vectors: VectorMatrix
  /** The `id` of that embedder. */
  readonly model: string | undefined
  readonly fingerprint: string | undefined
  /** Identity of the file this state was read from, to notice replacements by other processes. */
  readonly stamp: string | undefined
}

const emptyState = (): State => ({
  search: new MiniSearch<Chunk>(miniSearchOptions),
  chunks: new Map(),
  vectors: makeMatrix(),
  model: undefined,
  fingerprint: undefined,
  stamp: undefined
})

const stampOf = (stat: { readonly ino: number; readonly size: number; readonly mtimeMs: number }): string => `${stat.ino}:${stat.size}:${stat.mtimeMs}`

/**
 * Options of the `simple` backend.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { SimpleIndex } from "lambdagent/rag"
 * const o: SimpleIndex.SimpleIndexOptions = { persistDirectory: ".rag", name: "docs" }
 * ```
 */
export interface SimpleIndexOptions {
  /** Directory holding `<name>.json`; absent: the index lives in memory only. */
  readonly persistDirectory?: string
  /** Index name, `[A-Za-z0-9._-]`; default `"default"`. */
  readonly name?: string
  /** Embeds chunks and queries for `vector` and `hybrid`; absent: BM25 only. */
  readonly embeddings?: Embeddings
  /** Default `hybrid` with `embeddings`, else `bm25`. */
  readonly mode?: RetrievalMode
  /** How `hybrid` fuses its two rankings. */
  readonly fusion?: FusionOptions
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
  const embeddings = options?.embeddings
  const defaultMode = options?.mode ?? (embeddings === undefined ? "bm25" : "hybrid")
  checkMode(defaultMode, embeddings)
  const fusion = checkFusion(options?.fusion)
  const dir = options?.persistDirectory
  const file = dir === undefined ? undefined : filePath(dir, name)
  let state: State = emptyState()
  let loaded = dir === undefined

  /** Read the persisted file when it is new or was replaced since it was read. */
  const current = async (): Promise<State> => {
    if (file === undefined) return state
    let stat: Stats
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
    try {
      CheckpointStore.makeDirectory(dir)
    } catch (cause) {
      throw new RagError({
        reason: "InvalidConfig",
        message: `cannot create persistDirectory ${dir}: ${errorMessage(cause)}`,
        path: dir,
        cause
      })
    }
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
        await handle.write(`],"index":${JSON.stringify(next.search)}`)
        if (next.model !== undefined) {
          await handle.write(`,"vectors":{"model":${JSON.stringify(next.model)},"data":{`)
          let firstVector = true
          const { ids } = next.vectors
          for (const batch of chunkBatches(
            ids.map((_, row) => row),
            1000
          )) {
            const body = batch.map((row) => `${JSON.stringify(ids[row])}:"${encodeVector(next.vectors.row(row))}"`).join(",")
            await handle.write(firstVector ? body : `,${body}`)
            firstVector = false
          }
          await handle.write("}}")
        }
        await handle.write("}")
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

  /** Adds chunks (replacing those with the same id) to a search index, its chunk map and its vectors; how many came. */
  const addChunks = async (
    search: MiniSearch<Chunk>,
    map: Map<string, Chunk>,
    vectors: VectorMatrix,
    chunks: Parameters<RetrievalIndex["add"]>[0],
    signal: AbortSignal | undefined
  ): Promise<number> => {
    let count = 0
    for await (const batch of batches(chunks, 1000)) {
      throwIfAborted(signal)
      const unique = dedupe(batch)
      if (embeddings !== undefined) {
        const embedded = await embedUnit(embeddings, unique.map(embeddingText), signal === undefined ? {} : { signal })
        unique.forEach((chunk, i) => vectors.set(chunk.id, embedded[i]!))
      }
      for (const chunk of unique) {
        if (search.has(chunk.id)) search.discard(chunk.id)
        map.set(chunk.id, chunk)
      }
      search.addAll(unique)
      count += batch.length
    }
    return count
  }

  /** The model the current state's vectors came from must be this index's embedder. */
  const checkModel = (base: State): void => {
    if (base.chunks.size > 0 && base.model !== embeddings?.id) {
      throw new RagError({
        reason: "InvalidConfig",
        message: `simple index "${name}" was built ${base.model === undefined ? "without embeddings" : `with embeddings ${base.model}`} but is used ${embeddings === undefined ? "without embeddings" : `with ${embeddings.id}`}: rebuild it (lambdagent rag index) or use the same embeddings`
      })
    }
  }

  const add: RetrievalIndex["add"] = async (chunks, callOptions) => {
    const started = performance.now()
    const base = await current()
    // Work on a copy, so a failure part-way leaves the current state untouched.
    checkModel(base)
    const copy = MiniSearch.loadJS<Chunk>(JSON.parse(JSON.stringify(base.search)), miniSearchOptions)
    const map = new Map(base.chunks)
    const vectors = base.vectors.copy()
    const added = await addChunks(copy, map, vectors, chunks, callOptions?.signal)
    state = await persist({ search: copy, chunks: map, vectors, model: embeddings?.id, fingerprint: undefined })
    return { chunks: added, ms: performance.now() - started }
  }

  const rebuild: RetrievalIndex["rebuild"] = async (chunks, callOptions) => {
    const started = performance.now()
    const search = new MiniSearch<Chunk>(miniSearchOptions)
    const map = new Map<string, Chunk>()
    const vectors = makeMatrix()
    await addChunks(search, map, vectors, chunks, callOptions?.signal)
    state = await persist({ search, chunks: map, vectors, model: embeddings?.id, fingerprint: callOptions?.fingerprint })
    loaded = true
    return { chunks: map.size, ms: performance.now() - started }
  }

  const bm25Ranking = (base: State, text: string, limit: number, minScore = Number.NEGATIVE_INFINITY): Array<SearchHit> => {
    const hits: Array<SearchHit> = []
    for (const result of base.search.search(text)) {
      if (hits.length >= limit) break
      if (result.score < minScore) continue
      const chunk = base.chunks.get(String(result.id))
      if (chunk !== undefined) hits.push({ chunk, score: result.score })
    }
    return hits
  }

  const embedQuery = async (text: string, signal: AbortSignal | undefined): Promise<Float32Array> =>
    (await embedUnit(embeddings!, [text], signal === undefined ? {} : { signal }))[0]!

  const vectorRanking = (base: State, query: Float32Array, limit: number): Array<SearchHit> => {
    const hits: Array<SearchHit> = []
    for (const { id, score } of nearest(base.vectors, query, limit)) {
      const chunk = base.chunks.get(id)
      if (chunk !== undefined) hits.push({ chunk, score })
    }
    return hits
  }

  /**
   * Every BM25 match and the `depth` nearest chunks by vector, scored on the scales of the fusion
   * (fusion.ts). A chunk outside both matches no word (BM25 0) and is no nearer than the
   * `depth`-th vector, so the fused `topK` (at most `depth`) are exact.
   */
  const hybridRanking = (base: State, text: string, query: Float32Array, depth: number, topK: number): Array<SearchHit> => {
    const words = questionWords(text)
    // One search per distinct word gives each chunk's plain sum of word scores (a search of the
    // whole question would also multiply it by the number of words matched) and each word's
    // best score, whose sum is the best the question can reach.
    const plain = new Map<string, number>()
    let attainable = 0
    for (const word of words) {
      const results = base.search.search(word)
      attainable += results[0]?.score ?? 0
      for (const result of results) {
        const id = String(result.id)
        plain.set(id, (plain.get(id) ?? 0) + result.score)
      }
    }
    const { vectors } = base
    const similarity = vectors.similarities(query)
    const nearestRows = topRows(similarity, vectors.size, depth)
    const best = nearestRows.length > 0 ? similarity[nearestRows[0]!]! : 0
    const vectorScale = (row: number | undefined): number => (row === undefined || !(best > 0) ? 0 : similarity[row]! / best)
    function* candidates(): Generator<FusionCandidate> {
      for (const [id, score] of plain) {
        const chunk = base.chunks.get(id)
        if (chunk !== undefined) yield { chunk, bm25: attainable > 0 ? Math.min(1, score / attainable) : 0, vector: vectorScale(vectors.rowOf(id)) }
      }
      for (const row of nearestRows) {
        const id = vectors.ids[row]!
        const chunk = base.chunks.get(id)
        if (chunk !== undefined && !plain.has(id)) yield { chunk, bm25: 0, vector: vectorScale(row) }
      }
    }
    const known = embeddings?.knows === undefined || words.length === 0 ? 1 : words.filter((w) => embeddings.knows!(w)).length / words.length
    return fuseScores(candidates(), vectorShare(fusion.vectorWeight, known), topK)
  }

  const query: RetrievalIndex["query"] = async (text, topK, minScore, callOptions) => {
    checkQueryArgs(topK, minScore)
    const mode = callOptions?.mode ?? defaultMode
    checkMode(mode, embeddings)
    throwIfAborted(callOptions?.signal)
    const base = await current()
    if (base.chunks.size === 0 || text.trim() === "") return []
    if (mode !== "bm25") checkModel(base)
    const depth = Math.max(fusion.depth, topK)
    const ranked =
      mode === "bm25"
        ? bm25Ranking(base, text, topK, minScore)
        : mode === "vector"
          ? vectorRanking(base, await embedQuery(text, callOptions?.signal), depth)
          : hybridRanking(base, text, await embedQuery(text, callOptions?.signal), depth, topK)
    return ranked.filter((h) => h.score >= minScore).slice(0, topK)
  }

  return {
    backend: "simple",
    name,
    mode: defaultMode,
    add,
    rebuild,
    query,
    count: async () => (await current()).chunks.size,
    // An index built with other embeddings has no usable fingerprint, so callers rebuild it.
    fingerprint: async () => {
      const base = await current()
      return base.model === embeddings?.id ? base.fingerprint : undefined
    },
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

const checkMode = (mode: RetrievalMode, embeddings: Embeddings | undefined): void => {
  if (!retrievalModes.includes(mode)) {
    throw new RagError({ reason: "InvalidConfig", message: `unknown retrieval mode ${JSON.stringify(mode)}: use ${retrievalModes.join(", ")}` })
  }
  if (mode !== "bm25" && embeddings === undefined) {
    throw new RagError({ reason: "InvalidConfig", message: `retrieval mode ${mode} needs embeddings; without them use bm25` })
  }
}

/** The question's distinct search words, as written (one per search term). */
const questionWords = (text: string): Array<string> => {
  const byTerm = new Map<string, string>()
  for (const token of tokenize(text)) {
    const term = processTerm(token)
    if (term !== null && !byTerm.has(term)) byTerm.set(term, token)
  }
  return [...byTerm.values()]
}

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
    readonly vectors?: { readonly model?: unknown; readonly data?: unknown }
  }
  try {
    parsed = JSON.parse(raw)
  } catch (cause) {
    throw corrupt(`not JSON (${errorMessage(cause)})`, cause)
  }
  if (parsed.format !== fileFormat) throw corrupt(`not a ${fileFormat} file`)
  if (parsed.version !== 1 && parsed.version !== 2 && parsed.version !== fileVersion)
    throw corrupt(`unsupported version ${String(parsed.version)} (expected ${fileVersion})`)
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
  const vectors = makeMatrix()
  let model: string | undefined
  if (parsed.vectors !== undefined) {
    const data = parsed.vectors.data
    if (typeof parsed.vectors.model !== "string" || typeof data !== "object" || data === null) throw corrupt("malformed vectors")
    model = parsed.vectors.model
    for (const [id, text] of Object.entries(data as Record<string, unknown>)) {
      if (typeof text !== "string" || !vectors.setBytes(id, Buffer.from(text, "base64"))) {
        throw corrupt(`malformed vector for chunk ${JSON.stringify(id)}`)
      }
    }
  }
  return {
    search,
    chunks,
    vectors,
    model,
    fingerprint: typeof parsed.fingerprint === "string" ? parsed.fingerprint : undefined,
    stamp
  }
}
