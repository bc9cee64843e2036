/**
 * The data structure behind the in-process memory store: per namespace, a `Map` whose insertion
 * order is the least-recently-used order (a use re-inserts the key) plus a doubly linked list in
 * write order for `listRecent`. Every operation is O(1) except `listRecent` (O(limit) plus the
 * expired entries it skips) and the occasional sweep of expired entries.
 *
 * Pure synchronous code: the caller passes the current time, so the Effect wrapper can read it
 * from `Clock`.
 *
 * @internal
 */
import type { MemoryEntry } from "../MemoryStore.ts"

interface Node {
  readonly key: string
  readonly value: string
  readonly createdAt: number
  /** `Infinity` when the entry never expires. */
  readonly expiresAt: number
  /** Toward the newest write. */
  newer: Node | undefined
  /** Toward the oldest write. */
  older: Node | undefined
}

class Space {
  /** Insertion order = least recently used first. */
  readonly byKey = new Map<string, Node>()
  newest: Node | undefined = undefined
  oldest: Node | undefined = undefined
  /** A lower bound of the earliest `expiresAt` in this namespace. */
  nextExpiry = Infinity

  unlink(node: Node): void {
    if (node.newer) node.newer.older = node.older
    else this.newest = node.older
    if (node.older) node.older.newer = node.newer
    else this.oldest = node.newer
    node.newer = undefined
    node.older = undefined
  }

  pushNewest(node: Node): void {
    node.older = this.newest
    node.newer = undefined
    if (this.newest) this.newest.newer = node
    else this.oldest = node
    this.newest = node
  }

  remove(node: Node): void {
    this.byKey.delete(node.key)
    this.unlink(node)
  }

  /** Drops every expired entry and recomputes `nextExpiry`. O(size). */
  sweep(now: number): void {
    let next = Infinity
    for (const node of this.byKey.values()) {
      if (node.expiresAt <= now) this.remove(node)
      else if (node.expiresAt < next) next = node.expiresAt
    }
    this.nextExpiry = next
  }
}

const toEntry = (node: Node): MemoryEntry =>
  node.expiresAt === Infinity
    ? { key: node.key, value: node.value, createdAt: node.createdAt }
    : { key: node.key, value: node.value, createdAt: node.createdAt, expiresAt: node.expiresAt }

/**
 * How often (at most) a write sweeps every namespace for expired entries, so that namespaces
 * nobody touches again do not keep dead entries forever.
 */
const GLOBAL_SWEEP_INTERVAL_MS = 60_000

/** @internal */
export class LocalMemory {
  private readonly spaces = new Map<string, Space>()
  private nextGlobalSweep = 0

  constructor(readonly maxEntries: number) {}

  get(ns: string, key: string, now: number): MemoryEntry | undefined {
    const space = this.spaces.get(ns)
    if (space === undefined) return undefined
    const node = space.byKey.get(key)
    if (node === undefined) return undefined
    if (node.expiresAt <= now) {
      space.remove(node)
      this.dropIfEmpty(ns, space)
      return undefined
    }
    // refresh recency: re-insert at the end of the Map's iteration order
    space.byKey.delete(key)
    space.byKey.set(key, node)
    return toEntry(node)
  }

  /** Whether `key` has a live entry; unlike `get`, not a use. */
  has(ns: string, key: string, now: number): boolean {
    const node = this.spaces.get(ns)?.byKey.get(key)
    return node !== undefined && node.expiresAt > now
  }

  put(ns: string, key: string, value: string, ttlMs: number, now: number): void {
    let space = this.spaces.get(ns)
    if (space === undefined) {
      space = new Space()
      this.spaces.set(ns, space)
    }
    const previous = space.byKey.get(key)
    if (previous !== undefined) space.remove(previous)
    const expiresAt = ttlMs > 0 ? now + ttlMs : Infinity
    const node: Node = { key, value, createdAt: now, expiresAt, newer: undefined, older: undefined }
    space.byKey.set(key, node)
    space.pushNewest(node)
    if (expiresAt < space.nextExpiry) space.nextExpiry = expiresAt
    if (space.byKey.size > this.maxEntries) {
      // expired entries leave before live ones are evicted
      if (now >= space.nextExpiry) space.sweep(now)
      while (space.byKey.size > this.maxEntries) {
        const lru = space.byKey.values().next().value as Node
        space.remove(lru)
      }
    }
    if (now >= this.nextGlobalSweep) this.sweepAll(now)
  }

  listRecent(ns: string, limit: number, now: number): ReadonlyArray<MemoryEntry> {
    const space = this.spaces.get(ns)
    if (space === undefined || limit <= 0) return []
    const out: Array<MemoryEntry> = []
    let node = space.newest
    while (node !== undefined && out.length < limit) {
      const older: Node | undefined = node.older
      if (node.expiresAt <= now) space.remove(node)
      else out.push(toEntry(node))
      node = older
    }
    this.dropIfEmpty(ns, space)
    return out
  }

  clear(ns: string): void {
    this.spaces.delete(ns)
  }

  /** Number of live and not yet swept entries in a namespace (for tests and metrics). */
  size(ns: string): number {
    return this.spaces.get(ns)?.byKey.size ?? 0
  }

  private sweepAll(now: number): void {
    this.nextGlobalSweep = now + GLOBAL_SWEEP_INTERVAL_MS
    for (const [ns, space] of this.spaces) {
      if (now >= space.nextExpiry) space.sweep(now)
      this.dropIfEmpty(ns, space)
    }
  }

  private dropIfEmpty(ns: string, space: Space): void {
    if (space.byKey.size === 0) this.spaces.delete(ns)
  }
}
