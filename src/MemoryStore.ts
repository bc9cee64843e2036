/**
 * The `MemoryStore` service: durable or in-process key/value memory for agents.
 *
 * Entries live in a namespace (see {@link namespace}): one per session, per user, or the global one.
 * Every store keeps at most `maxEntries` per namespace (least recently used go first) and honours
 * per-entry time-to-live.
 *
 * @since 0.1.0
 * @module
 */
import type * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { TaggedError } from "./Errors.ts"
import { LocalMemory } from "./internal/LocalMemory.ts"

/**
 * Where an agent's memory lives: its session, its user, or shared by everyone.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { MemoryStore } from "lambdagent"
 * const scope: MemoryStore.MemoryScope = { kind: "session", id: "abc" }
 * ```
 */
export type MemoryScope = { readonly kind: "session"; readonly id: string } | { readonly kind: "user"; readonly id: string } | { readonly kind: "global" }

/**
 * The namespace string of a scope: `session:<id>`, `user:<id>` or `global`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { MemoryStore } from "lambdagent"
 * MemoryStore.namespace({ kind: "user", id: "ada" }) // "user:ada"
 * ```
 */
export const namespace = (scope: MemoryScope): string => (scope.kind === "global" ? "global" : `${scope.kind}:${scope.id}`)

/**
 * One stored entry. Times are milliseconds since the epoch.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { MemoryStore } from "lambdagent"
 * const e: MemoryStore.MemoryEntry = { key: "k", value: "v", createdAt: Date.now() }
 * ```
 */
export interface MemoryEntry {
  /** The key within its namespace. */
  readonly key: string
  /** The stored text. */
  readonly value: string
  /** When the entry was last written. */
  readonly createdAt: number
  /** Absent: never expires. */
  readonly expiresAt?: number
}

/**
 * Options of a single write.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { MemoryStore } from "lambdagent"
 * const o: MemoryStore.PutOptions = { ttlMs: 60_000 }
 * ```
 */
export interface PutOptions {
  /** Time to live in milliseconds; absent or 0: no expiry. */
  readonly ttlMs?: number
}

/**
 * A store operation that failed (connection lost, file locked, corrupt data, …).
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { MemoryStore } from "lambdagent"
 * const e = new MemoryStore.MemoryError({ store: "redis", operation: "put", message: "connection refused" })
 * ```
 */
export class MemoryError extends TaggedError<MemoryError>()("MemoryError", {
  /** The `name` of the store that failed. */
  store: Schema.String,
  /** What was being done. */
  operation: Schema.Literals(["get", "put", "listRecent", "clear", "open", "close"]),
  /** What failed and where (URL or path). */
  message: Schema.String,
  /** The underlying error, when there is one. */
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * Tells whether a value is a {@link MemoryError}, by its `_tag` (safe across bundled copies of
 * the package, where `instanceof` is not).
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { MemoryStore } from "lambdagent"
 * const e: unknown = new MemoryStore.MemoryError({ store: "local", operation: "get", message: "boom" })
 * MemoryStore.isMemoryError(e) // true
 * ```
 */
export const isMemoryError = (u: unknown): u is MemoryError => typeof u === "object" && u !== null && "_tag" in u && u._tag === "MemoryError"

/**
 * What every memory store implements.
 *
 * `listRecent` returns the newest entries first. Reading an entry (`get`) counts as a use for the
 * least-recently-used order; expired entries are never returned.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MemoryStore } from "lambdagent"
 * const program = Effect.gen(function*() {
 *   const store = yield* MemoryStore.MemoryStore
 *   yield* store.put("session:1", "greeting", "hello", { ttlMs: 60_000 })
 *   return yield* store.listRecent("session:1", 5)
 * })
 * ```
 */
export interface MemoryStoreShape {
  /** Store name for traces and errors (`local`, `redis`, `sqlite`, …). */
  readonly name: string
  /** The live entry under `key`, or `undefined`; counts as a use for the LRU order. */
  readonly get: (namespace: string, key: string) => Effect.Effect<MemoryEntry | undefined, MemoryError>
  /** Writes or overwrites an entry (a use, and the newest write); may evict the least recently used. */
  readonly put: (namespace: string, key: string, value: string, options?: PutOptions) => Effect.Effect<void, MemoryError>
  /**
   * Writes an entry only if `key` has no live one, as one atomic step (for a shared store, across
   * every process using it); `true` when it wrote. Optional: a store without it cannot promise
   * that the first of several racing writers wins, which append-only shared memory relies on.
   */
  readonly putIfAbsent?: (namespace: string, key: string, value: string, options?: PutOptions) => Effect.Effect<boolean, MemoryError>
  /** Up to `limit` live entries, most recently written first. */
  readonly listRecent: (namespace: string, limit: number) => Effect.Effect<ReadonlyArray<MemoryEntry>, MemoryError>
  /** Deletes every entry of one namespace. */
  readonly clear: (namespace: string) => Effect.Effect<void, MemoryError>
}

/**
 * The memory store service used by `memory` terms.
 *
 * @since 0.1.0
 * @category services
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MemoryStore } from "lambdagent"
 * const clearSession = (id: string) => MemoryStore.MemoryStore.use((s) => s.clear(`session:${id}`))
 * ```
 */
export class MemoryStore extends Context.Service<MemoryStore, MemoryStoreShape>()("lambdagent/MemoryStore") {}

/**
 * How many entries a store keeps per namespace when no `maxEntries` is given.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { MemoryStore } from "lambdagent"
 * MemoryStore.defaultMaxEntries // 1000
 * ```
 */
export const defaultMaxEntries = 1000

/**
 * Options of the in-process store.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { MemoryStore } from "lambdagent"
 * const o: MemoryStore.LocalOptions = { maxEntries: 20 }
 * ```
 */
export interface LocalOptions {
  /** Entries kept per namespace; the least recently used go first. Default {@link defaultMaxEntries}. */
  readonly maxEntries?: number
  /**
   * A fixed clock for expiry. Absent (the usual case): the `Clock` of the calling fiber, so
   * `TestClock` drives expiry in tests.
   */
  readonly clock?: Clock.Clock
}

const ttlOf = (putOptions: PutOptions | undefined): Effect.Effect<number, MemoryError> => {
  const ttlMs = putOptions?.ttlMs ?? 0
  return Number.isFinite(ttlMs) && ttlMs >= 0
    ? Effect.succeed(Math.ceil(ttlMs))
    : Effect.fail(new MemoryError({ store: "local", operation: "put", message: `ttlMs must be a finite number >= 0, got ${ttlMs}` }))
}

/**
 * Creates an in-process store: a per-namespace LRU bounded by entry count, with per-entry TTL.
 *
 * `get` and `put` are O(1); `listRecent` is O(limit). Time is read from Effect's `Clock` at each
 * call (or from `options.clock`), so `TestClock.adjust` drives expiry. Nothing survives the
 * process; use the `lambdagent/redis` or `lambdagent/sqlite` stores for that.
 *
 * Throws a `RangeError` when `maxEntries` is not a positive integer.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MemoryStore } from "lambdagent"
 * const store = MemoryStore.makeLocal({ maxEntries: 2 })
 * const program = Effect.gen(function*() {
 *   yield* store.put("global", "a", "1")
 *   yield* store.put("global", "b", "2")
 *   yield* store.put("global", "c", "3") // evicts "a"
 *   return yield* store.listRecent("global", 10) // c, b
 * })
 * ```
 */
export const makeLocal = (options: LocalOptions = {}): MemoryStoreShape => {
  const maxEntries = options.maxEntries ?? defaultMaxEntries
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
    throw new RangeError(`MemoryStore.makeLocal: maxEntries must be a positive integer, got ${maxEntries}`)
  }
  const memory = new LocalMemory(maxEntries)
  const fixed = options.clock
  const withNow: <A>(f: (now: number) => A) => Effect.Effect<A> =
    fixed === undefined
      ? (f) => Effect.clockWith((clock) => Effect.succeed(f(clock.currentTimeMillisUnsafe())))
      : (f) => Effect.sync(() => f(fixed.currentTimeMillisUnsafe()))
  return {
    name: "local",
    get: (ns, key) => withNow((now) => memory.get(ns, key, now)),
    put: (ns, key, value, putOptions) => Effect.flatMap(ttlOf(putOptions), (ttlMs) => withNow((now) => memory.put(ns, key, value, ttlMs, now))),
    putIfAbsent: (ns, key, value, putOptions) =>
      Effect.flatMap(ttlOf(putOptions), (ttlMs) =>
        withNow((now) => {
          if (memory.has(ns, key, now)) return false
          memory.put(ns, key, value, ttlMs, now)
          return true
        })
      ),
    listRecent: (ns, limit) => withNow((now) => memory.listRecent(ns, Math.floor(limit), now)),
    clear: (ns) => Effect.sync(() => memory.clear(ns))
  }
}

/**
 * A layer providing {@link MemoryStore} with a fresh in-process store (see {@link makeLocal}).
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MemoryStore } from "lambdagent"
 * const program = MemoryStore.MemoryStore.use((s) => s.put("global", "k", "v"))
 * Effect.runPromise(program.pipe(Effect.provide(MemoryStore.layerLocal({ maxEntries: 100 }))))
 * ```
 */
export const layerLocal = (options: LocalOptions = {}): Layer.Layer<MemoryStore> => Layer.sync(MemoryStore, () => makeLocal(options))
