import { describe, expect, it } from "vitest"
import { createLambdaServer } from "./server.ts"
import { TermCache } from "./termCache.ts"

describe("TermCache", () => {
  it("reads a term once, by its JSON text, and keeps only what `keep` accepts", () => {
    const cache = new TermCache<{ readonly n: number } | { readonly error: string }>(8, 1_000)
    let reads = 0
    const read = (n: number) => () => {
      reads++
      return n < 0 ? { error: "negative" } : { n }
    }
    const keep = (v: { readonly n: number } | { readonly error: string }) => !("error" in v)
    const first = cache.get({ add: [1, 2] }, read(1), keep)
    expect(cache.get({ add: [1, 2] }, read(2), keep)).toBe(first)
    expect(cache.get({ add: [2, 1] }, read(3), keep)).toEqual({ n: 3 })
    expect(reads).toBe(2)
    // not kept: read again every time
    cache.get("bad", read(-1), keep)
    cache.get("bad", read(-1), keep)
    expect(reads).toBe(4)
    expect(cache.size).toBe(2)
  })

  it("holds at most `capacity` terms, the oldest leaving first, and never a long text or one without JSON", () => {
    const cache = new TermCache<number>(2, 10)
    let reads = 0
    const read = () => ++reads
    const keep = () => true
    cache.get(1, read, keep)
    cache.get(2, read, keep)
    cache.get(3, read, keep) // evicts 1
    expect(cache.size).toBe(2)
    expect(cache.get(2, read, keep)).toBe(2)
    expect(cache.get(1, read, keep)).toBe(4)
    cache.get("a long string of text", read, keep)
    cache.get(10n, read, keep)
    expect(cache.size).toBe(2)
    expect(reads).toBe(6)
  })
})

describe("run of an inline term taken from the cache", () => {
  it("answers as the first time, values and errors alike, and still refuses what the policy forbids", async () => {
    const server = await createLambdaServer()
    const run = async (code: unknown, input: unknown = null) => (await server.callTool("run", { code, input })).structuredContent
    for (let i = 0; i < 3; i++) {
      expect(await run({ add: [40, 2] })).toEqual({ value: 42, steps: expect.any(Number) })
      expect(await run({ lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } }, 7)).toMatchObject({ value: 49 })
      expect(await run({ add: [1.5, 2] })).toMatchObject({ kind: "TermParseError" })
      expect(await run({ llm: { system: "Answer." } })).toMatchObject({ kind: "CapabilityDenied" })
      expect(await run({ div: [1, 0] })).toMatchObject({ kind: expect.any(String) })
    }
    await server.close()
  })
})
