/**
 * Test support: a table prefix of its own for each test, the removal of every table made under
 * the prefixes handed out (test runs leave the database as they found it), and runner processes
 * of the built command line.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { type AddressInfo, createServer } from "node:net"
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

/** A port nobody listens on now. */
export const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const probe = createServer()
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** A runner process of the built command line, and its exit code once it has exited. */
export interface RunnerProcess {
  readonly child: ChildProcess
  readonly port: number
  readonly exited: Promise<number | null>
}

/** Start `lambdagent cluster runner --port P ARGS` (the built CLI `cli`) and wait for its readiness line. */
export const startRunnerProcess = async (cli: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env): Promise<RunnerProcess> => {
  const port = await freePort()
  const child = spawn(process.execPath, [cli, "cluster", "runner", "--port", String(port), ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
  let out = ""
  await new Promise<void>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      out += chunk.toString("utf8")
      if (out.includes("runner ready")) resolve()
    }
    child.stdout!.on("data", read)
    child.stderr!.on("data", read)
    void exited.then(() => reject(new Error(`the runner exited before it was ready: ${out}`)))
  })
  return { child, port, exited }
}
