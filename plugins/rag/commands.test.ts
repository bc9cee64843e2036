import * as fs from "node:fs/promises"
import * as path from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { indexCommand, queryCommand } from "./commands.ts"
import { isRagError } from "./RagError.ts"
import { runScript, tempDir, writeTree } from "./test/helpers.ts"

describe("rag index / rag query commands (simple backend)", () => {
  let dir: string
  let cleanup: () => Promise<void>
  beforeEach(async () => {
    ;({ cleanup, dir } = await tempDir())
    await writeTree(dir, {
      "kb/tea.md": "# Tea\n\n## Green\n\nSteep green tea at 75 degrees for two minutes.",
      "kb/bikes.txt": "Oil the bicycle chain every month and wipe off the excess.",
      "kb/photo.jpg": "binary"
    })
  })
  afterEach(() => cleanup())

  it("indexes, then a separate process queries the persisted index", async () => {
    const indexed = await indexCommand("kb", { baseDir: dir })
    assert.strictEqual(indexed.json.files, 2)
    assert.strictEqual(indexed.json.chunks, 2)
    assert.strictEqual(indexed.json.location, path.join(".lambdagent", "rag", "default.json"))
    assert.match(
      indexed.text,
      /^Indexed 2 chunks from 2 files into simple index "default" at \.lambdagent\/rag\/default\.json in \d+ ms\.\nSkipped 1:\n {2}kb\/photo\.jpg: unsupported file type \.jpg$/
    )
    const commandsUrl = new URL("./commands.ts", import.meta.url).href
    const run = await runScript(
      `import { queryCommand } from ${JSON.stringify(commandsUrl)}
       const r = await queryCommand("how hot should green tea be", { baseDir: ${JSON.stringify(dir)}, topK: 1 })
       console.log(JSON.stringify(r))`
    )
    assert.strictEqual(run.code, 0, run.stderr)
    const result = JSON.parse(run.stdout.trim().split("\n").pop()!) as { text: string; json: { indexed: number; results: Array<{ source: string }> } }
    assert.strictEqual(result.json.indexed, 2)
    assert.deepStrictEqual(
      result.json.results.map((r) => r.source),
      ["kb/tea.md"]
    )
    assert.match(result.text, /^\[Source 1, score=[\d.]+ \(kb\/tea\.md > Tea > Green, chunk 0\)\]\n# Tea\n\n## Green\n\nSteep green tea/)
  })

  it("answers a query on a never-built index with a hint, not an error", async () => {
    const r = await queryCommand("anything", { baseDir: dir, persistDirectory: "nowhere" })
    assert.deepStrictEqual(r.json.results, [])
    assert.strictEqual(r.json.indexed, 0)
    assert.strictEqual(
      r.text,
      'No results: the simple index "default" at nowhere/default.json is empty or was never built. Build it with `lambdagent rag index <source>`.'
    )
  })

  it("leaves the previous index queryable when re-indexing fails", async () => {
    await indexCommand("kb", { baseDir: dir, name: "kb" })
    const before = await fs.readFile(path.join(dir, ".lambdagent/rag/kb.json"), "utf8")
    await writeTree(dir, { "kb/huge.txt": "lorem ipsum ".repeat(2000) })
    try {
      await indexCommand("kb", { baseDir: dir, name: "kb", maxFileBytes: 5_000 })
      assert.fail("expected FileTooLarge")
    } catch (e) {
      assert.isTrue(isRagError(e) && e.reason === "FileTooLarge", String(e))
    }
    assert.strictEqual(await fs.readFile(path.join(dir, ".lambdagent/rag/kb.json"), "utf8"), before)
    const r = await queryCommand("bicycle chain", { baseDir: dir, name: "kb", format: "plain", topK: 1 })
    assert.strictEqual(r.text, "Oil the bicycle chain every month and wipe off the excess.")
  })

  it("throws only typed errors", async () => {
    for (const attempt of [
      () => indexCommand("missing", { baseDir: dir }),
      () => indexCommand("kb", { baseDir: dir, chunkSize: 3 }),
      () => queryCommand("   ", { baseDir: dir }),
      () => queryCommand("x", { baseDir: dir, topK: -1 }),
      // a Chroma server that is not there
      () => queryCommand("x", { baseDir: dir, backend: "chroma", chromaUrl: "http://127.0.0.1:9", timeoutMs: 2_000 })
    ]) {
      try {
        await attempt()
        assert.fail("expected a rejection")
      } catch (e) {
        assert.isTrue(isRagError(e), `not a RagError: ${String(e)}`)
      }
    }
  })
})
