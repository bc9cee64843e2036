import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { Tools } from "lambdagent"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { fromConfig, parseRagConfig, RagConfig } from "./config.ts"
import { isRagError } from "./RagError.ts"
import * as SimpleIndex from "./SimpleIndex.ts"
import { chunk, tempDir, writeTree } from "./test/helpers.ts"
import { ragTool, retrieveContext } from "./tool.ts"

const index = SimpleIndex.memory("tool-test")
await index.rebuild([
  chunk("tea.txt", 0, "Green tea is steeped at 75 degrees for two minutes."),
  chunk("coffee.txt", 0, "Espresso is brewed by forcing hot water through ground coffee."),
  {
    id: "guide.md#1",
    text: "## Linux\n\nUnpack the tarball and run the install script.",
    metadata: { source: "guide.md", format: "markdown", index: 1, start: 40, end: 95, heading: "Linux", section: ["Install", "Linux"] }
  }
])

const callTool = (tool: Tools.ToolDefinition, input: unknown) => Effect.runPromise(Tools.call(tool, input))

describe("ragTool", () => {
  it("is a rag tool named rag_retrieve that answers in the numbered format", async () => {
    const tool = ragTool({ index })
    assert.strictEqual(tool.name, "rag_retrieve")
    assert.strictEqual(tool.kind, "rag")
    assert.strictEqual(tool.source, "simple:tool-test")
    const out = await callTool(tool, "how do I install on linux?")
    assert.match(String(out), /^\[Source 1, score=\d+\.\d{3} \(guide\.md > Install > Linux, chunk 1\)\]\n## Linux\n\nUnpack the tarball/)
  })

  it("accepts {query} objects (as JSON text too) and rejects empty queries", async () => {
    const tool = ragTool({ index, format: "plain", topK: 1 })
    assert.strictEqual(await callTool(tool, { query: "espresso" }), "Espresso is brewed by forcing hot water through ground coffee.")
    assert.strictEqual(await callTool(tool, '{"query":"espresso"}'), "Espresso is brewed by forcing hot water through ground coffee.")
    const error = await Effect.runPromise(Effect.flip(Tools.call(tool, "   ")))
    assert.strictEqual(error.reason, "InvalidInput")
    assert.include(error.message, "the query is empty")
  })

  it("honours topK, minScore and the json format", async () => {
    const json = JSON.parse(String(await callTool(ragTool({ index, format: "json", topK: 2 }), "hot water tea coffee"))) as {
      query: string
      results: Array<{ rank: number; source: string; score: number; text: string }>
    }
    assert.strictEqual(json.query, "hot water tea coffee")
    assert.lengthOf(json.results, 2)
    assert.deepStrictEqual(
      json.results.map((r) => r.rank),
      [1, 2]
    )
    assert.deepStrictEqual(json.results.map((r) => r.source).sort(), ["coffee.txt", "tea.txt"])
    const none = JSON.parse(String(await callTool(ragTool({ index, format: "json", minScore: 1e6 }), "tea"))) as { results: [] }
    assert.deepStrictEqual(none.results, [])
  })

  it("says there are no results instead of failing", async () => {
    assert.strictEqual(await callTool(ragTool({ index }), "quantum chromodynamics"), 'No relevant passages found for "quantum chromodynamics".')
    assert.strictEqual(await callTool(ragTool({ index: SimpleIndex.memory() }), "tea"), 'No relevant passages found for "tea".')
  })
})

describe("retrieveContext", () => {
  it("prepends the context in the documented format", async () => {
    const out = await retrieveContext("How hot for green tea?", { index, topK: 1 })
    const header = /^\[Source 1, score=(\d+\.\d{3}) \(tea\.txt, chunk 0\)\]$/
    const [first, second, ...rest] = out.split("\n")
    assert.strictEqual(first, "[Retrieved Context]")
    assert.match(second!, header)
    assert.strictEqual(rest.join("\n"), "Green tea is steeped at 75 degrees for two minutes.\n\n[Question]\nHow hot for green tea?")
    assert.strictEqual(await retrieveContext("zzz", { index }), '[Retrieved Context]\nNo relevant passages found for "zzz".\n\n[Question]\nzzz')
  })
})

describe("RagConfig", () => {
  it("fills defaults and keeps the YAML field names", () => {
    const c = RagConfig.parse({ source: "docs" })
    assert.deepStrictEqual(c, {
      enabled: true,
      source: "docs",
      name: "default",
      topK: 3,
      chunkSize: 1000,
      backend: "simple",
      minScore: 0,
      format: "numbered",
      agentic: true
    })
  })

  it("lists every problem, including unknown keys", () => {
    try {
      parseRagConfig({ topK: 0, backend: "faiss", sorce: "typo" })
      assert.fail("expected InvalidConfig")
    } catch (e) {
      assert.isTrue(isRagError(e) && e.reason === "InvalidConfig")
      const message = (e as Error).message
      for (const part of ["rag.topK", "rag.backend", "sorce"]) assert.include(message, part)
    }
    try {
      parseRagConfig({ chunkSize: 100, chunkOverlap: 60 })
      assert.fail("expected InvalidConfig")
    } catch (e) {
      assert.strictEqual((e as Error).message, "rag.chunkOverlap: chunkOverlap must be less than half of chunkSize (100)")
    }
  })
})

describe("fromConfig", () => {
  let dir: string
  let cleanup: () => Promise<void>
  beforeEach(async () => {
    ;({ cleanup, dir } = await tempDir())
  })
  afterEach(() => cleanup())

  it("builds the index from source on first use and reuses it while the source is unchanged", async () => {
    await writeTree(dir, {
      "agent/kb/tea.md": "# Tea\n\nGreen tea wants water at 75 degrees.",
      "agent/kb/bikes.md": "# Bikes\n\nOil the chain monthly."
    })
    const base = path.join(dir, "agent")
    const rag = fromConfig({ source: "kb", persistDirectory: ".rag", topK: 1, agentic: false }, base)
    assert.strictEqual(rag.config.agentic, false)
    const prompt = await rag.retrieve("chain oil")
    assert.match(
      prompt,
      /^\[Retrieved Context\]\n\[Source 1, score=[\d.]+ \(kb\/bikes\.md > Bikes, chunk 0\)\]\n# Bikes\n\nOil the chain monthly\.\n\n\[Question\]\nchain oil$/
    )
    const file = path.join(base, ".rag", "default.json")
    const firstWrite = (await fs.stat(file)).mtimeMs
    // A second runtime over the same files reuses the persisted index.
    const again = fromConfig({ source: "kb", persistDirectory: ".rag" }, base)
    assert.include(String(await Effect.runPromise(Tools.call(again.tool, "green tea"))), "kb/tea.md > Tea")
    assert.strictEqual((await fs.stat(file)).mtimeMs, firstWrite, "not rebuilt")
    // A changed source is re-indexed.
    await writeTree(dir, { "agent/kb/tides.txt": "Spring tides follow the full moon." })
    const third = fromConfig({ source: "kb", persistDirectory: ".rag" }, base)
    assert.include(await third.retrieve("spring tides"), "kb/tides.txt")
  })

  it("keeps answering from the previous index when a rebuild fails, with a warning", async () => {
    await writeTree(dir, { "kb/tea.md": "# Tea\n\nGreen tea wants water at 75 degrees." })
    await fromConfig({ source: "kb", persistDirectory: ".rag" }, dir).retrieve("tea")
    await writeTree(dir, { "kb/broken.json": "{ not json" })
    const warnings: Array<string> = []
    const rag = fromConfig({ source: "kb", persistDirectory: ".rag" }, dir, { onWarning: (m) => warnings.push(m) })
    assert.include(await rag.retrieve("green tea"), "kb/tea.md")
    assert.lengthOf(warnings, 1)
    assert.include(warnings[0], "kb/broken.json is not valid JSON")
  })

  it("fails with the typed error when there is no previous index", async () => {
    const rag = fromConfig({ source: "missing-dir" }, dir)
    try {
      await rag.retrieve("anything")
      assert.fail("expected SourceNotFound")
    } catch (e) {
      assert.isTrue(isRagError(e) && e.reason === "SourceNotFound", String(e))
    }
    const failure = await Effect.runPromise(Effect.flip(Tools.call(rag.tool, "anything")))
    assert.strictEqual(failure.reason, "Failed")
    assert.include(failure.message, "no such file or directory: missing-dir")
  })
})
