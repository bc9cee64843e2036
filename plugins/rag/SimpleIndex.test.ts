import * as fs from "node:fs/promises"
import * as path from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import type { Chunk } from "./chunk.ts"
import { ingest } from "./ingest.ts"
import { isRagError } from "./RagError.ts"
import * as SimpleIndex from "./SimpleIndex.ts"
import { searchTerms } from "./terms.ts"
import { chunk, examplesDir, recallAt, tempDir } from "./test/helpers.ts"

const corpus: Array<Chunk> = [
  chunk("tea.txt", 0, "Green tea is steeped at 75 degrees for two minutes."),
  chunk("coffee.txt", 0, "Espresso is brewed by forcing hot water through finely ground coffee."),
  chunk("bikes.txt", 0, "Lubricate the bicycle chain every few hundred kilometres.")
]

describe("searchTerms", () => {
  it("lower-cases, drops stop words, strips plurals and splits CJK characters", () => {
    assert.deepStrictEqual(searchTerms("The Libraries of Alexandria's boxes"), ["library", "alexandria", "box"])
    assert.deepStrictEqual(searchTerms("绿茶 tea"), ["绿", "茶", "tea"])
  })
})

describe("SimpleIndex", () => {
  let dir: string
  let cleanup: () => Promise<void>
  beforeEach(async () => {
    ;({ cleanup, dir } = await tempDir())
  })
  afterEach(() => cleanup())

  it("answers an empty index with no results, not an error", async () => {
    const index = SimpleIndex.make({ persistDirectory: dir, name: "empty" })
    assert.deepStrictEqual(await index.query("anything at all", 3, 0), [])
    assert.strictEqual(await index.count(), 0)
    await index.rebuild([])
    assert.deepStrictEqual(await index.query("anything", 3, 0), [])
  })

  it("a persistDirectory that cannot be made (under /proc, where a recursive mkdir never returns) is a RagError", async () => {
    const index = SimpleIndex.make({ persistDirectory: "/proc/lambdagent-no-such/index", name: "kb" })
    const error = await index.rebuild([]).then(
      () => undefined,
      (e: unknown) => e
    )
    assert.isTrue(isRagError(error))
    assert.include((error as Error).message, "cannot create persistDirectory")
  })

  it("ranks by BM25 and honours topK and minScore", async () => {
    const index = SimpleIndex.memory()
    await index.rebuild(corpus)
    const hits = await index.query("how hot should the water be for green tea?", 3, 0)
    assert.strictEqual(hits[0]?.chunk.metadata.source, "tea.txt")
    assert.isTrue(
      hits.every((h, i) => i === 0 || hits[i - 1]!.score >= h.score),
      "best first"
    )
    assert.lengthOf(await index.query("water tea chain", 1, 0), 1)
    const top = hits[0]!.score
    const strict = await index.query("how hot should the water be for green tea?", 3, top)
    assert.deepStrictEqual(
      strict.map((h) => h.chunk.id),
      ["tea.txt#0"]
    )
    assert.deepStrictEqual(await index.query("the of and", 3, 0), [], "stop words only")
  })

  it("persists atomically and is read back by a fresh instance", async () => {
    const writer = SimpleIndex.make({ persistDirectory: dir, name: "kb" })
    await writer.rebuild(corpus, { fingerprint: "abc" })
    const files = await fs.readdir(dir)
    assert.deepStrictEqual(files, ["kb.json"], "no temporary file left behind")
    const reader = SimpleIndex.make({ persistDirectory: dir, name: "kb" })
    assert.strictEqual(await reader.count(), 3)
    assert.strictEqual(await reader.fingerprint(), "abc")
    assert.strictEqual((await reader.query("espresso", 1, 0))[0]?.chunk.id, "coffee.txt#0")
    // The reader notices that another instance replaced the file.
    await writer.rebuild([chunk("new.txt", 0, "Volcanoes erupt lava.")])
    assert.deepStrictEqual(
      (await reader.query("lava", 3, 0)).map((h) => h.chunk.id),
      ["new.txt#0"]
    )
    assert.strictEqual(await reader.count(), 1)
  })

  it("adds chunks, replacing those with the same id", async () => {
    const index = SimpleIndex.make({ persistDirectory: dir })
    await index.add(corpus)
    await index.add([chunk("tea.txt", 0, "Oolong is partly oxidised."), chunk("tide.txt", 0, "The moon raises tides.")])
    assert.strictEqual(await index.count(), 4)
    assert.deepStrictEqual(
      (await index.query("green steeped", 3, 0)).map((h) => h.chunk.id),
      [],
      "the old text is gone"
    )
    assert.deepStrictEqual(
      (await index.query("oolong", 3, 0)).map((h) => h.chunk.id),
      ["tea.txt#0"]
    )
    const again = SimpleIndex.make({ persistDirectory: dir })
    assert.strictEqual(await again.count(), 4)
  })

  it("keeps the old index queryable when a rebuild fails part-way", async () => {
    const index = SimpleIndex.make({ persistDirectory: dir, name: "kb" })
    await index.rebuild(corpus)
    async function* failing(): AsyncGenerator<Chunk> {
      yield chunk("partial.txt", 0, "Only half of the new documents.")
      throw new Error("disk on fire")
    }
    try {
      await index.rebuild(failing())
      assert.fail("the rebuild should fail")
    } catch (e) {
      assert.strictEqual((e as Error).message, "disk on fire")
    }
    assert.strictEqual(await index.count(), 3)
    assert.deepStrictEqual(await index.query("half new documents", 3, 0), [])
    const fresh = SimpleIndex.make({ persistDirectory: dir, name: "kb" })
    assert.strictEqual((await fresh.query("espresso", 1, 0))[0]?.chunk.id, "coffee.txt#0")
    assert.deepStrictEqual(await fs.readdir(dir), ["kb.json"])
  })

  it("reports a corrupt index file as IndexCorrupt", async () => {
    await fs.writeFile(path.join(dir, "bad.json"), "{ this is not json")
    try {
      await SimpleIndex.make({ persistDirectory: dir, name: "bad" }).query("x", 3, 0)
      assert.fail("expected IndexCorrupt")
    } catch (e) {
      assert.isTrue(isRagError(e) && e.reason === "IndexCorrupt", String(e))
    }
  })

  it("rejects bad names and query arguments with InvalidConfig", async () => {
    for (const f of [() => SimpleIndex.make({ name: "../escape" }), () => SimpleIndex.make({ name: "" })]) {
      try {
        f()
        assert.fail("expected InvalidConfig")
      } catch (e) {
        assert.isTrue(isRagError(e) && e.reason === "InvalidConfig", String(e))
      }
    }
    try {
      await SimpleIndex.memory().query("x", 0, 0)
      assert.fail("expected InvalidConfig")
    } catch (e) {
      assert.isTrue(isRagError(e) && e.reason === "InvalidConfig", String(e))
    }
  })

  it("clears the persisted index", async () => {
    const index = SimpleIndex.make({ persistDirectory: dir, name: "kb" })
    await index.rebuild(corpus)
    await index.clear()
    assert.strictEqual(await index.count(), 0)
    assert.deepStrictEqual(await fs.readdir(dir), [])
  })

  it("recall@3 on the labelled example set is at least 0.8", async () => {
    const { chunks } = await ingest(path.join(examplesDir, "docs"))
    const index = SimpleIndex.memory()
    await index.rebuild(chunks)
    const { misses, recall } = await recallAt((q) => index.query(q, 3, 0))
    console.log(`simple recall@3 = ${recall.toFixed(3)} over ${chunks.length} chunks${misses.length > 0 ? `; misses:\n  ${misses.join("\n  ")}` : ""}`)
    assert.isAtLeast(recall, 0.8)
  })
})
