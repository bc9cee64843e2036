import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, assert, describe, it } from "vitest"
import { freePort } from "./ChromaServer.ts"
import * as Embeddings from "./Embeddings.ts"
import { embeddingsFrom } from "./open.ts"
import { isRagError } from "./RagError.ts"
import { expectReason } from "./test/helpers.ts"

const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => a.reduce((s, x, i) => s + x * b[i]!, 0)

describe("hashing embeddings", () => {
  it("is deterministic, L2-normalised and of the requested size", async () => {
    const e = Embeddings.hashing()
    assert.strictEqual(e.id, "hashing-384")
    const [a, b] = await e.embed(["Green tea steeping time", "Green tea steeping time"])
    assert.lengthOf(a!, 384)
    assert.deepStrictEqual(a, b)
    assert.closeTo(Math.sqrt(cosine(a!, a!)), 1, 1e-9)
    const [small] = await Embeddings.hashing({ dimensions: 16 }).embed(["x y z"])
    assert.lengthOf(small!, 16)
  })

  it("puts texts sharing words closer than unrelated texts", async () => {
    const [query, related, unrelated] = await Embeddings.hashing().embed([
      "how long to steep green tea",
      "Steep green tea for two minutes at 75 degrees.",
      "The bicycle chain needs oil every month."
    ])
    assert.isAbove(cosine(query!, related!), cosine(query!, unrelated!) + 0.2)
  })

  it("gives a zero vector for text without terms and rejects bad sizes", async () => {
    const [zero] = await Embeddings.hashing({ dimensions: 8 }).embed(["the of and"])
    assert.deepStrictEqual(zero, new Array(8).fill(0))
    try {
      Embeddings.hashing({ dimensions: 1 })
      assert.fail("expected InvalidConfig")
    } catch (e) {
      assert.isTrue(isRagError(e) && e.reason === "InvalidConfig")
    }
  })
})

describe("OpenAI-compatible embeddings", () => {
  const servers: Array<http.Server> = []
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections()
      await new Promise((r) => s.close(r))
    }
  })
  const serve = async (handler: http.RequestListener): Promise<string> => {
    const server = http.createServer(handler)
    servers.push(server)
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  }

  it("posts batches to /embeddings with the key and returns vectors in input order", async () => {
    const requests: Array<{ auth: string | undefined; body: { model: string; input: Array<string> } }> = []
    const baseUrl = await serve((req, res) => {
      let raw = ""
      req.on("data", (d: Buffer) => (raw += d.toString()))
      req.on("end", () => {
        const body = JSON.parse(raw) as { model: string; input: Array<string> }
        requests.push({ auth: req.headers.authorization, body })
        assert.strictEqual(req.url, "/v1/embeddings")
        // Answer out of order, as the API allows: the client must sort by index.
        const data = body.input.map((text, index) => ({ index, embedding: [text.length, index] })).reverse()
        res.setHeader("content-type", "application/json")
        res.end(JSON.stringify({ data }))
      })
    })
    const e = Embeddings.openAI({ baseUrl, apiKey: "sk-test", model: "m1", batchSize: 2 })
    assert.strictEqual(e.id, "openai:m1")
    const vectors = await e.embed(["a", "bb", "ccc"])
    assert.deepStrictEqual(vectors, [
      [1, 0],
      [2, 1],
      [3, 0]
    ])
    assert.deepStrictEqual(
      requests.map((r) => r.body.input),
      [["a", "bb"], ["ccc"]]
    )
    assert.isTrue(requests.every((r) => r.auth === "Bearer sk-test" && r.body.model === "m1"))
  })

  it("turns HTTP errors into EmbeddingFailed with the server's message", async () => {
    const baseUrl = await serve((_req, res) => {
      res.statusCode = 401
      res.setHeader("content-type", "application/json")
      res.end(JSON.stringify({ error: { message: "Incorrect API key provided" } }))
    })
    const message = await expectReason(Embeddings.openAI({ baseUrl, apiKey: "bad" }).embed(["x"]), "EmbeddingFailed")
    assert.strictEqual(message, `embeddings endpoint ${baseUrl}/embeddings answered 401: Incorrect API key provided`)
  })

  it("reports a malformed body, a refused connection and a slow server", async () => {
    const malformed = await serve((_req, res) => res.end('{"data": [{"embedding": "nope"}]}'))
    await expectReason(Embeddings.openAI({ baseUrl: malformed }).embed(["x"]), "EmbeddingFailed")

    const port = await freePort()
    const refused = await expectReason(Embeddings.openAI({ baseUrl: `http://127.0.0.1:${port}/v1` }).embed(["x"]), "BackendUnavailable")
    assert.include(refused, "ECONNREFUSED")

    const slow = await serve(() => {
      // never answers
    })
    const timeout = await expectReason(Embeddings.openAI({ baseUrl: slow, timeoutMs: 300 }).embed(["x"]), "Timeout")
    assert.include(timeout, "timed out after 300 ms")
  })

  it("needs an API key for api.openai.com", () => {
    const saved = process.env["OPENAI_API_KEY"]
    delete process.env["OPENAI_API_KEY"]
    try {
      Embeddings.openAI({ baseUrl: "https://api.openai.com/v1" })
      assert.fail("expected InvalidConfig")
    } catch (e) {
      assert.isTrue(isRagError(e) && e.reason === "InvalidConfig")
      assert.include((e as Error).message, "OPENAI_API_KEY")
    } finally {
      if (saved !== undefined) process.env["OPENAI_API_KEY"] = saved
    }
  })

  it("is built from config settings, reading the key from the named variable", async () => {
    let auth: string | undefined
    const baseUrl = await serve((req, res) => {
      auth = req.headers.authorization
      res.end(JSON.stringify({ data: [{ index: 0, embedding: [1, 2, 3] }] }))
    })
    process.env["RAG_TEST_KEY"] = "from-env"
    try {
      const e = embeddingsFrom({ provider: "openai", baseUrl, apiKeyEnv: "RAG_TEST_KEY", model: "small" })
      assert.deepStrictEqual(await e.embed(["q"]), [[1, 2, 3]])
      assert.strictEqual(auth, "Bearer from-env")
    } finally {
      delete process.env["RAG_TEST_KEY"]
    }
    assert.strictEqual(embeddingsFrom(undefined).id, "use-lite-words-128")
    assert.strictEqual(embeddingsFrom({ provider: "hashing" }).id, "hashing-384")
  })
})
