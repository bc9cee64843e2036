import { randomUUID } from "node:crypto"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Redis } from "ioredis"
import { MemoryStore } from "lambdagent"
import { memoryStoreConformance } from "../../src/testing/MemoryStoreKit.ts"
import { failureOf, freePort, hasRedisServer, openScoped, type RedisServer, redisServer, startWorker } from "../../test/fixtures/helpers.ts"
import { deleteRedisKeys, redisUnavailable, testRedisUrl } from "../../test/fixtures/redis.ts"
import { waitFor } from "../../test/fixtures/waitFor.ts"
import * as RedisMemory from "./index.ts"

const url = testRedisUrl
const prefix = `lambdagent-test:${randomUUID()}:`

/** Why the tests against the shared Redis cannot run, or undefined when they can. */
const unavailable = await redisUnavailable(url)
const noServerBinary = (await hasRedisServer()) ? undefined : "the redis-server binary is not installed"
if (unavailable !== undefined) console.warn(`[redis tests] skipping: ${unavailable}`)
if (noServerBinary !== undefined) console.warn(`[redis tests] skipping fault tests: ${noServerBinary}`)

afterAll(async () => {
  if (unavailable !== undefined) return
  // delete every key this run wrote
  await deleteRedisKeys(prefix, url)
})

memoryStoreConformance(
  "redis",
  async ({ maxEntries }) => {
    const { value: store, close } = await openScoped(RedisMemory.make({ url, keyPrefix: prefix, maxEntries }))
    return { store, cleanup: close }
  },
  unavailable === undefined ? {} : { skip: unavailable }
)

describe.skipIf(unavailable !== undefined)("RedisMemory", () => {
  it("lays out one key per entry plus three sorted sets per namespace under the prefix", async () => {
    const p = `${prefix}layout:`
    const { value: store, close } = await openScoped(RedisMemory.make({ url, keyPrefix: p }))
    const client = new Redis(url)
    try {
      await Effect.runPromise(store.put("session:1", "a", "1", { ttlMs: 60_000 }))
      await Effect.runPromise(store.put("session:1", "b", "2"))
      const k = RedisMemory.keys(p, "session:1")
      assert.deepStrictEqual(await client.zrange(k.lru, "0", "-1"), ["a", "b"])
      assert.deepStrictEqual(await client.zrange(k.log, "0", "-1"), ["a", "b"])
      assert.deepStrictEqual(await client.zrange(k.exp, "0", "-1"), ["a"])
      // native expiry on the entry with a ttl, none on the other
      const pttl = await client.pttl(k.valuePrefix + "a")
      assert.isAbove(pttl, 50_000)
      assert.isAtMost(pttl, 60_000)
      assert.strictEqual(await client.pttl(k.valuePrefix + "b"), -1)
      await Effect.runPromise(store.clear("session:1"))
      assert.deepStrictEqual(await client.keys(`${p}*`), [`${p}seq`])
    } finally {
      client.disconnect()
      await close()
    }
  })

  it("an entry deleted behind the store's back (e.g. by Redis eviction) disappears from every view", async () => {
    const p = `${prefix}orphan:`
    const { value: store, close } = await openScoped(RedisMemory.make({ url, keyPrefix: p, maxEntries: 3 }))
    const client = new Redis(url)
    try {
      for (const key of ["a", "b", "c"]) await Effect.runPromise(store.put("global", key, key))
      const k = RedisMemory.keys(p, "global")
      await client.del(k.valuePrefix + "c")
      assert.deepStrictEqual(
        (await Effect.runPromise(store.listRecent("global", 10))).map((e) => e.key),
        ["b", "a"]
      )
      assert.strictEqual(await client.zcard(k.lru), 2)
      await client.del(k.valuePrefix + "a")
      assert.isUndefined(await Effect.runPromise(store.get("global", "a")))
      assert.strictEqual(await client.zcard(k.lru), 1)
    } finally {
      client.disconnect()
      await close()
    }
  })

  it("reads the URL from LAMBDAGENT_REDIS_URL when no url is given", async () => {
    const previous = process.env["LAMBDAGENT_REDIS_URL"]
    const port = await freePort()
    process.env["LAMBDAGENT_REDIS_URL"] = `redis://127.0.0.1:${port}`
    try {
      const error = await failureOf(Effect.scoped(RedisMemory.make({ keyPrefix: prefix, connectTimeoutMs: 500 })))
      assert.include(error.message, `redis://127.0.0.1:${port}`)
    } finally {
      if (previous === undefined) delete process.env["LAMBDAGENT_REDIS_URL"]
      else process.env["LAMBDAGENT_REDIS_URL"] = previous
    }
  })

  it("layer provides MemoryStore and plugin exposes the factory", async () => {
    const value = await Effect.runPromise(
      MemoryStore.MemoryStore.use((s) => Effect.andThen(s.put("global", "k", "v"), s.get("global", "k"))).pipe(
        Effect.provide(RedisMemory.layer({ url, keyPrefix: `${prefix}layer:` }))
      )
    )
    assert.strictEqual(value?.value, "v")
    assert.strictEqual(RedisMemory.plugin.name, "redis")
    assert.strictEqual(RedisMemory.plugin.stores.redis, RedisMemory.make)
  })

  it("several processes writing one namespace concurrently lose nothing", async () => {
    const workers = Array.from({ length: 4 }, (_, i) =>
      startWorker("write", {
        store: "redis",
        target: url,
        prefix,
        ns: "multi",
        id: `p${i}`,
        count: 150,
        maxEntries: 10_000
      })
    )
    const codes = await Promise.all(workers.map((w) => w.exited))
    codes.forEach((code, i) => assert.strictEqual(code, 0, workers[i]!.output()))
    const { value: store, close } = await openScoped(RedisMemory.make({ url, keyPrefix: prefix, maxEntries: 10_000 }))
    try {
      const all = await Effect.runPromise(store.listRecent("multi", 10_000))
      assert.strictEqual(all.length, 600)
      const byKey = new Map(all.map((e) => [e.key, e.value]))
      for (let p = 0; p < 4; p++) {
        for (let i = 0; i < 150; i++) assert.strictEqual(byKey.get(`p${p}-${i}`), `value p${p} ${i}`)
      }
    } finally {
      await close()
    }
  })

  it("every write a killed (-9) process acknowledged is there afterwards", async () => {
    const worker = startWorker("write", {
      store: "redis",
      target: url,
      prefix,
      ns: "durable",
      id: "d",
      count: 1_000_000,
      maxEntries: 10_000_000
    })
    await worker.until(() => worker.acks.size >= 300, 30_000)
    worker.child.kill("SIGKILL")
    await worker.exited
    const acked = [...worker.acks]
    const { value: store, close } = await openScoped(RedisMemory.make({ url, keyPrefix: prefix, maxEntries: 10_000_000 }))
    try {
      const entries = await Effect.runPromise(Effect.forEach(acked, (i) => store.get("durable", `d-${i}`), { concurrency: 16 }))
      const missing = acked.filter((i, n) => entries[n]?.value !== `value d ${i}`)
      assert.deepStrictEqual(missing, [])
    } finally {
      await close()
    }
  })
})

describe.skipIf(noServerBinary !== undefined)("RedisMemory faults (private redis-server)", () => {
  const servers: Array<RedisServer> = []
  afterAll(async () => {
    for (const s of servers) await s.kill()
  })
  const startServer = async () => {
    const server = redisServer(await freePort())
    servers.push(server)
    await server.start()
    return server
  }

  it("an unreachable URL fails fast at start with a MemoryError naming the URL", async () => {
    const port = await freePort()
    // fast: a refused connection is reported as such (a hang would fail on the test's timeout)
    const error = await failureOf(Effect.scoped(RedisMemory.make({ url: `redis://127.0.0.1:${port}`, connectTimeoutMs: 500 })))
    assert.isTrue(MemoryStore.isMemoryError(error))
    assert.strictEqual(error.store, "redis")
    assert.strictEqual(error.operation, "open")
    assert.include(error.message, `redis://127.0.0.1:${port}`)
    assert.match(error.message, /ECONNREFUSED|not reachable|cannot reach/)
  })

  it("the password of the URL never shows in errors", async () => {
    const port = await freePort()
    const error = await failureOf(Effect.scoped(RedisMemory.make({ url: `redis://agent:s3cret-pass@127.0.0.1:${port}`, connectTimeoutMs: 500 })))
    assert.notInclude(error.message, "s3cret-pass")
    assert.include(error.message, `127.0.0.1:${port}`)
  })

  it("Redis killed mid-run: operations fail fast with MemoryError, and the store works again after a restart", async () => {
    const server = await startServer()
    const { value: store, close } = await openScoped(RedisMemory.make({ url: server.url, commandTimeoutMs: 500, connectTimeoutMs: 500 }))
    try {
      await Effect.runPromise(store.put("session:1", "k", "before"))
      assert.strictEqual((await Effect.runPromise(store.get("session:1", "k")))?.value, "before")

      await server.kill("SIGKILL")
      for (const op of [store.put("session:1", "k", "during"), store.get("session:1", "k"), store.listRecent("session:1", 5)]) {
        // "not connected", not "timed out": the operation is refused at once, without waiting for a timeout
        const error = await failureOf(op as Effect.Effect<unknown, MemoryStore.MemoryError>)
        assert.strictEqual(error._tag, "MemoryError")
        assert.strictEqual(error.store, "redis")
        assert.include(error.message, server.url)
        assert.match(error.message, /not connected/)
      }

      await server.start() // same port, empty (no persistence)
      await waitFor(
        () =>
          Effect.runPromise(
            store.put("session:1", "k", "after").pipe(
              Effect.as(true),
              Effect.catch(() => Effect.succeed(false))
            )
          ),
        "the store to reconnect when Redis is back",
        { everyMs: 100 }
      )
      assert.strictEqual((await Effect.runPromise(store.get("session:1", "k")))?.value, "after")
      assert.deepStrictEqual(
        (await Effect.runPromise(store.listRecent("session:1", 5))).map((e) => e.value),
        ["after"]
      )
    } finally {
      await close()
    }
  })

  it("a hung Redis (SIGSTOP) makes operations fail after the command timeout instead of hanging", async () => {
    const server = await startServer()
    const { value: store, close } = await openScoped(RedisMemory.make({ url: server.url, commandTimeoutMs: 300, connectTimeoutMs: 500 }))
    try {
      await Effect.runPromise(store.put("global", "k", "v"))
      server.signal("SIGSTOP")
      const started = Date.now()
      const error = await failureOf(store.get("global", "k"))
      assert.strictEqual(error._tag, "MemoryError")
      assert.match(error.message, /timed out/i)
      // the command timeout is the wait tested: a lower bound, which load cannot break
      assert.isAtLeast(Date.now() - started, 250)
      server.signal("SIGCONT")
      let value: string | undefined
      await waitFor(
        async () => {
          value = await Effect.runPromise(
            store.get("global", "k").pipe(
              Effect.map((e) => e?.value),
              Effect.catch(() => Effect.succeed(undefined))
            )
          )
          return value !== undefined
        },
        "the store to answer after SIGCONT",
        { everyMs: 100 }
      )
      assert.strictEqual(value, "v")
    } finally {
      server.signal("SIGCONT")
      await close()
    }
  })

  it("closing the scope releases the connection", async () => {
    const server = await startServer()
    const admin = new Redis(server.url)
    try {
      const clients = async () => ((await admin.client("LIST")) as string).trim().split("\n").length
      assert.strictEqual(await clients(), 1)
      const { close } = await openScoped(RedisMemory.make({ url: server.url }))
      assert.strictEqual(await clients(), 2)
      await close()
      await waitFor(async () => (await clients()) === 1, "the store's connection to close")
      assert.strictEqual(await clients(), 1)
    } finally {
      admin.disconnect()
    }
  })

  it("rejects invalid options with a MemoryError at open", async () => {
    const error = await failureOf(Effect.scoped(RedisMemory.make({ url: "redis://127.0.0.1:1", maxEntries: -1 })))
    assert.strictEqual(error.operation, "open")
    assert.match(error.message, /maxEntries/)
  })
})
