/**
 * The offline semantic embedder: a table of English word vectors distilled from the Universal
 * Sentence Encoder lite, shipped inside lambdagent as `word-vectors.bin` and read once per
 * process on first use. A text's vector is the frequency-weighted mean of its words' vectors, so
 * embedding is a table look-up per word: plain TypeScript, no model, no native addon, no network.
 *
 * The table (made by `npm run rag:vectors`, see `generate-word-vectors.ts`) holds the 50,000 most
 * frequent English words; each word's sentence-encoder vector, less the mean of all of them,
 * projected on their 128 leading principal components and stored as int8 with a scale per row.
 *
 * @since 0.2.0
 * @module
 */
import { readFileSync } from "node:fs"
import type { Embeddings } from "./Embeddings.ts"
import { errorMessage, RagError, throwIfAborted } from "./RagError.ts"
import { tokenize } from "./terms.ts"

/**
 * The identifier stored with an index built by this embedder.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { WordVectors } from "lambdagent/rag"
 * console.log(WordVectors.id) // "use-lite-words-128"
 * ```
 */
export const id = "use-lite-words-128"

const magic = "LGWV"
const formatVersion = 1

/**
 * A decoded word-vector table.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { WordVectors } from "lambdagent/rag"
 * const table: WordVectors.Table = WordVectors.decodeTable(WordVectors.encodeTable(["tea"], new Float32Array([1, 0]), 2))
 * console.log(table.dimensions) // 2
 * ```
 */
export interface Table {
  readonly dimensions: number
  /** Word → row; rows are in frequency order, most frequent first. */
  readonly rows: ReadonlyMap<string, number>
  readonly scales: Float32Array
  readonly values: Int8Array
}

/**
 * Lower case, without a possessive `'s` and without apostrophes: how words are looked up.
 *
 * @since 0.2.0
 * @category internal
 * @example
 * ```ts
 * import { normaliseWord } from "./WordVectors.ts"
 * normaliseWord("Don't") // "dont"
 * ```
 */
export const normaliseWord = (word: string): string =>
  word
    .toLowerCase()
    .replace(/['’]s$/, "")
    .replace(/['’]/g, "")

/**
 * Serialise a table: `LGWV`, the format version, the word count and the dimensions (u32 little
 * endian each), the byte length of the words, the words joined by newlines (UTF-8, padded to 4
 * bytes), one float32 scale per word, then the int8 rows. `vectors` holds one row of `dimensions`
 * numbers per word.
 *
 * @since 0.2.0
 * @category encoding
 * @example
 * ```ts
 * import { WordVectors } from "lambdagent/rag"
 * const bytes = WordVectors.encodeTable(["tea", "coffee"], new Float32Array([1, 0, 0.5, 0.5]), 2)
 * console.log(WordVectors.decodeTable(bytes).rows.get("coffee")) // 1
 * ```
 */
export const encodeTable = (words: ReadonlyArray<string>, vectors: Float32Array, dimensions: number): Uint8Array => {
  if (vectors.length !== words.length * dimensions)
    throw new RangeError(`${words.length} words need ${words.length * dimensions} numbers, got ${vectors.length}`)
  const text = new TextEncoder().encode(words.join("\n"))
  const padded = Math.ceil(text.length / 4) * 4
  const headerBytes = 20
  const out = new Uint8Array(headerBytes + padded + words.length * 4 + words.length * dimensions)
  const view = new DataView(out.buffer)
  out.set(new TextEncoder().encode(magic), 0)
  view.setUint32(4, formatVersion, true)
  view.setUint32(8, words.length, true)
  view.setUint32(12, dimensions, true)
  view.setUint32(16, text.length, true)
  out.set(text, headerBytes)
  const scalesAt = headerBytes + padded
  const valuesAt = scalesAt + words.length * 4
  for (let r = 0; r < words.length; r++) {
    let largest = 0
    for (let c = 0; c < dimensions; c++) largest = Math.max(largest, Math.abs(vectors[r * dimensions + c]!))
    const scale = largest === 0 ? 1 : largest / 127
    view.setFloat32(scalesAt + r * 4, scale, true)
    for (let c = 0; c < dimensions; c++) view.setInt8(valuesAt + r * dimensions + c, Math.round(vectors[r * dimensions + c]! / scale))
  }
  return out
}

/**
 * Read a table written by {@link encodeTable}; throws `RagError` `IndexCorrupt` on anything else.
 *
 * @since 0.2.0
 * @category encoding
 * @example
 * ```ts
 * import { WordVectors } from "lambdagent/rag"
 * const table = WordVectors.decodeTable(WordVectors.encodeTable(["tea"], new Float32Array([0.5, -0.5]), 2))
 * console.log(table.rows.size) // 1
 * ```
 */
export const decodeTable = (bytes: Uint8Array, source = "word-vector table"): Table => {
  const fail = (detail: string): never => {
    throw new RagError({ reason: "IndexCorrupt", message: `${source} is unreadable: ${detail}` })
  }
  if (bytes.length < 20 || new TextDecoder().decode(bytes.subarray(0, 4)) !== magic) fail("not a word-vector table")
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const version = view.getUint32(4, true)
  if (version !== formatVersion) fail(`unsupported version ${version} (expected ${formatVersion})`)
  const count = view.getUint32(8, true)
  const dimensions = view.getUint32(12, true)
  const textLength = view.getUint32(16, true)
  const scalesAt = 20 + Math.ceil(textLength / 4) * 4
  const valuesAt = scalesAt + count * 4
  if (dimensions === 0 || bytes.length !== valuesAt + count * dimensions) fail("truncated")
  const words = new TextDecoder().decode(bytes.subarray(20, 20 + textLength)).split("\n")
  if (words.length !== count) fail(`${words.length} words for ${count} rows`)
  const rows = new Map<string, number>()
  words.forEach((word, row) => rows.set(word, row))
  // Copies, so the typed arrays are aligned whatever the buffer's offset.
  const scales = new Float32Array(count)
  for (let r = 0; r < count; r++) scales[r] = view.getFloat32(scalesAt + r * 4, true)
  const values = new Int8Array(count * dimensions)
  values.set(new Int8Array(bytes.buffer, bytes.byteOffset + valuesAt, count * dimensions))
  return { dimensions, rows, scales, values }
}

const tableUrl = new URL("./word-vectors.bin", import.meta.url)

let shared: Table | undefined

/**
 * The table shipped with lambdagent, read on first call and kept for the process.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { WordVectors } from "lambdagent/rag"
 * console.log(WordVectors.shippedTable().rows.has("refund")) // true
 * ```
 */
export const shippedTable = (): Table => {
  if (shared !== undefined) return shared
  let bytes: Uint8Array
  try {
    bytes = readFileSync(tableUrl)
  } catch (cause) {
    throw new RagError({
      reason: "MissingDependency",
      message: `the word-vector table of the offline embedder is missing (${errorMessage(cause)}); reinstall lambdagent, or choose embeddings.provider hashing or openai`,
      cause
    })
  }
  shared = decodeTable(bytes, tableUrl.pathname)
  return shared
}

/**
 * Options of the word-vector embedder.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { WordVectors } from "lambdagent/rag"
 * const o: WordVectors.WordVectorsOptions = { smoothing: 1e-3 }
 * ```
 */
export interface WordVectorsOptions {
  /**
   * The `a` of the smooth inverse frequency weight `a / (a + p(word))`, where `p` is the word's
   * estimated probability in English text; smaller values weigh common words down more. Default
   * 1e-4, chosen on the labelled set of `examples/rag` (1e-5 to 1e-3 tried).
   */
  readonly smoothing?: number
  /** Another table (tests); default {@link shippedTable}. */
  readonly table?: Table
}

/** Zipf's law: the probability of the word of (0-based) frequency rank `rank` among `count`. */
const zipf = (rank: number, count: number): number => 1 / ((rank + 1) * (Math.log(count) + 0.5772))

/** Endings tried, in order, for a word not in the table: plurals, tenses, adverbs, British spellings. */
const variants = (word: string): Array<string> => {
  const out: Array<string> = []
  if (word.endsWith("ies")) out.push(`${word.slice(0, -3)}y`)
  if (word.endsWith("es")) out.push(word.slice(0, -2))
  if (word.endsWith("s")) out.push(word.slice(0, -1))
  if (word.endsWith("ed")) out.push(word.slice(0, -2), word.slice(0, -1))
  if (word.endsWith("ing")) out.push(word.slice(0, -3), `${word.slice(0, -3)}e`)
  if (word.endsWith("ly")) out.push(word.slice(0, -2))
  if (word.includes("is")) out.push(word.replace(/is(e|ed|es|ing|ation|ations)$/, "iz$1"))
  if (word.endsWith("our")) out.push(`${word.slice(0, -3)}or`)
  return out.filter((v) => v.length >= 3 && v !== word)
}

/** A word's row, or of one of its {@link variants}; -1 when none is in the table. */
const rowOfWord = (table: Table, word: string): number => {
  const row = table.rows.get(word)
  if (row !== undefined) return row
  for (const v of variants(word)) {
    const r = table.rows.get(v)
    if (r !== undefined) return r
  }
  return -1
}

/**
 * The rows standing for a word: its own (or an inflection's); else, for a compound of two known
 * words ("houseplants", "sourdough"), both, split where the shorter part is longest; else none.
 */
const lookUp = (table: Table, word: string): ReadonlyArray<number> => {
  const row = rowOfWord(table, word)
  if (row >= 0) return [row]
  let best: ReadonlyArray<number> = []
  let bestShorter = 0
  for (let at = 3; at <= word.length - 3; at++) {
    const shorter = Math.min(at, word.length - at)
    if (shorter <= bestShorter) continue
    const left = rowOfWord(table, word.slice(0, at))
    if (left < 0) continue
    const right = rowOfWord(table, word.slice(at))
    if (right < 0) continue
    best = [left, right]
    bestShorter = shorter
  }
  return best
}

/**
 * An offline semantic embedder over a word-vector table. A text is split into words as BM25 splits
 * it (Unicode words, CJK characters one by one), each word is looked up (lower-cased; a word not in
 * the table is tried without its inflection or with American spelling, "refunding" → "refund",
 * "oxidised" → "oxidized", then as a compound of two known words, "houseplants" → "house" +
 * "plants"), weighted by its smooth inverse frequency, and the weighted vectors are summed and
 * L2-normalised. A word still unknown (a name, jargon) adds nothing to the vector: in `hybrid`
 * retrieval BM25 matches it exactly, and hashed stand-in vectors for such words measurably lowered
 * recall. Embedding takes microseconds per text; the table (7 MB) is read once per process.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { WordVectors } from "lambdagent/rag"
 * const embedder = WordVectors.make()
 * const [question, passage] = await embedder.embed(["how do I get my money back for a yearly plan", "Refunds for annual subscriptions"])
 * ```
 */
export const make = (options?: WordVectorsOptions): Embeddings => {
  const smoothing = options?.smoothing ?? 1e-4
  if (!(smoothing > 0) || !Number.isFinite(smoothing)) {
    throw new RagError({ reason: "InvalidConfig", message: `smoothing must be a positive number, got ${smoothing}` })
  }
  let ready: { readonly table: Table; readonly weights: Float32Array } | undefined
  const prepare = () => {
    if (ready !== undefined) return ready
    const table = options?.table ?? shippedTable()
    const count = table.rows.size
    const weights = new Float32Array(count)
    for (let r = 0; r < count; r++) weights[r] = smoothing / (smoothing + zipf(r, count))
    ready = { table, weights }
    return ready
  }
  // Token as written → its rows (none for an unknown word): most texts repeat a few thousand tokens.
  const cache = new Map<string, ReadonlyArray<number>>()
  const rowsOf = (table: Table, token: string): ReadonlyArray<number> => {
    const cached = cache.get(token)
    if (cached !== undefined) return cached
    const rows = lookUp(table, normaliseWord(token))
    if (cache.size > 100_000) cache.clear()
    cache.set(token, rows)
    return rows
  }
  const embedOne = (text: string): Array<number> => {
    const { table, weights } = prepare()
    const d = table.dimensions
    const sum = new Float64Array(d)
    for (const token of tokenize(text)) {
      const rows = rowsOf(table, token)
      for (const row of rows) {
        const w = weights[row]! * table.scales[row]!
        const base = row * d
        for (let c = 0; c < d; c++) sum[c]! += w * table.values[base + c]!
      }
    }
    let norm = 0
    for (let c = 0; c < d; c++) norm += sum[c]! * sum[c]!
    norm = Math.sqrt(norm)
    const out = new Array<number>(d)
    for (let c = 0; c < d; c++) out[c] = norm === 0 ? 0 : sum[c]! / norm
    return out
  }
  return {
    id,
    dimensions: options?.table?.dimensions ?? 128,
    embed: async (texts, callOptions) => {
      throwIfAborted(callOptions?.signal)
      return texts.map(embedOne)
    },
    knows: (word) => rowsOf(prepare().table, word).length > 0
  }
}
