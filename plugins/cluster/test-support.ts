/**
 * Test support: a table prefix of its own for each test, and the removal of every table made
 * under the prefixes handed out, so that test runs leave the database as they found it.
 */
import { PgClient } from "@effect/sql-pg"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

export const testPgUrl = process.env.LAMBDAGENT_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test"

const handedOut = new Set<string>()

/** A prefix no other test uses. */
export const freshPrefix = (): string => {
  const prefix = `lgc_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  handedOut.add(prefix)
  return prefix
}

/** Drop the tables of every prefix handed out, and of `prefixes` (once the processes using them are gone). */
export const dropTables = (url = testPgUrl, prefixes: Iterable<string> = []): Promise<void> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* PgClient.PgClient
      for (const prefix of [...handedOut, ...prefixes]) {
        const tables = yield* sql<{
          name: string
        }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE ${`${prefix}\\_%`}`
        for (const { name } of tables) yield* sql`DROP TABLE IF EXISTS ${sql(name)} CASCADE`
      }
      handedOut.clear()
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url) })))
  )
