import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { MemoryStore, SharedMemory } from "lambdagent"
import * as SqliteMemory from "../plugins/sqlite/index.ts"

describe("SharedMemory", () => {
  it.effect("without appendOnly, set overwrites and history holds the current value", () =>
    Effect.gen(function*() {
      const store = MemoryStore.makeLocal()
      const sm = yield* SharedMemory.make(store)
      assert.strictEqual(sm.namespace, "shared")
      assert.isFalse(sm.appendOnly)
      yield* sm.set("plan", "v1")
      yield* sm.set("plan", "v2")
      assert.strictEqual(yield* sm.get("plan"), "v2")
      assert.deepStrictEqual((yield* sm.history("plan")).map((v) => v.value), ["v2"])
      assert.deepStrictEqual(yield* sm.snapshot, { plan: "v2" })
      assert.strictEqual((yield* store.listRecent("shared", 10)).length, 1)
      assert.deepStrictEqual(yield* sm.history("missing"), [])
    }))

  it.effect("appendOnly never overwrites: every version stays readable, oldest first", () =>
    Effect.gen(function*() {
      const store = MemoryStore.makeLocal()
      const sm = yield* SharedMemory.make(store, { appendOnly: true, namespace: "team:1" })
      yield* sm.set("plan", "v1")
      yield* sm.set("owner", "ada")
      yield* sm.set("plan", "v2")
      yield* sm.set("plan", "v3")
      assert.strictEqual(yield* sm.get("plan"), "v3")
      assert.strictEqual(yield* sm.get("owner"), "ada")
      assert.isUndefined(yield* sm.get("nobody"))
      const history = yield* sm.history("plan")
      assert.deepStrictEqual(history.map((v) => [v.key, v.value]), [["plan", "v1"], ["plan", "v2"], ["plan", "v3"]])
      assert.deepStrictEqual(yield* sm.snapshot, { plan: "v3", owner: "ada" })
      assert.deepStrictEqual((yield* sm.recent(2)).map((v) => v.value), ["v3", "v2"])
      // four writes, four store entries: nothing was replaced
      assert.strictEqual((yield* store.listRecent("team:1", 100)).length, 4)
    }))

  it.effect("initial bindings are written once, only where a key has no value", () =>
    Effect.gen(function*() {
      const store = MemoryStore.makeLocal()
      const first = yield* SharedMemory.make(store, { appendOnly: true, initial: { goal: "ship", mode: "draft" } })
      yield* first.set("mode", "review")
      const second = yield* SharedMemory.make(store, { appendOnly: true, initial: { goal: "other", mode: "draft" } })
      assert.deepStrictEqual(yield* second.snapshot, { goal: "ship", mode: "review" })
      assert.strictEqual((yield* second.history("goal")).length, 1)
      const plain = yield* SharedMemory.make(store, { namespace: "plain", initial: { a: "1" } })
      assert.strictEqual(yield* plain.get("a"), "1")
    }))

  it.effect("keys with separators and unicode keep their identity", () =>
    Effect.gen(function*() {
      const sm = yield* SharedMemory.make(MemoryStore.makeLocal(), { appendOnly: true })
      const keys = ["a@b", "x\u241Fy", "\u8ba1\u5212", "", "k:v|w"]
      for (const k of keys) yield* sm.set(k, `value of ${k}`)
      for (const k of keys) {
        assert.strictEqual(yield* sm.get(k), `value of ${k}`)
        assert.deepStrictEqual((yield* sm.history(k)).map((v) => v.key), [k])
      }
    }))

  it.effect("concurrent appends from many fibers all land", () =>
    Effect.gen(function*() {
      const sm = yield* SharedMemory.make(MemoryStore.makeLocal(), { appendOnly: true })
      yield* Effect.forEach(
        Array.from({ length: 300 }, (_, i) => i),
        (i) => sm.set("log", `line ${i}`),
        { concurrency: "unbounded", discard: true }
      )
      const history = yield* sm.history("log")
      assert.strictEqual(history.length, 300)
      assert.strictEqual(new Set(history.map((v) => v.value)).size, 300)
    }))

  it("works over a durable store (sqlite)", async () => {
    const result = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const store = yield* SqliteMemory.make({ path: ":memory:" })
      const sm = yield* SharedMemory.make(store, { appendOnly: true })
      yield* sm.set("k", "1")
      yield* sm.set("k", "2")
      return yield* sm.history("k")
    })))
    assert.deepStrictEqual(result.map((v) => v.value), ["1", "2"])
  })
})
