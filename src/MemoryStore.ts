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
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"

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
export type MemoryScope =
  | { readonly kind: "session"; readonly id: string }
  | { readonly kind: "user"; readonly id: string }
  | { readonly kind: "global" }

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
export const namespace = (scope: MemoryScope): string => scope.kind === "global" ? "global" : `${scope.kind}:${scope.id}`

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
  readonly key: string
  readonly value: string
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
export class MemoryError extends Data.TaggedError("MemoryError")<{
  readonly store: string
  readonly operation: "get" | "put" | "listRecent" | "clear" | "open" | "close"
  readonly message: string
  readonly cause?: unknown
}> {}

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
  readonly get: (namespace: string, key: string) => Effect.Effect<MemoryEntry | undefined, MemoryError>
  readonly put: (namespace: string, key: string, value: string, options?: PutOptions) => Effect.Effect<void, MemoryError>
  readonly listRecent: (namespace: string, limit: number) => Effect.Effect<ReadonlyArray<MemoryEntry>, MemoryError>
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
