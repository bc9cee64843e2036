import * as net from "node:net"
import * as path from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import type { Chunk } from "./chunk.ts"
import * as ChromaIndex from "./ChromaIndex.ts"
import * as ChromaServer from "./ChromaServer.ts"
import { indexCommand, queryCommand } from "./commands.ts"
import * as Embeddings from "./Embeddings.ts"
import { ingest } from "./ingest.ts"
import { type EvaluationRow, evaluate, evaluationTable, loadQuestions } from "./evaluate.ts"
import { errorMessage } from "./RagError.ts"
import * as SimpleIndex from "./SimpleIndex.ts"
import { chunk, examplesDir, expectReason, recallAt, tempDir } from "./test/helpers.ts"
import * as WordVectors from "./WordVectors.ts"

// One real Chroma server (the `chroma` command of the chromadb package) for this file.
const data = await tempDir("rag-chroma-")
let server: ChromaServer.RunningChromaServer | undefined
let skipReason = ""
try {
  server = await ChromaServer.start({ path: path.join(data.dir, "server"), startupTimeoutMs: 45_000 })
} catch (e) {
  skipReason = errorMessage(e)
  console.warn(`Skipping the Chroma server tests: the server could not start here: ${skipReason}`)
}
afterAll(async () => {
  await server?.stop()
  await data.cleanup()
})

const embeddings = Embeddings.hashing()
const open = (name: string, extra: Partial<ChromaIndex.ChromaIndexOptions> = {}) =>
  ChromaIndex.make({ url: server!.url, name, embeddings, timeoutMs: 10_000, ...extra })

const collections = async (): Promise<Array<string>> => {
  const { ChromaClient } = await import("chromadb")
  const url = new URL(server!.url)
  const client = new ChromaClient({ host: url.hostname, port: Number(url.port) })
  return (await client.listCollections({ limit: 1000 })).map((c) => c.name).sort()
}

const docs: Array<Chunk> = [
  chunk("tea.txt", 0, "Green tea is steeped at 75 degrees for two minutes."),
  chunk("coffee.txt", 0, "Espresso is brewed by forcing hot water through finely ground coffee."),
  chunk("bikes.txt", 0, "Lubricate the bicycle chain every few hundred kilometres.")
]

describe.skipIf(server === undefined)("ChromaIndex against a real Chroma server", () => {
  it("answers a never-built index with no results, builds, queries and counts", async () => {
    const index = open("basics")
    assert.deepStrictEqual(await index.query("tea", 3, 0), [])
    assert.strictEqual(await index.count(), 0)
    await index.rebuild(docs, { fingerprint: "fp1" })
    assert.strictEqual(await index.count(), 3)
    assert.strictEqual(await index.fingerprint(), "fp1")
    const hits = await index.query("how long to steep green tea", 2, 0)
    assert.lengthOf(hits, 2)
    assert.strictEqual(hits[0]?.chunk.id, "tea.txt#0")
    assert.deepStrictEqual(hits[0]?.chunk.metadata, docs[0]!.metadata)
    assert.isTrue(hits[0]!.score > hits[1]!.score && hits[0]!.score <= 1)
    assert.lengthOf(await index.query("how long to steep green tea", 3, 0.99), 0, "minScore filters")
  })

  it("keeps markdown section metadata through the round trip", async () => {
    const index = open("sections")
    const md: Chunk = {
      id: "guide.md#1",
      text: "### Linux\n\nUnpack the tarball.",
      metadata: { source: "guide.md", format: "markdown", index: 1, start: 10, end: 41, heading: "Linux", section: ["Install", "Linux"] }
    }
    await index.rebuild([md])
    const [hit] = await index.query("install on linux", 1, 0)
    assert.deepStrictEqual(hit?.chunk, md)
  })

  it("keeps the old collection answering while a rebuild runs and after it fails", async () => {
    const index = open("atomic", { batchSize: 1 })
    await index.rebuild(docs)
    const before = await collections()
    let midBuild!: () => void
    const reachedMidBuild = new Promise<void>((resolve) => (midBuild = resolve))
    let proceed!: () => void
    const proceeding = new Promise<void>((resolve) => (proceed = resolve))
    async function* slowThenFail(): AsyncGenerator<Chunk> {
      yield chunk("new1.txt", 0, "Volcanoes erupt lava and ash.")
      // asked for the next chunk: the first batch is written, the build is half done
      midBuild()
      await proceeding
      yield chunk("new2.txt", 0, "Tides follow the moon.")
      throw new Error("source vanished")
    }
    const failing = index.rebuild(slowThenFail())
    await reachedMidBuild
    // Mid-build: still the old index.
    assert.strictEqual((await index.query("espresso coffee", 1, 0))[0]?.chunk.id, "coffee.txt#0")
    proceed()
    const message = await failing.then(
      () => "resolved",
      (e: unknown) => errorMessage(e)
    )
    assert.strictEqual(message, "source vanished")
    assert.strictEqual(await index.count(), 3)
    assert.strictEqual((await index.query("espresso coffee", 1, 0))[0]?.chunk.id, "coffee.txt#0")
    assert.deepStrictEqual(await collections(), before, "the half-built collection is gone")
    // A successful rebuild switches over and drops the old collection.
    await index.rebuild([chunk("new.txt", 0, "Volcanoes erupt lava and ash.")])
    assert.deepStrictEqual(
      (await index.query("lava", 3, 0)).map((h) => h.chunk.id),
      ["new.txt#0"]
    )
    const atomic = (await collections()).filter((c) => c.includes("atomic"))
    assert.strictEqual(atomic.length, 2, `alias + one data collection, got ${atomic.join(", ")}`)
  })

  it("applies the timeout to each request, not to a whole long rebuild", async () => {
    const index = open("per-request", { batchSize: 1, timeoutMs: 2_000 })
    // real waits are the thing tested: a source slower in total than one request's timeout
    async function* slowSource(): AsyncGenerator<Chunk> {
      for (let i = 0; i < 10; i++) {
        await new Promise((r) => setTimeout(r, 300))
        yield chunk(`slow${i}.txt`, 0, `Slowly produced chunk number ${i}.`)
      }
    }
    const started = Date.now()
    const report = await index.rebuild(slowSource())
    assert.isAbove(Date.now() - started, 2_000, "the whole rebuild outlasts one timeout")
    assert.strictEqual(report.chunks, 10)
    assert.strictEqual(await index.count(), 10)
  })

  it("adds to an index (creating it) and replaces chunks with the same id", async () => {
    const index = open("adds")
    await index.add(docs.slice(0, 2))
    await index.add([chunk("tea.txt", 0, "Oolong is partly oxidised."), docs[2]!])
    assert.strictEqual(await index.count(), 3)
    assert.strictEqual((await index.query("oolong oxidised", 1, 0))[0]?.chunk.text, "Oolong is partly oxidised.")
  })

  it("refuses to query with other embeddings than the index was built with", async () => {
    await open("embedder").rebuild(docs)
    const other = open("embedder", { embeddings: Embeddings.hashing({ dimensions: 128 }) })
    const message = await expectReason(other.query("tea", 3, 0), "InvalidConfig")
    assert.include(message, "was built with embeddings hashing-384 but is used with hashing-128")
  })

  it("clears every collection of the index", async () => {
    const index = open("cleared")
    await index.rebuild(docs)
    await index.clear()
    assert.strictEqual(await index.count(), 0)
    assert.isFalse((await collections()).some((c) => c.includes("cleared")))
  })

  it("recall@3 on the labelled example set (hashing embeddings)", async () => {
    const { chunks } = await ingest(path.join(examplesDir, "docs"))
    const index = open("examples")
    await index.rebuild(chunks)
    const { misses, recall } = await recallAt((q) => index.query(q, 3, -1))
    console.log(`chroma recall@3 = ${recall.toFixed(3)} over ${chunks.length} chunks${misses.length > 0 ? `; misses:\n  ${misses.join("\n  ")}` : ""}`)
    assert.isAtLeast(recall, 0.75)
  })

  it("with the offline word vectors, matches the embedded index on the labelled set", async () => {
    const { chunks } = await ingest(path.join(examplesDir, "docs"))
    const encoder = WordVectors.make()
    const index = open("examples-semantic", { embeddings: encoder })
    await index.rebuild(chunks)
    const questions = await loadQuestions(path.join(examplesDir, "questions.json"))
    const { rows } = await evaluate(index, questions, ["vector"])
    const embedded = SimpleIndex.make({ embeddings: encoder })
    await embedded.rebuild(chunks)
    const { rows: embeddedRows } = await evaluate(embedded, questions, ["vector", "bm25"])
    console.log(`chroma, word vectors:\n${evaluationTable(rows)}`)
    const all = (r: ReadonlyArray<EvaluationRow>, mode: string) => r.find((x) => x.kind === "all" && x.mode === mode)!.recallAt3
    // The same vectors give the same ranking, whichever store holds them.
    assert.strictEqual(all(rows, "vector"), all(embeddedRows, "vector"))
    assert.isAbove(all(rows, "vector"), all(embeddedRows, "bm25"))
    assert.isAtLeast(rows.find((x) => x.kind === "paraphrase")!.recallAt3, 0.85)
    await expectReason(index.query("tides", 3, 0, { mode: "hybrid" }), "InvalidConfig")
  }, 120_000)
})

describe.skipIf(server === undefined)("rag commands with the chroma backend and a local server", () => {
  it("index then query, each starting its own server on the persist directory", async () => {
    const work = await tempDir()
    try {
      const indexed = await indexCommand(path.join(examplesDir, "docs"), {
        backend: "chroma",
        persistDirectory: path.join(work.dir, "chroma"),
        name: "cli"
      })
      assert.isAbove(indexed.json.chunks, 20)
      assert.include(indexed.text, 'into chroma index "cli"')
      const answer = await queryCommand("What are the steps of the TCP three-way handshake?", {
        backend: "chroma",
        persistDirectory: path.join(work.dir, "chroma"),
        name: "cli",
        topK: 1
      })
      assert.strictEqual(path.basename(answer.json.results[0]?.source ?? ""), "tcp-handshake.md")
    } finally {
      await work.cleanup()
    }
  })
})

describe("Chroma faults", () => {
  it("reports a server that is down as BackendUnavailable", async () => {
    const port = await ChromaServer.freePort()
    const index = ChromaIndex.make({ url: `http://127.0.0.1:${port}`, embeddings, timeoutMs: 5_000 })
    const message = await expectReason(index.query("tea", 3, 0), "BackendUnavailable")
    assert.include(message, `cannot connect to Chroma at http://127.0.0.1:${port}`)
    await expectReason(index.rebuild(docs), "BackendUnavailable")
    await expectReason(ChromaIndex.heartbeat(`http://127.0.0.1:${port}`, 1_000), "BackendUnavailable")
  })

  it("times out on a server that accepts connections but never answers", async () => {
    const sockets = new Set<net.Socket>()
    const silent = net.createServer((s) => {
      sockets.add(s)
      s.on("error", () => undefined)
    })
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r))
    const port = (silent.address() as net.AddressInfo).port
    try {
      const index = ChromaIndex.make({ url: `http://127.0.0.1:${port}`, embeddings, timeoutMs: 400 })
      const message = await expectReason(index.count(), "Timeout")
      assert.include(message, "did not answer count within 400 ms")
    } finally {
      for (const s of sockets) s.destroy()
      await new Promise((r) => silent.close(r))
    }
  })

  it("names the package to install when chromadb is missing", async () => {
    const missing = Object.assign(new Error("Cannot find package 'chromadb'"), { code: "ERR_MODULE_NOT_FOUND" })
    const message = await expectReason(
      ChromaIndex.importChroma(() => Promise.reject(missing)),
      "MissingDependency"
    )
    assert.strictEqual(message, "the chroma backend needs the optional package `chromadb`: run `npm install chromadb`")
  })

  it("reports why the server could not start, when it cannot", () => {
    // Documents the outcome of the start attempt at the top of this file.
    if (server === undefined) assert.isNotEmpty(skipReason)
    else assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  })
})
