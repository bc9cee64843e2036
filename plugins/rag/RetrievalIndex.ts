/**
 * The contract every retrieval backend implements: add chunks, query, count, clear, and rebuild
 * atomically.
 *
 * @since 0.1.0
 * @module
 */
import type { Chunk } from "./chunk.ts"
import type { RetrievalMode } from "./fusion.ts"
import { RagError } from "./RagError.ts"

/**
 * One retrieved chunk and its relevance score (higher is better). The scale depends on the
 * mode: `bm25` reports BM25 scores (0 and up, unbounded), `vector` cosine similarity (from -1 to
 * 1; for `chroma`, `1 - cosine distance`), `hybrid` the fused score (at most 1: a chunk that
 * matches every word of the question best and is also its nearest by vector; see `fusion.ts`).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { SearchHit } from "lambdagent/rag"
 * const hit: SearchHit = { score: 4.2, chunk: { id: "a.md#0", text: "…", metadata: { source: "a.md", format: "markdown", index: 0, start: 0, end: 1 } } }
 * ```
 */
export interface SearchHit {
  readonly chunk: Chunk
  readonly score: number
}

/**
 * Per-call options.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { CallOptions } from "lambdagent/rag"
 * const o: CallOptions = { signal: AbortSignal.timeout(5_000) }
 * ```
 */
export interface CallOptions {
  readonly signal?: AbortSignal
}

/**
 * Options of one query.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { QueryOptions } from "lambdagent/rag"
 * const o: QueryOptions = { mode: "bm25" }
 * ```
 */
export interface QueryOptions extends CallOptions {
  /** Overrides the index's mode for this query (`simple` answers all three; `chroma` only `vector`). */
  readonly mode?: RetrievalMode
}

/**
 * What a finished (re)build reports.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { BuildReport } from "lambdagent/rag"
 * const r: BuildReport = { chunks: 120, ms: 35 }
 * ```
 */
export interface BuildReport {
  readonly chunks: number
  readonly ms: number
}

/**
 * A searchable store of chunks.
 *
 * `rebuild` is atomic: it builds a complete new index aside (a temporary file, a temporary
 * collection) and switches to it only when it is complete. While it runs, and if it fails
 * (including when `chunks` throws part-way), queries keep answering from the previous index and
 * nothing partial is left behind.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { SimpleIndex, type RetrievalIndex } from "lambdagent/rag"
 * const index: RetrievalIndex = SimpleIndex.memory()
 * await index.add([{ id: "t#0", text: "Green tea is not fermented.", metadata: { source: "t", format: "text", index: 0, start: 0, end: 27 } }])
 * const hits = await index.query("fermented tea", 3, 0)
 * ```
 */
export interface RetrievalIndex {
  /** `simple` or `chroma`. */
  readonly backend: string
  /** The index name (a file name or a collection name). */
  readonly name: string
  /** How `query` ranks by default: `bm25`, `vector` or `hybrid`. */
  readonly mode?: RetrievalMode
  /** Add chunks to the current index; a chunk whose id is already present replaces it. */
  readonly add: (chunks: Iterable<Chunk> | AsyncIterable<Chunk>, options?: CallOptions) => Promise<BuildReport>
  /** Replace the whole index with these chunks, atomically. */
  readonly rebuild: (chunks: Iterable<Chunk> | AsyncIterable<Chunk>, options?: CallOptions & { readonly fingerprint?: string }) => Promise<BuildReport>
  /** The best `topK` chunks for `text` with a score of at least `minScore`, best first. An empty index answers `[]`. */
  readonly query: (text: string, topK: number, minScore: number, options?: QueryOptions) => Promise<Array<SearchHit>>
  /** Number of chunks in the current index (0 when it was never built). */
  readonly count: (options?: CallOptions) => Promise<number>
  /** Remove the index and everything persisted for it. */
  readonly clear: (options?: CallOptions) => Promise<void>
  /** The fingerprint recorded by the last `rebuild` (the source scan's fingerprint), if any. */
  readonly fingerprint: (options?: CallOptions) => Promise<string | undefined>
  /** Release connections and child processes; the index must not be used afterwards. */
  readonly close: () => Promise<void>
}

/**
 * Check `topK` (a positive integer) and `minScore` (finite); throws `InvalidConfig`. Not part of the public entry point.
 *
 * @since 0.1.0
 * @category internal
 * @example
 * ```ts
 * import { checkQueryArgs } from "./RetrievalIndex.ts"
 * checkQueryArgs(3, 0) // ok; checkQueryArgs(0, 0) throws
 * ```
 */
export const checkQueryArgs = (topK: number, minScore: number): void => {
  if (!Number.isInteger(topK) || topK < 1) {
    throw new RagError({ reason: "InvalidConfig", message: `topK must be a positive integer, got ${topK}` })
  }
  if (!Number.isFinite(minScore)) {
    throw new RagError({ reason: "InvalidConfig", message: `minScore must be a finite number, got ${minScore}` })
  }
}

/**
 * Iterate a sync or async iterable in arrays of at most `size` items. Not part of the public entry point.
 *
 * @since 0.1.0
 * @category internal
 * @example
 * ```ts
 * import { batches } from "./RetrievalIndex.ts"
 * for await (const b of batches([1, 2, 3], 2)) console.log(b) // [1, 2] then [3]
 * ```
 */
export async function* batches<A>(items: Iterable<A> | AsyncIterable<A>, size: number): AsyncGenerator<Array<A>> {
  let batch: Array<A> = []
  for await (const item of items as AsyncIterable<A>) {
    batch.push(item)
    if (batch.length >= size) {
      yield batch
      batch = []
    }
  }
  if (batch.length > 0) yield batch
}
