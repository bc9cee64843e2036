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
  it("keeps a checkpoint's text, its place in the index and in its run's set under the prefix; pruning removes all three", async () => {
    const own = `${prefix}layout:`
    const { close, value: location } = await openScoped(checkpointLocation({ url, keyPrefix: own }))
    const client = new Redis(url)
    try {
      for (let sequence = 1; sequence <= 3; sequence++) await Effect.runPromise(location.write("r1", sequence, `{"n":${sequence}}`, 2))
      expect((await client.keys(`${own}*`)).sort()).toEqual([`${own}ck:r1.000002`, `${own}ck:r1.000003`, `${own}index`, `${own}run:r1`])
      expect(await client.zrange(`${own}run:r1`, "0", "-1")).toEqual(["r1.000002", "r1.000003"])
      expect(await client.zcard(`${own}index`)).toBe(2)
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
      await Effect.runPromise(location.write("r1", 1, '{"n":1}', 5))
      // the run's set is now of the wrong type: the script fails at its ZADD, after its SET
      await client.del(`${own}run:r1`)
      await client.set(`${own}run:r1`, "not a sorted set")
      const error = await failureOf(location.write("r1", 2, '{"n":2}', 5))
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
