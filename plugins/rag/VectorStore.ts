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
  chunk.metadata.section !== undefined && chunk.metadata.section.length > 0 ? `${chunk.metadata.section.join(" > ")}\n${chunk.text}` : chunk.text

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
 * Unit vectors of one length stored contiguously, one row per chunk id, in one growing
 * `Float32Array` (row-major), so a query reads them in a single sequential pass with no
 * per-vector objects.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { VectorStore } from "lambdagent/rag"
 * const m: VectorStore.VectorMatrix = VectorStore.makeMatrix()
 * m.set("a", new Float32Array([1, 0]))
 * console.log(m.size, m.dimensions, m.rowOf("a")) // 1 2 0
 * ```
 */
export interface VectorMatrix {
  /** Vector length; 0 until the first vector. */
  readonly dimensions: number
  /** How many vectors it holds. */
  readonly size: number
  /** The id of each row, in the order the ids were first added. */
  readonly ids: ReadonlyArray<string>
  /** The row of an id, `undefined` when absent. */
  readonly rowOf: (id: string) => number | undefined
  /** One row, as a view into the matrix (not a copy). */
  readonly row: (row: number) => Float32Array
  /** Adds a vector, or replaces the one with the same id in place; fails with `EmbeddingFailed` on a length other than {@link VectorMatrix.dimensions}. */
  readonly set: (id: string, vector: Float32Array) => void
  /** Adds a vector from its little-endian float32 bytes; `false` (nothing added) when they are not one vector of this matrix's length. */
  readonly setBytes: (id: string, bytes: Uint8Array) => boolean
  /** An independent copy. */
  readonly copy: () => VectorMatrix
  /**
   * The dot product of `query` with every row, indexed by row, in a buffer the matrix reuses:
   * read it before the next call. For unit vectors that is the cosine similarity.
   */
  readonly similarities: (query: Float32Array) => Float64Array
}

/**
 * An empty {@link VectorMatrix}; its length is fixed by the first vector added.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { VectorStore } from "lambdagent/rag"
 * const m = VectorStore.makeMatrix()
 * m.set("x", new Float32Array([0.6, 0.8]))
 * console.log([...m.similarities(new Float32Array([1, 0]))]) // [0.6000000238418579]
 * ```
 */
export const makeMatrix = (): VectorMatrix => matrixOf(0, [], new Float32Array(0))

const matrixOf = (initialDimensions: number, initialIds: Array<string>, initialData: Float32Array): VectorMatrix => {
  let dimensions = initialDimensions
  let data = initialData
  const ids = initialIds
  const rows = new Map<string, number>()
  ids.forEach((id, i) => rows.set(id, i))
  let scores = new Float64Array(0)

  /** The row for `id`, appended (growing the storage by doubling) when it is new. */
  const slot = (id: string): number => {
    const existing = rows.get(id)
    if (existing !== undefined) return existing
    const at = ids.length
    if ((at + 1) * dimensions > data.length) {
      const grown = new Float32Array(Math.max(1024, 2 * at) * dimensions)
      grown.set(data.subarray(0, at * dimensions))
      data = grown
    }
    ids.push(id)
    rows.set(id, at)
    return at
  }

  const set = (id: string, vector: Float32Array): void => {
    if (ids.length === 0) dimensions = vector.length
    if (vector.length !== dimensions || dimensions === 0) {
      throw new RagError({ reason: "EmbeddingFailed", message: `a vector of ${vector.length} dimensions cannot join vectors of ${dimensions}` })
    }
    const at = slot(id) // before reading `data`: a new row may grow it
    data.set(vector, at * dimensions)
  }

  const setBytes = (id: string, bytes: Uint8Array): boolean => {
    if (ids.length === 0 && bytes.length % 4 === 0) dimensions = bytes.length / 4
    if (dimensions === 0 || bytes.length !== dimensions * 4) return false
    const at = slot(id)
    new Uint8Array(data.buffer, data.byteOffset + at * dimensions * 4, dimensions * 4).set(bytes)
    return true
  }

  const similarities = (query: Float32Array): Float64Array => {
    const n = ids.length
    const d = dimensions
    if (scores.length < n) scores = new Float64Array(Math.max(n, 2 * scores.length))
    if (query.length !== d) {
      scores.fill(Number.NEGATIVE_INFINITY, 0, n)
      return scores
    }
    // One sequential pass over the matrix, four rows at a time (four independent sums, each
    // query value read once for the four). Each sum runs in the order of the dimensions, so a
    // score is the same number as a plain dot product of the two vectors.
    let r = 0
    for (; r + 4 <= n; r += 4) {
      const b0 = r * d
      const b1 = b0 + d
      const b2 = b1 + d
      const b3 = b2 + d
      let s0 = 0
      let s1 = 0
      let s2 = 0
      let s3 = 0
      for (let i = 0; i < d; i++) {
        const x = query[i]!
        s0 += data[b0 + i]! * x
        s1 += data[b1 + i]! * x
        s2 += data[b2 + i]! * x
        s3 += data[b3 + i]! * x
      }
      scores[r] = s0
      scores[r + 1] = s1
      scores[r + 2] = s2
      scores[r + 3] = s3
    }
    for (; r < n; r++) {
      const base = r * d
      let score = 0
      for (let i = 0; i < d; i++) score += data[base + i]! * query[i]!
      scores[r] = score
    }
    return scores
  }

  return {
    get dimensions() {
      return dimensions
    },
    get size() {
      return ids.length
    },
    ids,
    rowOf: (id) => rows.get(id),
    row: (r) => data.subarray(r * dimensions, (r + 1) * dimensions),
    set,
    setBytes,
    copy: () => matrixOf(dimensions, [...ids], data.slice(0, Math.max(ids.length * dimensions, 0))),
    similarities
  }
}

/**
 * The `topK` rows of `scores` (the first `count` entries) with the highest scores, best first;
 * among equal scores the lower row comes first. A partial selection: one pass, keeping the best
 * `topK` seen so far.
 *
 * @since 0.2.0
 * @category vectors
 * @example
 * ```ts
 * import { VectorStore } from "lambdagent/rag"
 * console.log(VectorStore.topRows(new Float64Array([0.1, 0.9, 0.5]), 3, 2)) // [1, 2]
 * ```
 */
export const topRows = (scores: Float64Array, count: number, topK: number): Array<number> => {
  const best: Array<number> = []
  if (topK <= 0) return best
  for (let r = 0; r < count; r++) {
    const score = scores[r]!
    if (best.length === topK && score <= scores[best[topK - 1]!]!) continue
    let at = best.length === topK ? topK - 1 : best.length
    while (at > 0 && scores[best[at - 1]!]! < score) {
      best[at] = best[at - 1]!
      at--
    }
    best[at] = r
  }
  return best
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
 * const m = VectorStore.makeMatrix()
 * m.set("a", new Float32Array([1, 0]))
 * m.set("b", new Float32Array([0, 1]))
 * console.log(VectorStore.nearest(m, new Float32Array([0.8, 0.6]), 1)) // [{ id: "a", score: 0.800000011920929 }]
 * ```
 */
export const nearest = (matrix: VectorMatrix, query: Float32Array, topK: number): Array<{ readonly id: string; readonly score: number }> => {
  if (matrix.size === 0 || query.length !== matrix.dimensions) return []
  const scores = matrix.similarities(query)
  return topRows(scores, matrix.size, topK).map((r) => ({ id: matrix.ids[r]!, score: scores[r]! }))
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
export const encodeVector = (vector: Float32Array): string => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("base64")

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
