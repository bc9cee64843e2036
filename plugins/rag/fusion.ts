/**
 * Retrieval modes and the fusion of a BM25 ranking with a vector ranking.
 *
 * Hybrid retrieval uses weighted reciprocal-rank fusion: a chunk at (1-based) rank `r` in a
 * ranking earns `weight / (k + r)`, and its earnings from both rankings are added. Ranks, not raw
 * scores, are fused, because BM25 scores are unbounded and cosine similarities are not. The
 * defaults (`k` 5, vector weight 1.25, BM25 weight 1) were tuned on the labelled set in
 * `examples/rag`: the vector ranking leads, and BM25 settles the near-duplicates that differ in a
 * word or a number.
 *
 * @since 0.2.0
 * @module
 */
import type { SearchHit } from "./RetrievalIndex.ts"

/**
 * `bm25` (words only), `vector` (embeddings only) or `hybrid` (both, fused).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { RetrievalMode } from "lambdagent/rag"
 * const mode: RetrievalMode = "hybrid"
 * ```
 */
export type RetrievalMode = "bm25" | "vector" | "hybrid"

/**
 * Every mode, in the order reports list them.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { retrievalModes } from "lambdagent/rag"
 * console.log(retrievalModes) // ["bm25", "vector", "hybrid"]
 * ```
 */
export const retrievalModes: ReadonlyArray<RetrievalMode> = ["bm25", "vector", "hybrid"]

/**
 * Settings of the fusion.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { FusionOptions } from "lambdagent/rag"
 * const f: FusionOptions = { k: 5, vectorWeight: 1.25, bm25Weight: 1, depth: 50 }
 * ```
 */
export interface FusionOptions {
  /** Rank offset; a larger `k` flattens the difference between top and lower ranks. Default 5. */
  readonly k?: number
  /** Default 1.25. */
  readonly vectorWeight?: number
  /** Default 1. */
  readonly bm25Weight?: number
  /** How many candidates each ranking contributes; default 50 (at least `topK`). */
  readonly depth?: number
}

/**
 * The defaults of {@link FusionOptions}.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { defaultFusion } from "lambdagent/rag"
 * console.log(defaultFusion.k) // 5
 * ```
 */
export const defaultFusion = { k: 5, vectorWeight: 1.25, bm25Weight: 1, depth: 50 } as const

/**
 * Fuse rankings (best first) by weighted reciprocal rank; the result's scores are the fused
 * scores, best first. A chunk in several rankings appears once.
 *
 * @since 0.2.0
 * @category fusion
 * @example
 * ```ts
 * import { fuseRankings } from "lambdagent/rag"
 * const c = (id: string) => ({ id, text: id, metadata: { source: id, format: "text" as const, index: 0, start: 0, end: 1 } })
 * const fused = fuseRankings([{ hits: [{ chunk: c("a"), score: 9 }], weight: 1 }, { hits: [{ chunk: c("b"), score: 0.9 }, { chunk: c("a"), score: 0.8 }], weight: 2 }], 10)
 * console.log(fused.map((h) => h.chunk.id)) // ["a", "b"]
 * ```
 */
export const fuseRankings = (
  rankings: ReadonlyArray<{ readonly hits: ReadonlyArray<SearchHit>; readonly weight: number }>,
  k: number = defaultFusion.k
): Array<SearchHit> => {
  const fused = new Map<string, { chunk: SearchHit["chunk"]; score: number }>()
  for (const { hits, weight } of rankings) {
    hits.forEach((hit, i) => {
      const entry = fused.get(hit.chunk.id) ?? { chunk: hit.chunk, score: 0 }
      entry.score += weight / (k + i + 1)
      fused.set(hit.chunk.id, entry)
    })
  }
  return [...fused.values()].sort((a, b) => b.score - a.score)
}
