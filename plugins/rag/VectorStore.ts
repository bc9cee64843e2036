/**
 * Chunk vectors kept beside the BM25 index of the `simple` backend: what text of a chunk is
 * embedded, exact nearest-neighbour search by cosine similarity, and the compact encoding used in
 * the index file.
 *
 * @since 0.2.0
 * @module
 */
import type { Chunk } from "./chunk.ts"
import type { Embeddings } from "./Embeddings.ts"
import { RagError } from "./RagError.ts"

/**
 * The text embedded for a chunk: its section path, then its text.
 *
 * @since 0.2.0
 * @category vectors
 * @example
 * ```ts
 * import { VectorStore } from "lambdagent/rag"
 * VectorStore.embeddingText({ id: "a#0", text: "Steep 3 minutes.", metadata: { source: "a.md", format: "markdown", index: 0, start: 0, end: 16, section: ["Tea", "Black"] } })
 * // "Tea > Black\nSteep 3 minutes."
 * ```
 */
export const embeddingText = (chunk: Chunk): string =>
  chunk.metadata.section !== undefined && chunk.metadata.section.length > 0
    ? `${chunk.metadata.section.join(" > ")}\n${chunk.text}`
    : chunk.text

/**
 * One vector per text, unit length, checked to be finite and of one length.
 *
 * @since 0.2.0
 * @category vectors
 * @example
 * ```ts
 * import { Embeddings, VectorStore } from "lambdagent/rag"
 * const [v] = await VectorStore.embedUnit(Embeddings.hashing({ dimensions: 8 }), ["green tea"])
 * console.log(v?.length) // 8
 * ```
 */
export const embedUnit = async (
  embeddings: Embeddings,
  texts: ReadonlyArray<string>,
  options?: { readonly signal?: AbortSignal }
): Promise<Array<Float32Array>> => {
  const raw = await embeddings.embed(texts, options ?? {})
  if (raw.length !== texts.length) {
    throw new RagError({ reason: "EmbeddingFailed", message: `embeddings ${embeddings.id} returned ${raw.length} vectors for ${texts.length} texts` })
  }
  return raw.map((vector) => {
    const out = Float32Array.from(vector)
    let sum = 0
    for (const x of out) sum += x * x
    if (!Number.isFinite(sum) || (raw[0] !== undefined && vector.length !== raw[0].length)) {
      throw new RagError({ reason: "EmbeddingFailed", message: `embeddings ${embeddings.id} returned a malformed vector` })
    }
    const norm = Math.sqrt(sum)
    if (norm > 0) for (let i = 0; i < out.length; i++) out[i]! /= norm
    return out
  })
}

/**
 * The `topK` ids whose vectors are most similar to `query` (cosine similarity, vectors of unit
 * length), best first. Exact search: every vector is compared.
 *
 * @since 0.2.0
 * @category vectors
 * @example
 * ```ts
 * import { VectorStore } from "lambdagent/rag"
 * const vectors = new Map([["a", new Float32Array([1, 0])], ["b", new Float32Array([0, 1])]])
 * console.log(VectorStore.nearest(vectors, new Float32Array([0.8, 0.6]), 1)) // [{ id: "a", score: 0.8 }]
 * ```
 */
export const nearest = (
  vectors: ReadonlyMap<string, Float32Array>,
  query: Float32Array,
  topK: number
): Array<{ readonly id: string; readonly score: number }> => {
  // A sorted array of at most topK entries, worst last: cheap for the small topK retrieval uses.
  const best: Array<{ id: string; score: number }> = []
  const n = query.length
  for (const [id, vector] of vectors) {
    if (vector.length !== n) continue
    let score = 0
    for (let i = 0; i < n; i++) score += vector[i]! * query[i]!
    if (best.length === topK && score <= best[topK - 1]!.score) continue
    let at = best.length === topK ? topK - 1 : best.length
    while (at > 0 && best[at - 1]!.score < score) {
      best[at] = best[at - 1]!
      at--
    }
    best[at] = { id, score }
  }
  return best
}

/**
 * A vector as base64 of its float32 bytes (little-endian), for the index file.
 *
 * @since 0.2.0
 * @category encoding
 * @example
 * ```ts
 * import { VectorStore } from "lambdagent/rag"
 * const text = VectorStore.encodeVector(new Float32Array([1, 0.5]))
 * console.log(VectorStore.decodeVector(text)) // Float32Array [1, 0.5]
 * ```
 */
export const encodeVector = (vector: Float32Array): string =>
  Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("base64")

/**
 * The inverse of {@link encodeVector}; `undefined` for text that is not such a vector.
 *
 * @since 0.2.0
 * @category encoding
 * @example
 * ```ts
 * import { VectorStore } from "lambdagent/rag"
 * console.log(VectorStore.decodeVector("AACAPwAAAD8=")) // Float32Array [1, 0.5]
 * ```
 */
export const decodeVector = (text: string): Float32Array | undefined => {
  const bytes = Buffer.from(text, "base64")
  if (bytes.length === 0 || bytes.length % 4 !== 0) return undefined
  const copy = new Uint8Array(bytes)
  return new Float32Array(copy.buffer)
}
