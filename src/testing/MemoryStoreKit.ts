/**
 * A conformance kit for memory stores: one call registers the vitest suites that every
 * {@link MemoryStoreShape} must pass, whatever holds the data (a `Map`, Redis, SQLite, your own).
 *
 * Expiry is tested on the store's clock: a store that reads Effect's `Clock` (or takes one) hands
 * the kit a clock it moves by hand, and the TTL tests move it past the TTL; a store that expires on
 * a clock of its own (a server's) is tested in real time, the kit waiting for a short-lived
 * sentinel entry to expire rather than for a fixed time.
 *
 * @since 0.1.0
 * @module
 */
import { randomUUID } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { afterAll, assert, describe, it } from "vitest"
import type { MemoryStore } from "lambdagent"

type MemoryEntry = MemoryStore.MemoryEntry
type MemoryStoreShape = MemoryStore.MemoryStoreShape

/**
 * What the kit asks of the store it builds: the per-namespace entry limit to build it with.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ConformanceConfig } from "lambdagent/testing"
 * const c: ConformanceConfig = { maxEntries: 5 }
 * ```
 */
export interface ConformanceConfig {
  /** Build the store so that it keeps at most this many entries per namespace. */
  readonly maxEntries: number
}

/**
 * A store under test and how to release it after each test.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { MemoryStore } from "lambdagent"
 * import type { ConformanceStore } from "lambdagent/testing"
 * const s: ConformanceStore = { store: MemoryStore.makeLocal() }
 * ```
 */
export interface ConformanceStore {
  /** The store under test, empty. */
  readonly store: MemoryStoreShape
  /** Runs after the test: close connections, delete files. */
  readonly cleanup?: () => Promise<void>
  /**
   * A clock the kit moves by hand, started at the current time: the kit runs every operation
   * under it (as the fiber's `Clock`) and moves it past a TTL instead of waiting. Absent: the
   * store expires on real time.
   */
  readonly clock?: ConformanceClock
}

/**
 * A clock moved by hand, for a store whose expiry follows Effect's `Clock` (see
 * {@link ConformanceStore}).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Clock, Effect } from "effect"
 * import type { ConformanceClock } from "lambdagent/testing"
 * let now = Date.now()
 * const nanos = () => BigInt(now) * 1_000_000n
 * const clock: Clock.Clock = {
 *   currentTimeMillisUnsafe: () => now,
 *   currentTimeMillis: Effect.sync(() => now),
 *   currentTimeNanosUnsafe: nanos,
 *   currentTimeNanos: Effect.sync(nanos),
 *   monotonicTimeNanosUnsafe: nanos,
 *   monotonicTimeNanos: Effect.sync(nanos),
 *   sleep: () => Effect.void
 * }
 * const manual: ConformanceClock = { clock, advance: (ms) => void (now += ms) }
 * ```
 */
export interface ConformanceClock {
  /** The clock, as the store reads it. */
  readonly clock: Clock.Clock
  /** Moves the clock forward by `ms` milliseconds. */
  readonly advance: (ms: number) => void
}

/**
 * Options of {@link memoryStoreConformance}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { MemoryStoreConformanceOptions } from "lambdagent/testing"
 * const o: MemoryStoreConformanceOptions = { skip: "no Redis at 127.0.0.1:6379", ttlMs: 300 }
 * ```
 */
export interface MemoryStoreConformanceOptions {
  /** A reason to skip every suite (printed), or `false`/absent to run them. */
  readonly skip?: string | false
  /** The short TTL of the expiry tests, in milliseconds. Default 200. */
  readonly ttlMs?: number
  /** The per-test timeout in milliseconds. Default 30 000. */
  readonly timeoutMs?: number
  /** How many fibers write at once in the concurrency tests. Default 200. */
  readonly fibers?: number
}

const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(effect)

/** `store` with every operation run under `clock` as the fiber's `Clock`. */
const underClock = (store: MemoryStoreShape, clock: Clock.Clock): MemoryStoreShape => {
  const at = <A, E>(effect: Effect.Effect<A, E>) => Effect.provideService(effect, Clock.Clock, clock)
  const putIfAbsent = store.putIfAbsent
  return {
    name: store.name,
    get: (namespace, key) => at(store.get(namespace, key)),
    put: (namespace, key, value, options) => at(store.put(namespace, key, value, options)),
    ...(putIfAbsent !== undefined ? { putIfAbsent: (namespace, key, value, options) => at(putIfAbsent(namespace, key, value, options)) } : {}),
    listRecent: (namespace, limit) => at(store.listRecent(namespace, limit)),
    clear: (namespace) => at(store.clear(namespace))
  }
}

const keysOf = (entries: ReadonlyArray<MemoryEntry>): Array<string> => entries.map((e) => e.key)

/** A value of about `bytes` UTF-8 bytes mixing 1-, 2-, 3- and 4-byte characters. */
const bigValue = (bytes: number): string => {
  const unit = "a\u00e9\u20ac\u{1F600}" // 1 + 2 + 3 + 4 bytes
  return unit.repeat(Math.ceil(bytes / 10))
}

/**
 * Registers the conformance suites of a memory store.
 *
 * `makeStore` is called once per test with the limit the test needs (build the store with
 * `maxEntries: config.maxEntries`); `cleanup`, when given, runs after the test. Every test
 * uses fresh random namespaces, so a shared backend (one Redis, one file) is fine.
 *
 * What is checked: put/get round trip, overwrite, `listRecent` newest first and its limit,
 * `clear` only clears its namespace, namespaces are isolated (also when they look alike),
 * TTL expiry, LRU eviction at `maxEntries` where reads refresh recency, unicode and 1 MB
 * values, concurrent writers from many fibers losing nothing, and, for a store that has the
 * optional `putIfAbsent`, that it writes only an absent key and that exactly one racing writer wins.
 *
 * @since 0.1.0
 * @category testing
 * @example
 * ```ts
 * // test/MyStore.test.ts: the built-in local store stands for yours here
 * import { MemoryStore } from "lambdagent"
 * import { memoryStoreConformance } from "lambdagent/testing"
 *
 * memoryStoreConformance("my-store", async ({ maxEntries }) => {
 *   const store = MemoryStore.makeLocal({ maxEntries })
 *   return { store, cleanup: async () => {} }
 * })
 * ```
 */
export const memoryStoreConformance = (
  name: string,
  makeStore: (config: ConformanceConfig) => Promise<ConformanceStore>,
  options: MemoryStoreConformanceOptions = {}
): void => {
  const ttlMs = options.ttlMs ?? 200
  const timeout = options.timeoutMs ?? 30_000
  const fibers = options.fibers ?? 200
  const skip = options.skip === undefined || options.skip === false ? undefined : options.skip
  if (skip !== undefined) {
    console.warn(`[memoryStoreConformance] skipping "${name}": ${skip}`)
  }
  const suite = skip === undefined ? describe : describe.skip
  const runId = randomUUID().slice(0, 8)

  suite(`MemoryStore conformance: ${name}${skip === undefined ? "" : ` (skipped: ${skip})`}`, () => {
    const pending = new Set<ConformanceStore>()
    afterAll(async () => {
      for (const s of pending) await s.cleanup?.()
    })

    let counter = 0
    const freshNs = (label: string): string => `kit:${runId}:${label}:${++counter}`

    /**
     * Returns once an entry of `ttl` written now has expired on the store's clock: the clock is
     * moved past it, or (real time) a sentinel entry written now is polled until it has gone.
     */
    const outlive = async (s: ConformanceStore, ttl: number): Promise<void> => {
      if (s.clock !== undefined) return s.clock.advance(ttl + 1)
      const ns = freshNs("clock")
      await run(s.store.put(ns, "sentinel", "s", { ttlMs: ttl }))
      const deadline = Date.now() + timeout / 2
      while ((await run(s.store.get(ns, "sentinel"))) !== undefined) {
        if (Date.now() > deadline) throw new Error(`an entry with a ttl of ${ttl} ms has not expired after ${timeout / 2} ms`)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    }

    const test = (title: string, maxEntries: number, body: (store: MemoryStoreShape, outliveTtl: () => Promise<void>) => Promise<void>): void => {
      it(
        title,
        async () => {
          const s = await makeStore({ maxEntries })
          pending.add(s)
          try {
            await body(s.clock === undefined ? s.store : underClock(s.store, s.clock.clock), () => outlive(s, ttlMs))
          } finally {
            pending.delete(s)
            await s.cleanup?.()
          }
        },
        timeout
      )
    }

    test("put then get returns the entry", 100, async (store) => {
      const ns = freshNs("roundtrip")
      const before = Date.now()
      await run(store.put(ns, "greeting", "hello"))
      const entry = await run(store.get(ns, "greeting"))
      assert.isDefined(entry)
      assert.strictEqual(entry!.key, "greeting")
      assert.strictEqual(entry!.value, "hello")
      assert.isUndefined(entry!.expiresAt, "no ttl: no expiresAt")
      assert.isNumber(entry!.createdAt)
      // milliseconds since the epoch, close to now (loose bound for servers with their own clock)
      assert.isBelow(Math.abs(entry!.createdAt - before), 60_000)
      assert.isUndefined(await run(store.get(ns, "missing")))
      assert.isUndefined(await run(store.get(freshNs("other"), "greeting")))
    })

    test("a ttl sets expiresAt = createdAt + ttl", 100, async (store) => {
      const ns = freshNs("expiresAt")
      await run(store.put(ns, "k", "v", { ttlMs: 60_000 }))
      const entry = await run(store.get(ns, "k"))
      assert.isDefined(entry)
      assert.strictEqual(entry!.expiresAt! - entry!.createdAt, 60_000)
      await run(store.put(ns, "k", "v2", { ttlMs: 0 }))
      const again = await run(store.get(ns, "k"))
      assert.strictEqual(again?.value, "v2")
      assert.isUndefined(again?.expiresAt, "ttlMs 0 means no expiry")
    })

    test("overwrite replaces the value and makes the key the newest", 100, async (store) => {
      const ns = freshNs("overwrite")
      await run(store.put(ns, "a", "first"))
      await run(store.put(ns, "b", "other"))
      await run(store.put(ns, "a", "second"))
      assert.strictEqual((await run(store.get(ns, "a")))?.value, "second")
      const recent = await run(store.listRecent(ns, 10))
      assert.deepStrictEqual(keysOf(recent), ["a", "b"])
      assert.deepStrictEqual(
        recent.map((e) => e.value),
        ["second", "other"]
      )
    })

    test("listRecent returns the newest writes first, up to the limit", 100, async (store) => {
      const ns = freshNs("recent")
      for (let i = 0; i < 10; i++) await run(store.put(ns, `k${i}`, `v${i}`))
      assert.deepStrictEqual(keysOf(await run(store.listRecent(ns, 3))), ["k9", "k8", "k7"])
      const all = await run(store.listRecent(ns, 100))
      assert.deepStrictEqual(keysOf(all), ["k9", "k8", "k7", "k6", "k5", "k4", "k3", "k2", "k1", "k0"])
      assert.deepStrictEqual(
        all.map((e) => e.value),
        ["v9", "v8", "v7", "v6", "v5", "v4", "v3", "v2", "v1", "v0"]
      )
      assert.deepStrictEqual(await run(store.listRecent(ns, 0)), [])
      assert.deepStrictEqual(await run(store.listRecent(ns, -1)), [])
      assert.strictEqual((await run(store.listRecent(ns, Number.MAX_SAFE_INTEGER))).length, 10)
      assert.strictEqual((await run(store.listRecent(ns, Number.POSITIVE_INFINITY))).length, 10)
      assert.deepStrictEqual(keysOf(await run(store.listRecent(ns, 2.7))), ["k9", "k8"])
      assert.deepStrictEqual(await run(store.listRecent(freshNs("empty"), 5)), [])
      // reading is a use (LRU) but not a write: the write order is unchanged
      await run(store.get(ns, "k0"))
      assert.deepStrictEqual(keysOf(await run(store.listRecent(ns, 1))), ["k9"])
    })

    test("clear empties only its namespace", 100, async (store) => {
      const a = freshNs("clearA")
      const b = freshNs("clearB")
      await run(store.put(a, "x", "1"))
      await run(store.put(a, "y", "2"))
      await run(store.put(b, "x", "3"))
      await run(store.clear(a))
      assert.isUndefined(await run(store.get(a, "x")))
      assert.deepStrictEqual(await run(store.listRecent(a, 10)), [])
      assert.strictEqual((await run(store.get(b, "x")))?.value, "3")
      assert.deepStrictEqual(keysOf(await run(store.listRecent(b, 10))), ["x"])
      // a cleared namespace is usable again
      await run(store.put(a, "z", "4"))
      assert.deepStrictEqual(keysOf(await run(store.listRecent(a, 10))), ["z"])
      await run(store.clear(freshNs("never-written")))
    })

    test("namespaces are isolated, also when namespace and key look alike", 100, async (store) => {
      const base = freshNs("iso")
      await run(store.put(`${base}:session:1`, "k", "s1"))
      await run(store.put(`${base}:session:2`, "k", "s2"))
      // ("p:a", "b") and ("p", "a:b") must be different entries
      await run(store.put(`${base}:a`, "b", "nested-ns"))
      await run(store.put(base, "a:b", "nested-key"))
      assert.strictEqual((await run(store.get(`${base}:session:1`, "k")))?.value, "s1")
      assert.strictEqual((await run(store.get(`${base}:session:2`, "k")))?.value, "s2")
      assert.strictEqual((await run(store.get(`${base}:a`, "b")))?.value, "nested-ns")
      assert.strictEqual((await run(store.get(base, "a:b")))?.value, "nested-key")
      assert.deepStrictEqual(keysOf(await run(store.listRecent(base, 10))), ["a:b"])
      await run(store.clear(`${base}:a`))
      assert.strictEqual((await run(store.get(base, "a:b")))?.value, "nested-key")
      assert.strictEqual((await run(store.get(`${base}:session:1`, "k")))?.value, "s1")
    })

    test("entries expire after their ttl", 100, async (store, outliveTtl) => {
      const ns = freshNs("ttl")
      await run(store.put(ns, "forever", "f"))
      await run(store.put(ns, "long", "l", { ttlMs: 60_000 }))
      await run(store.put(ns, "short", "s", { ttlMs }))
      assert.strictEqual((await run(store.get(ns, "short")))?.value, "s")
      await outliveTtl()
      assert.isUndefined(await run(store.get(ns, "short")))
      assert.deepStrictEqual(keysOf(await run(store.listRecent(ns, 10))), ["long", "forever"])
      // a write after expiry starts a new life
      await run(store.put(ns, "short", "again", { ttlMs: 60_000 }))
      assert.strictEqual((await run(store.get(ns, "short")))?.value, "again")
    })

    test("expired entries do not push live entries out", 3, async (store, outliveTtl) => {
      const ns = freshNs("ttl-lru")
      await run(store.put(ns, "dies", "d", { ttlMs }))
      await run(store.put(ns, "l1", "1"))
      await run(store.put(ns, "l2", "2"))
      await outliveTtl()
      await run(store.put(ns, "l3", "3"))
      assert.deepStrictEqual(keysOf(await run(store.listRecent(ns, 10))), ["l3", "l2", "l1"])
    })

    test("keeps at most maxEntries, evicting the least recently used; reads refresh recency", 5, async (store) => {
      const ns = freshNs("lru")
      for (let i = 1; i <= 5; i++) await run(store.put(ns, `k${i}`, `v${i}`))
      assert.strictEqual((await run(store.get(ns, "k1")))?.value, "v1") // k1 is now the most recently used
      await run(store.put(ns, "k6", "v6")) // evicts k2
      assert.sameMembers(keysOf(await run(store.listRecent(ns, 100))), ["k1", "k3", "k4", "k5", "k6"])
      await run(store.put(ns, "k3", "v3b")) // a write refreshes too: k4 is now the least recently used
      await run(store.put(ns, "k7", "v7")) // evicts k4
      const left = await run(store.listRecent(ns, 100))
      assert.deepStrictEqual(keysOf(left), ["k7", "k3", "k6", "k5", "k1"])
      assert.isUndefined(await run(store.get(ns, "k2")))
      assert.isUndefined(await run(store.get(ns, "k4")))
      // another namespace has its own budget
      const other = freshNs("lru-other")
      await run(store.put(other, "x", "y"))
      assert.strictEqual((await run(store.listRecent(ns, 100))).length, 5)
    })

    test("unicode namespaces, keys and values round-trip", 100, async (store) => {
      const ns = `${freshNs("unicode")}:\u4f1a\u8bdd:\u{1F9E0}`
      const pairs: ReadonlyArray<readonly [string, string]> = [
        ["\u043a\u043b\u044e\u0447", "\u0437\u043d\u0430\u0447\u0435\u043d\u0438\u0435"],
        ["\u952e\u{1F511}", "\u503c \u{1F600}\u{1F469}\u200D\u{1F4BB}"],
        ["e\u0301", "\u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627"],
        ["tab\tnew\nline", "quotes \" ' ` and \\ backslash"],
        ["%_*?[]{}:|", "sql % _ and glob * ? [] wildcards"],
        ["nul\u0000inside", "value\u0000with\u0000nul"],
        ["", "empty key"]
      ]
      for (const [k, v] of pairs) await run(store.put(ns, k, v))
      for (const [k, v] of pairs) {
        const entry = await run(store.get(ns, k))
        assert.strictEqual(entry?.key, k)
        assert.strictEqual(entry?.value, v)
      }
      const recent = await run(store.listRecent(ns, 100))
      assert.deepStrictEqual(
        recent.map((e) => [e.key, e.value]),
        [...pairs].reverse().map(([k, v]) => [k, v])
      )
    })

    test("1 MB values round-trip", 100, async (store) => {
      const ns = freshNs("big")
      const value = bigValue(1024 * 1024)
      assert.isAtLeast(Buffer.byteLength(value, "utf8"), 1024 * 1024)
      await run(store.put(ns, "big", value))
      await run(store.put(ns, "big2", value + "!"))
      assert.strictEqual((await run(store.get(ns, "big")))?.value, value)
      const recent = await run(store.listRecent(ns, 2))
      assert.deepStrictEqual(keysOf(recent), ["big2", "big"])
      assert.strictEqual(recent[0]!.value, value + "!")
      assert.strictEqual(recent[1]!.value, value)
    })

    test("concurrent puts from many fibers lose nothing", fibers + 100, async (store) => {
      const ns = freshNs("concurrent")
      const keys = Array.from({ length: fibers }, (_, i) => `k${i}`)
      await run(Effect.forEach(keys, (k) => store.put(ns, k, `value of ${k}`), { concurrency: "unbounded", discard: true }))
      const all = await run(store.listRecent(ns, fibers + 50))
      assert.strictEqual(all.length, fibers)
      assert.sameMembers(keysOf(all), keys)
      const values = await run(Effect.forEach(keys, (k) => store.get(ns, k), { concurrency: "unbounded" }))
      values.forEach((e, i) => assert.strictEqual(e?.value, `value of k${i}`))
    })

    test("concurrent overwrites of one key leave exactly one entry", 100, async (store) => {
      const ns = freshNs("same-key")
      const n = Math.min(fibers, 100)
      await run(
        Effect.forEach(
          Array.from({ length: n }, (_, i) => i),
          (i) => store.put(ns, "shared", `writer ${i}`),
          { concurrency: "unbounded", discard: true }
        )
      )
      const all = await run(store.listRecent(ns, 10))
      assert.strictEqual(all.length, 1)
      assert.match(all[0]!.value, /^writer \d+$/)
      assert.strictEqual((await run(store.get(ns, "shared")))?.value, all[0]!.value)
    })

    test("concurrent puts keep the namespace at exactly maxEntries", 5, async (store) => {
      const ns = freshNs("concurrent-lru")
      await run(
        Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          (i) => store.put(ns, `k${i}`, `v${i}`),
          { concurrency: "unbounded", discard: true }
        )
      )
      const left = await run(store.listRecent(ns, 100))
      assert.strictEqual(left.length, 5)
      for (const e of left) assert.strictEqual(e.value, `v${e.key.slice(1)}`)
    })

    test("a negative or non-finite ttl is rejected with MemoryError", 100, async (store) => {
      const ns = freshNs("bad-ttl")
      for (const ttl of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
        const error = await run(Effect.flip(store.put(ns, "k", "v", { ttlMs: ttl })))
        assert.strictEqual(error._tag, "MemoryError")
        assert.strictEqual(error.operation, "put")
      }
      assert.isUndefined(await run(store.get(ns, "k")))
    })

    // putIfAbsent is optional; a store that has it must make it atomic
    test("putIfAbsent writes once: a live key is kept, an expired one counts as absent", 100, async (store, outliveTtl) => {
      if (store.putIfAbsent === undefined) return
      const ns = freshNs("if-absent")
      assert.isTrue(await run(store.putIfAbsent(ns, "k", "first")))
      assert.isFalse(await run(store.putIfAbsent(ns, "k", "second")))
      assert.strictEqual((await run(store.get(ns, "k")))?.value, "first")
      assert.deepStrictEqual(keysOf(await run(store.listRecent(ns, 10))), ["k"])
      assert.isTrue(await run(store.putIfAbsent(ns, "short", "v1", { ttlMs })))
      await outliveTtl()
      assert.isTrue(await run(store.putIfAbsent(ns, "short", "v2")), "an expired entry is absent")
      assert.strictEqual((await run(store.get(ns, "short")))?.value, "v2")
      const error = await run(Effect.flip(store.putIfAbsent(ns, "bad", "v", { ttlMs: -1 })))
      assert.strictEqual(error._tag, "MemoryError")
    })

    test("putIfAbsent from many fibers at once: exactly one writer wins", 100, async (store) => {
      if (store.putIfAbsent === undefined) return
      const putIfAbsent = store.putIfAbsent
      const ns = freshNs("if-absent-race")
      const n = Math.min(fibers, 100)
      const won = await run(
        Effect.forEach(
          Array.from({ length: n }, (_, i) => i),
          (i) => putIfAbsent(ns, "claim", `writer ${i}`),
          { concurrency: "unbounded" }
        )
      )
      const winners = won.flatMap((w, i) => (w ? [i] : []))
      assert.strictEqual(winners.length, 1)
      assert.strictEqual((await run(store.get(ns, "claim")))?.value, `writer ${winners[0]}`)
    })
  })
}
