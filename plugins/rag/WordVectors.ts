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
export const normaliseWord = (word: string): string => word.toLowerCase().replace(/['’]s$/, "").replace(/['’]/g, "")

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
  if (vectors.length !== words.length * dimensions) throw new RangeError(`${words.length} words need ${words.length * dimensions} numbers, got ${vectors.length}`)
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
   * 2e-4, chosen on the labelled set of `examples/rag` (1e-5 to 1e-3 tried).
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

/** 32-bit FNV-1a with a final avalanche. */
const hash = (text: string, basis: number): number => {
  let h = basis
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  return (h ^ (h >>> 16)) >>> 0
}

/**
 * An offline semantic embedder over a word-vector table. A text is split into words as BM25 splits
 * it (Unicode words, CJK characters one by one), each word is looked up (lower-cased; a word not in
 * the table is tried without its inflection, "rebasing" → "rebase"), weighted by its smooth inverse
 * frequency, and the weighted vectors are summed and L2-normalised. A word that is still unknown
 * gets a vector made of its character trigrams' hashed random directions, at the weight of the
 * rarest words: it matches itself and words sharing most of its letters, so names and jargon still
 * count. Embedding takes microseconds per text; the table (6 MB) is read once per process.
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
  const smoothing = options?.smoothing ?? 2e-4
  if (!(smoothing > 0) || !Number.isFinite(smoothing)) {
    throw new RagError({ reason: "InvalidConfig", message: `smoothing must be a positive number, got ${smoothing}` })
  }
  let ready: { readonly table: Table; readonly weights: Float32Array; readonly unknownNorm: number } | undefined
  const prepare = () => {
    if (ready !== undefined) return ready
    const table = options?.table ?? shippedTable()
    const count = table.rows.size
    const weights = new Float32Array(count)
    for (let r = 0; r < count; r++) weights[r] = smoothing / (smoothing + zipf(r, count))
    ready = { table, weights, unknownNorm: medianNorm(table) }
    return ready
  }
  // Token as written → its row, or -1 for an unknown word: most texts repeat a few thousand tokens.
  const cache = new Map<string, number>()
  const rowOf = (table: Table, token: string): number => {
    const cached = cache.get(token)
    if (cached !== undefined) return cached
    const word = normaliseWord(token)
    let row = table.rows.get(word)
    if (row === undefined) {
      for (const v of variants(word)) {
        row = table.rows.get(v)
        if (row !== undefined) break
      }
    }
    if (cache.size > 100_000) cache.clear()
    cache.set(token, row ?? -1)
    return row ?? -1
  }
  const embedOne = (text: string): Array<number> => {
    const { table, weights, unknownNorm } = prepare()
    const d = table.dimensions
    const sum = new Float64Array(d)
    for (const token of tokenize(text)) {
      const row = rowOf(table, token)
      if (row >= 0) {
        const w = weights[row]! * table.scales[row]!
        const base = row * d
        for (let c = 0; c < d; c++) sum[c]! += w * table.values[base + c]!
      } else {
        const word = normaliseWord(token)
        if (word !== "") addTrigrams(sum, word, unknownNorm)
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
    }
  }
}

/** The median length of the table's rows: the length given to an unknown word's vector. */
const medianNorm = (table: Table): number => {
  const d = table.dimensions
  const count = table.rows.size
  const step = Math.max(1, Math.floor(count / 2000))
  const norms: Array<number> = []
  for (let r = 0; r < count; r += step) {
    let s = 0
    for (let c = 0; c < d; c++) s += table.values[r * d + c]! ** 2
    norms.push(Math.sqrt(s) * table.scales[r]!)
  }
  norms.sort((a, b) => a - b)
  return norms[Math.floor(norms.length / 2)] ?? 1
}

/** Adds a vector of length about `length` for an unknown word: each of its character trigrams pushes four hashed dimensions. */
const addTrigrams = (sum: Float64Array, word: string, length: number): void => {
  const padded = `<${word}>`
  const grams = Math.max(1, padded.length - 2)
  // Four signed unit pushes per trigram; scaled so the whole has about the given length.
  const unit = length / Math.sqrt(4 * grams)
  for (let i = 0; i + 3 <= padded.length || i === 0; i++) {
    const gram = padded.slice(i, i + 3)
    for (let k = 0; k < 4; k++) {
      const h = hash(gram, 0x811c9dc5 + k * 0x9e3779b1)
      sum[h % sum.length]! += (h & 0x80000000) === 0 ? unit : -unit
    }
    if (i + 3 >= padded.length) break
  }
}
