/**
 * `sharedMemory:` end to end: `lambdagent run` on agent files whose agents share bindings, within
 * one run (parallel branches, ReAct tool calls) and across processes (SQLite, Redis).
 */
import { randomUUID } from "node:crypto"
import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { SharedMemory } from "lambdagent"
import { afterAll, describe, expect, it } from "vitest"
import * as RedisMemory from "../../redis/index.ts"
import * as SqliteMemory from "../../sqlite/index.ts"
import { openScoped } from "../../../test/fixtures/helpers.ts"
import { redisUnavailable as probeRedis, testRedisUrl } from "../../../test/fixtures/redis.ts"
import { runCli } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-shared-cli-"))
const write = (name: string, lines: ReadonlyArray<string>) => {
  const path = join(dir, name)
  writeFileSync(path, lines.join("\n") + "\n")
  return path
}

const redisUrl = testRedisUrl
const redisUnavailable = await probeRedis(redisUrl)
if (redisUnavailable !== undefined) console.warn(`[shared memory CLI tests] skipping the Redis cases: ${redisUnavailable}`)
const redisNamespaces: Array<string> = []

afterAll(async () => {
  if (redisUnavailable !== undefined || redisNamespaces.length === 0) return
  const { value: store, close } = await openScoped(RedisMemory.make({ url: redisUrl }))
  try {
    for (const ns of redisNamespaces) await Effect.runPromise(store.clear(ns))
  } finally {
    await close()
  }
})

/** The history of a key of an append-only shared memory in a SQLite file. */
const sqliteHistory = async (path: string, namespace: string, key: string) => {
  const { value: store, close } = await openScoped(SqliteMemory.make({ path }))
  try {
    const sm = await Effect.runPromise(SharedMemory.make(store, { namespace, appendOnly: true }))
    return (await Effect.runPromise(sm.history(key))).map((v) => v.value)
  } finally {
    await close()
  }
}

const redisHistory = async (namespace: string, key: string) => {
  const { value: store, close } = await openScoped(RedisMemory.make({ url: redisUrl }))
  try {
    const sm = await Effect.runPromise(SharedMemory.make(store, { namespace, appendOnly: true }))
    return (await Effect.runPromise(sm.history(key))).map((v) => v.value)
  } finally {
    await close()
  }
}

/** A ReAct agent whose scripted thoughts append `count` notes `<id>-<i>`, then terminate. */
const appender = (id: string, count: number) => {
  const thoughts = Array.from({ length: count }, (_, i) => JSON.stringify({ tool: "shared_append", args: { key: "notes", value: `${id}-${i}` } }))
  return `scripted:sequence:${JSON.stringify([...thoughts, JSON.stringify({ tool: "terminate", args: `${id} done` })])}`
}

const reactFile = (name: string, sharedMemory: ReadonlyArray<string>, maxSteps = 40) =>
  write(name, [
    "type: react",
    "name: note-taker",
    "systemPrompt: Take notes.",
    "model: {provider: openai, name: gpt-4o-mini}",
    `react: {maxSteps: ${maxSteps}}`,
    "mcp:",
    "  localTools: [terminate]",
    "sharedMemory:",
    ...sharedMemory.map((l) => `  ${l}`)
  ])

describe("lambdagent run with sharedMemory", () => {
  it("the example team shares an append-only SQLite memory between its branches and across runs", async () => {
    const team = join(dir, "team", "team.yml")
    const { mkdirSync } = await import("node:fs")
    mkdirSync(join(dir, "team"))
    copyFileSync("examples/agents/team.yml", team)
    const first = await runCli(["run", team, "Four-day weeks", "--quiet"])
    expect(first.code, first.stderr).toBe(0)
    // quiet means quiet: not even Node's notice that node:sqlite is experimental
    expect(first.stderr).toBe("")
    // each branch (echoed by the offline model) saw the initial binding before its input
    expect(first.stdout).toContain("[researcher]:\n[Shared Memory]\n- goal: A short, balanced review of the proposal.")
    const db = join(dir, "team", ".lambdagent", "team-memory.db")
    expect(await sqliteHistory(db, "review-team", "goal")).toEqual(["A short, balanced review of the proposal."])
    expect(await sqliteHistory(db, "review-team", "researcher")).toHaveLength(1)
    expect(await sqliteHistory(db, "review-team", "critic")).toHaveLength(1)
    expect(await sqliteHistory(db, "review-team", "Review team")).toEqual([first.stdout.replace(/\n$/, "")])

    // a second process sees everything the first recorded, and records a second version of each
    const second = await runCli(["run", team, "Second look", "--quiet"])
    expect(second.code, second.stderr).toBe(0)
    const shown = second.stdout.split("\n[Current Input]\nSecond look")[0]!
    expect(shown).toContain("- Review team: [researcher]:")
    expect(shown).toMatch(/^- critic: /m)
    expect(shown).toMatch(/^- researcher: /m)
    expect(await sqliteHistory(db, "review-team", "researcher")).toHaveLength(2)
    expect(await sqliteHistory(db, "review-team", "goal")).toHaveLength(1)
  })

  it("a ReAct agent writes, is refused an overwrite (an observation, not a silent change), and reads the kept value", async () => {
    const file = reactFile("react-local.yml", ["strategy: local", "appendOnly: true"])
    const script = JSON.stringify([
      '{"tool":"shared_write","args":{"key":"plan","value":"v1"}}',
      '{"tool":"shared_write","args":{"key":"plan","value":"v2"}}',
      '{"tool":"shared_read","args":"plan"}',
      '{"tool":"terminate","args":"done"}'
    ])
    const r = await runCli(["run", file, "go", "--model", `scripted:sequence:${script}`, "--format", "json"])
    expect(r.code, r.stderr).toBe(0)
    const { result, trace } = JSON.parse(r.stdout) as { result: unknown; trace: Array<{ kind: string; name: string; output: string }> }
    expect(result).toBe("done")
    const tools = trace.filter((e) => e.kind === "tool")
    expect(tools.map((e) => e.name)).toEqual(["shared_memory_context", "shared_write", "shared_write", "shared_read"])
    expect(tools[1]!.output).toBe('wrote "plan"')
    expect(tools[2]!.output).toBe(
      '[TOOL_ERROR] shared_write: "plan" is already bound and shared memory "shared" is append-only: a bound key is never replaced (append a new version instead)'
    )
    expect(tools[3]!.output).toBe("v1")
  })

  it("parallel ReAct branches append to one local memory in one run", async () => {
    const script = JSON.stringify([
      '{"tool":"shared_append","args":{"key":"notes","value":"n"}}',
      '{"tool":"shared_append","args":{"key":"notes","value":"n"}}',
      '{"tool":"terminate","args":"ok"}',
      '{"tool":"terminate","args":"ok"}'
    ])
    const branches = write("branches.yml", [
      "type: parallel",
      "name: writers",
      "model: {provider: openai, name: gpt-4o-mini}",
      "sharedMemory: {appendOnly: true}",
      "parallel:",
      "  agents:",
      "    - {name: a, type: react, systemPrompt: Note., react: {maxSteps: 4}, mcp: {localTools: [terminate]}}",
      "    - {name: b, type: react, systemPrompt: Note., react: {maxSteps: 4}, mcp: {localTools: [terminate]}}",
      "  merge: concat"
    ])
    const r = await runCli(["run", branches, "go", "--model", `scripted:sequence:${script}`, "--format", "json"])
    expect(r.code, r.stderr).toBe(0)
    const { result, trace } = JSON.parse(r.stdout) as { result: string; trace: Array<{ kind: string; name: string; output: string }> }
    expect(result).toBe("ok\n\nok")
    expect(trace.filter((e) => e.name === "shared_append").map((e) => e.output)).toEqual(['appended to "notes"', 'appended to "notes"'])
  })

  it("sqlite: two processes append concurrently to one file and no note is lost", async () => {
    const db = join(dir, "notes.db")
    const file = reactFile("react-sqlite.yml", ["strategy: sqlite", `path: ${db}`, "namespace: notes", "appendOnly: true"])
    const [a, b] = await Promise.all([
      runCli(["run", file, "go", "--model", appender("a", 25), "--quiet"]),
      runCli(["run", file, "go", "--model", appender("b", 25), "--quiet"])
    ])
    expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0])
    expect([a.stdout, b.stdout]).toEqual(["a done\n", "b done\n"])
    const notes = await sqliteHistory(db, "notes", "notes")
    expect(notes).toHaveLength(50)
    for (const id of ["a", "b"]) expect(notes.filter((n) => n.startsWith(`${id}-`))).toEqual(Array.from({ length: 25 }, (_, i) => `${id}-${i}`))
  }, 120_000)

  it.skipIf(redisUnavailable !== undefined)(
    "redis: two processes append concurrently and no note is lost",
    async () => {
      const ns = `notes-${randomUUID()}`
      redisNamespaces.push(ns)
      const file = reactFile("react-redis.yml", ["strategy: redis", `url: ${redisUrl}`, `namespace: ${ns}`, "appendOnly: true"])
      const [a, b] = await Promise.all([
        runCli(["run", file, "go", "--model", appender("a", 25), "--quiet"]),
        runCli(["run", file, "go", "--model", appender("b", 25), "--quiet"])
      ])
      expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0])
      const notes = await redisHistory(ns, "notes")
      expect(notes).toHaveLength(50)
      for (const id of ["a", "b"]) expect(notes.filter((n) => n.startsWith(`${id}-`))).toEqual(Array.from({ length: 25 }, (_, i) => `${id}-${i}`))
    },
    120_000
  )

  it.skipIf(redisUnavailable !== undefined)("redis without a url uses LAMBDAGENT_REDIS_URL", async () => {
    const ns = `env-${randomUUID()}`
    redisNamespaces.push(ns)
    const file = reactFile("react-redis-env.yml", ["strategy: redis", `namespace: ${ns}`, "appendOnly: true"])
    const r = await runCli(["run", file, "go", "--model", appender("e", 2), "--quiet"], { env: { LAMBDAGENT_REDIS_URL: redisUrl } })
    expect(r.code, r.stderr).toBe(0)
    expect(await redisHistory(ns, "notes")).toEqual(["e-0", "e-1"])
  })

  it("an unreachable Redis is a one-line error naming the URL, exit code 1, no stack trace", async () => {
    const file = reactFile("react-down.yml", ["strategy: redis", "url: redis://127.0.0.1:1"])
    const r = await runCli(["run", file, "go"])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^error: MemoryError: sharedMemory: cannot reach Redis at redis:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/m)
    expect(r.stderr).not.toMatch(/^\s+at /m)
    expect(r.stdout).toBe("")
  })

  it("lambdagent tools lists the shared memory's tools with their store", async () => {
    const file = reactFile("react-tools.yml", ["strategy: local", "appendOnly: true"])
    const r = await runCli(["tools", file, "--format", "json"])
    expect(r.code, r.stderr).toBe(0)
    const listed = JSON.parse(r.stdout) as { tools: Array<{ name: string; kind: string; source: string }> }
    const shared = listed.tools.filter((t) => t.kind === "shared")
    expect(shared.map((t) => t.name)).toEqual(["shared_read", "shared_write", "shared_append", "shared_memory_context"])
    expect(shared[0]!.source).toBe("local (this process), namespace shared, append-only")
  })
})
