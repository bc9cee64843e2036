/**
 * The Redis connection every store of this plugin opens: it fails at once when Redis cannot be
 * reached at start (no retry loop), fails each command at once while disconnected (no offline
 * queue), reconnects in the background after a loss, and is released with its scope.
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { Redis } from "ioredis"

/** A Lua script and its SHA-1, for `EVALSHA`. */
export interface Script {
  readonly lua: string
  readonly sha: string
}

export const script = (lua: string): Script => ({ lua, sha: createHash("sha1").update(lua).digest("hex") })

/** Run a script with `EVALSHA`, loading it with `EVAL` when the server does not know it (first use, or after a restart). */
export const runScript = (client: Redis, s: Script, keys: ReadonlyArray<string>, args: ReadonlyArray<string | number>): Promise<unknown> =>
  client
    .evalsha(s.sha, keys.length, ...keys, ...args)
    .catch((error: unknown) =>
      error instanceof Error && error.message.startsWith("NOSCRIPT") ? client.eval(s.lua, keys.length, ...keys, ...args) : Promise.reject(error)
    )

export const messageOf = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/** A connected client and the last error it reported (for messages about a lost connection). */
export interface Connection {
  readonly client: Redis
  readonly lastError: () => Error | undefined
}

export const connect = <E>(
  url: string,
  timeouts: { readonly connectTimeout: number; readonly commandTimeout: number },
  onError: (message: string, cause: unknown) => E
): Effect.Effect<Connection, E, Scope.Scope> => {
  let lastError: Error | undefined
  return Effect.map(
    Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const c = new Redis(url, {
            lazyConnect: true,
            ...timeouts,
            // fail at once while disconnected instead of queueing (and hanging) callers
            enableOfflineQueue: false,
            maxRetriesPerRequest: 0,
            // reconnect in the background after a loss, backing off up to 2 s
            retryStrategy: (times) => Math.min(50 * 2 ** times, 2000)
          })
          c.on("error", (error: Error) => {
            lastError = error
          })
          try {
            await c.connect()
            await c.ping()
            return c
          } catch (error) {
            c.disconnect() // no reconnect loop at start
            throw lastError ?? error
          }
        },
        catch: (cause) => onError(messageOf(cause), cause)
      }),
      (c) =>
        Effect.promise(async () => {
          try {
            await Promise.race([c.quit(), new Promise((resolve) => setTimeout(resolve, 1000).unref())])
          } catch {
            // the connection is going away either way
          } finally {
            c.disconnect()
          }
        })
    ),
    (client) => ({ client, lastError: () => lastError })
  )
}
