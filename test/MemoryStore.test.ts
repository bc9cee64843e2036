import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import { MemoryStore } from "lambdagent"
import { LocalMemory } from "../src/internal/LocalMemory.ts"
import { memoryStoreConformance } from "../src/testing/MemoryStoreKit.ts"
import { manualClock } from "./fixtures/manualClock.ts"

memoryStoreConformance("local", async ({ maxEntries }) => ({ store: MemoryStore.makeLocal({ maxEntries }), clock: manualClock(Date.now()) }))

describe("MemoryStore.namespace", () => {
  it("maps scopes to namespace strings", () => {
    assert.strictEqual(MemoryStore.namespace({ kind: "session", id: "abc" }), "session:abc")
    assert.strictEqual(MemoryStore.namespace({ kind: "user", id: "ada" }), "user:ada")
    assert.strictEqual(MemoryStore.namespace({ kind: "global" }), "global")
  })
})

describe("MemoryStore.makeLocal", () => {
  it.effect("expiry follows the fiber's Clock (TestClock)", () =>
    Effect.gen(function* () {
      const store = MemoryStore.makeLocal()
      const ns = MemoryStore.namespace({ kind: "session", id: "ttl" })
      yield* store.put(ns, "k", "v", { ttlMs: 60_000 })
      const entry = yield* store.get(ns, "k")
      assert.strictEqual(entry?.expiresAt, entry!.createdAt + 60_000)
      yield* TestClock.adjust("59999 millis")
      assert.strictEqual((yield* store.get(ns, "k"))?.value, "v")
      assert.strictEqual((yield* store.listRecent(ns, 10)).length, 1)
      yield* TestClock.adjust("1 millis")
      assert.isUndefined(yield* store.get(ns, "k"))
      assert.deepStrictEqual(yield* store.listRecent(ns, 10), [])
    })
  )

  it.effect("createdAt is the Clock's time of the last write", () =>
    Effect.gen(function* () {
      const store = MemoryStore.makeLocal()
      yield* TestClock.setTime(1_000_000)
      yield* store.put("global", "k", "a")
      yield* TestClock.adjust("5 seconds")
      yield* store.put("global", "k", "b")
      const entry = yield* store.get("global", "k")
      assert.deepStrictEqual(entry, { key: "k", value: "b", createdAt: 1_005_000 })
    })
  )

  it.effect("a fixed clock option overrides the fiber's Clock", () =>
    Effect.gen(function* () {
      const { advance, clock } = manualClock(10_000)
      const store = MemoryStore.makeLocal({ clock })
      yield* store.put("global", "k", "v", { ttlMs: 100 })
      assert.strictEqual((yield* store.get("global", "k"))?.createdAt, 10_000)
      advance(100)
      assert.isUndefined(yield* store.get("global", "k"))
    })
  )

  it("expired entries in namespaces nobody reads again are swept by later writes", () => {
    const memory = new LocalMemory(10)
    for (let i = 0; i < 50; i++) memory.put(`session:${i}`, "k", "v", 1_000, 0)
    assert.strictEqual(memory.size("session:0"), 1)
    memory.put("session:live", "k", "v", 0, 30_000) // before the sweep interval: nothing swept
    assert.strictEqual(memory.size("session:0"), 1)
    memory.put("session:live", "k2", "v", 0, 61_000)
    for (let i = 0; i < 50; i++) assert.strictEqual(memory.size(`session:${i}`), 0)
    assert.strictEqual(memory.size("session:live"), 2)
  })

  it("evicts expired entries before live ones and keeps write order across overwrites", () => {
    const memory = new LocalMemory(3)
    memory.put("ns", "a", "1", 0, 0)
    memory.put("ns", "b", "2", 100, 0)
    memory.put("ns", "c", "3", 0, 0)
    memory.put("ns", "d", "4", 0, 200) // b has expired: it goes, a stays
    assert.deepStrictEqual(
      memory.listRecent("ns", 10, 200).map((e) => e.key),
      ["d", "c", "a"]
    )
    memory.put("ns", "a", "1b", 0, 300) // overwrite moves a to the front
    assert.deepStrictEqual(
      memory.listRecent("ns", 2, 300).map((e) => e.key),
      ["a", "d"]
    )
    memory.put("ns", "e", "5", 0, 400) // c is least recently used now
    assert.deepStrictEqual(
      memory.listRecent("ns", 10, 400).map((e) => e.key),
      ["e", "a", "d"]
    )
  })

  it("rejects a maxEntries that is not a positive integer", () => {
    assert.throws(() => MemoryStore.makeLocal({ maxEntries: 0 }), RangeError)
    assert.throws(() => MemoryStore.makeLocal({ maxEntries: 1.5 }), RangeError)
  })

  it.effect("layerLocal provides the MemoryStore service", () =>
    Effect.gen(function* () {
      const store = yield* MemoryStore.MemoryStore
      assert.strictEqual(store.name, "local")
      yield* store.put("user:ada", "lang", "en")
      assert.strictEqual((yield* store.get("user:ada", "lang"))?.value, "en")
    }).pipe(Effect.provide(MemoryStore.layerLocal({ maxEntries: 10 })))
  )

  it("isMemoryError recognises the error by tag", () => {
    const e = new MemoryStore.MemoryError({ store: "local", operation: "get", message: "boom" })
    assert.isTrue(MemoryStore.isMemoryError(e))
    assert.isTrue(MemoryStore.isMemoryError({ _tag: "MemoryError" }))
    assert.isFalse(MemoryStore.isMemoryError(new Error("boom")))
    assert.isFalse(MemoryStore.isMemoryError(null))
    assert.strictEqual(e.message, "boom")
  })
})
