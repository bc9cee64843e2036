/**
 * Memory store throughput: put / get / listRecent per second for the local, Redis and SQLite
 * stores, each next to the raw client issuing the same commands in the same run (the same Lua
 * scripts through ioredis; the same node:sqlite statements; the same LRU structure without
 * Effect), and the overhead ratio store/raw (time per operation).
 *
 *   npx tsx bench/memory.ts
 *
 * Redis: `LAMBDAGENT_BENCH_REDIS_URL`, else `LAMBDAGENT_REDIS_URL`, else redis://127.0.0.1:6379;
 * skipped with a note when unreachable. Operations are sequential (one in flight), so the
 * figures are latency-bound, as an agent's memory accesses are.
 */
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { pathToFileURL } from "node:url"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { Redis } from "ioredis"
import { MemoryStore } from "lambdagent"
import * as RedisMemory from "../plugins/redis/index.ts"
import * as SqliteMemory from "../plugins/sqlite/index.ts"
import { LocalMemory } from "../src/internal/LocalMemory.ts"
import { deleteRedisKeys, redisUnavailable } from "../test/fixtures/redis.ts"

/** Entries per namespace: every put of a new key evicts one, as a full memory does. */
const MAX = 1000
/** How many entries an agent's memory context reads. */
const LIMIT = 20
/** Read by get and listRecent: preloaded with MAX entries, never evicted. */
const NS = "session:bench"
/** Written by put with fresh keys: once full, each put evicts the least recently used entry. */
const NS_PUT = "session:bench-put"
const VALUE = "x".repeat(200)
/** Time spent on each side of each (backend, operation) pair. */
const MEASURE_MS = 1500

type Runner = (batch: number) => Promise<void>

interface Pair {
  readonly op: "put" | "get" | "listRecent"
  readonly store: Runner
  readonly raw: Runner
}

interface Row {
  readonly backend: string
  readonly op: string
  readonly store: number
  readonly raw: number
  /** Milliseconds of the first operation of its kind, through the store and through the raw client. */
  readonly cold: { readonly store: number; readonly raw: number }
}

/**
 * Times `store` and `raw` in alternating batches (order swapped every time) until each has run
 * for `durationMs`, so both see the same machine: noise from other processes, checkpoints or a
 * busy Redis falls on both sides alike.
 */
const interleaved = async (store: Runner, raw: Runner, durationMs: number, batch: number): Promise<{ readonly store: number; readonly raw: number }> => {
  let storeMs = 0
  let rawMs = 0
  let storeOps = 0
  let rawOps = 0
  let turn = 0
  const timed = async (run: Runner): Promise<number> => {
    const t = performance.now()
    await run(batch)
    return performance.now() - t
  }
  while (storeMs < durationMs || rawMs < durationMs) {
    if (turn++ % 2 === 0) {
      storeMs += await timed(store)
      rawMs += await timed(raw)
    } else {
      rawMs += await timed(raw)
      storeMs += await timed(store)
    }
    storeOps += batch
    rawOps += batch
  }
  return { store: storeOps / (storeMs / 1000), raw: rawOps / (rawMs / 1000) }
}

/** Runs a store operation `batch` times inside one Effect program. */
const storeRunner = (f: (i: number) => Effect.Effect<unknown, MemoryStore.MemoryError>): Runner => {
  let i = 0
  return (batch) =>
    Effect.runPromise(
      Effect.gen(function* () {
        for (let k = 0; k < batch; k++) yield* f(i++)
      })
    )
}

const asyncRunner = (f: (i: number) => Promise<unknown>): Runner => {
  let i = 0
  return async (batch) => {
    for (let k = 0; k < batch; k++) await f(i++)
  }
}

const syncRunner = (f: (i: number) => unknown): Runner => {
  let i = 0
  return async (batch) => {
    for (let k = 0; k < batch; k++) f(i++)
  }
}

/** Puts of fresh keys (each evicting the least recently used), gets of live keys, listRecent(20). */
const pairsFor = (
  store: MemoryStore.MemoryStoreShape,
  raw: {
    readonly put: (key: string) => unknown
    readonly get: (key: string) => unknown
    readonly list: () => unknown
  },
  kind: "sync" | "async"
): ReadonlyArray<Pair> => {
  const wrap = kind === "sync" ? syncRunner : (f: (i: number) => unknown) => asyncRunner((i) => Promise.resolve(f(i)))
  return [
    {
      op: "put",
      store: storeRunner((i) => store.put(NS_PUT, `s${i}`, VALUE)),
      raw: wrap((i) => raw.put(`r${i}`))
    },
    {
      op: "get",
      store: storeRunner((i) => store.get(NS, `pre${(i * 7919) % MAX}`)),
      raw: wrap((i) => raw.get(`pre${(i * 7919) % MAX}`))
    },
    {
      op: "listRecent",
      store: storeRunner(() => store.listRecent(NS, LIMIT)),
      raw: wrap(() => raw.list())
    }
  ]
}

/** Milliseconds of one operation: the first of its kind, before any warm-up (the cold figure). */
const timeOne = async (run: Runner): Promise<number> => {
  const started = performance.now()
  await run(1)
  return performance.now() - started
}

const measure = async (backend: string, pairs: ReadonlyArray<Pair>, batch: number): Promise<ReadonlyArray<Row>> => {
  const rows: Array<Row> = []
  for (const pair of pairs) {
    const cold = { store: await timeOne(pair.store), raw: await timeOne(pair.raw) }
    await interleaved(pair.store, pair.raw, 100, batch) // warm up
    const { raw, store } = await interleaved(pair.store, pair.raw, MEASURE_MS, batch)
    rows.push({ backend, op: pair.op, store, raw, cold })
  }
  return rows
}

const preload = (store: MemoryStore.MemoryStoreShape) =>
  Effect.runPromise(
    Effect.gen(function* () {
      for (let i = 0; i < MAX; i++) yield* store.put(NS, `pre${i}`, VALUE)
    })
  )

// ---------------------------------------------------------------------------------------------

const benchLocal = async (): Promise<ReadonlyArray<Row>> => {
  const store = MemoryStore.makeLocal({ maxEntries: MAX })
  const raw = new LocalMemory(MAX)
  await preload(store)
  for (let i = 0; i < MAX; i++) raw.put(NS, `pre${i}`, VALUE, 0, Date.now())
  return measure(
    "local",
    pairsFor(
      store,
      {
        put: (key) => raw.put(NS_PUT, key, VALUE, 0, Date.now()),
        get: (key) => raw.get(NS, key, Date.now()),
        list: () => raw.listRecent(NS, LIMIT, Date.now())
      },
      "sync"
    ),
    50
  )
}

const decodeSqlite = (column: unknown): string =>
  typeof column === "string"
    ? column
    : column instanceof Uint8Array
      ? Buffer.from(column.buffer, column.byteOffset, column.byteLength).toString("utf8")
      : String(column)

const benchSqlite = async (): Promise<ReadonlyArray<Row>> => {
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-bench-"))
  const scope = Scope.makeUnsafe()
  try {
    const store = await Effect.runPromise(Scope.provide(SqliteMemory.make({ path: join(dir, "store.sqlite"), maxEntries: MAX }), scope))
    const db = new DatabaseSync(join(dir, "raw.sqlite"))
    db.exec("PRAGMA busy_timeout = 25")
    db.prepare("PRAGMA journal_mode = WAL").get()
    db.exec("PRAGMA synchronous = NORMAL")
    db.exec(SqliteMemory.schema)
    const q = Object.fromEntries(Object.entries(SqliteMemory.sql).map(([k, v]) => [k, db.prepare(v)])) as {
      [K in keyof typeof SqliteMemory.sql]: ReturnType<DatabaseSync["prepare"]>
    }
    const max = MAX
    const write = (ns: string, key: string) => {
      const now = Date.now()
      db.exec("BEGIN IMMEDIATE")
      q.upsert.run(ns, key, VALUE, now, null, 0)
      const n = Number(q.count.get(ns)?.["n"] ?? 0)
      if (n > max) {
        q.deleteExpiredIn.run(ns, now)
        const m = Number(q.count.get(ns)?.["n"] ?? 0)
        if (m > max) q.evict.run(ns, m - max)
      }
      db.exec("COMMIT")
    }
    const put = (key: string) => write(NS_PUT, key)
    const get = (key: string) => {
      const now = Date.now()
      const row = q.touch.get(NS, key, now)
      if (row !== undefined) return decodeSqlite(row["value"])
      if (q.findExpired.get(NS, key, now) !== undefined) q.deleteExpired.run(NS, key, now)
      return undefined
    }
    const list = () => q.listRecent.all(NS, Date.now(), LIMIT).map((row) => [decodeSqlite(row["key"]), decodeSqlite(row["value"])])
    await preload(store)
    for (let i = 0; i < MAX; i++) write(NS, `pre${i}`)
    const rows = await measure("sqlite", pairsFor(store, { put, get, list }, "sync"), 5)
    db.close()
    return rows
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    rmSync(dir, { recursive: true, force: true })
  }
}

const benchRedis = async (url: string): Promise<ReadonlyArray<Row>> => {
  const prefix = `lambdagent-bench:${randomUUID()}:`
  const scope = Scope.makeUnsafe()
  // configured like the store's own client
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    commandTimeout: 2000,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0
  })
  try {
    await client.connect()
    const store = await Effect.runPromise(Scope.provide(RedisMemory.make({ url, keyPrefix: prefix, maxEntries: MAX }), scope))
    const k = RedisMemory.keys(prefix, NS)
    const kp = RedisMemory.keys(prefix, NS_PUT)
    const s = RedisMemory.scripts
    const decode = (raw: string) => raw.slice(raw.indexOf(":", raw.indexOf(":") + 1) + 1)
    const put = (key: string) =>
      RedisMemory.evalScript(client, s.put, [kp.valuePrefix + key, kp.lru, kp.log, kp.exp, kp.seq], [kp.valuePrefix, key, VALUE, 0, MAX])
    const get = async (key: string) => {
      const raw = await RedisMemory.evalScript(client, s.get, [k.valuePrefix + key, k.lru, k.log, k.exp, k.seq], [key])
      return typeof raw === "string" ? decode(raw) : undefined
    }
    const list = async () => {
      const flat = (await RedisMemory.evalScript(client, s.list, [k.lru, k.log, k.exp], [k.valuePrefix, LIMIT])) as Array<string>
      const out: Array<[string, string]> = []
      for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, decode(flat[i + 1]!)])
      return out
    }
    await preload(store)
    return await measure("redis", pairsFor(store, { put, get, list }, "async"), 5)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    client.disconnect()
    await deleteRedisKeys(prefix, url)
  }
}

const format = (n: number): string => Math.round(n).toLocaleString("en-US")

/**
 * Runs the memory store benchmark and prints its table (about 40 s; Redis rows need a reachable Redis).
 *
 * @since 0.1.0
 * @category benchmarks
 * @example
 * ```ts
 * import { run } from "./memory.ts"
 * await run()
 * ```
 */
export async function run(): Promise<void> {
  const started = performance.now()
  const rows: Array<Row> = [...(await benchLocal()), ...(await benchSqlite())]
  const url = process.env["LAMBDAGENT_BENCH_REDIS_URL"] ?? process.env["LAMBDAGENT_REDIS_URL"] ?? RedisMemory.defaultUrl
  const unreachable = await redisUnavailable(url, "set LAMBDAGENT_BENCH_REDIS_URL or start redis-server")
  if (unreachable === undefined) rows.push(...(await benchRedis(url)))

  const header = ["store", "op", "cold store µs", "cold raw µs", "store ops/s", "raw ops/s", "store/raw"]
  const lines = rows.map((r) => [
    r.backend,
    r.op,
    format(r.cold.store * 1000),
    format(r.cold.raw * 1000),
    format(r.store),
    format(r.raw),
    (r.raw / r.store).toFixed(2)
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)))
  const show = (cells: ReadonlyArray<string>) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  console.log(
    `\nMemory stores: sequential ops, ${MAX} entries max per namespace (puts evict), ${VALUE.length}-byte values, listRecent(${LIMIT}); ` +
      `store and raw timed in alternating batches, ${MEASURE_MS} ms each`
  )
  console.log("cold = the first operation of its kind in this process (before warm-up); ops/s and store/raw are warm")
  console.log("store/raw = time per operation through the store / through the raw client (lower is better)\n")
  console.log(show(header))
  console.log(widths.map((w) => "-".repeat(w)).join("  "))
  for (const l of lines) console.log(show(l))
  if (unreachable !== undefined) console.log(`\nredis: skipped: ${unreachable}`)
  console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run()
}
