/**
 * The `chroma` backend: a Chroma server reached through the official `chromadb` client, with
 * vectors from an {@link Embeddings} service.
 *
 * An index named `docs` is a chain of collections:
 * - `lambdagent-alias--docs` holds no records; its metadata names the live collection
 *   (`target`), the embedder it was built with and the source fingerprint;
 * - `lambdagent--docs--<stamp>` are the data collections (cosine space).
 *
 * `rebuild` fills a fresh data collection, then points the alias at it and drops the old one, so
 * queries answer from the old collection until the new one is complete, and a failed build only
 * deletes its own collection. Every request runs under a timeout (`timeoutMs`) and the caller's
 * `AbortSignal`; failures are {@link RagError}s (`BackendUnavailable` when the server refuses the
 * connection, `Timeout`, `BackendFailed`).
 *
 * `chromadb` is an optional dependency, loaded on first use.
 *
 * @since 0.1.0
 * @module
 */
import { randomBytes } from "node:crypto"
import type { Chunk, ChunkMetadata, DocumentFormat } from "./chunk.ts"
import type { Embeddings } from "./Embeddings.ts"
import { describeFetchError, errorMessage, RagError, throwIfAborted } from "./RagError.ts"
import { batches, type BuildReport, type CallOptions, checkQueryArgs, type RetrievalIndex, type SearchHit } from "./RetrievalIndex.ts"
import { checkName } from "./SimpleIndex.ts"
import { embeddingText } from "./VectorStore.ts"

type ChromaModule = typeof import("chromadb")
type Client = InstanceType<ChromaModule["ChromaClient"]>
type Collection = Awaited<ReturnType<Client["getCollection"]>>
type Metadata = Record<string, string | number | boolean | null>

let chromaModule: Promise<ChromaModule> | undefined
const defaultLoad = (): Promise<unknown> => import("chromadb")

/** Load `chromadb` once, or fail with `MissingDependency` naming it. */
const loadChroma = (load: () => Promise<unknown> = defaultLoad): Promise<ChromaModule> => {
  if (load === defaultLoad && chromaModule !== undefined) return chromaModule
  const attempt = (load() as Promise<ChromaModule>).catch((cause: unknown) => {
    if (load === defaultLoad) chromaModule = undefined
    const code = (cause as { code?: unknown } | null)?.code
    const missing = code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND"
    throw new RagError({
      reason: "MissingDependency",
      message: missing
        ? "the chroma backend needs the optional package `chromadb`: run `npm install chromadb`"
        : `cannot load the \`chromadb\` package: ${errorMessage(cause)}`,
      cause
    })
  })
  if (load === defaultLoad) chromaModule = attempt
  return attempt
}

/**
 * Check that the optional `chromadb` package can be loaded; fails with `MissingDependency`
 * naming it when it is not installed. `load` replaces the import (for tests).
 *
 * @since 0.1.0
 * @category utils
 * @example
 * ```ts
 * import { ChromaIndex } from "lambdagent/rag"
 * await ChromaIndex.importChroma() // throws RagError MissingDependency without chromadb
 * ```
 */
export const importChroma = async (load?: () => Promise<unknown>): Promise<void> => {
  await loadChroma(load)
}

/**
 * Options of the `chroma` backend.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Embeddings, type ChromaIndex } from "lambdagent/rag"
 * const o: ChromaIndex.ChromaIndexOptions = { url: "http://localhost:8000", name: "docs", embeddings: Embeddings.hashing() }
 * ```
 */
export interface ChromaIndexOptions {
  /** Server URL; default `CHROMA_URL`, else `http://localhost:8000`. */
  readonly url?: string
  /** Index name, `[A-Za-z0-9._-]`; default `"default"`. */
  readonly name?: string
  readonly embeddings: Embeddings
  /** Milliseconds each request to Chroma may take; default 30 000. */
  readonly timeoutMs?: number
  /** Records per `add` request; default 1000 (and never above the server's limit). */
  readonly batchSize?: number
  readonly tenant?: string
  readonly database?: string
  /** Extra headers (e.g. `x-chroma-token`). */
  readonly headers?: Readonly<Record<string, string>>
}

/** An error thrown by the caller's chunk source: passed through as it is, not blamed on Chroma. */
class SourceFailure {
  constructor(readonly cause: unknown) {}
}

async function* fromSource<A>(items: Iterable<A> | AsyncIterable<A>): AsyncGenerator<A> {
  try {
    for await (const item of items as AsyncIterable<A>) yield item
  } catch (cause) {
    throw new SourceFailure(cause)
  }
}

const aliasPrefix = "lambdagent-alias--"
const dataPrefix = "lambdagent--"

/**
 * The collection names of an index: its alias collection and the prefix of its data collections.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { ChromaIndex } from "lambdagent/rag"
 * console.log(ChromaIndex.collectionNames("docs")) // { alias: "lambdagent-alias--docs", dataPrefix: "lambdagent--docs--" }
 * ```
 */
export const collectionNames = (name: string): { readonly alias: string; readonly dataPrefix: string } => ({
  alias: `${aliasPrefix}${name}`,
  dataPrefix: `${dataPrefix}${name}--`
})

interface AliasRecord {
  readonly target: string
  readonly embeddings: string
  readonly fingerprint?: string
}

const toMetadata = (m: ChunkMetadata): Metadata => ({
  source: m.source,
  format: m.format,
  index: m.index,
  start: m.start,
  end: m.end,
  ...(m.heading === undefined ? {} : { heading: m.heading }),
  ...(m.section === undefined ? {} : { section: JSON.stringify(m.section) })
})

const fromMetadata = (m: Metadata | null | undefined, id: string): ChunkMetadata => {
  const num = (v: unknown): number => (typeof v === "number" ? v : 0)
  let section: ReadonlyArray<string> | undefined
  if (typeof m?.["section"] === "string") {
    try {
      const parsed: unknown = JSON.parse(m["section"])
      if (Array.isArray(parsed)) section = parsed.map(String)
    } catch {
      section = undefined
    }
  }
  const format = m?.["format"]
  return {
    source: typeof m?.["source"] === "string" ? m["source"] : id.replace(/#\d+$/, ""),
    format: format === "markdown" || format === "json" ? format : ("text" satisfies DocumentFormat),
    index: num(m?.["index"]),
    start: num(m?.["start"]),
    end: num(m?.["end"]),
    ...(typeof m?.["heading"] === "string" ? { heading: m["heading"] } : {}),
    ...(section === undefined ? {} : { section })
  }
}

/** The text that is embedded: the section path (when there is one), then the chunk. */
/**
 * Open a `chroma` index. Nothing is contacted until the first call.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { ChromaIndex, Embeddings, ingest } from "lambdagent/rag"
 * const index = ChromaIndex.make({ url: "http://localhost:8000", name: "docs", embeddings: Embeddings.hashing() })
 * await index.rebuild((await ingest("docs")).chunks)
 * console.log(await index.query("how do I install it?", 3, 0))
 * ```
 */
export const make = (options: ChromaIndexOptions): RetrievalIndex => {
  const name = checkName(options.name ?? "default")
  const names = collectionNames(name)
  const embeddings = options.embeddings
  const timeoutMs = options.timeoutMs ?? 30_000
  const batchSize = options.batchSize ?? 1000
  let parsedUrl: URL
  const rawUrl = options.url ?? process.env["CHROMA_URL"] ?? "http://localhost:8000"
  try {
    parsedUrl = new URL(rawUrl)
  } catch (cause) {
    throw new RagError({ reason: "InvalidConfig", message: `invalid Chroma URL ${JSON.stringify(rawUrl)}`, cause })
  }
  const url = parsedUrl.origin
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new RagError({ reason: "InvalidConfig", message: `batchSize must be a positive integer, got ${batchSize}` })
  }
  let maxBatch: number | undefined

  /**
   * Run `f` with a client whose every request obeys the caller's signal and its own timeout: each
   * call on the client or on a collection it returns arms a timer of `timeoutMs`, and a timer that
   * fires aborts the client's requests. A long rebuild is many requests, each with its own limit.
   */
  const withClient = async <A>(what: string, callOptions: CallOptions | undefined, f: (client: Client) => Promise<A>): Promise<A> => {
    const chroma = await loadChroma()
    throwIfAborted(callOptions?.signal)
    const controller = new AbortController()
    let timedOut = false
    const signal = callOptions?.signal === undefined ? controller.signal : AbortSignal.any([callOptions.signal, controller.signal])
    const watch = <T extends object>(target: T): T =>
      new Proxy(target, {
        get: (t, property) => {
          const value: unknown = Reflect.get(t, property, t)
          if (typeof value !== "function") return value
          return (...args: Array<unknown>): unknown => {
            const result: unknown = value.apply(t, args)
            if (!(result instanceof Promise)) return result
            const timer = setTimeout(() => {
              timedOut = true
              controller.abort(new Error(`no answer within ${timeoutMs} ms`))
            }, timeoutMs)
            return result.then((v: unknown) => (isCollection(v) ? watch(v) : v)).finally(() => clearTimeout(timer))
          }
        }
      })
    const client = watch(
      new chroma.ChromaClient({
        host: parsedUrl.hostname,
        port: Number(parsedUrl.port || (parsedUrl.protocol === "https:" ? 443 : 80)),
        ssl: parsedUrl.protocol === "https:",
        ...(options.tenant === undefined ? {} : { tenant: options.tenant }),
        ...(options.database === undefined ? {} : { database: options.database }),
        ...(options.headers === undefined ? {} : { headers: { ...options.headers } }),
        fetchOptions: { signal }
      })
    )
    try {
      return await f(client)
    } catch (cause) {
      if (cause instanceof SourceFailure) throw cause.cause
      if (cause instanceof RagError) throw cause
      if (callOptions?.signal?.aborted === true) {
        throw new RagError({ reason: "Aborted", message: `Chroma ${what} was cancelled`, path: url, cause })
      }
      if (timedOut) {
        throw new RagError({ reason: "Timeout", message: `Chroma at ${url} did not answer ${what} within ${timeoutMs} ms`, path: url, cause })
      }
      if (cause instanceof chroma.ChromaConnectionError) {
        throw new RagError({
          reason: "BackendUnavailable",
          message: `cannot connect to Chroma at ${url} (${what}): is the server running? Start one with \`npx chroma run --path <dir>\``,
          path: url,
          cause
        })
      }
      throw new RagError({ reason: "BackendFailed", message: `Chroma ${what} failed: ${errorMessage(cause)}`, path: url, cause })
    }
  }

  const isNotFound = async (cause: unknown): Promise<boolean> => {
    const chroma = await loadChroma()
    return cause instanceof chroma.ChromaNotFoundError || (cause instanceof Error && /does not exist|not found/i.test(cause.message))
  }

  const readAlias = async (client: Client): Promise<AliasRecord | undefined> => {
    let alias: Collection
    try {
      alias = await client.getCollection({ name: names.alias })
    } catch (cause) {
      if (await isNotFound(cause)) return undefined
      throw cause
    }
    const m = alias.metadata ?? {}
    if (typeof m["target"] !== "string") return undefined
    return {
      target: m["target"],
      embeddings: typeof m["embeddings"] === "string" ? m["embeddings"] : "",
      ...(typeof m["fingerprint"] === "string" ? { fingerprint: m["fingerprint"] } : {})
    }
  }

  const writeAlias = async (client: Client, record: AliasRecord): Promise<void> => {
    const metadata = { ...record, updatedAt: new Date().toISOString() }
    const alias = await client.getOrCreateCollection({ name: names.alias, embeddingFunction: null, metadata })
    await alias.modify({ metadata })
  }

  const liveCollection = async (client: Client): Promise<{ alias: AliasRecord; collection: Collection } | undefined> => {
    const alias = await readAlias(client)
    if (alias === undefined) return undefined
    try {
      return { alias, collection: await client.getCollection({ name: alias.target }) }
    } catch (cause) {
      if (await isNotFound(cause)) return undefined
      throw cause
    }
  }

  const checkEmbedder = (alias: AliasRecord): void => {
    if (alias.embeddings !== "" && alias.embeddings !== embeddings.id) {
      throw new RagError({
        reason: "InvalidConfig",
        message: `Chroma index "${name}" was built with embeddings ${alias.embeddings} but is used with ${embeddings.id}: rebuild it or use the same embeddings`
      })
    }
  }

  const newCollection = (client: Client): Promise<Collection> =>
    client.createCollection({
      name: `${names.dataPrefix}${Date.now().toString(36)}${randomBytes(3).toString("hex")}`,
      embeddingFunction: null,
      configuration: { hnsw: { space: "cosine" } },
      metadata: { index: name, embeddings: embeddings.id }
    })

  const fill = async (
    client: Client,
    collection: Collection,
    chunks: Iterable<Chunk> | AsyncIterable<Chunk>,
    callOptions: CallOptions | undefined,
    fresh: boolean
  ): Promise<number> => {
    if (maxBatch === undefined) {
      const limit = await client.getMaxBatchSize().catch(() => -1)
      maxBatch = limit > 0 ? limit : batchSize
    }
    // A fresh collection takes plain `add`s (cheaper than upserts) until an id comes back.
    const seen = fresh ? new Set<string>() : undefined
    let sent = 0
    for await (const batch of batches(fromSource(chunks), Math.min(batchSize, maxBatch))) {
      throwIfAborted(callOptions?.signal)
      const unique = [...new Map(batch.map((c) => [c.id, c])).values()]
      const vectors = await embeddings.embed(unique.map(embeddingText), callOptions ?? {})
      const records = {
        ids: unique.map((c) => c.id),
        embeddings: vectors,
        documents: unique.map((c) => c.text),
        metadatas: unique.map((c) => toMetadata(c.metadata))
      }
      if (seen !== undefined && unique.every((c) => !seen.has(c.id))) {
        await collection.add(records)
        for (const c of unique) seen.add(c.id)
      } else {
        await collection.upsert(records)
        for (const c of unique) seen?.add(c.id)
      }
      sent += unique.length
    }
    return seen?.size ?? sent
  }

  const add: RetrievalIndex["add"] = (chunks, callOptions) =>
    withClient("add", callOptions, async (client) => {
      const started = performance.now()
      let live = await liveCollection(client)
      if (live !== undefined) checkEmbedder(live.alias)
      if (live === undefined) {
        const collection = await newCollection(client)
        const alias = { target: collection.name, embeddings: embeddings.id }
        await writeAlias(client, alias)
        live = { alias, collection }
      }
      const added = await fill(client, live.collection, chunks, callOptions, false)
      return { chunks: added, ms: performance.now() - started } satisfies BuildReport
    })

  const rebuild: RetrievalIndex["rebuild"] = (chunks, callOptions) =>
    withClient("rebuild", callOptions, async (client) => {
      const started = performance.now()
      const previous = await readAlias(client)
      const collection = await newCollection(client)
      let total: number
      try {
        total = await fill(client, collection, chunks, callOptions, true)
        await writeAlias(client, {
          target: collection.name,
          embeddings: embeddings.id,
          ...(callOptions?.fingerprint === undefined ? {} : { fingerprint: callOptions.fingerprint })
        })
      } catch (cause) {
        // Drop the half-built collection; the alias still names the old one. The signal may
        // already have fired, so this cleanup runs on a client of its own.
        await withClient("cleanup", undefined, (c) => c.deleteCollection({ name: collection.name })).catch(() => undefined)
        throw cause
      }
      if (previous !== undefined && previous.target !== collection.name) {
        await client.deleteCollection({ name: previous.target }).catch(() => undefined)
      }
      return { chunks: total, ms: performance.now() - started } satisfies BuildReport
    })

  const query: RetrievalIndex["query"] = async (text, topK, minScore, callOptions) => {
    checkQueryArgs(topK, minScore)
    if (callOptions?.mode !== undefined && callOptions.mode !== "vector") {
      throw new RagError({ reason: "InvalidConfig", message: `the chroma backend answers vector queries only, not ${callOptions.mode}` })
    }
    return withClient("query", callOptions, async (client) => {
      const live = await liveCollection(client)
      if (live === undefined || text.trim() === "") return []
      checkEmbedder(live.alias)
      const [vector] = await embeddings.embed([text], callOptions ?? {})
      if (vector === undefined || vector.every((x) => x === 0)) return []
      const result = await live.collection.query({
        queryEmbeddings: [vector],
        nResults: topK,
        include: ["documents", "metadatas", "distances"]
      })
      const hits: Array<SearchHit> = []
      const ids = result.ids[0] ?? []
      ids.forEach((id, i) => {
        const distance = result.distances[0]?.[i]
        const score = typeof distance === "number" ? 1 - distance : 0
        if (score < minScore) return
        hits.push({
          score,
          chunk: {
            id,
            text: result.documents[0]?.[i] ?? "",
            metadata: fromMetadata(result.metadatas[0]?.[i] as Metadata | null | undefined, id)
          }
        })
      })
      return hits
    })
  }

  return {
    backend: "chroma",
    name,
    mode: "vector",
    add,
    rebuild,
    query,
    count: (callOptions) =>
      withClient("count", callOptions, async (client) => {
        const live = await liveCollection(client)
        return live === undefined ? 0 : live.collection.count()
      }),
    fingerprint: (callOptions) => withClient("read alias", callOptions, async (client) => (await readAlias(client))?.fingerprint),
    clear: (callOptions) =>
      withClient("clear", callOptions, async (client) => {
        const all = await listAll(client)
        for (const collection of all) {
          if (collection === names.alias || collection.startsWith(names.dataPrefix)) {
            await client.deleteCollection({ name: collection }).catch(async (cause: unknown) => {
              if (!(await isNotFound(cause))) throw cause
            })
          }
        }
      }),
    close: async () => {}
  }
}

const isCollection = (v: unknown): v is Collection =>
  typeof v === "object" && v !== null && typeof (v as { query?: unknown }).query === "function" && typeof (v as { add?: unknown }).add === "function"

const listAll = async (client: Client): Promise<Array<string>> => {
  const names: Array<string> = []
  for (let offset = 0; ; offset += 100) {
    const page = await client.listCollections({ limit: 100, offset })
    names.push(...page.map((c) => c.name))
    if (page.length < 100) return names
  }
}

/**
 * Check that a Chroma server answers its heartbeat. Fails with `BackendUnavailable` or `Timeout`.
 *
 * @since 0.1.0
 * @category utils
 * @example
 * ```ts
 * import { ChromaIndex } from "lambdagent/rag"
 * await ChromaIndex.heartbeat("http://localhost:8000", 2_000)
 * ```
 */
export const heartbeat = async (url: string, timeoutMs = 5_000): Promise<void> => {
  const timeout = AbortSignal.timeout(timeoutMs)
  let response: Response
  try {
    response = await fetch(`${new URL(url).origin}/api/v2/heartbeat`, { signal: timeout })
    await response.arrayBuffer()
  } catch (cause) {
    if (timeout.aborted) {
      throw new RagError({ reason: "Timeout", message: `Chroma at ${url} did not answer its heartbeat within ${timeoutMs} ms`, path: url, cause })
    }
    throw new RagError({ reason: "BackendUnavailable", message: `cannot connect to Chroma at ${url}: ${describeFetchError(cause)}`, path: url, cause })
  }
  if (!response.ok) {
    throw new RagError({ reason: "BackendFailed", message: `Chroma at ${url} answered its heartbeat with ${response.status}`, path: url })
  }
}
