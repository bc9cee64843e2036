import * as fs from "node:fs/promises"
import * as path from "node:path"
import { assert, describe, it } from "vitest"
import { entries } from "../../tsup.config.ts"
import * as Rag from "./index.ts"
import { repoRoot } from "./test/helpers.ts"

describe("lambdagent/rag entry point", () => {
  it("is built and exported as ./rag", async () => {
    const pkg = JSON.parse(await fs.readFile(path.join(repoRoot, "package.json"), "utf8")) as {
      exports: Record<string, unknown>
      peerDependenciesMeta?: Record<string, { optional?: boolean }>
    }
    assert.deepStrictEqual(pkg.exports["./rag"], { types: "./dist/plugins/rag/index.d.ts", default: "./dist/plugins/rag/index.js" })
    assert.strictEqual((entries as Record<string, string>)["plugins/rag/index"], "plugins/rag/index.ts")
    assert.isTrue(pkg.peerDependenciesMeta?.["chromadb"]?.optional, "chromadb stays optional")
  })

  it("exposes the public API and none of the internal helpers", () => {
    for (const name of ["ingest", "ragTool", "retrieveContext", "fromConfig", "RagConfig", "indexCommand", "queryCommand", "RagError"]) {
      assert.property(Rag, name)
    }
    assert.containsAllKeys(Rag.SimpleIndex, ["make", "memory"])
    assert.containsAllKeys(Rag.ChromaIndex, ["make", "importChroma"])
    assert.containsAllKeys(Rag.Embeddings, ["hashing", "openAI"])
    assert.containsAllKeys(Rag.WordVectors, ["make", "id", "shippedTable", "encodeTable", "decodeTable"])
    assert.notProperty(Rag, "SentenceEncoder")
    for (const internal of ["errorMessage", "fromFsError", "throwIfAborted", "checkQueryArgs", "batches", "resolveChunkOptions"]) {
      assert.notProperty(Rag, internal)
    }
  })
})
