/**
 * Retrieval benchmark: for 10,000 and 100,000 synthetic chunks of English words, the index build
 * time (and embedding rate) and file size, the cold first query of a new process (reading the
 * file), warm query latency (p50 / p99) and the process's peak RSS, for the `simple` backend in
 * its three modes — `bm25` alone (the baseline, an index built without embeddings), `vector`
 * alone and `hybrid`, the last two on one index built with the offline word vectors — and for
 * the `chroma` backend with the same word vectors (a local server started from the chromadb
 * package of test/tools, installed on first use).
 *
 * Every simple measurement runs in a child process of its own, so each RSS figure is that
 * configuration's alone: one child builds an index, then one child per mode opens it and queries.
 *
 * Run alone with `npx tsx bench/rag.ts`. Environment:
 * - `RAG_BENCH_SIZES` (default `10000,100000`): sizes for `simple`;
 * - `RAG_BENCH_CHROMA_SIZES` (default `10000`): sizes for `chroma`. A local Chroma server inserts
 *   a few thousand 128-dimension vectors a second on a small machine; set `10000,100000` to
 *   measure the larger size too;
 * - `RAG_BENCH_BACKENDS` (default `simple,chroma`).
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { Chunk, RetrievalIndex } from "../plugins/rag/index.ts"
import { ChromaIndex, ChromaServer, type RetrievalMode, SimpleIndex, WordVectors } from "../plugins/rag/index.ts"
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

/** The offline embedder's vocabulary, most frequent first: synthetic text of real words. */
const englishWords = (): ReadonlyArray<string> => [...WordVectors.shippedTable().rows.keys()]

/** A word drawn with a Zipf-like skew, so some words are common and most are rare. */
const zipfPick = (random: () => number, vocabulary: ReadonlyArray<string>): string =>
  vocabulary[Math.min(vocabulary.length - 1, Math.floor(random() ** 2.5 * vocabulary.length))]!

/**
 * `count` deterministic synthetic chunks of 40 English words (≈ 300 characters) each, drawn
 * from the offline embedder's vocabulary with a Zipf-like skew.
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
  const vocabulary = englishWords()
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

/**
 * Warm query latency: after ten warm-up queries, p50 and p99 of `queries` more, and the p50 of
 * the CPU time each took (user + system of this process), which a loaded machine inflates less.
 */
const latency = async (index: RetrievalIndex, chunks: ReadonlyArray<Chunk>, queries: number, mode?: RetrievalMode) => {
  const qs = syntheticQueries(chunks, queries)
  const options = mode === undefined ? {} : { mode }
  for (const q of qs.slice(0, 10)) await index.query(q, 3, 0, options)
  const times: Array<number> = []
  const cpu: Array<number> = []
  for (const q of qs) {
    const t = performance.now()
    const c = process.cpuUsage()
    await index.query(q, 3, 0, options)
    const used = process.cpuUsage(c)
    times.push(performance.now() - t)
    cpu.push((used.user + used.system) / 1000)
  }
  times.sort((a, b) => a - b)
  cpu.sort((a, b) => a - b)
  return { p50: percentile(times, 50), p99: percentile(times, 99), cpuP50: percentile(cpu, 50) }
}

/** One measurement, run in a child process of its own. */
type Job =
  | { readonly kind: "build"; readonly dir: string; readonly size: number; readonly vectors: boolean }
  | { readonly kind: "query"; readonly dir: string; readonly size: number; readonly vectors: boolean; readonly mode: RetrievalMode; readonly queries: number }

interface JobResult {
  readonly ms: number
  readonly bytes?: number
  readonly embedMs?: number
  readonly p50?: number
  readonly p99?: number
  readonly cpuP50?: number
  readonly peakRssMb: number
}

const indexName = (size: number, vectors: boolean): string => `${vectors ? "v" : "b"}${size}`

const runJob = async (job: Job): Promise<JobResult> => {
  const chunks = syntheticChunks(job.size)
  const embeddings = job.vectors ? WordVectors.make() : undefined
  const name = indexName(job.size, job.vectors)
  const peakRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024)
  if (job.kind === "build") {
    let embedMs: number | undefined
    if (embeddings !== undefined) {
      const t = performance.now()
      await embeddings.embed(chunks.map((c) => c.text))
      embedMs = performance.now() - t
    }
    const index = SimpleIndex.make({ persistDirectory: job.dir, name, ...(embeddings === undefined ? {} : { embeddings }) })
    const started = performance.now()
    await index.rebuild(chunks)
    const ms = performance.now() - started
    const bytes = (await fs.stat(SimpleIndex.filePath(job.dir, name))).size
    return { ms, bytes, ...(embedMs === undefined ? {} : { embedMs }), peakRssMb: peakRssMb() }
  }
  const index = SimpleIndex.make({ persistDirectory: job.dir, name, mode: job.mode, ...(embeddings === undefined ? {} : { embeddings }) })
  const started = performance.now()
  await index.query("cold start of a new process", 3, 0)
  const ms = performance.now() - started
  const { p50, p99, cpuP50 } = await latency(index, chunks, job.queries)
  return { ms, p50, p99, cpuP50, peakRssMb: peakRssMb() }
}

const inChild = (job: Job): Promise<JobResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--job", JSON.stringify(job)], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (data: Buffer) => (out += data.toString("utf8")))
    child.on("error", reject)
    child.on("close", (status) => {
      const line = out.trim().split("\n").at(-1) ?? ""
      if (status === 0 && line.startsWith("{")) resolve(JSON.parse(line) as JobResult)
      else reject(new Error(`benchmark job ${JSON.stringify(job)} exited with ${status}: ${out}`))
    })
  })

interface Row {
  readonly config: string
  readonly chunks: number
  readonly buildS?: number
  readonly embedS?: number
  readonly mb?: number
  readonly coldMs?: number
  readonly p50?: number
  readonly p99?: number
  readonly cpuP50?: number
  readonly rssMb?: number
}

const printTable = (rows: ReadonlyArray<Row>): void => {
  const header = [
    "index / mode",
    "chunks",
    "build (s)",
    "embed (chunks/s)",
    "file (MB)",
    "cold first query (ms)",
    "query p50 (ms)",
    "query p99 (ms)",
    "query CPU p50 (ms)",
    "peak RSS (MB)"
  ]
  const f = (x: number | undefined, digits: number) => (x === undefined ? "" : x.toFixed(digits))
  const body = rows.map((r) => [
    r.config,
    r.chunks.toLocaleString("en-US"),
    f(r.buildS, 2),
    r.embedS === undefined ? "" : Math.round(r.chunks / r.embedS).toLocaleString("en-US"),
    f(r.mb, 1),
    f(r.coldMs, 0),
    f(r.p50, 2),
    f(r.p99, 2),
    f(r.cpuP50, 2),
    r.rssMb === undefined ? "" : String(r.rssMb)
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`
  console.log(line(header))
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`)
  for (const row of body) console.log(line(row))
}

/** The simple backend at one size: the BM25 baseline, then one index with vectors queried in each mode. */
const measureSimple = async (dir: string, size: number): Promise<Array<Row>> => {
  const rows: Array<Row> = []
  const queries = 300
  const bm25Build = await inChild({ kind: "build", dir, size, vectors: false })
  const bm25 = await inChild({ kind: "query", dir, size, vectors: false, mode: "bm25", queries })
  rows.push({
    config: "bm25 alone (baseline)",
    chunks: size,
    buildS: bm25Build.ms / 1000,
    mb: bm25Build.bytes! / 1e6,
    coldMs: bm25.ms,
    p50: bm25.p50!,
    p99: bm25.p99!,
    cpuP50: bm25.cpuP50!,
    rssMb: bm25.peakRssMb
  })
  const build = await inChild({ kind: "build", dir, size, vectors: true })
  rows.push({
    config: "with word vectors (build)",
    chunks: size,
    buildS: build.ms / 1000,
    embedS: build.embedMs! / 1000,
    mb: build.bytes! / 1e6,
    rssMb: build.peakRssMb
  })
  for (const mode of ["bm25", "vector", "hybrid"] as const) {
    const r = await inChild({ kind: "query", dir, size, vectors: true, mode, queries })
    rows.push({
      config: `  ${mode}${mode === "hybrid" ? " (default)" : ""}`,
      chunks: size,
      coldMs: r.ms,
      p50: r.p50!,
      p99: r.p99!,
      cpuP50: r.cpuP50!,
      rssMb: r.peakRssMb
    })
  }
  return rows
}

/** The chroma backend with the same word vectors, on a local server. */
const measureChroma = async (server: ChromaServer.RunningChromaServer, size: number): Promise<Row> => {
  const chunks = syntheticChunks(size)
  const index = ChromaIndex.make({ url: server.url, name: `n${size}`, embeddings: WordVectors.make(), timeoutMs: 120_000 })
  const started = performance.now()
  await index.rebuild(chunks)
  const buildS = (performance.now() - started) / 1000
  const { p50, p99 } = await latency(index, chunks, 300)
  await index.clear()
  // The query's CPU time is mostly the Chroma server's, which this process does not see.
  return { config: "chroma, word vectors (vector)", chunks: size, buildS, p50, p99 }
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
  const sizes = (process.env["RAG_BENCH_SIZES"] ?? "10000,100000")
    .split(",")
    .filter((s) => s !== "")
    .map(Number)
  const chromaSizes = (process.env["RAG_BENCH_CHROMA_SIZES"] ?? "10000")
    .split(",")
    .filter((s) => s !== "")
    .map(Number)
  const backends = (process.env["RAG_BENCH_BACKENDS"] ?? "simple,chroma").split(",")
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "rag-bench-"))
  const rows: Array<Row> = []
  let server: ChromaServer.RunningChromaServer | undefined
  console.log(
    `rag benchmark: synthetic chunks of 40 English words; simple: ${sizes.join(", ")}; chroma: ${chromaSizes.join(", ")}; backends ${backends.join(", ")}`
  )
  try {
    if (backends.includes("simple")) for (const size of sizes) rows.push(...(await measureSimple(dir, size)))
    if (backends.includes("chroma") && chromaSizes.length > 0) {
      try {
        ensureTools()
        server = await ChromaServer.start({ path: path.join(dir, "chroma"), resolveFrom: toolsDir })
        for (const size of chromaSizes) rows.push(await measureChroma(server, size))
      } catch (e) {
        console.log(`chroma skipped: ${e instanceof Error ? e.message : String(e)}`)
      }
    }
  } finally {
    await server?.stop()
    await fs.rm(dir, { recursive: true, force: true })
  }
  printTable(rows)
  console.log(
    `(machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, node ${process.version}; each simple row is a process of its own; build includes embedding and writing the file; top 3 per query)`
  )
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const at = process.argv.indexOf("--job")
  if (at > 0) console.log(JSON.stringify(await runJob(JSON.parse(process.argv[at + 1]!) as Job)))
  else await run()
}
