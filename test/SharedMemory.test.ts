import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createRuntime, MemoryStore, Scripted, SharedMemory, Term, Tools } from "lambdagent"
import * as RedisMemory from "../plugins/redis/index.ts"
import * as SqliteMemory from "../plugins/sqlite/index.ts"
import { failureOf, openScoped, startWorker } from "./fixtures/helpers.ts"
import { deleteRedisKeys, redisUnavailable as probeRedis, testRedisUrl } from "./fixtures/redis.ts"

/** The refusal a write failed with (a store failure fails the test). */
const refusal = <A>(write: Effect.Effect<A, MemoryStore.MemoryError | SharedMemory.SharedMemoryError>) =>
  Effect.flatMap(Effect.flip(write), (e) => (SharedMemory.isSharedMemoryError(e) ? Effect.succeed(e) : Effect.die(e)))

describe("SharedMemory", () => {
  it.effect("without appendOnly, set and append replace, and history holds the current value", () =>
    Effect.gen(function* () {
      const store = MemoryStore.makeLocal()
      const sm = yield* SharedMemory.make(store)
      assert.strictEqual(sm.namespace, "shared")
      assert.isFalse(sm.appendOnly)
      yield* sm.set("plan", "v1")
      yield* sm.set("plan", "v2")
      assert.strictEqual(yield* sm.get("plan"), "v2")
      yield* sm.append("plan", "v3")
      assert.strictEqual(yield* sm.get("plan"), "v3")
      assert.deepStrictEqual(
        (yield* sm.history("plan")).map((v) => v.value),
        ["v3"]
      )
      assert.deepStrictEqual(yield* sm.snapshot, { plan: "v3" })
      assert.strictEqual((yield* store.listRecent("shared", 10)).length, 1)
      assert.deepStrictEqual(yield* sm.history("missing"), [])
    })
  )

  it.effect("appendOnly: append keeps every version readable, oldest first", () =>
    Effect.gen(function* () {
      const store = MemoryStore.makeLocal()
      const sm = yield* SharedMemory.make(store, { appendOnly: true, namespace: "team:1" })
      yield* sm.append("plan", "v1")
      yield* sm.set("owner", "ada")
      yield* sm.append("plan", "v2")
      yield* sm.append("plan", "v3")
      assert.strictEqual(yield* sm.get("plan"), "v3")
      assert.strictEqual(yield* sm.get("owner"), "ada")
      assert.isUndefined(yield* sm.get("nobody"))
      const history = yield* sm.history("plan")
      assert.deepStrictEqual(
        history.map((v) => [v.key, v.value]),
        [
          ["plan", "v1"],
          ["plan", "v2"],
          ["plan", "v3"]
        ]
      )
      assert.deepStrictEqual(yield* sm.snapshot, { plan: "v3", owner: "ada" })
      assert.deepStrictEqual(
        (yield* sm.recent(2)).map((v) => v.value),
        ["v3", "v2"]
      )
      // four writes, four store entries: nothing was replaced
      assert.strictEqual((yield* store.listRecent("team:1", 100)).length, 4)
    })
  )

  it.effect("appendOnly: set refuses to rebind a key, with a clear error, and writes nothing", () =>
    Effect.gen(function* () {
      const store = MemoryStore.makeLocal()
      const sm = yield* SharedMemory.make(store, { appendOnly: true })
      yield* sm.set("plan", "v1")
      const refused = yield* refusal(sm.set("plan", "v2"))
      assert.strictEqual(refused._tag, "SharedMemoryError")
      assert.strictEqual(refused.reason, "AppendOnly")
      assert.strictEqual(refused.key, "plan")
      assert.strictEqual(
        refused.message,
        '"plan" is already bound and shared memory "shared" is append-only: a bound key is never replaced (append a new version instead)'
      )
      // binding the value it already has changes nothing
      yield* sm.set("plan", "v1")
      assert.strictEqual(yield* sm.get("plan"), "v1")
      assert.strictEqual((yield* store.listRecent("shared", 10)).length, 1)
      // after an append, set compares with the newest version
      yield* sm.append("plan", "v2")
      yield* sm.set("plan", "v2")
      assert.strictEqual((yield* refusal(sm.set("plan", "v1"))).reason, "AppendOnly")
      assert.deepStrictEqual(
        (yield* sm.history("plan")).map((v) => v.value),
        ["v1", "v2"]
      )
    })
  )

  it.effect("appendOnly: a full memory refuses writes instead of dropping a version", () =>
    Effect.gen(function* () {
      const store = MemoryStore.makeLocal({ maxEntries: 10 })
      const sm = yield* SharedMemory.make(store, { appendOnly: true, historyLimit: 3 })
      assert.strictEqual(sm.historyLimit, 3)
      yield* sm.append("log", "1")
      yield* sm.append("log", "2")
      yield* sm.set("other", "x")
      const full = yield* refusal(sm.append("log", "3"))
      assert.strictEqual(full.reason, "Full")
      assert.strictEqual(
        full.message,
        'shared memory "shared" is full: it holds 3 versions (the limit is 3); append-only memory never drops one, so "log" was not written'
      )
      assert.strictEqual((yield* refusal(sm.set("new", "y"))).reason, "Full")
      assert.deepStrictEqual(
        (yield* sm.history("log")).map((v) => v.value),
        ["1", "2"]
      )
      // without appendOnly the store's own limit applies, as for any memory
      const plain = yield* SharedMemory.make(MemoryStore.makeLocal({ maxEntries: 2 }), { historyLimit: 3 })
      for (const k of ["a", "b", "c"]) yield* plain.set(k, k)
      assert.deepStrictEqual(yield* plain.snapshot, { c: "c", b: "b" })
    })
  )

  it("rejects a historyLimit that is not a positive integer", () => {
    assert.throws(() => SharedMemory.make(MemoryStore.makeLocal(), { historyLimit: 0 }), /historyLimit must be a positive integer/)
  })

  it.effect("initial bindings are written once, only where a key has no value", () =>
    Effect.gen(function* () {
      const store = MemoryStore.makeLocal()
      const first = yield* SharedMemory.make(store, { appendOnly: true, initial: { goal: "ship", mode: "draft" } })
      yield* first.append("mode", "review")
      const second = yield* SharedMemory.make(store, { appendOnly: true, initial: { goal: "other", mode: "draft" } })
      assert.deepStrictEqual(yield* second.snapshot, { goal: "ship", mode: "review" })
      assert.strictEqual((yield* second.history("goal")).length, 1)
      const plain = yield* SharedMemory.make(store, { namespace: "plain", initial: { a: "1" } })
      assert.strictEqual(yield* plain.get("a"), "1")
    })
  )

  it.effect("keys with separators and unicode keep their identity", () =>
    Effect.gen(function* () {
      const sm = yield* SharedMemory.make(MemoryStore.makeLocal(), { appendOnly: true })
      const keys = ["a@b", "x\u241Fy", "\u8ba1\u5212", "", "k:v|w"]
      for (const k of keys) yield* sm.append(k, `value of ${k}`)
      for (const k of keys) {
        assert.strictEqual(yield* sm.get(k), `value of ${k}`)
        assert.deepStrictEqual(
          (yield* sm.history(k)).map((v) => v.key),
          [k]
        )
      }
    })
  )

  it.effect("concurrent appends from many fibers all land", () =>
    Effect.gen(function* () {
      const sm = yield* SharedMemory.make(MemoryStore.makeLocal(), { appendOnly: true })
      yield* Effect.forEach(
        Array.from({ length: 300 }, (_, i) => i),
        (i) => sm.append("log", `line ${i}`),
        { concurrency: "unbounded", discard: true }
      )
      const history = yield* sm.history("log")
      assert.strictEqual(history.length, 300)
      assert.strictEqual(new Set(history.map((v) => v.value)).size, 300)
    })
  )

  it("works over a durable store (sqlite)", async () => {
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const store = yield* SqliteMemory.make({ path: ":memory:" })
          const sm = yield* SharedMemory.make(store, { appendOnly: true })
          yield* sm.append("k", "1")
          yield* sm.append("k", "2")
          return yield* sm.history("k")
        })
      )
    )
    assert.deepStrictEqual(
      result.map((v) => v.value),
      ["1", "2"]
    )
  })

  it("withContext shows the newest value of each key, in key order, before the input", () => {
    assert.strictEqual(SharedMemory.withContext("task", {}), "task")
    assert.strictEqual(
      SharedMemory.withContext("task", { notes: "n3", goal: "ship" }, { notes: 3 }),
      "[Shared Memory]\n- goal: ship\n- notes: n3 (3 versions)\n\n[Current Input]\ntask"
    )
    assert.strictEqual(SharedMemory.withContext("x", { plan: "1. read\n2. write" }), "[Shared Memory]\n- plan: 1. read\n  2. write\n\n[Current Input]\nx")
  })
})

describe("SharedMemory.tools", () => {
  const byName = (tools: ReadonlyArray<Tools.ToolDefinition>) => new Map(tools.map((t) => [t.name, t]))
  const call = (tool: Tools.ToolDefinition | undefined, input: unknown) => Effect.runPromise(Tools.call(tool!, input))

  it("read, write, append, show and publish through the tool interface; refusals are tool errors", async () => {
    const sm = await Effect.runPromise(SharedMemory.make(MemoryStore.makeLocal(), { appendOnly: true, initial: { goal: "ship" } }))
    const tools = byName(SharedMemory.tools(sm, { source: "local store" }))
    assert.deepStrictEqual([...tools.keys()], Object.values(SharedMemory.toolNames))
    assert.strictEqual(tools.get("shared_read")!.source, "local store")
    assert.strictEqual(await call(tools.get("shared_read"), "goal"), "ship")
    assert.strictEqual(await call(tools.get("shared_read"), '{"key":"none"}'), '(nothing is bound to "none")')
    assert.strictEqual(await call(tools.get("shared_write"), { key: "plan", value: "draft it" }), 'wrote "plan"')
    const refused = await failureOf(Tools.call(tools.get("shared_write")!, '{"key":"plan","value":"skip it"}'))
    assert.strictEqual(refused.reason, "Failed")
    assert.match(refused.message, /"plan" is already bound and shared memory "shared" is append-only/)
    assert.strictEqual(await call(tools.get("shared_append"), { key: "plan", value: { steps: [1, 2] } }), 'appended to "plan"')
    assert.deepStrictEqual(await call(tools.get("shared_read"), { key: "plan", history: true }), ["draft it", '{"steps":[1,2]}'])
    assert.deepStrictEqual(JSON.parse((await call(tools.get("shared_read"), "")) as string), { goal: "ship", plan: '{"steps":[1,2]}' })
    assert.strictEqual(
      await call(tools.get("shared_memory_context"), "write"),
      '[Shared Memory]\n- goal: ship\n- plan: {"steps":[1,2]} (2 versions)\n\n[Current Input]\nwrite'
    )
    assert.strictEqual(await call(tools.get("shared_publish"), ["critic", "too long"]), 'published "critic"')
    assert.strictEqual(await Effect.runPromise(sm.get("critic")), "too long")
    const invalid = await failureOf(Tools.call(tools.get("shared_write")!, { key: "k" }))
    assert.strictEqual(invalid.reason, "InvalidInput")
  })

  it("a ReAct agent sees an overwrite attempt as an observation and reads the kept value", async () => {
    const sm = await Effect.runPromise(SharedMemory.make(MemoryStore.makeLocal(), { appendOnly: true }))
    const runtime = createRuntime({
      model: Scripted.sequence([
        '{"tool":"shared_write","args":{"key":"plan","value":"v1"}}',
        '{"tool":"shared_write","args":{"key":"plan","value":"v2"}}',
        '{"tool":"shared_read","args":"plan"}',
        '{"tool":"terminate","args":"done"}'
      ]),
      tools: SharedMemory.tools(sm)
    })
    try {
      const agent = Term.react({
        think: Term.llm({ system: "Plan.", name: "planner" }),
        tools: ["shared_read", "shared_write", "terminate"],
        maxSteps: 5
      })
      const out = await runtime.run(agent, "go")
      assert.strictEqual(out.value, "done")
      const observations = out.trace.filter((e) => e.kind === "tool").map((e) => e.output)
      assert.strictEqual(observations[0], 'wrote "plan"')
      assert.match(String(observations[1]), /^\[TOOL_ERROR\] shared_write: "plan" is already bound/)
      assert.strictEqual(observations[2], "v1")
    } finally {
      await runtime.close()
    }
  })
})

// ---------------------------------------------------------------------------------------------
// Several processes appending to one append-only memory
// ---------------------------------------------------------------------------------------------

const redisUrl = testRedisUrl
const redisPrefix = `lambdagent-test:${randomUUID()}:`
const redisUnavailable = await probeRedis(redisUrl)
if (redisUnavailable !== undefined) console.warn(`[SharedMemory redis tests] skipping: ${redisUnavailable}`)

afterAll(async () => {
  if (redisUnavailable !== undefined) return
  await deleteRedisKeys(redisPrefix, redisUrl)
})

const PER_WORKER = 150

/** Two worker processes append to one key at once; every version of both must be there. */
const twoWriters = async (options: Record<string, unknown>, read: () => Promise<ReadonlyArray<SharedMemory.Version>>) => {
  const workers = ["a", "b"].map((id) => startWorker("shared-append", { ...options, id, count: PER_WORKER, key: "findings" }))
  const codes = await Promise.all(workers.map((w) => w.exited))
  assert.deepStrictEqual(codes, [0, 0], workers.map((w) => w.output()).join("\n"))
  const history = await read()
  const values = history.map((v) => v.value)
  assert.strictEqual(values.length, 2 * PER_WORKER)
  assert.strictEqual(new Set(values).size, 2 * PER_WORKER)
  for (const id of ["a", "b"]) {
    const own = values.filter((v) => v.startsWith(`${id}-`))
    // each writer's versions appear in the order it wrote them
    assert.deepStrictEqual(
      own,
      Array.from({ length: PER_WORKER }, (_, i) => `${id}-${i}`)
    )
  }
}

const BINDINGS = 60

/**
 * Two worker processes bind the same new keys at once, each to its own id: every key must end
 * with exactly one version, written by the one worker that was told it bound it.
 */
const twoBinders = async (options: Record<string, unknown>, read: (key: string) => Promise<ReadonlyArray<SharedMemory.Version>>) => {
  // both start binding at the same instant, well after either process is up
  const startAt = Date.now() + 2_500
  const workers = ["a", "b"].map((id) => startWorker("shared-bind", { ...options, id, count: BINDINGS, startAt }))
  const codes = await Promise.all(workers.map((w) => w.exited))
  assert.deepStrictEqual(codes, [0, 0], workers.map((w) => w.output()).join("\n"))
  const said = workers.map(
    (w) =>
      new Map(
        w
          .output()
          .split("\n")
          .flatMap((line) => {
            const m = /^(bound|refused) (\d+)$/.exec(line)
            return m === null ? [] : [[Number(m[2]), m[1]] as const]
          })
      )
  )
  for (let i = 0; i < BINDINGS; i++) {
    const outcomes = said.map((m) => m.get(i))
    assert.sameMembers(outcomes as Array<string>, ["bound", "refused"], `bind-${i}: ${outcomes.join(", ")}`)
    const history = await read(`bind-${i}`)
    assert.deepStrictEqual(
      history.map((v) => v.value),
      [outcomes[0] === "bound" ? "a" : "b"]
    )
  }
}

describe("several processes share one append-only memory", () => {
  it("sqlite: two processes binding the same new keys: exactly one binds each, the other is refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lambdagent-shared-"))
    const path = join(dir, "shared.db")
    try {
      const { value: store, close } = await openScoped(SqliteMemory.make({ path }))
      try {
        const sm = await Effect.runPromise(SharedMemory.make(store, { namespace: "binds", appendOnly: true }))
        await twoBinders({ store: "sqlite", target: path, ns: "binds" }, (key) => Effect.runPromise(sm.history(key)))
      } finally {
        await close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it.skipIf(redisUnavailable !== undefined)(
    "redis: two processes binding the same new keys: exactly one binds each",
    async () => {
      const ns = `binds-${randomUUID()}`
      const { value: store, close } = await openScoped(RedisMemory.make({ url: redisUrl, keyPrefix: redisPrefix }))
      try {
        const sm = await Effect.runPromise(SharedMemory.make(store, { namespace: ns, appendOnly: true }))
        await twoBinders({ store: "redis", target: redisUrl, prefix: redisPrefix, ns }, (key) => Effect.runPromise(sm.history(key)))
      } finally {
        await close()
      }
    },
    120_000
  )

  it("sqlite: two processes append concurrently to one file and no version is lost", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lambdagent-shared-"))
    const path = join(dir, "shared.db")
    try {
      await twoWriters({ store: "sqlite", target: path, ns: "team" }, async () => {
        const { value: store, close } = await openScoped(SqliteMemory.make({ path }))
        try {
          const sm = await Effect.runPromise(SharedMemory.make(store, { namespace: "team", appendOnly: true }))
          return await Effect.runPromise(sm.history("findings"))
        } finally {
          await close()
        }
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it.skipIf(redisUnavailable !== undefined)(
    "redis: two processes append concurrently and no version is lost",
    async () => {
      const ns = `team-${randomUUID()}`
      await twoWriters({ store: "redis", target: redisUrl, prefix: redisPrefix, ns }, async () => {
        const { value: store, close } = await openScoped(RedisMemory.make({ url: redisUrl, keyPrefix: redisPrefix }))
        try {
          const sm = await Effect.runPromise(SharedMemory.make(store, { namespace: ns, appendOnly: true }))
          return await Effect.runPromise(sm.history("findings"))
        } finally {
          await close()
        }
      })
    },
    120_000
  )
})
