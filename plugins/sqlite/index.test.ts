import { spawnSync } from "node:child_process"
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { DatabaseSync } from "node:sqlite"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import { MemoryStore } from "lambdagent"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { memoryStoreConformance } from "../../src/testing/MemoryStoreKit.ts"
import { manualClock } from "../../test/fixtures/manualClock.ts"
import { fileModesUnavailable } from "../../test/fixtures/fileModes.ts"
import { failureOf, openScoped, probeResult, startWorker } from "../../test/fixtures/helpers.ts"
import * as SqliteMemory from "./index.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-sqlite-"))

if (fileModesUnavailable !== undefined) console.warn(`[sqlite tests] skipping the read-only file test: ${fileModesUnavailable}`)
let files = 0
const freshFile = (label: string) => join(dir, `${label}-${++files}.sqlite`)

afterAll(() => rmSync(dir, { recursive: true, force: true }))

memoryStoreConformance("sqlite (file)", async ({ maxEntries }) => {
  const { value: store, close } = await openScoped(SqliteMemory.make({ path: freshFile("kit"), maxEntries }))
  return { store, cleanup: close, clock: manualClock(Date.now()) }
})

memoryStoreConformance("sqlite (:memory:)", async ({ maxEntries }) => {
  const { value: store, close } = await openScoped(SqliteMemory.make({ path: ":memory:", maxEntries }))
  return { store, cleanup: close, clock: manualClock(Date.now()) }
})

describe("SqliteMemory", () => {
  it("creates the schema with its version, in WAL mode, and reopens the same file", async () => {
    const path = freshFile("schema")
    const first = await openScoped(SqliteMemory.make({ path }))
    await Effect.runPromise(first.value.put("user:ada", "lang", "en", { ttlMs: 60_000 }))
    await first.close()

    const raw = new DatabaseSync(path)
    try {
      assert.strictEqual(raw.prepare("PRAGMA journal_mode").get()?.["journal_mode"], "wal")
      assert.strictEqual(
        raw.prepare("SELECT value FROM lambdagent_memory_meta WHERE key = 'schema_version'").get()?.["value"],
        String(SqliteMemory.schemaVersion)
      )
      assert.strictEqual(raw.prepare("SELECT n FROM lambdagent_memory_counts WHERE ns = 'user:ada'").get()?.["n"], 1)
    } finally {
      raw.close()
    }

    const second = await openScoped(SqliteMemory.make({ path }))
    try {
      const entry = await Effect.runPromise(second.value.get("user:ada", "lang"))
      assert.strictEqual(entry?.value, "en")
      assert.strictEqual(entry!.expiresAt! - entry!.createdAt, 60_000)
    } finally {
      await second.close()
    }
  })

  it("refuses a file with a newer schema version", async () => {
    const path = freshFile("newer")
    const raw = new DatabaseSync(path)
    raw.exec(SqliteMemory.schema)
    raw.exec("UPDATE lambdagent_memory_meta SET value = '99' WHERE key = 'schema_version'")
    raw.close()
    const error = await failureOf(Effect.scoped(SqliteMemory.make({ path })))
    assert.strictEqual(error.operation, "open")
    assert.match(error.message, /schema version 99/)
    assert.include(error.message, path)
  })

  it("a corrupt file fails at open with a clear MemoryError", async () => {
    const path = freshFile("corrupt")
    writeFileSync(path, Buffer.alloc(64 * 1024, "garbage! "))
    const error = await failureOf(Effect.scoped(SqliteMemory.make({ path })))
    assert.isTrue(MemoryStore.isMemoryError(error))
    assert.strictEqual(error.store, "sqlite")
    assert.strictEqual(error.operation, "open")
    assert.include(error.message, path)
    assert.match(error.message, /not a SQLite database or is corrupt/)
  })

  it("a file that cannot be opened fails with a clear MemoryError", async () => {
    const blocker = freshFile("blocker")
    writeFileSync(blocker, "a file, not a folder")
    const error = await failureOf(Effect.scoped(SqliteMemory.make({ path: join(blocker, "memory.sqlite") })))
    assert.strictEqual(error.operation, "open")
    assert.include(error.message, blocker)
  })

  it("a folder that cannot be made (under /proc, where a recursive mkdir never returns) fails at open", async () => {
    const error = await failureOf(Effect.scoped(SqliteMemory.make({ path: "/proc/lambdagent-no-such/dir/memory.sqlite" })))
    assert.strictEqual(error.operation, "open")
    assert.include(error.message, "cannot create the folder of the file")
  })

  it("a write blocked by another connection's write transaction fails after the busy timeout", async () => {
    const path = freshFile("locked")
    const { value: store, close } = await openScoped(SqliteMemory.make({ path, busyTimeoutMs: 300 }))
    const holder = new DatabaseSync(path)
    try {
      await Effect.runPromise(store.put("global", "before", "ok"))
      holder.exec("BEGIN IMMEDIATE")
      holder.exec("INSERT INTO lambdagent_memory_meta (key, value) VALUES ('holder', 'x')")
      const started = Date.now()
      const error = await failureOf(store.put("global", "k", "v"))
      assert.strictEqual(error._tag, "MemoryError")
      assert.strictEqual(error.operation, "put")
      assert.match(error.message, /locked by another connection/)
      assert.include(error.message, path)
      // the busy timeout is the wait tested: a lower bound, which load cannot break
      assert.isAtLeast(Date.now() - started, 250)
      // reads still work under WAL while the writer holds its lock
      const recent = await Effect.runPromise(store.listRecent("global", 10))
      assert.deepStrictEqual(
        recent.map((e) => e.key),
        ["before"]
      )
      holder.exec("ROLLBACK")
      // nothing was half-written, and the store writes again once the lock is gone
      await Effect.runPromise(store.put("global", "k", "v2"))
      assert.strictEqual((await Effect.runPromise(store.get("global", "k")))?.value, "v2")
    } finally {
      if (holder.isTransaction) holder.exec("ROLLBACK")
      holder.close()
      await close()
    }
  })

  it("a write waits (without blocking the event loop) for a lock released within the busy timeout", async () => {
    const path = freshFile("wait")
    const { value: store, close } = await openScoped(SqliteMemory.make({ path, busyTimeoutMs: 5_000 }))
    const holder = new DatabaseSync(path)
    try {
      holder.exec("BEGIN IMMEDIATE")
      // the lock is released once timers have fired five times while the write waits for it
      let ticks = 0
      const ticker = setInterval(() => {
        if (++ticks === 5) holder.exec("COMMIT")
      }, 10)
      await Effect.runPromise(store.put("global", "k", "v"))
      clearInterval(ticker)
      assert.isAtLeast(ticks, 5, "timers kept firing while the write waited")
      assert.strictEqual((await Effect.runPromise(store.get("global", "k")))?.value, "v")
    } finally {
      if (holder.isTransaction) holder.exec("ROLLBACK")
      holder.close()
      await close()
    }
  })

  it.skipIf(fileModesUnavailable !== undefined)("a read-only file (chmod 0444) can be read, and fails on write with a clear MemoryError", async () => {
    const path = freshFile("readonly")
    const setup = await openScoped(SqliteMemory.make({ path }))
    await Effect.runPromise(setup.value.put("global", "existing", "x"))
    await setup.close()
    chmodSync(dir, 0o777)
    chmodSync(path, 0o444)
    const worker = startWorker("probe", { store: "sqlite", target: path, ns: "global" }, { obeyFileModes: true })
    const result = await probeResult(worker)
    await worker.exited
    assert.strictEqual(result.read, 1, "reading a read-only file works")
    assert.isFalse(result.ok, "the write must not succeed")
    assert.strictEqual(result.tag, "MemoryError")
    assert.strictEqual(result.operation, "put")
    assert.match(result.error!, /read-only/)
    assert.include(result.error!, path)
    // and the file was not changed
    chmodSync(path, 0o644)
    const raw = new DatabaseSync(path)
    try {
      assert.strictEqual(raw.prepare("SELECT count(*) AS n FROM lambdagent_memory").get()?.["n"], 1)
    } finally {
      raw.close()
    }
  })

  it.effect("the sweeper deletes expired rows on the Clock's schedule (TestClock)", () =>
    Effect.gen(function* () {
      const path = freshFile("sweep")
      yield* TestClock.setTime(Date.now()) // before the sweeper starts sleeping
      const store = yield* SqliteMemory.make({ path, sweepIntervalMs: 1_000 })
      yield* store.put("session:1", "short", "s", { ttlMs: 500 })
      yield* store.put("session:2", "short", "s", { ttlMs: 500 })
      yield* store.put("session:2", "long", "l")
      const rows = () => {
        const raw = new DatabaseSync(path)
        try {
          return Number(raw.prepare("SELECT count(*) AS n FROM lambdagent_memory").get()?.["n"])
        } finally {
          raw.close()
        }
      }
      assert.strictEqual(rows(), 3)
      yield* TestClock.adjust("1 second")
      // the sweeper fiber runs when the clock passes its interval
      yield* Effect.yieldNow
      assert.strictEqual(rows(), 1)
      assert.deepStrictEqual(
        (yield* store.listRecent("session:2", 10)).map((e) => e.key),
        ["long"]
      )
    })
  )

  it.effect("a get meeting an expired row deletes it (expiry on read)", () =>
    Effect.gen(function* () {
      const path = freshFile("expire-on-read")
      const store = yield* SqliteMemory.make({ path, sweepIntervalMs: 0 })
      yield* store.put("global", "k", "v", { ttlMs: 50 })
      yield* TestClock.adjust("49 millis")
      assert.strictEqual((yield* store.get("global", "k"))?.value, "v")
      yield* TestClock.adjust("1 millis")
      assert.isUndefined(yield* store.get("global", "k"))
      const raw = new DatabaseSync(path)
      try {
        assert.strictEqual(raw.prepare("SELECT count(*) AS n FROM lambdagent_memory").get()?.["n"], 0)
        assert.isUndefined(raw.prepare("SELECT n FROM lambdagent_memory_counts WHERE ns = 'global'").get())
      } finally {
        raw.close()
      }
    })
  )

  it("rejects invalid options with a MemoryError at open", async () => {
    const error = await failureOf(Effect.scoped(SqliteMemory.make({ path: ":memory:", maxEntries: 0 })))
    assert.strictEqual(error.operation, "open")
    assert.match(error.message, /maxEntries/)
  })

  it("reads the path from LAMBDAGENT_SQLITE_PATH when no path is given", async () => {
    const path = freshFile("env")
    const previous = process.env["LAMBDAGENT_SQLITE_PATH"]
    process.env["LAMBDAGENT_SQLITE_PATH"] = path
    try {
      const { value: store, close } = await openScoped(SqliteMemory.make())
      await Effect.runPromise(store.put("global", "k", "v"))
      await close()
      const raw = new DatabaseSync(path)
      assert.strictEqual(raw.prepare("SELECT count(*) AS n FROM lambdagent_memory").get()?.["n"], 1)
      raw.close()
    } finally {
      if (previous === undefined) delete process.env["LAMBDAGENT_SQLITE_PATH"]
      else process.env["LAMBDAGENT_SQLITE_PATH"] = previous
    }
  })

  it("layer provides MemoryStore and plugin exposes the factory", async () => {
    const path = freshFile("layer")
    const value = await Effect.runPromise(
      MemoryStore.MemoryStore.use((s) => Effect.andThen(s.put("global", "k", "v"), s.get("global", "k"))).pipe(Effect.provide(SqliteMemory.layer({ path })))
    )
    assert.strictEqual(value?.value, "v")
    assert.strictEqual(SqliteMemory.plugin.name, "sqlite")
    assert.strictEqual(SqliteMemory.plugin.stores.sqlite, SqliteMemory.make)
  })
})

describe("SqliteMemory across processes", () => {
  it("several processes creating and writing one file concurrently lose nothing", async () => {
    // no file yet: the workers also race to create it, switch it to WAL and create the schema
    const path = freshFile("multi")
    const workers = Array.from({ length: 4 }, (_, i) =>
      startWorker("write", { store: "sqlite", target: path, ns: "shared", id: `p${i}`, count: 150, maxEntries: 10_000 })
    )
    const codes = await Promise.all(workers.map((w) => w.exited))
    codes.forEach((code, i) => assert.strictEqual(code, 0, workers[i]!.output()))
    const { value: store, close } = await openScoped(SqliteMemory.make({ path, maxEntries: 10_000 }))
    try {
      const all = await Effect.runPromise(store.listRecent("shared", 10_000))
      assert.strictEqual(all.length, 600, workers.map((w) => w.output().slice(-500)).join("\n"))
      for (let p = 0; p < 4; p++) {
        for (let i = 0; i < 150; i++) {
          const entry = all.find((e) => e.key === `p${p}-${i}`)
          assert.strictEqual(entry?.value, `value p${p} ${i}`)
        }
      }
    } finally {
      await close()
    }
  })

  it("every write a killed (-9) process acknowledged is there afterwards", async () => {
    const path = freshFile("durable")
    const worker = startWorker("write", { store: "sqlite", target: path, ns: "durable", id: "d", count: 1_000_000, maxEntries: 10_000_000 })
    await worker.until(() => worker.acks.size >= 300, 30_000)
    worker.child.kill("SIGKILL")
    await worker.exited
    const acked = [...worker.acks]
    assert.isAtLeast(acked.length, 300)
    const { value: store, close } = await openScoped(SqliteMemory.make({ path, maxEntries: 1_000_000 }))
    try {
      const missing = (
        await Effect.runPromise(Effect.forEach(acked, (i) => Effect.map(store.get("durable", `d-${i}`), (e) => (e?.value === `value d ${i}` ? -1 : i))))
      ).filter((i) => i >= 0)
      assert.deepStrictEqual(missing, [])
    } finally {
      await close()
    }
  })
})

describe("SqliteMemory in a host", () => {
  it("prints nothing when imported and opened, and leaves the host's other warnings alone", () => {
    const host = [
      "import * as Effect from 'effect/Effect'",
      "const SqliteMemory = await import('lambdagent/sqlite')",
      "await Effect.runPromise(Effect.scoped(Effect.flatMap(SqliteMemory.make({ path: ':memory:' }), (store) => store.put('global', 'k', 'v'))))",
      "process.emitWarning('the host warns', 'HostWarning')",
      "console.log('done')"
    ].join("\n")
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", host], { cwd: fileURLToPath(new URL("../..", import.meta.url)), encoding: "utf8" })
    assert.strictEqual(r.stdout, "done\n")
    assert.match(r.stderr, /^\(node:\d+\) HostWarning: the host warns\n/)
    assert.notInclude(r.stderr, "SQLite")
  })
})
