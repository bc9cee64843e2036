/**
 * `lambdagent mcp --store` with Redis and SQLite: evolved tools survive a restart of the server,
 * and a store that cannot be opened stops the server at start with a clear error.
 */
import { randomUUID } from "node:crypto"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Redis } from "ioredis"
import { afterAll, describe, expect, it } from "vitest"
import { call, REQUEST_TIMEOUT_MS, square, valueOf } from "../../mcp/test-support.ts"
import * as Effect from "effect/Effect"
import { openPluginStore, parseRegistryStore } from "../stores.ts"
import { deleteRedisKeys, redisUnavailable as probeRedis, testRedisUrl } from "../../../test/fixtures/redis.ts"
import { cliPath, runCli } from "./helpers.ts"

const redisUrl = testRedisUrl
const prefix = `lambdagent-test:${randomUUID()}:`
const redisUnavailable = await probeRedis(redisUrl)
if (redisUnavailable !== undefined) console.warn(`[mcp --store tests] skipping the Redis cases: ${redisUnavailable}`)

const dir = mkdtempSync(join(tmpdir(), "lambdagent-mcp-store-"))

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  if (redisUnavailable !== undefined) return
  await deleteRedisKeys(prefix, redisUrl)
})

/** `lambdagent mcp --store STORE` over stdio, with the official client. */
const connect = async (store: string, env: Record<string, string> = {}) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliPath, "mcp", "--store", store],
    env: { ...process.env, ...env } as Record<string, string>,
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  const client = new Client({ name: "lambdagent-tests", version: "0.0.0" }, { capabilities: {} })
  await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS })
  return { client, stderr: () => stderr, close: () => client.close() }
}

const cube = { lam: "x", body: { mul: [{ var: "x" }, { mul: [{ var: "x" }, { var: "x" }] }] } }

/** Evolve in one server process, stop it, and check what a second one serves. */
const survivesRestart = async (first: string, second: string, env: Record<string, string> = {}) => {
  const a = await connect(first, env)
  try {
    expect((await call(a.client, "evolve", { name: "square", description: "Squares", code: square })).structuredContent).toMatchObject({ version: 1 })
    expect((await call(a.client, "evolve", { name: "square", description: "Cubes now", code: cube })).structuredContent).toMatchObject({ version: 2 })
    await call(a.client, "evolve", { name: "answer", description: "The answer", code: 42 })
  } finally {
    await a.close()
  }
  const b = await connect(second, env)
  try {
    const listed = (await call(b.client, "list")).structuredContent as {
      tools: Array<{ name: string; version: number; versions: Array<{ version: number; description: string }> }>
    }
    expect(listed.tools.map((t) => t.name)).toEqual(["answer", "square"])
    const entry = listed.tools.find((t) => t.name === "square")!
    expect(entry.version).toBe(2)
    expect(entry.versions.map((v) => [v.version, v.description])).toEqual([
      [1, "Squares"],
      [2, "Cubes now"]
    ])
    expect(valueOf(await call(b.client, "run", { code: "square", input: 3 }))).toBe(27)
    expect(valueOf(await call(b.client, "run", { code: "square", input: 3, version: 1 }))).toBe(9)
    expect(valueOf(await call(b.client, "square", { input: 2 }))).toBe(8)
    return b.stderr()
  } finally {
    await b.close()
  }
}

describe("lambdagent mcp --store", () => {
  it.skipIf(redisUnavailable !== undefined)(
    "redis://: tools and their versions survive a restart; redis: alone reads LAMBDAGENT_REDIS_URL",
    async () => {
      const namespace = `mcp-${randomUUID()}`
      const query = `?namespace=${namespace}&prefix=${encodeURIComponent(prefix)}`
      const stderr = await survivesRestart(`${redisUrl}${query}`, `redis:${query}`, { LAMBDAGENT_REDIS_URL: redisUrl })
      expect(stderr).toContain(`2 tools from redis ${redisUrl} (${namespace}/lambdagent/mcp-tools)`)
      // the registry is one entry under the prefix, in the namespace asked for
      const client = new Redis(redisUrl)
      try {
        const keys = await client.keys(`${prefix}*`)
        expect(keys.some((k) => k.includes(namespace))).toBe(true)
      } finally {
        client.disconnect()
      }
    },
    60_000
  )

  it("sqlite:PATH: tools and their versions survive a restart", async () => {
    const path = join(dir, "registry", "tools.db")
    const stderr = await survivesRestart(`sqlite:${path}`, `sqlite:${path}`)
    expect(stderr).toContain(`2 tools from sqlite ${path} (global/lambdagent/mcp-tools)`)
    expect(existsSync(path)).toBe(true)
  }, 60_000)

  const corruptEntry = async (spec: Parameters<typeof openPluginStore>[0], namespace: string) => {
    const opened = await openPluginStore(spec, "test")
    try {
      await Effect.runPromise(opened.store.put(namespace, "lambdagent/mcp-tools", '{"format": "something else"}'))
    } finally {
      await opened.close()
    }
  }

  it("a corrupt registry value in SQLite stops the server naming the store and the entry; the value is left alone", async () => {
    const path = join(dir, "corrupt.db")
    await corruptEntry({ kind: "sqlite", path }, "global")
    const r = await runCli(["mcp", "--store", `sqlite:${path}`])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`sqlite ${path} (global/lambdagent/mcp-tools) holds no readable tool registry (not a lambdagent/mcp-tools document)`)
    expect(r.stderr).not.toMatch(/^\s+at /m)
    expect(await runCli(["mcp", "--store", `sqlite:${path}`])).toMatchObject({ code: 1 })
  })

  it.skipIf(redisUnavailable !== undefined)("a corrupt registry value in Redis stops the server naming the store", async () => {
    const namespace = `corrupt-${randomUUID()}`
    await corruptEntry({ kind: "redis", url: redisUrl, keyPrefix: prefix }, namespace)
    const r = await runCli(["mcp", "--store", `${redisUrl}?namespace=${namespace}&prefix=${encodeURIComponent(prefix)}`])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`redis ${redisUrl} (${namespace}/lambdagent/mcp-tools) holds no readable tool registry`)
  })

  it("a Redis that is not reachable stops the server at start: the URL, exit code 1, no stack trace", async () => {
    const r = await runCli(["mcp", "--store", "redis://:secret@127.0.0.1:1"])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^error: MemoryError: --store: cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1: .*ECONNREFUSED/m)
    expect(r.stderr).not.toContain("secret")
    expect(r.stderr).not.toMatch(/^\s+at /m)
  })

  it("a bad store value is a usage error", async () => {
    const r = await runCli(["mcp", "--store", "sqlite:tools.db?colour=blue"])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('error: UsageError: --store sqlite:tools.db?colour=blue: unknown option "colour" (sqlite: takes ?namespace=NAME)\n')
  })

  it("without ioredis installed, a redis store names the package to install", async () => {
    // a copy of the built package whose node_modules has everything but ioredis
    const pkg = join(dir, "no-ioredis")
    mkdirSync(join(pkg, "node_modules"), { recursive: true })
    cpSync(resolve("dist"), join(pkg, "dist"), { recursive: true })
    cpSync(resolve("package.json"), join(pkg, "package.json"))
    for (const entry of readdirSync(resolve("node_modules"))) {
      if (entry === "ioredis" || entry.startsWith(".")) continue
      symlinkSync(resolve("node_modules", entry), join(pkg, "node_modules", entry))
    }
    const r = await runCli(["mcp", "--store", redisUrl], { cwd: pkg, cli: join(pkg, "dist", "cli", "main.js") })
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("error: MissingDependency: the redis store needs the ioredis package, which is not installed: run npm install ioredis\n")
  }, 60_000)
})

describe("parseRegistryStore", () => {
  it("leaves files and :memory: to the MCP plugin and reads Redis and SQLite forms", () => {
    expect(parseRegistryStore("tools.json")).toBeUndefined()
    expect(parseRegistryStore(":memory:")).toBeUndefined()
    expect(parseRegistryStore("./redis")).toBeUndefined()
    expect(parseRegistryStore("redis://cache:6380/2")).toEqual({ kind: "redis", url: "redis://cache:6380/2" })
    expect(parseRegistryStore("rediss://u:p@cache?namespace=team&prefix=app:&tls=x")).toEqual({
      kind: "redis",
      url: "rediss://u:p@cache?tls=x",
      keyPrefix: "app:",
      namespace: "team"
    })
    expect(parseRegistryStore("redis:")).toEqual({ kind: "redis" })
    expect(parseRegistryStore("sqlite:data/tools.db?namespace=ns")).toEqual({ kind: "sqlite", path: "data/tools.db", namespace: "ns" })
    expect(parseRegistryStore("sqlite:")).toEqual({ kind: "sqlite" })
    expect(() => parseRegistryStore("redis:cache:6379")).toThrow(/expected redis:\/\/HOST\[:PORT\]\[\/DB\]/)
    expect(() => parseRegistryStore("postgres://localhost/db")).toThrow(/postgres:\/\/ is not a store; use a JSON file path, :memory:, redis/)
    expect(parseRegistryStore("C:/tools.json")).toBeUndefined()
    expect(() => parseRegistryStore("redis://h?namespace=")).toThrow(/namespace must not be empty/)
  })
})
