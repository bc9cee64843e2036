/**
 * A Redis-backed memory store (`lambdagent/redis`), shared by every process that points at the
 * same Redis and key prefix.
 *
 * Layout per namespace: one string key per entry (its TTL is Redis' own expiry), a sorted set in
 * least-recently-used order, one in write order (for `listRecent`) and one of expiry times (so
 * expired entries leave the indexes before the size limit is applied). Every operation is one
 * Lua script, so concurrent writers never lose a write or see half of one.
 *
 * Requires Redis 6.2 or newer (for `SET … PXAT`), standalone (scripts touch keys they compute).
 *
 * @since 0.1.0
 * @module lambdagent/redis
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { Redis } from "ioredis"
import { MemoryStore } from "lambdagent"
import { connect, messageOf, runScript, type Script, script } from "./connection.ts"
import { redactUrl } from "./redact.ts"

/**
 * Options of the Redis store.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { RedisMemoryOptions } from "lambdagent/redis"
 * const o: RedisMemoryOptions = { url: "redis://127.0.0.1:6379/2", maxEntries: 50, keyPrefix: "myapp:memory:" }
 * ```
 */
export interface RedisMemoryOptions {
  /** Default: `LAMBDAGENT_REDIS_URL`, else {@link defaultUrl}. */
  readonly url?: string
  /** Entries kept per namespace; the least recently used go first. Default 1000. */
  readonly maxEntries?: number
  /** Prefix of every key this store writes. Default `"lambdagent:memory:"`. */
  readonly keyPrefix?: string
  /** How long to wait for the first connection, in milliseconds. Default 2000. */
  readonly connectTimeoutMs?: number
  /** How long one command may take before it fails, in milliseconds. Default 2000. */
  readonly commandTimeoutMs?: number
}

/**
 * The URL used when neither the `url` option nor `LAMBDAGENT_REDIS_URL` is set.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { defaultUrl } from "lambdagent/redis"
 * defaultUrl // "redis://127.0.0.1:6379"
 * ```
 */
export const defaultUrl = "redis://127.0.0.1:6379"

/**
 * The key prefix used when no `keyPrefix` option is given.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { defaultKeyPrefix } from "lambdagent/redis"
 * defaultKeyPrefix // "lambdagent:memory:"
 * ```
 */
export const defaultKeyPrefix = "lambdagent:memory:"

// ---------------------------------------------------------------------------------------------
// Lua scripts. Time is the server's (TIME), the same clock that expires keys.

const PRELUDE = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function purge(lru, log, exp, vp, now)
  local dead = redis.call('ZRANGEBYSCORE', exp, '-inf', now)
  for i = 1, #dead do
    redis.call('DEL', vp .. dead[i])
    redis.call('ZREM', lru, dead[i])
    redis.call('ZREM', log, dead[i])
  end
  if #dead > 0 then redis.call('ZREMRANGEBYSCORE', exp, '-inf', now) end
end
`

/**
 * KEYS: value, lru, log, exp, seq. ARGV: value prefix, key, value, ttl ms, max entries, only if
 * absent (1 or 0). Returns how many entries it evicted, or -1 when it wrote nothing.
 */
const PUT = `${PRELUDE}
local now = now_ms()
purge(KEYS[2], KEYS[3], KEYS[4], ARGV[1], now)
if ARGV[6] == '1' and redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
local seq = redis.call('INCR', KEYS[5])
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  local exp = now + ttl
  redis.call('SET', KEYS[1], string.format('%d:%d:', now, exp) .. ARGV[3], 'PXAT', string.format('%d', exp))
  redis.call('ZADD', KEYS[4], exp, ARGV[2])
else
  redis.call('SET', KEYS[1], string.format('%d::', now) .. ARGV[3])
  redis.call('ZREM', KEYS[4], ARGV[2])
end
redis.call('ZADD', KEYS[2], seq, ARGV[2])
redis.call('ZADD', KEYS[3], seq, ARGV[2])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[5])
if over > 0 then
  local victims = redis.call('ZRANGE', KEYS[2], 0, over - 1)
  for i = 1, #victims do
    redis.call('DEL', ARGV[1] .. victims[i])
    redis.call('ZREM', KEYS[3], victims[i])
    redis.call('ZREM', KEYS[4], victims[i])
  end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
end
return over
`

/** KEYS: value, lru, log, exp, seq. ARGV: key. */
const GET = `
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('ZREM', KEYS[4], ARGV[1])
  return false
end
redis.call('ZADD', KEYS[2], 'XX', redis.call('INCR', KEYS[5]), ARGV[1])
return v
`

/** KEYS: lru, log, exp. ARGV: value prefix, limit. Returns [key, raw, key, raw, …]. */
const LIST = `${PRELUDE}
local now = now_ms()
purge(KEYS[1], KEYS[2], KEYS[3], ARGV[1], now)
local limit = tonumber(ARGV[2])
local out = {}
local found = 0
while found < limit do
  local batch = redis.call('ZREVRANGE', KEYS[2], found, limit - 1)
  if #batch == 0 then break end
  local missing = 0
  for i = 1, #batch do
    local v = redis.call('GET', ARGV[1] .. batch[i])
    if v then
      out[#out + 1] = batch[i]
      out[#out + 1] = v
      found = found + 1
    else
      redis.call('ZREM', KEYS[1], batch[i])
      redis.call('ZREM', KEYS[2], batch[i])
      redis.call('ZREM', KEYS[3], batch[i])
      missing = missing + 1
    end
  end
  if missing == 0 then break end
end
return out
`

/** KEYS: lru, log, exp. ARGV: value prefix. */
const CLEAR = `
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
for i = 1, #members do redis.call('DEL', ARGV[1] .. members[i]) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return #members
`

/**
 * The Lua scripts behind each operation, for tools (and the benchmark) that issue the same
 * commands without the store.
 *
 * @since 0.1.0
 * @category internals
 * @example
 * ```ts
 * import { scripts } from "lambdagent/redis"
 * scripts.put.sha // sha1 of the script, for EVALSHA
 * ```
 */
export const scripts: {
  readonly put: Script
  readonly get: Script
  readonly list: Script
  readonly clear: Script
} = { put: script(PUT), get: script(GET), list: script(LIST), clear: script(CLEAR) }

/**
 * Runs a script with `EVALSHA`, loading it with `EVAL` when the server does not know it (first
 * use, or after a restart).
 *
 * @since 0.1.0
 * @category internals
 * @example
 * ```ts
 * import { Redis } from "ioredis"
 * import { evalScript, keys, scripts } from "lambdagent/redis"
 * const client = new Redis()
 * const k = keys("lambdagent:memory:", "global")
 * await evalScript(client, scripts.clear, [k.lru, k.log, k.exp], [k.valuePrefix])
 * ```
 */
export const evalScript: (client: Redis, s: Script, keys: ReadonlyArray<string>, args: ReadonlyArray<string | number>) => Promise<unknown> = runScript

/**
 * The Redis keys of a namespace. The value key of an entry is `valuePrefix + key`; the
 * namespace's length is part of it so that `("a:b", "c")` and `("a", "b:c")` never meet.
 *
 * @since 0.1.0
 * @category internals
 * @example
 * ```ts
 * import { keys } from "lambdagent/redis"
 * keys("p:", "session:1").lru // "p:lru:session:1"
 * ```
 */
export const keys = (
  prefix: string,
  ns: string
): {
  readonly lru: string
  readonly log: string
  readonly exp: string
  readonly seq: string
  readonly valuePrefix: string
} => ({
  lru: `${prefix}lru:${ns}`,
  log: `${prefix}log:${ns}`,
  exp: `${prefix}exp:${ns}`,
  seq: `${prefix}seq`,
  valuePrefix: `${prefix}val:${ns.length}:${ns}:`
})

/** `createdAt:expiresAt:value` → entry. */
const decode = (key: string, raw: string): MemoryStore.MemoryEntry => {
  const i = raw.indexOf(":")
  const j = raw.indexOf(":", i + 1)
  const createdAt = Number(raw.slice(0, i))
  const value = raw.slice(j + 1)
  return j === i + 1 ? { key, value, createdAt } : { key, value, createdAt, expiresAt: Number(raw.slice(i + 1, j)) }
}

export { redactUrl } from "./redact.ts"

/** ioredis' messages for a command refused or dropped because the connection is gone. */
const OFFLINE = /Stream isn't writeable|Connection is closed|max retries per request/i

const positiveInt = (name: string, value: number): string | undefined =>
  Number.isSafeInteger(value) && value > 0 ? undefined : `${name} must be a positive integer, got ${value}`

/**
 * Connects to Redis and returns a store; the connection is released when the scope closes.
 *
 * Fails with a `MemoryError` (operation `"open"`) naming the URL when Redis cannot be reached
 * within `connectTimeoutMs`; it does not keep retrying at start. Once running, a lost
 * connection makes each operation fail at once with a `MemoryError` (no queueing, each command
 * bounded by `commandTimeoutMs`) while the client reconnects in the background; the same store
 * works again when Redis is back.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import * as RedisMemory from "lambdagent/redis"
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const store = yield* RedisMemory.make({ url: "redis://127.0.0.1:6379", maxEntries: 20 })
 *   yield* store.put("session:1", "last-question", "What is a monad?", { ttlMs: 3_600_000 })
 *   return yield* store.listRecent("session:1", 5)
 * }))
 * ```
 */
export const make = (options: RedisMemoryOptions = {}): Effect.Effect<MemoryStore.MemoryStoreShape, MemoryStore.MemoryError, Scope.Scope> =>
  Effect.gen(function* () {
    const openError = (message: string, cause?: unknown) => new MemoryStore.MemoryError({ store: "redis", operation: "open", message, cause })
    const url =
      options.url ??
      (yield* Config.String("LAMBDAGENT_REDIS_URL").pipe(
        Config.withDefault(defaultUrl),
        Effect.mapError((cause) => openError(`cannot read LAMBDAGENT_REDIS_URL: ${cause.message}`, cause))
      ))
    const shownUrl = redactUrl(url)
    const maxEntries = options.maxEntries ?? MemoryStore.defaultMaxEntries
    const prefix = options.keyPrefix ?? defaultKeyPrefix
    const connectTimeout = options.connectTimeoutMs ?? 2000
    const commandTimeout = options.commandTimeoutMs ?? 2000
    const invalid = positiveInt("maxEntries", maxEntries) ?? positiveInt("connectTimeoutMs", connectTimeout) ?? positiveInt("commandTimeoutMs", commandTimeout)
    if (invalid !== undefined) return yield* openError(`Redis store at ${shownUrl}: ${invalid}`)

    const { client, lastError } = yield* connect(url, { connectTimeout, commandTimeout }, (message, cause) =>
      openError(`cannot reach Redis at ${shownUrl}: ${message}`, cause)
    )
    const call = <A>(operation: MemoryStore.MemoryError["operation"], f: () => Promise<A>): Effect.Effect<A, MemoryStore.MemoryError> =>
      Effect.tryPromise({
        try: f,
        catch: (cause) => {
          const message = messageOf(cause)
          const offline = client.status !== "ready" || OFFLINE.test(message)
          const reason = offline ? `not connected (${client.status}${lastError() ? `; last error: ${lastError()!.message}` : ""}): ${message}` : message
          return new MemoryStore.MemoryError({
            store: "redis",
            operation,
            message: `Redis at ${shownUrl}: ${operation} failed: ${reason}`,
            cause
          })
        }
      })

    /** One atomic PUT script call: evicted entries, or -1 when `onlyIfAbsent` found a live entry. */
    const write = (
      ns: string,
      key: string,
      value: string,
      putOptions: MemoryStore.PutOptions | undefined,
      onlyIfAbsent: boolean
    ): Effect.Effect<number, MemoryStore.MemoryError> => {
      const ttlMs = putOptions?.ttlMs ?? 0
      if (!Number.isFinite(ttlMs) || ttlMs < 0) {
        return Effect.fail(
          new MemoryStore.MemoryError({
            store: "redis",
            operation: "put",
            message: `ttlMs must be a finite number >= 0, got ${ttlMs}`
          })
        )
      }
      const k = keys(prefix, ns)
      return call("put", () =>
        evalScript(
          client,
          scripts.put,
          [k.valuePrefix + key, k.lru, k.log, k.exp, k.seq],
          [k.valuePrefix, key, value, Math.ceil(ttlMs), maxEntries, onlyIfAbsent ? 1 : 0]
        ).then(Number)
      )
    }

    const store: MemoryStore.MemoryStoreShape = {
      name: "redis",
      get: (ns, key) => {
        const k = keys(prefix, ns)
        return call("get", async () => {
          const raw = await evalScript(client, scripts.get, [k.valuePrefix + key, k.lru, k.log, k.exp, k.seq], [key])
          return typeof raw === "string" ? decode(key, raw) : undefined
        })
      },
      put: (ns, key, value, putOptions) => Effect.asVoid(write(ns, key, value, putOptions, false)),
      putIfAbsent: (ns, key, value, putOptions) => Effect.map(write(ns, key, value, putOptions, true), (evicted) => evicted !== -1),
      listRecent: (ns, limit) => {
        // a namespace never holds more than maxEntries, which also tames Infinity and huge limits
        const n = Math.min(Math.floor(limit), maxEntries)
        if (!(n > 0)) return Effect.succeed([])
        const k = keys(prefix, ns)
        return call("listRecent", async () => {
          const flat = (await evalScript(client, scripts.list, [k.lru, k.log, k.exp], [k.valuePrefix, n])) as Array<string>
          const out: Array<MemoryStore.MemoryEntry> = []
          for (let i = 0; i < flat.length; i += 2) out.push(decode(flat[i]!, flat[i + 1]!))
          return out
        })
      },
      clear: (ns) => {
        const k = keys(prefix, ns)
        return call("clear", () => evalScript(client, scripts.clear, [k.lru, k.log, k.exp], [k.valuePrefix]).then(() => undefined))
      }
    }
    return store
  })

/**
 * A layer providing `MemoryStore` backed by Redis (see {@link make}); the connection closes
 * with the layer.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MemoryStore } from "lambdagent"
import { connect, messageOf, runScript, type Script, script } from "./connection.ts"
import { redactUrl } from "./redact.ts"
 * import * as RedisMemory from "lambdagent/redis"
 * const program = MemoryStore.MemoryStore.use((s) => s.listRecent("user:ada", 10))
 * Effect.runPromise(program.pipe(Effect.provide(RedisMemory.layer({ maxEntries: 100 }))))
 * ```
 */
export const layer = (options: RedisMemoryOptions = {}): Layer.Layer<MemoryStore.MemoryStore, MemoryStore.MemoryError> =>
  Layer.effect(MemoryStore.MemoryStore, make(options))

/**
 * The Redis store's constructors under one name: `RedisMemory.make`, `RedisMemory.layer`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { RedisMemory } from "lambdagent/redis"
 * const live = RedisMemory.layer({ url: "redis://cache:6379" })
 * ```
 */
export const RedisMemory = { make, layer } as const

/**
 * Store factories by `memory.strategy` name, for the plugin registry.
 *
 * @since 0.1.0
 * @category plugins
 * @example
 * ```ts
 * import { stores } from "lambdagent/redis"
 * const effect = stores.redis({ maxEntries: 20 }) // Effect<MemoryStoreShape, MemoryError, Scope>
 * ```
 */
export const stores: {
  /** The Redis store of {@link make}, for `memory.strategy: redis`. */
  readonly redis: (options?: RedisMemoryOptions) => Effect.Effect<MemoryStore.MemoryStoreShape, MemoryStore.MemoryError, Scope.Scope>
} = { redis: make }

/**
 * The plugin value: `memory.strategy: redis` in an agent's YAML selects `stores.redis`.
 *
 * @since 0.1.0
 * @category plugins
 * @example
 * ```ts
 * import { plugin } from "lambdagent/redis"
 * plugin.name // "redis"
 * ```
 */
export const plugin = { name: "redis", stores } as const

export { checkpointLayer, checkpointLocation, defaultCheckpointPrefix, type RedisCheckpointOptions } from "./checkpoints.ts"
