/**
 * Retrieval modes and the fusion of BM25 with vector similarity.
 *
 * Hybrid retrieval scores a chunk by a convex combination of its two scores, each first put on
 * a 0-to-1 scale that means the same for every question:
 *
 * - BM25, as the plain sum of its per-word scores, divided by the best score the question can
 *   reach: the sum, over the question's words, of the best score any chunk gets for that word
 *   alone. 1 is a chunk that matches every word of the question as well as any chunk does; the
 *   best of a few weak matches stays low, unlike a ranking (where it is first) or a score divided
 *   by the best hit's (where it is 1).
 * - The cosine similarity, divided by the best one of the question, so the nearest chunk is 1.
 *
 * The weight of the vector part is `vectorWeight` times the share of the question's search words
 * the embedder has a vector for: a word-vector embedder knows nothing of a name or jargon
 * ("caldera", "oolong"), its vector of such a question stands for the remaining words only, and
 * BM25, which matches the word exactly, gets the weight the vector cannot carry. Embedders that
 * read any text (sentence models, remote APIs) count as knowing every word.
 *
 * @since 0.2.0
 * @module
 */
import type { Chunk } from "./chunk.ts"
import { RagError } from "./RagError.ts"
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
 * const f: FusionOptions = { vectorWeight: 0.7, depth: 50 }
 * ```
 */
export interface FusionOptions {
  /**
   * The vector similarity's share of the fused score, from 0 (BM25 only) to 1 (vectors only), for
   * a question whose words the embedder all knows; scaled down by the share it knows. Default 0.7.
   */
  readonly vectorWeight?: number
  /** How many of the nearest chunks by vector join every BM25 match as candidates; default 50 (at least `topK`). */
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
 * console.log(defaultFusion.vectorWeight) // 0.7
 * ```
 */
export const defaultFusion = { vectorWeight: 0.7, depth: 50 } as const

/**
 * Check fusion settings: `vectorWeight` from 0 to 1, `depth` a positive integer; fails with
 * `InvalidConfig` naming each problem. Returns the settings with the defaults filled in.
 *
 * @since 0.2.0
 * @category fusion
 * @example
 * ```ts
 * import { checkFusion } from "lambdagent/rag"
 * console.log(checkFusion({ vectorWeight: 0.5 })) // { vectorWeight: 0.5, depth: 50 }
 * ```
 */
export const checkFusion = (options: FusionOptions | undefined): Required<FusionOptions> => {
  const fusion = { ...defaultFusion, ...options }
  const problems: Array<string> = []
  if (!(fusion.vectorWeight >= 0 && fusion.vectorWeight <= 1)) problems.push(`fusion.vectorWeight must be from 0 to 1, got ${fusion.vectorWeight}`)
  if (!(Number.isInteger(fusion.depth) && fusion.depth > 0)) problems.push(`fusion.depth must be a positive integer, got ${fusion.depth}`)
  if (problems.length > 0) throw new RagError({ reason: "InvalidConfig", message: problems.join("; ") })
  return fusion
}

/**
 * A chunk with its two scores on the scales of the fusion (see the module documentation).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { FusionCandidate } from "lambdagent/rag"
 * const c: FusionCandidate = { chunk: { id: "a#0", text: "a", metadata: { source: "a", format: "text", index: 0, start: 0, end: 1 } }, bm25: 0.4, vector: 1 }
 * ```
 */
export interface FusionCandidate {
  readonly chunk: Chunk
  /** BM25 divided by the best score the question can reach: 0 to 1. */
  readonly bm25: number
  /** Cosine similarity divided by the question's best: at most 1. */
  readonly vector: number
}

/**
 * The weight of the vector part for a question: `vectorWeight` times the share (0 to 1) of its
 * search words the embedder knows.
 *
 * @since 0.2.0
 * @category fusion
 * @example
 * ```ts
 * import { vectorShare } from "lambdagent/rag"
 * console.log(vectorShare(0.7, 0.5)) // 0.35
 * ```
 */
export const vectorShare = (vectorWeight: number, knownShare: number): number => vectorWeight * Math.min(1, Math.max(0, knownShare))

/**
 * The `limit` best candidates by `weight × vector + (1 − weight) × bm25`, best first; among
 * equal scores the earlier candidate comes first. A partial selection: one pass, keeping the
 * best `limit` seen so far, so fusing every BM25 match of a large index costs no full sort.
 *
 * @since 0.2.0
 * @category fusion
 * @example
 * ```ts
 * import { fuseScores } from "lambdagent/rag"
 * const c = (id: string) => ({ id, text: id, metadata: { source: id, format: "text" as const, index: 0, start: 0, end: 1 } })
 * const fused = fuseScores([{ chunk: c("words"), bm25: 1, vector: 0.5 }, { chunk: c("meaning"), bm25: 0, vector: 1 }], 0.7, 10)
 * console.log(fused.map((h) => h.chunk.id)) // ["meaning", "words"]
 * ```
 */
export const fuseScores = (candidates: Iterable<FusionCandidate>, weight: number, limit: number): Array<SearchHit> => {
  const best: Array<SearchHit> = []
  if (limit <= 0) return best
  for (const c of candidates) {
    const score = weight * c.vector + (1 - weight) * c.bm25
    if (best.length === limit && !(score > best[limit - 1]!.score)) continue
    let at = best.length === limit ? limit - 1 : best.length
    while (at > 0 && best[at - 1]!.score < score) {
      best[at] = best[at - 1]!
      at--
    }
    best[at] = { chunk: c.chunk, score }
  }
  return best
}
