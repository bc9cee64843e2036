/**
 * Shared memory for several agents (the `sharedMemory` section of an agent file): one namespace
 * of key/value bindings that every agent reads and writes, over any {@link MemoryStoreShape}.
 *
 * In append-only mode (`appendOnly: true`) a write never replaces anything: each write is a new
 * version stored under its own key, `get` returns the newest version and `history` all of them.
 * The set of bindings only grows (Σ' ⊇ Σ), which is what lets agents reason about what the
 * others have written. Versions live in the backing store, so they are bounded by its
 * `maxEntries`: size it for the history you want to keep.
 *
 * @since 0.1.0
 * @module
 */
import * as Effect from "effect/Effect"
import type { MemoryEntry, MemoryError, MemoryStoreShape } from "./MemoryStore.ts"
import { defaultMaxEntries } from "./MemoryStore.ts"

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { SharedMemory } from "lambdagent"
 * const o: SharedMemory.SharedMemoryOptions = { appendOnly: true, initial: { goal: "ship it" } }
 * ```
 */
export interface SharedMemoryOptions {
  /** The store namespace holding the bindings. Default {@link defaultNamespace}. */
  readonly namespace?: string
  /** Keep every version; a write never overwrites. Default `false`. */
  readonly appendOnly?: boolean
  /** Bindings written at creation when the key has no value yet. */
  readonly initial?: Readonly<Record<string, string>>
  /**
   * How many of the newest writes `get` (append-only), `history` and `snapshot` look at.
   * Default {@link MemoryStore.defaultMaxEntries}.
   */
  readonly historyLimit?: number
}

/**
 * The namespace used when none is given.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { SharedMemory } from "lambdagent"
 * SharedMemory.defaultNamespace // "shared"
 * ```
 */
export const defaultNamespace = "shared"

/**
 * One version of a binding. `key` is the binding's key (not the store key of the version).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { SharedMemory } from "lambdagent"
 * const v: SharedMemory.Version = { key: "goal", value: "ship it", createdAt: Date.now() }
 * ```
 */
export type Version = MemoryEntry

/**
 * Shared bindings over a memory store.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SharedMemory } from "lambdagent"
 * const note = (sm: SharedMemory.SharedMemory) => sm.set("status", "researching")
 * ```
 */
export interface SharedMemory {
  /** The store namespace holding the bindings. */
  readonly namespace: string
  /** Whether writes add versions instead of replacing. */
  readonly appendOnly: boolean
  /** The newest value of a key. */
  readonly get: (key: string) => Effect.Effect<string | undefined, MemoryError>
  /** Binds a value; in append-only mode, adds a version instead of replacing. */
  readonly set: (key: string, value: string) => Effect.Effect<void, MemoryError>
  /** Every kept version of a key, oldest first (one at most without `appendOnly`). */
  readonly history: (key: string) => Effect.Effect<ReadonlyArray<Version>, MemoryError>
  /** The newest value of every key. */
  readonly snapshot: Effect.Effect<Readonly<Record<string, string>>, MemoryError>
  /** The newest writes, newest first, as versions. */
  readonly recent: (limit: number) => Effect.Effect<ReadonlyArray<Version>, MemoryError>
}

/** Separates a key from its version id in the store key of a version. */
const SEPARATOR = "\u241F"

let versionCounter = 0
const versionId = (): string =>
  `${Date.now().toString(36)}.${(versionCounter = (versionCounter + 1) % 1_679_616).toString(36)}.${
    Math.floor(Math.random() * 2_176_782_336).toString(36)
  }`

/** The binding key of a store key, in append-only mode. */
const bindingKey = (storeKey: string): string => {
  const i = storeKey.lastIndexOf(SEPARATOR)
  return i < 0 ? storeKey : storeKey.slice(0, i)
}

/**
 * Creates shared memory over a store and writes the `initial` bindings that have no value yet.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MemoryStore, SharedMemory } from "lambdagent"
 * const program = Effect.gen(function*() {
 *   const sm = yield* SharedMemory.make(MemoryStore.makeLocal(), { appendOnly: true, initial: { plan: "v1" } })
 *   yield* sm.set("plan", "v2")
 *   return yield* sm.history("plan") // plan=v1, then plan=v2
 * })
 * ```
 */
export const make = (
  store: MemoryStoreShape,
  options: SharedMemoryOptions = {}
): Effect.Effect<SharedMemory, MemoryError> => {
  const ns = options.namespace ?? defaultNamespace
  const appendOnly = options.appendOnly ?? false
  const historyLimit = options.historyLimit ?? defaultMaxEntries

  const recent = (limit: number): Effect.Effect<ReadonlyArray<Version>, MemoryError> =>
    appendOnly
      ? Effect.map(store.listRecent(ns, limit), (entries) => entries.map((e) => ({ ...e, key: bindingKey(e.key) })))
      : store.listRecent(ns, limit)

  const history = (key: string): Effect.Effect<ReadonlyArray<Version>, MemoryError> =>
    appendOnly
      ? Effect.map(recent(historyLimit), (versions) => versions.filter((v) => v.key === key).reverse())
      : Effect.map(store.get(ns, key), (e) => e === undefined ? [] : [e])

  const get = (key: string): Effect.Effect<string | undefined, MemoryError> =>
    appendOnly
      ? Effect.map(recent(historyLimit), (versions) => versions.find((v) => v.key === key)?.value)
      : Effect.map(store.get(ns, key), (e) => e?.value)

  const set = (key: string, value: string): Effect.Effect<void, MemoryError> =>
    store.put(ns, appendOnly ? `${key}${SEPARATOR}${versionId()}` : key, value)

  const snapshot = Effect.map(recent(historyLimit), (versions) => {
    const out: Record<string, string> = {}
    for (const v of versions) if (!Object.hasOwn(out, v.key)) out[v.key] = v.value
    return out
  })

  const shared: SharedMemory = { namespace: ns, appendOnly, get, set, history, snapshot, recent }
  const initial = Object.entries(options.initial ?? {})
  if (initial.length === 0) return Effect.succeed(shared)
  return Effect.as(
    Effect.flatMap(snapshot, (current) =>
      Effect.forEach(initial.filter(([k]) => !Object.hasOwn(current, k)), ([k, v]) => set(k, v), { discard: true })),
    shared
  )
}
