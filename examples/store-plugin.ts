/**
 * A plugin that adds a memory store: `createRuntime({ plugins: [plugin], memory: "notebook" })`
 * keeps the agents' memory in it. The store here keeps entries in a `Map` of its own, written
 * against `MemoryStoreShape`; a real one would talk to a database, return a scoped Effect that
 * opens the connection and closes it when the runtime closes, and prove itself with
 * `memoryStoreConformance` from `lambdagent/testing`.
 * Run: npx tsx examples/store-plugin.ts
 */
import * as Effect from "effect/Effect"
import { createRuntime, type MemoryStore, type Plugin, Scripted, Term } from "lambdagent"

/** A store over a `Map` per namespace, newest write last; `maxEntries` per namespace (default 100). */
const makeNotebook = (options: Plugin.StoreOptions): MemoryStore.MemoryStoreShape => {
  const maxEntries = options.maxEntries ?? 100
  const namespaces = new Map<string, Map<string, MemoryStore.MemoryEntry>>()
  const entries = (namespace: string) => {
    let map = namespaces.get(namespace)
    if (map === undefined) namespaces.set(namespace, (map = new Map()))
    return map
  }
  const live = (entry: MemoryStore.MemoryEntry | undefined) =>
    entry !== undefined && (entry.expiresAt === undefined || entry.expiresAt > Date.now()) ? entry : undefined
  return {
    name: "notebook",
    get: (namespace, key) => Effect.sync(() => live(entries(namespace).get(key))),
    put: (namespace, key, value, put) =>
      Effect.sync(() => {
        const map = entries(namespace)
        const createdAt = Date.now()
        map.delete(key)
        map.set(key, { key, value, createdAt, ...(put?.ttlMs !== undefined ? { expiresAt: createdAt + put.ttlMs } : {}) })
        for (const oldest of map.keys()) {
          if (map.size <= maxEntries) break
          map.delete(oldest)
        }
      }),
    listRecent: (namespace, limit) =>
      Effect.sync(() =>
        [...entries(namespace).values()]
          .filter((e) => live(e) !== undefined)
          .reverse()
          .slice(0, limit)
      ),
    clear: (namespace) => Effect.sync(() => void namespaces.delete(namespace))
  }
}

/** The plugin: a plain value a host passes to `createRuntime({ plugins })`. */
export const plugin: Plugin.Plugin = { name: "notebook", stores: { notebook: makeNotebook } }

export async function main(): Promise<{ readonly replies: ReadonlyArray<unknown>; readonly remembered: number }> {
  const runtime = createRuntime({
    plugins: [plugin],
    memory: "notebook",
    memoryOptions: { maxEntries: 10 },
    model: Scripted.respond((request) => (request.messages.at(-1)!.content.startsWith("[Memory Context]") ? "I remember you." : "Nice to meet you."))
  })
  const agent = Term.memory({ agent: Term.llm({ system: "Chat.", conversation: false }), size: 5, ttl: 0, scope: "session" })
  const replies = [(await runtime.run(agent, "Hi, I am Ada.")).value, (await runtime.run(agent, "Do you know me?")).value]
  const remembered = (await runtime.memory().list()).length
  await runtime.close()
  return { replies, remembered }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main())
