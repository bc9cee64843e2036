/**
 * Checkpoints in a SQLite file (temporary files): the checks every location passes, the table,
 * files that cannot be opened or are not databases failing at open with their path, and a write
 * that is all or nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { DatabaseSync } from "node:sqlite"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { CheckpointStore } from "lambdagent"
import { afterAll, describe, expect, it } from "vitest"
import { checkpointLocationConformance } from "../../test/fixtures/checkpointLocations.ts"
import { failureOf, openScoped } from "../../test/fixtures/helpers.ts"
import { checkpointLayer, checkpointLocation } from "./index.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-sqlite-ck-"))
let files = 0
const freshFile = () => join(dir, `runs-${++files}.db`)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

checkpointLocationConformance("sqlite", async () => {
  const { close, value } = await openScoped(checkpointLocation({ path: freshFile() }))
  return { location: value, cleanup: close }
})

describe("SQLite checkpoints", () => {
  it("keeps one row per journal entry with its base, the run's oldest pruned in the same transaction", async () => {
    const path = freshFile()
    const { close, value: location } = await openScoped(checkpointLocation({ path }))
    try {
      // two segments: a base at 1 with deltas 2 and 3, a base at 4 with delta 5; keep from 4
      for (const [sequence, base] of [
        [1, 1],
        [2, 1],
        [3, 1],
        [4, 1],
        [4, 4],
        [5, 4]
      ] as const) {
        await Effect.runPromise(location.write("r1", sequence, base, `{"n":${sequence}}`, base === 4 ? 4 : 1))
      }
      const db = new DatabaseSync(path, { readOnly: true })
      expect(db.prepare("SELECT run_id, sequence, base, body FROM lambdagent_checkpoints ORDER BY sequence").all()).toEqual([
        { run_id: "r1", sequence: 4, base: 4, body: '{"n":4}' },
        { run_id: "r1", sequence: 5, base: 4, body: '{"n":5}' }
      ])
      db.close()
      expect(await Effect.runPromise(location.readEntries("r1.000005"))).toEqual([
        { sequence: 4, text: '{"n":4}' },
        { sequence: 5, text: '{"n":5}' }
      ])
    } finally {
      await close()
    }
  })

  it("opens a file written before journals (rows without a base), whose checkpoints are refused as another version", async () => {
    const path = freshFile()
    const old = new DatabaseSync(path)
    old.exec(
      "CREATE TABLE lambdagent_checkpoints (run_id TEXT NOT NULL, sequence INTEGER NOT NULL, body TEXT NOT NULL, written_at INTEGER NOT NULL, PRIMARY KEY (run_id, sequence)) WITHOUT ROWID"
    )
    old.prepare("INSERT INTO lambdagent_checkpoints VALUES (?, ?, ?, ?)").run("r0", 1, '{"format":"lambdagent.checkpoint","version":1}', Date.now())
    old.close()
    const { close, value: location } = await openScoped(checkpointLocation({ path }))
    try {
      expect((await Effect.runPromise(location.list)).map((e) => [e.key, e.base])).toEqual([["r0.000001", 1]])
      const error = await failureOf(CheckpointStore.readFrom(location, "r0.000001"))
      expect(error.reason).toBe("version")
      expect(error.message).toMatch(/r0\.000001: a checkpoint of format version 1; this lambdagent reads format version 3/)
    } finally {
      await close()
    }
  })

  it("a file that cannot be created or is not a database fails at open with one line naming it", async () => {
    const notADatabase = join(dir, "garbage.db")
    writeFileSync(notADatabase, "this is not a database, just some text long enough to have a header".repeat(20))
    for (const [path, why] of [
      ["/proc/lambdagent-test/runs.db", /cannot|ENOENT|no such/i],
      [notADatabase, /not a SQLite database/]
    ] as const) {
      const error = await failureOf(Effect.scoped(checkpointLocation({ path })))
      expect(error._tag).toBe("CheckpointError")
      expect(error.message.startsWith(`SQLite file ${path}: opening failed: `), error.message).toBe(true)
      expect(error.message).toMatch(why)
      expect(error.message).not.toContain("\n")
    }
  })

  it("a write that fails leaves the file as it was (one transaction)", async () => {
    const path = freshFile()
    const { close, value: location } = await openScoped(checkpointLocation({ path }))
    const other = new DatabaseSync(path)
    try {
      await Effect.runPromise(location.write("r1", 1, 1, '{"n":1}', 1))
      // the pruning fails after the insert: the insert must not stay
      other.exec("CREATE TRIGGER refuse_prune BEFORE DELETE ON lambdagent_checkpoints BEGIN SELECT RAISE(ABORT, 'no pruning today'); END")
      const error = await failureOf(location.write("r1", 2, 2, '{"n":2}', 2))
      expect(error.message).toMatch(/writing a checkpoint failed: .*no pruning today/)
      expect((await Effect.runPromise(location.list)).map((e) => e.key)).toEqual(["r1.000001"])
    } finally {
      other.close()
      await close()
    }
  })

  it("is a layer of CheckpointStore.CheckpointLocation", async () => {
    const listed = await Effect.runPromise(CheckpointStore.CheckpointLocation.use((l) => l.list).pipe(Effect.provide(checkpointLayer({ path: freshFile() }))))
    expect(listed).toEqual([])
  })
})
