import { spawnSync } from "node:child_process"
import { readdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { type MemoryStore, Term } from "lambdagent"
import { afterEach, describe, expect, it } from "vitest"
import {
  decodeRegistry,
  defaultStorePath,
  encodeRegistry,
  jsonFileStore,
  memoryRegistryStore,
  memoryStoreRegistryStore,
  RegistryStoreError,
  removeOrphanedTempFiles,
  resolveStore,
  type StoredTool,
  ToolRegistry,
  type ToolRegistryStore,
  writeFileAtomic
} from "./index.ts"
import { square, tempDir } from "./test-support.ts"

const dirs: Array<Awaited<ReturnType<typeof tempDir>>> = []
const newDir = async () => {
  const d = await tempDir()
  dirs.push(d)
  return d.path
}
afterEach(async () => {
  for (const d of dirs.splice(0)) await d.remove()
})

const tool = (name: string, code: Term.Json = 1): StoredTool => ({
  name,
  versions: [{ version: 1, description: `${name} v1`, code, createdAt: "2025-01-01T00:00:00.000Z" }]
})

/** The version a journal line holds. */
const decodeJournal = (line: string) => {
  const { code, createdAt, description, version } = JSON.parse(line) as { version: number; description: string; code: Term.Json; createdAt: string }
  return { version, description, code, createdAt }
}

describe("jsonFileStore", () => {
  it("reads a missing file as empty, and round-trips tools with exact big integers", async () => {
    const path = join(await newDir(), "sub", "tools.json")
    const store = jsonFileStore(path)
    expect(await store.load()).toEqual([])
    const big = { add: [9223372036854775807n, -1] }
    await store.save([tool("a", big), tool("b")])
    expect(await readFile(path, "utf8")).toContain("9223372036854775807")
    const loaded = await store.load()
    expect(loaded.map((t) => t.name)).toEqual(["a", "b"])
    expect(loaded[0]!.versions[0]!.code).toEqual(big)
  })

  it("writes atomically: no temporary files are left and a failed write keeps the old contents", async () => {
    const dir = await newDir()
    const path = join(dir, "tools.json")
    const store = jsonFileStore(path)
    await store.save([tool("a")])
    await store.save([tool("a"), tool("b")])
    expect(await readdir(dir)).toEqual(["tools.json"])
    // A directory where the file should go: the write fails, nothing else changes.
    const blocked = jsonFileStore(join(dir, "tools.json", "inner.json"))
    await expect(blocked.save([tool("x")])).rejects.toBeInstanceOf(RegistryStoreError)
    expect((await store.load()).map((t) => t.name)).toEqual(["a", "b"])
    await expect(writeFileAtomic(join(dir, "tools.json", "x"), "text")).rejects.toThrow()
    expect(await readdir(dir)).toEqual(["tools.json"])
  })

  it("appends each evolve to a journal, folds it into the file once larger, and reads both back", async () => {
    const dir = await newDir()
    const path = join(dir, "tools.json")
    const registry = await ToolRegistry.open(jsonFileStore(path))
    await registry.add("a", "one", Term.lit(1))
    await registry.add("a", "two", Term.lit(2))
    await registry.add("b", "", Term.lit(3))
    // nothing rewritten yet: three lines in the journal, no registry file
    expect((await readdir(dir)).sort()).toEqual(["tools.json.journal"])
    expect((await readFile(`${path}.journal`, "utf8")).trim().split("\n")).toHaveLength(3)
    const reopened = await ToolRegistry.open(jsonFileStore(path))
    expect(reopened.list().map((t) => [t.name, t.current.version])).toEqual([
      ["a", 2],
      ["b", 1]
    ])
    expect(reopened.version("a", 1)?.description).toBe("one")
    // a journal larger than the file (and 64 KiB) is folded in: the file holds everything
    const big = "x".repeat(70 * 1024)
    await reopened.add("c", big, Term.lit(4))
    expect((await readdir(dir)).sort()).toEqual(["tools.json"])
    expect(decodeRegistry(await readFile(path, "utf8")).map((t) => t.name)).toEqual(["a", "b", "c"])
    await reopened.add("c", "after", Term.lit(5))
    const again = await ToolRegistry.open(jsonFileStore(path))
    expect(again.list().map((t) => [t.name, t.current.version])).toEqual([
      ["a", 2],
      ["b", 1],
      ["c", 2]
    ])
  })

  it("ignores a journal line cut short by a crash, refuses a bad line before the last, and skips entries already in the file", async () => {
    const dir = await newDir()
    const path = join(dir, "tools.json")
    const registry = await ToolRegistry.open(jsonFileStore(path))
    await registry.add("a", "one", Term.lit(1))
    const line = (await readFile(`${path}.journal`, "utf8")).trim()
    await writeFile(`${path}.journal`, `${line}\n{"name": "a", "vers`)
    expect((await ToolRegistry.open(jsonFileStore(path))).list().map((t) => t.name)).toEqual(["a"])
    await writeFile(`${path}.journal`, `{"name": 1}\n${line}\n`)
    const refused = await jsonFileStore(path)
      .load()
      .catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(RegistryStoreError)
    expect((refused as Error).message).toContain("tools.json.journal line 1 is not a readable journal entry")
    // a crash after the file was rewritten but before the journal went: the entry is there once
    await writeFile(path, encodeRegistry([{ name: "a", versions: [decodeJournal(line)] }]))
    await writeFile(`${path}.journal`, `${line}\n`)
    const both = await jsonFileStore(path).load()
    expect(both.map((t) => [t.name, t.versions.length])).toEqual([["a", 1]])
  })

  it("a folder that cannot be made (under /proc, where a recursive mkdir never returns) fails the write", async () => {
    await expect(writeFileAtomic("/proc/lambdagent-no-such/dir/tools.json", "{}")).rejects.toThrow("ENOENT")
  })

  it("removes the temporary files a crashed writer left, and only those", async () => {
    const dir = await newDir()
    const path = join(dir, "tools.json")
    // a pid no process has: one that just ran and exited
    const dead = spawnSync(process.execPath, ["-e", ""]).pid
    const orphan = `tools.json.${dead}.3.0a1b2c3d.tmp`
    const inFlight = `tools.json.${process.pid}.9.deadbeef.tmp`
    const unrelated = ["other.json.1.1.00ff00ff.tmp", "tools.json.bak", "tools.json.notapid.1.aa.tmp"]
    for (const name of [orphan, inFlight, ...unrelated]) await writeFile(join(dir, name), "partial")
    await jsonFileStore(path).save([])
    expect(await jsonFileStore(path).load()).toEqual([])
    expect((await readdir(dir)).sort()).toEqual([inFlight, ...unrelated, "tools.json"].sort())
    expect(await removeOrphanedTempFiles(join(dir, "missing-dir", "x.json"))).toEqual([])
  })

  it("refuses data it cannot read, naming the problem, and never overwrites it", async () => {
    const path = join(await newDir(), "tools.json")
    await writeFile(path, "[1, 2")
    const error = await jsonFileStore(path)
      .load()
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RegistryStoreError)
    expect((error as RegistryStoreError).message).toContain("never overwritten")
    expect(await readFile(path, "utf8")).toBe("[1, 2")
    await writeFile(path, JSON.stringify({ format: "lambdagent/mcp-tools", formatVersion: 99, tools: [] }))
    await expect(jsonFileStore(path).load()).rejects.toThrow(/format version 99/)
  })
})

describe("registry documents", () => {
  it("validate their shape with messages that say where", () => {
    expect(decodeRegistry(encodeRegistry([tool("a")]))).toEqual([tool("a")])
    expect(() => decodeRegistry("{}")).toThrow("not a lambdagent/mcp-tools document")
    expect(() => decodeRegistry(JSON.stringify({ format: "lambdagent/mcp-tools", formatVersion: 1, tools: [{ name: "a", versions: [] }] }))).toThrow("tools[0]")
    expect(() =>
      decodeRegistry(
        JSON.stringify({
          format: "lambdagent/mcp-tools",
          formatVersion: 1,
          tools: [{ name: "a", versions: [{ version: 0, description: "", code: 1, createdAt: "" }] }]
        })
      )
    ).toThrow("tools[0].versions[0]")
  })
})

describe("other stores", () => {
  it("memoryRegistryStore keeps what was saved", async () => {
    const store = memoryRegistryStore([tool("a")])
    expect((await store.load()).map((t) => t.name)).toEqual(["a"])
    await store.save([tool("b")])
    expect(store.current().map((t) => t.name)).toEqual(["b"])
  })

  it("memoryStoreRegistryStore keeps the registry as one entry of a MemoryStore service", async () => {
    const entries = new Map<string, string>()
    const shape: MemoryStore.MemoryStoreShape = {
      name: "test",
      get: (ns, key) => Effect.succeed(entries.has(`${ns}/${key}`) ? { key, value: entries.get(`${ns}/${key}`)!, createdAt: 0 } : undefined),
      put: (ns, key, value) => Effect.sync(() => void entries.set(`${ns}/${key}`, value)),
      listRecent: () => Effect.succeed([]),
      clear: () => Effect.void
    }
    const store = memoryStoreRegistryStore(shape, { namespace: "global", key: "tools" })
    expect(await store.load()).toEqual([])
    await store.save([tool("a", square as Term.Json)])
    expect([...entries.keys()]).toEqual(["global/tools"])
    expect(await store.load()).toEqual([tool("a", square as Term.Json)])
    expect(store.description).toBe("test memory store (global/tools)")
  })

  it("resolveStore maps the option forms", () => {
    expect(resolveStore(":memory:").description).toBe("memory")
    expect(resolveStore("x/tools.json").description).toBe("file x/tools.json")
    expect(resolveStore(undefined).description).toBe(`file ${defaultStorePath()}`)
    expect(defaultStorePath()).toMatch(/\.lambdagent[/\\]mcp-tools\.json$/)
  })
})

describe("ToolRegistry", () => {
  it("numbers versions, keeps them all, and serialises concurrent adds", async () => {
    const store = memoryRegistryStore()
    const registry = await ToolRegistry.open(store)
    const changes: Array<number> = []
    const unsubscribe = registry.subscribe(() => changes.push(registry.size))
    const added = await Promise.all([1, 2, 3, 4].map((n) => registry.add("f", `v${n}`, Term.lit(n))))
    expect(added.map((v) => v.version)).toEqual([1, 2, 3, 4])
    expect(registry.get("f")!.versions.map((v) => v.description)).toEqual(["v1", "v2", "v3", "v4"])
    expect(registry.version("f", 2)!.code).toBe(2)
    expect(registry.code().get("f")).toEqual(Term.lit(4))
    expect(store.current()[0]!.versions).toHaveLength(4)
    expect(changes).toEqual([1, 1, 1, 1])
    unsubscribe()
    await registry.add("g", "", Term.lit(0))
    expect(changes).toHaveLength(4)
    await expect(registry.add("bad name", "", Term.lit(0))).rejects.toThrow("invalid tool name")
  })

  it("changes nothing when the store cannot save", async () => {
    let fail = false
    const inner = memoryRegistryStore()
    const store: ToolRegistryStore = {
      description: "flaky",
      load: inner.load,
      save: async (tools) => {
        if (fail) throw new Error("disk full")
        await inner.save(tools)
      }
    }
    const registry = await ToolRegistry.open(store)
    await registry.add("f", "one", Term.lit(1))
    fail = true
    let notified = false
    registry.subscribe(() => (notified = true))
    await expect(registry.add("f", "two", Term.lit(2))).rejects.toThrow("disk full")
    await expect(registry.add("g", "new", Term.lit(2))).rejects.toThrow("disk full")
    expect(registry.get("f")!.versions).toHaveLength(1)
    expect(registry.get("g")).toBeUndefined()
    expect(notified).toBe(false)
    fail = false
    expect((await registry.add("f", "two", Term.lit(2))).version).toBe(2)
  })

  it("keeps a stored version that no longer parses, with the reason, and saves it back unchanged", async () => {
    const broken: StoredTool = { name: "old", versions: [{ version: 1, description: "", code: { zeta: 1 }, createdAt: "2025-01-01T00:00:00.000Z" }] }
    const store = memoryRegistryStore([broken, tool("ok")])
    const registry = await ToolRegistry.open(store)
    expect(registry.get("old")!.current.term).toBeUndefined()
    expect(registry.get("old")!.current.problem).toContain("zeta")
    expect([...registry.code().keys()]).toEqual(["ok"])
    await registry.add("new", "", Term.lit(1))
    expect(store.current().find((t) => t.name === "old")).toEqual(broken)
  })
})
