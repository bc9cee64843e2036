/**
 * Checkpoints in Redis: a `CheckpointStore.Location` under a key prefix, shared by every process
 * that points at the same Redis and prefix.
 *
 * Layout: one string key per journal entry (`<prefix>ck:<run id>.<sequence>`, its JSON text: a
 * whole checkpoint or a delta), a sorted set of every entry by the server time it was written
 * (`<prefix>index`), one of each run's entries by sequence (`<prefix>run:<run id>`) and one of its
 * whole checkpoints, the bases the deltas extend (`<prefix>bases:<run id>`). A write is one Lua
 * script — the text, the indexes and the pruning of the run's oldest — so Redis applies all of it
 * or none: no reader ever sees an entry listed without its text, or the text of one not listed.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { CheckpointStore, Errors } from "lambdagent"
import { connect, messageOf, runScript, script } from "./connection.ts"
import { redactUrl } from "./redact.ts"

/**
 * Options of {@link checkpointLocation}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { RedisCheckpointOptions } from "lambdagent/redis"
 * const o: RedisCheckpointOptions = { url: "redis://127.0.0.1:6379", keyPrefix: "myapp:runs:" }
 * ```
 */
export interface RedisCheckpointOptions {
  /** Default: `LAMBDAGENT_REDIS_URL`, else `redis://127.0.0.1:6379`. */
  readonly url?: string
  /** Prefix of every key the location writes. Default {@link defaultCheckpointPrefix}. */
  readonly keyPrefix?: string
  /** How long to wait for the first connection, in milliseconds. Default 2000. */
  readonly connectTimeoutMs?: number
  /** How long one command may take before it fails, in milliseconds. Default 2000. */
  readonly commandTimeoutMs?: number
}

/**
 * The key prefix used when no `keyPrefix` option is given.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { defaultCheckpointPrefix } from "lambdagent/redis"
 * defaultCheckpointPrefix // "lambdagent:checkpoints:"
 * ```
 */
export const defaultCheckpointPrefix = "lambdagent:checkpoints:"

/**
 * KEYS: text, index, run, bases. ARGV: key, text, sequence, base, keep from, text prefix. Returns
 * how many it pruned. Redis does not undo a script's writes when a later command fails, so what
 * can fail is checked first.
 */
const WRITE = `
for i = 2, 4 do
  local t = redis.call('TYPE', KEYS[i]).ok
  if t ~= 'none' and t ~= 'zset' then return redis.error_reply('the key ' .. KEYS[i] .. ' holds a ' .. t .. ', not a sorted set of checkpoints') end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('ZADD', KEYS[3], tonumber(ARGV[3]), ARGV[1])
if ARGV[3] == ARGV[4] then redis.call('ZADD', KEYS[4], tonumber(ARGV[3]), ARGV[1]) end
local below = '(' .. ARGV[5]
local victims = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', below)
for i = 1, #victims do
  redis.call('DEL', ARGV[6] .. victims[i])
  redis.call('ZREM', KEYS[2], victims[i])
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', below)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', below)
return #victims
`

/** The base a run's entry `seq` extends (its own sequence when no base is before it). */
const BASE_OF = `
local function base_of(bases, seq)
  local b = redis.call('ZREVRANGEBYSCORE', bases, seq, '-inf', 'LIMIT', 0, 1)
  if #b == 0 then return seq end
  return tonumber(redis.call('ZSCORE', bases, b[1]))
end
`

/** KEYS: index. ARGV: text prefix, key prefix. Returns [key, written ms, bytes, base, …]. */
const LIST = `${BASE_OF}
local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local out = {}
for i = 1, #all, 2 do
  local run, seq = string.match(all[i], '^(.*)%.(%d+)$')
  out[#out + 1] = all[i]
  out[#out + 1] = all[i + 1]
  out[#out + 1] = redis.call('STRLEN', ARGV[1] .. all[i])
  out[#out + 1] = run and base_of(ARGV[2] .. 'bases:' .. run, tonumber(seq)) or -1
end
return out
`

/** KEYS: run, bases. ARGV: key, sequence, text prefix. Returns [sequence, text, …] from the key's base to it; none when it is not kept. */
const READ = `${BASE_OF}
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {} end
local seq = tonumber(ARGV[2])
local members = redis.call('ZRANGEBYSCORE', KEYS[1], base_of(KEYS[2], seq), seq, 'WITHSCORES')
local out = {}
for i = 1, #members, 2 do
  out[#out + 1] = members[i + 1]
  out[#out + 1] = redis.call('GET', ARGV[3] .. members[i]) or ''
end
return out
`

const writeScript = script(WRITE)
const listScript = script(LIST)
const readScript = script(READ)

/**
 * Checkpoints kept in Redis (see the module's description), as a `CheckpointStore.Location`; the
 * connection is released when the scope closes. Fails with a `CheckpointError` (`store`) naming
 * the URL and prefix when Redis cannot be reached or not written to, so a run fails before its
 * first oracle call.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { CheckpointStore, createRuntime, Term } from "lambdagent"
 * import { checkpointLocation } from "lambdagent/redis"
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const location = yield* checkpointLocation({ url: "redis://127.0.0.1:6379", keyPrefix: "myapp:runs:" })
 *   const store = yield* CheckpointStore.open(location, { runId: "order-42" })
 *   return yield* Effect.promise(() => createRuntime().run(Term.llm({ system: "Summarize." }), "text", { checkpoint: { save: store.save } }))
 * }))
 * ```
 */
export const checkpointLocation = (options: RedisCheckpointOptions = {}): Effect.Effect<CheckpointStore.Location, Errors.CheckpointError, Scope.Scope> =>
  Effect.gen(function* () {
    const url = options.url ?? process.env.LAMBDAGENT_REDIS_URL ?? "redis://127.0.0.1:6379"
    const prefix = options.keyPrefix ?? defaultCheckpointPrefix
    const description = `Redis at ${redactUrl(url)}, prefix ${prefix}`
    const storeError = (message: string) => new Errors.CheckpointError({ reason: "store", message: `${description}: ${message}` })
    const { client, lastError } = yield* connect(
      url,
      { connectTimeout: options.connectTimeoutMs ?? 2000, commandTimeout: options.commandTimeoutMs ?? 2000 },
      (message) => storeError(`cannot reach Redis: ${message}`)
    )
    const call = <A>(what: string, f: () => Promise<A>): Effect.Effect<A, Errors.CheckpointError> =>
      Effect.tryPromise({
        try: f,
        catch: (cause) => {
          const last = lastError()
          const offline = client.status !== "ready" ? ` (not connected: ${client.status}${last !== undefined ? `; last error: ${last.message}` : ""})` : ""
          return storeError(`${what} failed${offline}: ${messageOf(cause)}`)
        }
      })
    const textKey = (key: string) => `${prefix}ck:${key}`
    const index = `${prefix}index`
    const runKey = (runId: string) => `${prefix}run:${runId}`
    const basesKey = (runId: string) => `${prefix}bases:${runId}`
    const location: CheckpointStore.Location = {
      description,
      ensureWritable: call("a test write", async () => {
        const probe = `${prefix}probe:${process.pid}`
        await client.set(probe, "", "PX", 10_000)
        await client.del(probe)
      }),
      write: (runId, sequence, base, text, keepFrom) => {
        const key = CheckpointStore.keyOf(runId, sequence)
        const below = Number.isFinite(keepFrom) ? keepFrom : "-inf"
        return Effect.as(
          call("writing a checkpoint", () =>
            runScript(client, writeScript, [textKey(key), index, runKey(runId), basesKey(runId)], [key, text, sequence, base, below, `${prefix}ck:`])
          ),
          key
        )
      },
      list: call("listing checkpoints", async () => {
        const flat = (await runScript(client, listScript, [index], [`${prefix}ck:`, prefix])) as Array<string | number>
        const out: Array<CheckpointStore.Listed> = []
        for (let i = 0; i < flat.length; i += 4) {
          const key = String(flat[i])
          const parsed = CheckpointStore.parseKey(key)
          if (parsed === undefined) continue
          out.push({ key, ...parsed, base: Number(flat[i + 3]), modified: new Date(Number(flat[i + 1])), bytes: Number(flat[i + 2]) })
        }
        return out
      }),
      readEntries: (key) => {
        const parsed = CheckpointStore.parseKey(key)
        const notFound = new Errors.CheckpointError({ reason: "missing", message: `${description}: ${key}: not found` })
        if (parsed === undefined) return Effect.fail(notFound)
        return Effect.flatMap(
          call(`reading ${key}`, () => runScript(client, readScript, [runKey(parsed.runId), basesKey(parsed.runId)], [key, parsed.sequence, `${prefix}ck:`])),
          (reply) => {
            const flat = reply as Array<string | number>
            if (flat.length === 0) return Effect.fail(notFound)
            const entries: Array<CheckpointStore.StoredEntry> = []
            for (let i = 0; i < flat.length; i += 2) entries.push({ sequence: Number(flat[i]), text: String(flat[i + 1]) })
            return Effect.succeed(entries)
          }
        )
      },
      remove: (keys) =>
        call("deleting checkpoints", async () => {
          const multi = client.multi()
          for (const key of keys) {
            multi.del(textKey(key))
            multi.zrem(index, key)
            const parsed = CheckpointStore.parseKey(key)
            if (parsed !== undefined) multi.zrem(runKey(parsed.runId), key).zrem(basesKey(parsed.runId), key)
          }
          await multi.exec()
        })
    }
    return location
  })

/**
 * A layer of `CheckpointStore.CheckpointLocation` in Redis (see {@link checkpointLocation}); the
 * connection closes with the layer.
 *
 * @since 0.2.0
 * @category layers
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { CheckpointStore } from "lambdagent"
 * import { checkpointLayer } from "lambdagent/redis"
 * const runs = CheckpointStore.CheckpointLocation.use((l) => l.list)
 * Effect.runPromise(runs.pipe(Effect.provide(checkpointLayer({ keyPrefix: "myapp:runs:" }))))
 * ```
 */
export const checkpointLayer = (options: RedisCheckpointOptions = {}): Layer.Layer<CheckpointStore.CheckpointLocation, Errors.CheckpointError> =>
  Layer.effect(CheckpointStore.CheckpointLocation, checkpointLocation(options))
