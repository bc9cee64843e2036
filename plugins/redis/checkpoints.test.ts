/**
 * Checkpoints in Redis, against the real server: the checks every location passes, the key
 * layout, an unreachable server failing at open with its URL, and a write that is all or nothing.
 */
import { randomUUID } from "node:crypto"
import * as Effect from "effect/Effect"
import { CheckpointStore } from "lambdagent"
import { Redis } from "ioredis"
import { afterAll, describe, expect, it } from "vitest"
import { checkpointLocationConformance } from "../../test/fixtures/checkpointLocations.ts"
import { failureOf, openScoped } from "../../test/fixtures/helpers.ts"
import { deleteRedisKeys, redisUnavailable, testRedisUrl } from "../../test/fixtures/redis.ts"
import { checkpointLayer, checkpointLocation } from "./index.ts"

const url = testRedisUrl
const prefix = `lambdagent-test:${randomUUID()}:`
const unavailable = await redisUnavailable(url)
if (unavailable !== undefined) console.warn(`[redis checkpoint tests] skipping: ${unavailable}`)
let tests = 0

afterAll(async () => {
  if (unavailable === undefined) await deleteRedisKeys(prefix, url)
})

if (unavailable === undefined) {
  checkpointLocationConformance("redis", async () => {
    const own = `${prefix}${++tests}:`
    const { close, value } = await openScoped(checkpointLocation({ url, keyPrefix: own }))
    return {
      location: value,
      cleanup: async () => {
        await close()
        await deleteRedisKeys(own, url)
      }
    }
  })
}

describe.skipIf(unavailable !== undefined)("Redis checkpoints", () => {
  it("keeps an entry's text, its place in the index, in its run's set and (a base) in its run's bases; pruning removes all of them", async () => {
    const own = `${prefix}layout:`
    const { close, value: location } = await openScoped(checkpointLocation({ url, keyPrefix: own }))
    const client = new Redis(url)
    try {
      // a base at 1 with a delta, then a base at 3 with a delta: keep from 3
      for (const [sequence, base] of [
        [1, 1],
        [2, 1],
        [3, 3],
        [4, 3]
      ] as const) {
        await Effect.runPromise(location.write("r1", sequence, base, `{"n":${sequence}}`, base))
      }
      expect((await client.keys(`${own}*`)).sort()).toEqual([`${own}bases:r1`, `${own}ck:r1.000003`, `${own}ck:r1.000004`, `${own}index`, `${own}run:r1`])
      expect(await client.zrange(`${own}run:r1`, "0", "-1")).toEqual(["r1.000003", "r1.000004"])
      expect(await client.zrange(`${own}bases:r1`, "0", "-1")).toEqual(["r1.000003"])
      expect(await client.zcard(`${own}index`)).toBe(2)
      expect((await Effect.runPromise(location.list)).map((e) => [e.sequence, e.base])).toEqual([
        [3, 3],
        [4, 3]
      ])
      expect(await Effect.runPromise(location.readEntries("r1.000004"))).toEqual([
        { sequence: 3, text: '{"n":3}' },
        { sequence: 4, text: '{"n":4}' }
      ])
      await Effect.runPromise(CheckpointStore.pruneIn(location, 0))
      expect(await client.keys(`${own}*`)).toEqual([])
    } finally {
      client.disconnect()
      await close()
    }
  })

  it("an unreachable server fails at open with one line naming the URL and prefix", async () => {
    const error = await failureOf(Effect.scoped(checkpointLocation({ url: "redis://127.0.0.1:1", keyPrefix: "p:", connectTimeoutMs: 500 })))
    expect(error._tag).toBe("CheckpointError")
    expect(error.reason).toBe("store")
    expect(error.message).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:1, prefix p:: cannot reach Redis: /)
    expect(error.message).not.toContain("\n")
  })

  it("a write the server refuses leaves nothing behind (the script runs whole or not at all)", async () => {
    const own = `${prefix}atomic:`
    const { close, value: location } = await openScoped(checkpointLocation({ url, keyPrefix: own }))
    const client = new Redis(url)
    try {
      await Effect.runPromise(location.write("r1", 1, 1, '{"n":1}', 1))
      // the run's set is now of the wrong type: the script fails at its ZADD, after its SET
      await client.del(`${own}run:r1`)
      await client.set(`${own}run:r1`, "not a sorted set")
      const error = await failureOf(location.write("r1", 2, 1, '{"n":2}', 1))
      expect(error.message).toContain("writing a checkpoint failed")
      expect(await client.exists(`${own}ck:r1.000002`)).toBe(0)
      expect(await client.zrange(`${own}index`, "0", "-1")).toEqual(["r1.000001"])
    } finally {
      client.disconnect()
      await close()
    }
  })

  it("is a layer of CheckpointStore.CheckpointLocation", async () => {
    const listed = await Effect.runPromise(
      CheckpointStore.CheckpointLocation.use((l) => l.list).pipe(Effect.provide(checkpointLayer({ url, keyPrefix: `${prefix}layer:` })))
    )
    expect(listed).toEqual([])
  })
})
