/**
 * Checkpoints in Redis and SQLite from the built CLI: `run --checkpoint redis://…|sqlite:…` (and a
 * config's `checkpoint.store`), `checkpoints list|show|prune` and `resume KEY --store …`; a store
 * that cannot be written fails the run before its first oracle call, in one line.
 */
import { randomUUID } from "node:crypto"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { deleteRedisKeys, redisUnavailable, testRedisUrl } from "../../../test/fixtures/redis.ts"
import { runCli } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-ckstores-"))
const prefix = `lambdagent-test:${randomUUID()}:`
const unavailable = await redisUnavailable(testRedisUrl)
if (unavailable !== undefined) console.warn(`[checkpoint store CLI tests] skipping Redis: ${unavailable}`)
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  if (unavailable === undefined) await deleteRedisKeys(prefix, testRedisUrl)
})

const term = join(dir, "agent.json")
writeFileSync(
  term,
  JSON.stringify({
    compose: [{ tool: "mark" }, { llm: { system: "a", conversation: false } }, { tool: "upper" }, { llm: { system: "b", conversation: false } }]
  })
)
/** The tools, `mark` leaving a line in `marker` when it is called. */
const toolsMarking = (marker: string) => [
  "--tool",
  `mark=sh -c 'echo x >> ${marker}; printf %s "$1"' _ {}`,
  "--tool",
  "upper=printf %s {}",
  "--model",
  "scripted:echo"
]
const tools = toolsMarking(join(dir, "marker"))
const json = <A>(text: string) => JSON.parse(text) as A

const stores: Array<[string, string, boolean]> = [
  ["sqlite", `sqlite:${join(dir, "runs.db")}`, true],
  ["redis", `${testRedisUrl}?prefix=${prefix}cli:`, unavailable === undefined]
]

describe.each(stores)("lambdagent checkpoints in %s", (_name, store, available) => {
  it.skipIf(!available)(
    "runs, lists, shows, resumes from every checkpoint, and prunes",
    async () => {
      const whole = await runCli(["run", term, "go", ...tools, "--format", "json", "--quiet"])
      expect(whole.code, whole.stderr).toBe(0)
      const checkpointed = await runCli(["run", term, "go", ...tools, "--format", "json", "--quiet", "--checkpoint", store])
      expect(checkpointed.code, checkpointed.stderr).toBe(0)
      expect(json<{ result: unknown }>(checkpointed.stdout).result).toEqual(json<{ result: unknown }>(whole.stdout).result)
      const listed = await runCli(["checkpoints", "list", store, "--format", "json"])
      expect(listed.code, listed.stderr).toBe(0)
      const rows = json<Array<{ file: string; waitingOn: string; sequence: number }>>(listed.stdout)
      expect(rows.map((r) => r.waitingOn)).toEqual(["tool mark", "llm", "tool upper", "llm"])
      expect(rows.map((r) => r.sequence)).toEqual([1, 2, 3, 4])
      const shown = await runCli(["checkpoints", "show", rows[2]!.file, "--store", store])
      expect(shown.code, shown.stderr).toBe(0)
      expect(shown.stdout).toContain("waiting on tool upper")
      for (const row of rows) {
        const resumed = await runCli(["resume", row.file, "--store", store, "--format", "json"])
        expect(resumed.code, resumed.stderr).toBe(0)
        expect(json<{ result: unknown }>(resumed.stdout).result).toEqual(json<{ result: unknown }>(whole.stdout).result)
      }
      const pruned = await runCli(["checkpoints", "prune", store, "--keep", "0"])
      expect(pruned.stdout).toMatch(/^\d+ checkpoints deleted\n$/)
      expect(json<Array<unknown>>((await runCli(["checkpoints", "list", store, "--format", "json"])).stdout)).toEqual([])
    },
    120_000
  )
})

describe("lambdagent checkpoint stores that cannot be written", () => {
  it("fail the run before its first oracle call, with one line naming the store", async () => {
    const cases: Array<[string, RegExp]> = [
      ["redis://127.0.0.1:1", /^error: CheckpointError: Redis at redis:\/\/127\.0\.0\.1:1, prefix lambdagent:checkpoints:: cannot reach Redis: .*\n$/],
      ["sqlite:/proc/lambdagent-none/runs.db", /^error: CheckpointError: SQLite file \/proc\/lambdagent-none\/runs\.db: opening failed: .*\n$/],
      ["postgres://db/x", /^error: .*postgres:\/\/ is not a checkpoint store/]
    ]
    const marker = join(dir, "never-called")
    for (const [store, message] of cases) {
      const result = await runCli(["run", term, "go", ...toolsMarking(marker), "--checkpoint", store])
      expect(result.code, store).not.toBe(0)
      expect(result.stderr, store).toMatch(message)
      expect(existsSync(marker), store).toBe(false)
    }
  }, 60_000)

  it("a config's checkpoint.store is relative to the config", async () => {
    const config = join(dir, "agent.yml")
    writeFileSync(config, 'type: simple\nsystemPrompt: "Echo."\ncheckpoint:\n  enabled: true\n  store: sqlite:./from-config.db\n')
    const result = await runCli(["run", config, "hello", "--model", "scripted:echo", "--quiet"])
    expect(result.code, result.stderr).toBe(0)
    const listed = await runCli(["checkpoints", "list", `sqlite:${join(dir, "from-config.db")}`, "--format", "json"])
    expect(json<Array<{ waitingOn: string }>>(listed.stdout).map((r) => r.waitingOn)).toEqual(["llm agent"])
  }, 60_000)
})
