/**
 * Shared memory for several agents (the `sharedMemory` section of an agent file): one namespace
 * of key/value bindings that every agent reads and writes, over any {@link MemoryStoreShape}.
 *
 * Without `appendOnly`, `set` binds or replaces a key. In append-only mode (`appendOnly: true`)
 * nothing is ever replaced or dropped: `set` binds a key that has no value yet and refuses one
 * that has (a {@link SharedMemoryError} with reason `AppendOnly`), `append` adds a new version of
 * a key, `get` returns the newest version and `history` all of them. The set of bindings only
 * grows (Σ' ⊇ Σ), which is what lets agents reason about what the others have written. A write
 * that would go past `historyLimit` versions fails (reason `Full`) instead of pushing an old one
 * out.
 *
 * {@link tools} turns a shared memory into the tools agents call (`shared_read`, `shared_write`,
 * `shared_append`), plus the two the YAML compiler uses to show the bindings to every agent and
 * to record each agent's answer.
 *
 * @since 0.1.0
 * @module
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as z from "zod"
import { TaggedError } from "./Errors.ts"
import type { MemoryEntry, MemoryError, MemoryStoreShape } from "./MemoryStore.ts"
import { defaultMaxEntries } from "./MemoryStore.ts"
import * as Term from "./Term.ts"
import type { ToolDefinition } from "./Tools.ts"

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
  /** Keep every version; never replace or drop one. Default `false`. */
  readonly appendOnly?: boolean
  /** Bindings written at creation when the key has no value yet. */
  readonly initial?: Readonly<Record<string, string>>
  /**
   * How many of the newest writes `get` (append-only), `history` and `snapshot` look at.
   * In append-only mode it is also the most versions the memory holds: a write past it fails
   * with reason `Full`. Give the store a `maxEntries` above it (twice is plenty), so that
   * writers racing at the limit never make the store evict a version.
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
 * A write that shared memory refused: `AppendOnly` (in append-only mode, `set` on a key that
 * already has a different value) or `Full` (in append-only mode, the memory holds `historyLimit`
 * versions). Nothing was written.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { SharedMemory } from "lambdagent"
 * const e = new SharedMemory.SharedMemoryError({ reason: "AppendOnly", key: "plan", message: "plan is already bound" })
 * ```
 */
export class SharedMemoryError extends TaggedError<SharedMemoryError>()("SharedMemoryError", {
  reason: Schema.Literals(["AppendOnly", "Full"]),
  /** The key of the refused write. */
  key: Schema.String,
  message: Schema.String
}) {}

/**
 * Tells whether a value is a {@link SharedMemoryError}, by its `_tag` (safe across bundled
 * copies of the package).
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { SharedMemory } from "lambdagent"
 * SharedMemory.isSharedMemoryError(new SharedMemory.SharedMemoryError({ reason: "Full", key: "k", message: "full" })) // true
 * ```
 */
export const isSharedMemoryError = (u: unknown): u is SharedMemoryError => typeof u === "object" && u !== null && "_tag" in u && u._tag === "SharedMemoryError"

/**
 * Shared bindings over a memory store.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { SharedMemory } from "lambdagent"
 * const note = (sm: SharedMemory.SharedMemory) => sm.append("status", "researching")
 * ```
 */
export interface SharedMemory {
  /** The store namespace holding the bindings. */
  readonly namespace: string
  /** Whether bindings are never replaced (see the module description). */
  readonly appendOnly: boolean
  /** How many of the newest writes reads look at (and, append-only, the most versions kept). */
  readonly historyLimit: number
  /** The newest value of a key. */
  readonly get: (key: string) => Effect.Effect<string | undefined, MemoryError>
  /**
   * Binds a key. Without `appendOnly` it replaces any value. With `appendOnly` it binds a key
   * that has no value yet; writing the value a key already has changes nothing, and any other
   * value fails with reason `AppendOnly`.
   */
  readonly set: (key: string, value: string) => Effect.Effect<void, MemoryError | SharedMemoryError>
  /**
   * Adds a version of a key. With `appendOnly` every version is kept (`history`); without it a
   * key has one version, so `append` replaces it as `set` does.
   */
  readonly append: (key: string, value: string) => Effect.Effect<void, MemoryError | SharedMemoryError>
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
  `${Date.now().toString(36)}.${((versionCounter = (versionCounter + 1) % 1_679_616)).toString(36)}.${Math.floor(Math.random() * 2_176_782_336).toString(36)}`

/** The version id of a binding's first version when the store can write it atomically (no dots: never a {@link versionId}). */
const FIRST_VERSION = "first"

/** The binding key of a store key, in append-only mode. */
const bindingKey = (storeKey: string): string => {
  const i = storeKey.lastIndexOf(SEPARATOR)
  return i < 0 ? storeKey : storeKey.slice(0, i)
}

const quoted = (key: string): string => JSON.stringify(key)

/**
 * Creates shared memory over a store and writes the `initial` bindings that have no value yet.
 *
 * In append-only mode, binding a new key (`set`) is atomic on a store with `putIfAbsent` (the
 * local, Redis and SQLite stores have it): of several writers racing to bind one key, in this
 * process or others, exactly one succeeds and the others are refused unless they wrote the same
 * value. On a store without it the check and the write are two operations, and racing writers
 * may both succeed, as two versions of the key (nothing is lost; `get` returns the newer one).
 * Writers racing at `historyLimit` may pass it by a few versions (which is why the store should
 * keep more than `historyLimit`).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MemoryStore, SharedMemory } from "lambdagent"
 * const program = Effect.gen(function*() {
 *   const sm = yield* SharedMemory.make(MemoryStore.makeLocal(), { appendOnly: true, initial: { plan: "v1" } })
 *   yield* sm.append("plan", "v2")
 *   return yield* sm.history("plan") // plan=v1, then plan=v2
 * })
 * ```
 */
export const make = (store: MemoryStoreShape, options: SharedMemoryOptions = {}): Effect.Effect<SharedMemory, MemoryError | SharedMemoryError> => {
  const ns = options.namespace ?? defaultNamespace
  const appendOnly = options.appendOnly ?? false
  const historyLimit = options.historyLimit ?? defaultMaxEntries
  if (!Number.isSafeInteger(historyLimit) || historyLimit < 1) {
    throw new RangeError(`SharedMemory.make: historyLimit must be a positive integer, got ${historyLimit}`)
  }

  const recent = (limit: number): Effect.Effect<ReadonlyArray<Version>, MemoryError> =>
    appendOnly ? Effect.map(store.listRecent(ns, limit), (entries) => entries.map((e) => ({ ...e, key: bindingKey(e.key) }))) : store.listRecent(ns, limit)

  const history = (key: string): Effect.Effect<ReadonlyArray<Version>, MemoryError> =>
    appendOnly
      ? Effect.map(recent(historyLimit), (versions) => versions.filter((v) => v.key === key).reverse())
      : Effect.map(store.get(ns, key), (e) => (e === undefined ? [] : [e]))

  const get = (key: string): Effect.Effect<string | undefined, MemoryError> =>
    appendOnly ? Effect.map(recent(historyLimit), (versions) => versions.find((v) => v.key === key)?.value) : Effect.map(store.get(ns, key), (e) => e?.value)

  /** Append-only: add a version after checking the limit, given the newest writes. */
  const addVersion = (key: string, value: string, versions: ReadonlyArray<Version>): Effect.Effect<void, MemoryError | SharedMemoryError> =>
    versions.length >= historyLimit
      ? Effect.fail(
          new SharedMemoryError({
            reason: "Full",
            key,
            message:
              `shared memory ${quoted(ns)} is full: it holds ${versions.length} versions (the limit is ${historyLimit}); ` +
              `append-only memory never drops one, so ${quoted(key)} was not written`
          })
        )
      : store.put(ns, `${key}${SEPARATOR}${versionId()}`, value)

  const alreadyBound = (key: string) =>
    new SharedMemoryError({
      reason: "AppendOnly",
      key,
      message:
        `${quoted(key)} is already bound and shared memory ${quoted(ns)} is append-only: ` + `a bound key is never replaced (append a new version instead)`
    })

  /**
   * Append-only: bind a key that has no version yet. With `putIfAbsent`, the binding's first
   * version has a fixed store key, so of several writers racing to bind it (other processes
   * included) exactly one succeeds and the others see its value.
   */
  const bind = (key: string, value: string, versions: ReadonlyArray<Version>): Effect.Effect<void, MemoryError | SharedMemoryError> => {
    if (store.putIfAbsent === undefined || versions.length >= historyLimit) return addVersion(key, value, versions)
    const first = `${key}${SEPARATOR}${FIRST_VERSION}`
    return Effect.flatMap(store.putIfAbsent(ns, first, value), (wrote) =>
      wrote ? Effect.void : Effect.flatMap(store.get(ns, first), (winner) => (winner?.value === value ? Effect.void : Effect.fail(alreadyBound(key))))
    )
  }

  const set = (key: string, value: string): Effect.Effect<void, MemoryError | SharedMemoryError> =>
    appendOnly
      ? Effect.flatMap(recent(historyLimit), (versions): Effect.Effect<void, MemoryError | SharedMemoryError> => {
          const current = versions.find((v) => v.key === key)
          if (current === undefined) return bind(key, value, versions)
          if (current.value === value) return Effect.void
          return Effect.fail(alreadyBound(key))
        })
      : store.put(ns, key, value)

  const append = (key: string, value: string): Effect.Effect<void, MemoryError | SharedMemoryError> =>
    appendOnly ? Effect.flatMap(recent(historyLimit), (versions) => addVersion(key, value, versions)) : store.put(ns, key, value)

  const snapshot = Effect.map(recent(historyLimit), (versions) => {
    const out: Record<string, string> = {}
    for (const v of versions) if (!Object.hasOwn(out, v.key)) out[v.key] = v.value
    return out
  })

  const shared: SharedMemory = { namespace: ns, appendOnly, historyLimit, get, set, append, history, snapshot, recent }
  const initial = Object.entries(options.initial ?? {})
  if (initial.length === 0) return Effect.succeed(shared)
  return Effect.as(
    Effect.flatMap(snapshot, (current) =>
      Effect.forEach(
        initial.filter(([k]) => !Object.hasOwn(current, k)),
        ([k, v]) => append(k, v),
        { discard: true }
      )
    ),
    shared
  )
}

// ---------------------------------------------------------------------------------------------
// Agents' view: the context block and the tools
// ---------------------------------------------------------------------------------------------

/**
 * The names of the tools {@link tools} makes, which the YAML compiler refers to.
 *
 * - `read` (`shared_read`): a key's newest value, its history, or every binding;
 * - `write` (`shared_write`): bind a key (refused on a bound key in append-only mode);
 * - `append` (`shared_append`): add a version of a key;
 * - `context` (`shared_memory_context`): the input with the bindings shown before it;
 * - `publish` (`shared_publish`): record `[name, output]` as a version of `name`.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { SharedMemory } from "lambdagent"
 * SharedMemory.toolNames.read // "shared_read"
 * ```
 */
export const toolNames = {
  read: "shared_read",
  write: "shared_write",
  append: "shared_append",
  context: "shared_memory_context",
  publish: "shared_publish"
} as const

/**
 * The input an agent sees when the bindings are shown to it: a `[Shared Memory]` block with the
 * newest value of each key (in key order; the lines of a multi-line value indented under it),
 * then the input. With no bindings the input is unchanged. `counts` (versions per key) adds how
 * many versions a key has when it has several.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { SharedMemory } from "lambdagent"
 * SharedMemory.withContext("Write the intro.", { goal: "a report on lambdas" })
 * // "[Shared Memory]\n- goal: a report on lambdas\n\n[Current Input]\nWrite the intro."
 * ```
 */
export const withContext = (input: string, bindings: Readonly<Record<string, string>>, counts: Readonly<Record<string, number>> = {}): string => {
  const keys = Object.keys(bindings).sort()
  if (keys.length === 0) return input
  const lines = keys.map((k) => {
    const n = counts[k] ?? 1
    return `- ${k}: ${bindings[k]!.replace(/\n/g, "\n  ")}${n > 1 ? ` (${n} versions)` : ""}`
  })
  return `[Shared Memory]\n${lines.join("\n")}\n\n[Current Input]\n${input}`
}

const asText = (value: unknown): string => (typeof value === "string" ? value : Term.stringify(value as Term.Json))

const ReadInput = z.union([
  z.string(),
  z.strictObject({
    key: z.string().optional(),
    history: z.boolean().optional()
  })
])

const WriteInput = z.strictObject({ key: z.string(), value: z.unknown() })

const PublishInput = z.tuple([z.string(), z.unknown()])

/**
 * Options of {@link tools}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { SharedMemory } from "lambdagent"
 * const o: SharedMemory.ToolsOptions = { source: "redis redis://127.0.0.1:6379" }
 * ```
 */
export interface ToolsOptions {
  /** Where the memory lives, for tool listings. */
  readonly source?: string
}

/**
 * The tools agents use to read and write a shared memory (named by {@link toolNames}). Refused
 * writes (append-only, full) and store failures fail the call with their message, which a ReAct
 * agent sees as a `[TOOL_ERROR]` observation.
 *
 * - `shared_read`: input a key (text), `{"key": k}`, `{"key": k, "history": true}` (every
 *   version, oldest first) or nothing (`""` or `{}`: every binding as a JSON object);
 * - `shared_write`: `{"key": k, "value": v}` binds `k` (see {@link SharedMemory.set});
 * - `shared_append`: `{"key": k, "value": v}` adds a version (see {@link SharedMemory.append});
 * - `shared_memory_context`: text in, the same text with the bindings shown before it
 *   ({@link withContext});
 * - `shared_publish`: `[name, output]` appends `output` (text, or its JSON) to `name`.
 *
 * Values that are not text are stored as their JSON.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { createRuntime, MemoryStore, SharedMemory } from "lambdagent"
 * const sm = await Effect.runPromise(SharedMemory.make(MemoryStore.makeLocal(), { appendOnly: true }))
 * const runtime = createRuntime({ tools: SharedMemory.tools(sm) })
 * ```
 */
export const tools = (memory: SharedMemory, options: ToolsOptions = {}): ReadonlyArray<ToolDefinition> => {
  const where = options.source !== undefined ? { source: options.source } : {}
  const mode = memory.appendOnly ? "append-only " : ""
  const read: ToolDefinition<z.infer<typeof ReadInput>> = {
    name: toolNames.read,
    kind: "host",
    description: `Read the ${mode}shared memory: give a key for its newest value, {"key": k, "history": true} for every version, or nothing for every binding.`,
    input: ReadInput,
    ...where,
    run: (input) => {
      const request = typeof input === "string" ? { key: input.trim() === "" ? undefined : input.trim() } : input
      const key = request.key
      if (key === undefined) return Effect.map(memory.snapshot, (bindings) => JSON.stringify(bindings))
      if ("history" in request && request.history === true) {
        return Effect.map(memory.history(key), (versions) => versions.map((v) => v.value))
      }
      return Effect.map(memory.get(key), (value) => value ?? `(nothing is bound to ${quoted(key)})`)
    }
  }
  const write: ToolDefinition<z.infer<typeof WriteInput>> = {
    name: toolNames.write,
    kind: "host",
    description: memory.appendOnly
      ? 'Bind a key of the shared memory to a value: {"key": k, "value": v}. The memory is append-only: a key that is already bound cannot be rebound (use shared_append).'
      : 'Bind a key of the shared memory to a value, replacing any earlier value: {"key": k, "value": v}.',
    input: WriteInput,
    ...where,
    run: ({ key, value }) => Effect.as(memory.set(key, asText(value)), `wrote ${quoted(key)}`)
  }
  const append: ToolDefinition<z.infer<typeof WriteInput>> = {
    name: toolNames.append,
    kind: "host",
    description: memory.appendOnly
      ? 'Add a new version of a key of the shared memory, keeping every earlier one: {"key": k, "value": v}.'
      : 'Set a key of the shared memory (it keeps one version per key): {"key": k, "value": v}.',
    input: WriteInput,
    ...where,
    run: ({ key, value }) => Effect.as(memory.append(key, asText(value)), `appended to ${quoted(key)}`)
  }
  const context: ToolDefinition<string> = {
    name: toolNames.context,
    kind: "host",
    description: "Show the shared memory before the input.",
    ...where,
    run: (input) =>
      Effect.map(memory.recent(memory.historyLimit), (versions) => {
        const bindings: Record<string, string> = {}
        const counts: Record<string, number> = {}
        for (const v of versions) {
          if (!Object.hasOwn(bindings, v.key)) bindings[v.key] = v.value
          counts[v.key] = (counts[v.key] ?? 0) + 1
        }
        return withContext(input, bindings, counts)
      })
  }
  const publish: ToolDefinition<z.infer<typeof PublishInput>> = {
    name: toolNames.publish,
    kind: "host",
    description: "Record an agent's output in the shared memory under the agent's name: [name, output].",
    input: PublishInput,
    ...where,
    run: ([name, output]) => Effect.as(memory.append(name, asText(output)), `published ${quoted(name)}`)
  }
  return [read, write, append, context, publish]
}
