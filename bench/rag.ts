/**
 * Retrieval benchmark: index build time and size for 10,000 and 100,000 synthetic chunks, query
 * latency (p50 / p99), cold (first query of a fresh instance: file load, model load) and warm,
 * and RSS, for the `simple` backend in its three modes — `bm25` alone (the baseline, built
 * without embeddings), `vector` alone and `hybrid`, the last two on one index built with the
 * offline sentence encoder — and for the `chroma` backend (a local server started from the
 * chromadb package of test/tools, installed on first use; hashing embeddings).
 *
 * Run alone with `npx tsx bench/rag.ts`. Environment:
 * - `RAG_BENCH_SIZES` (default `10000,100000`): sizes for `simple` BM25;
 * - `RAG_BENCH_VECTOR_SIZES` (default `10000`): sizes for `simple` vector and hybrid. The
 *   sentence encoder embeds about 15 of these chunks a second on a small machine, so 10,000 take
 *   about 11 minutes and 100,000 about two hours; set `10000,100000` to measure it;
 * - `RAG_BENCH_CHROMA_SIZES` (default `10000`): sizes for `chroma`. A local Chroma server inserts
 *   a few hundred 384-dimension vectors a second on a small machine, so 100,000 chunks take
 *   minutes; set `10000,100000` to measure it;
 * - `RAG_BENCH_BACKENDS` (default `simple,chroma`).
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import type { Chunk, RetrievalIndex } from "../plugins/rag/index.ts"
import { ChromaIndex, ChromaServer, Embeddings, type RetrievalMode, SentenceEncoder, SimpleIndex } from "../plugins/rag/index.ts"
import { ensureTools, toolsDir } from "../test/tools/index.ts"

/** A small deterministic PRNG (mulberry32), so every run indexes the same text. */
const prng = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const syllables = ["ka", "lo", "mi", "ra", "tu", "sen", "vor", "pel", "dri", "an", "qua", "zo", "bel", "nor", "ti", "fa"]

/** A vocabulary of pseudo-words, drawn with a Zipf-like skew so some words are common. */
const makeVocabulary = (random: () => number, size: number): Array<string> => {
  const words = new Set<string>()
  while (words.size < size) {
    const n = 2 + Math.floor(random() * 3)
    let w = ""
    for (let i = 0; i < n; i++) w += syllables[Math.floor(random() * syllables.length)]
    words.add(w)
  }
  return [...words]
}

const zipfPick = (random: () => number, vocabulary: ReadonlyArray<string>): string =>
  vocabulary[Math.min(vocabulary.length - 1, Math.floor(random() ** 2.5 * vocabulary.length))]!

/**
 * `count` deterministic synthetic chunks of about 40 pseudo-words (≈ 300 characters) each.
 *
 * @since 0.1.0
 * @category benchmarks
 * @example
 * ```ts
 * import { syntheticChunks } from "./rag.ts"
 * console.log(syntheticChunks(2)[0]?.id) // "doc-0.txt#0"
 * ```
 */
export const syntheticChunks = (count: number, seed = 1): Array<Chunk> => {
  const random = prng(seed)
  const vocabulary = makeVocabulary(random, 20_000)
  const chunks: Array<Chunk> = []
  for (let i = 0; i < count; i++) {
    const words: Array<string> = []
    for (let w = 0; w < 40; w++) words.push(zipfPick(random, vocabulary))
    const text = `${words.join(" ")}.`
    const source = `doc-${Math.floor(i / 10)}.txt`
    chunks.push({ id: `${source}#${i % 10}`, text, metadata: { source, format: "text", index: i % 10, start: 0, end: text.length } })
  }
  return chunks
}

/** Queries of 3 to 5 words taken from random chunks, so most have real matches. */
const syntheticQueries = (chunks: ReadonlyArray<Chunk>, count: number, seed = 7): Array<string> => {
  const random = prng(seed)
  return Array.from({ length: count }, () => {
    const words = chunks[Math.floor(random() * chunks.length)]!.text.replace(/\.$/, "").split(" ")
    const n = 3 + Math.floor(random() * 3)
    const start = Math.floor(random() * (words.length - n))
    return words.slice(start, start + n).join(" ")
  })
}

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!

interface Row {
  readonly backend: string
  readonly chunks: number
  readonly buildS: number
  readonly p50: number
  readonly p99: number
  readonly note: string
}

/** Warm query latency: after ten warm-up queries, p50 and p99 of `queries` more. */
const latency = async (index: RetrievalIndex, chunks: ReadonlyArray<Chunk>, queries: number, mode?: RetrievalMode) => {
  const qs = syntheticQueries(chunks, queries)
  const options = mode === undefined ? {} : { mode }
  for (const q of qs.slice(0, 10)) await index.query(q, 3, 0, options)
  const times: Array<number> = []
  for (const q of qs) {
    const t = performance.now()
    await index.query(q, 3, 0, options)
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 50), p99: percentile(times, 99), queries: qs.length }
}

const measure = async (backend: string, index: RetrievalIndex, chunks: ReadonlyArray<Chunk>, queries: number): Promise<Row> => {
  const started = performance.now()
  await index.rebuild(chunks)
  const buildS = (performance.now() - started) / 1000
  const { p50, p99 } = await latency(index, chunks, queries)
  return { backend, chunks: chunks.length, buildS, p50, p99, note: `${queries} queries, top 3` }
}

const rssMb = (): string => `${Math.round(process.memoryUsage().rss / 1e6)} MB RSS`

/**
 * `simple` with the sentence encoder: one build (BM25 and vectors), then per mode a cold query
 * (a fresh instance reads the file; the model is already loaded in this process) and warm latency.
 */
const measureModes = async (dir: string, chunks: ReadonlyArray<Chunk>, queries: number): Promise<Array<Row>> => {
  const name = `v${chunks.length}`
  const embeddings = SentenceEncoder.make()
  const modelStart = performance.now()
  await embeddings.embed(["load the model"])
  const modelS = (performance.now() - modelStart) / 1000
  const built = SimpleIndex.make({ persistDirectory: dir, name, embeddings })
  const started = performance.now()
  await built.rebuild(chunks)
  const buildS = (performance.now() - started) / 1000
  const mb = (await fs.stat(SimpleIndex.filePath(dir, name))).size / 1e6
  const rows: Array<Row> = [{
    backend: "simple vectors (build)",
    chunks: chunks.length,
    buildS,
    p50: Number.NaN,
    p99: Number.NaN,
    note: `BM25 + use-lite-512 vectors, ${mb.toFixed(1)} MB of JSON; model load ${modelS.toFixed(2)} s; ${rssMb()}`
  }]
  for (const mode of ["bm25", "vector", "hybrid"] as const) {
    const fresh = SimpleIndex.make({ persistDirectory: dir, name, embeddings, mode })
    const t = performance.now()
    await fresh.query("cold start", 3, 0)
    const coldS = (performance.now() - t) / 1000
    const { p50, p99 } = await latency(fresh, chunks, queries)
    rows.push({ backend: `simple ${mode}`, chunks: chunks.length, buildS: coldS, p50, p99, note: `${queries} queries, top 3; build column: cold first query (file load); ${rssMb()}` })
  }
  return rows
}

const printTable = (rows: ReadonlyArray<Row>): void => {
  const header = ["backend", "chunks", "build (s)", "chunks/s", "query p50 (ms)", "query p99 (ms)", "note"]
  const body = rows.map((r) => [
    r.backend,
    r.chunks.toLocaleString("en-US"),
    r.buildS.toFixed(2),
    Math.round(r.chunks / r.buildS).toLocaleString("en-US"),
    r.p50.toFixed(2),
    r.p99.toFixed(2),
    r.note
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`
  console.log(line(header))
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`)
  for (const row of body) console.log(line(row))
}

/**
 * Run the retrieval benchmark and print a table.
 *
 * @since 0.1.0
 * @category benchmarks
 * @example
 * ```ts
 * import { run } from "./rag.ts"
 * await run()
 * ```
 */
export async function run(): Promise<void> {
  const sizes = (process.env["RAG_BENCH_SIZES"] ?? "10000,100000").split(",").map(Number)
  const vectorSizes = (process.env["RAG_BENCH_VECTOR_SIZES"] ?? "10000").split(",").filter((s) => s !== "").map(Number)
  const chromaSizes = (process.env["RAG_BENCH_CHROMA_SIZES"] ?? "10000").split(",").map(Number)
  const backends = (process.env["RAG_BENCH_BACKENDS"] ?? "simple,chroma").split(",")
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "rag-bench-"))
  const rows: Array<Row> = []
  let server: ChromaServer.RunningChromaServer | undefined
  console.log(
    `rag benchmark: synthetic chunks of ~40 words; simple bm25: ${sizes.join(", ")}; simple vector/hybrid: ${vectorSizes.join(", ")}; chroma: ${chromaSizes.join(", ")}; backends ${backends.join(", ")}`
  )
  const skipped: Array<string> = []
  try {
    for (const size of [...new Set([...sizes, ...vectorSizes, ...chromaSizes])].sort((a, b) => a - b)) {
      const chunks = syntheticChunks(size)
      if (backends.includes("simple") && sizes.includes(size)) {
        const row = await measure("simple bm25 (baseline)", SimpleIndex.make({ persistDirectory: path.join(dir, "simple"), name: `n${size}` }), chunks, 500)
        const bytes = (await fs.stat(SimpleIndex.filePath(path.join(dir, "simple"), `n${size}`))).size
        rows.push({ ...row, note: `${row.note}; build includes writing ${(bytes / 1e6).toFixed(1)} MB of JSON; ${rssMb()}` })
        // Loading the persisted file in a fresh instance, as `rag query` does in a new process.
        const cold = SimpleIndex.make({ persistDirectory: path.join(dir, "simple"), name: `n${size}` })
        const t = performance.now()
        await cold.query("warm up", 3, 0)
        rows.push({ backend: "simple bm25 (load)", chunks: size, buildS: (performance.now() - t) / 1000, p50: Number.NaN, p99: Number.NaN, note: "first query of a new process: read + parse the index file" })
      }
      if (backends.includes("simple") && vectorSizes.includes(size)) {
        rows.push(...(await measureModes(path.join(dir, "simple"), chunks, 300)))
      }
      if (backends.includes("simple") && sizes.includes(size) && !vectorSizes.includes(size)) {
        const build = rows.find((r) => r.backend === "simple vectors (build)")
        skipped.push(
          `simple vector/hybrid ${size.toLocaleString("en-US")}: not run by default${build === undefined ? "" : ` (≈ ${Math.round((build.buildS / build.chunks) * size)} s to embed at the measured ${build.chunks.toLocaleString("en-US")}-chunk rate)`}; set RAG_BENCH_VECTOR_SIZES=10000,${size} to measure`
        )
      }
      if (backends.includes("chroma") && !chromaSizes.includes(size)) {
        const perChunk = rows.find((r) => r.backend === "chroma")
        skipped.push(
          `chroma ${size.toLocaleString("en-US")}: not run by default${perChunk === undefined ? "" : ` (≈ ${Math.round((perChunk.buildS / perChunk.chunks) * size)} s at the measured ${perChunk.chunks.toLocaleString("en-US")}-chunk rate)`}; set RAG_BENCH_CHROMA_SIZES=10000,${size} to measure`
        )
      }
      if (backends.includes("chroma") && chromaSizes.includes(size)) {
        try {
          ensureTools()
          server ??= await ChromaServer.start({ path: path.join(dir, "chroma"), resolveFrom: toolsDir })
        } catch (e) {
          console.log(`chroma skipped: ${e instanceof Error ? e.message : String(e)}`)
          backends.splice(backends.indexOf("chroma"), 1)
          continue
        }
        const index = ChromaIndex.make({ url: server.url, name: `n${size}`, embeddings: Embeddings.hashing(), timeoutMs: 120_000 })
        const embedStart = performance.now()
        await Embeddings.hashing().embed(chunks.slice(0, 2000).map((c) => c.text))
        const embedPerChunkMs = (performance.now() - embedStart) / 2000
        const row = await measure("chroma", index, chunks, 300)
        rows.push({ ...row, note: `${row.note}; hashing-384 embeddings ≈ ${(embedPerChunkMs * size / 1000).toFixed(1)} s of the build` })
        await index.clear()
      }
    }
  } finally {
    await server?.stop()
    await fs.rm(dir, { recursive: true, force: true })
  }
  printTable(rows.map((r) => (Number.isNaN(r.p50) ? { ...r, p50: 0, p99: 0 } : r)))
  for (const line of skipped) console.log(line)
  console.log(`(machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, node ${process.version}; "(load)" and mode rows: the build column is the cold first query; RSS is the whole process)`)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  await run()
}
