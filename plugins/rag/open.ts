/**
 * Open an index from plain settings: pick the backend, the embedder, and (for `chroma` without a
 * server URL) start a local Chroma server on first use.
 *
 * @since 0.1.0
 * @module
 */
import * as ChromaIndex from "./ChromaIndex.ts"
import * as ChromaServer from "./ChromaServer.ts"
import * as Embeddings from "./Embeddings.ts"
import type { RetrievalMode } from "./fusion.ts"
import { RagError } from "./RagError.ts"
import type { RetrievalIndex } from "./RetrievalIndex.ts"
import * as SimpleIndex from "./SimpleIndex.ts"
import * as WordVectors from "./WordVectors.ts"

/**
 * Settings of an `embeddings:` block, as written.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { EmbeddingsSettings } from "lambdagent/rag"
 * const e: EmbeddingsSettings = { provider: "openai", model: "text-embedding-3-small", apiKeyEnv: "MY_KEY" }
 * ```
 */
export interface EmbeddingsSettings {
  readonly provider?: "local" | "hashing" | "openai" | undefined
  readonly model?: string | undefined
  readonly baseUrl?: string | undefined
  readonly apiKeyEnv?: string | undefined
  readonly dimensions?: number | undefined
  readonly timeoutMs?: number | undefined
}

/**
 * An embedder from settings; default the offline word-vector embedder (`local`, see `WordVectors`).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { embeddingsFrom } from "lambdagent/rag"
 * const e = embeddingsFrom({ provider: "hashing", dimensions: 128 })
 * console.log(e.id, embeddingsFrom(undefined).id) // "hashing-128" "use-lite-words-128"
 * ```
 */
export const embeddingsFrom = (settings: EmbeddingsSettings | Embeddings.Embeddings | undefined): Embeddings.Embeddings => {
  if (settings !== undefined && "embed" in settings) return settings
  const provider = settings?.provider ?? "local"
  if (provider === "local") return WordVectors.make()
  if (provider === "hashing") {
    return Embeddings.hashing(settings?.dimensions === undefined ? {} : { dimensions: settings.dimensions })
  }
  if (settings === undefined || provider !== "openai") {
    throw new RagError({ reason: "InvalidConfig", message: `unknown embeddings provider ${JSON.stringify(provider)}: use local, hashing or openai` })
  }
  const keyEnv = settings.apiKeyEnv ?? "OPENAI_API_KEY"
  const apiKey = process.env[keyEnv]
  return Embeddings.openAI({
    ...(settings.model === undefined ? {} : { model: settings.model }),
    ...(settings.baseUrl === undefined ? {} : { baseUrl: settings.baseUrl }),
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(settings.dimensions === undefined ? {} : { dimensions: settings.dimensions }),
    ...(settings.timeoutMs === undefined ? {} : { timeoutMs: settings.timeoutMs })
  })
}

/**
 * Where and how to open an index.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { OpenIndexOptions } from "lambdagent/rag"
 * const o: OpenIndexOptions = { backend: "chroma", persistDirectory: ".rag/chroma", name: "docs" }
 * ```
 */
export interface OpenIndexOptions {
  /** Default `simple`. */
  readonly backend?: "simple" | "chroma"
  /** Default `default`. */
  readonly name?: string
  /** `simple`: the directory of `<name>.json` (absent: in memory). `chroma` without `chromaUrl`: the data directory of a local server started on first use. */
  readonly persistDirectory?: string
  /** A running Chroma server; default `CHROMA_URL`, else a local server when `persistDirectory` is set, else `http://localhost:8000`. */
  readonly chromaUrl?: string
  /** Default the offline word vectors (`local`); not loaded for `mode: bm25`. */
  readonly embeddings?: EmbeddingsSettings | Embeddings.Embeddings
  /** `simple`: default `hybrid`. `chroma`: only `vector` (its default). */
  readonly mode?: RetrievalMode
  /** Milliseconds per Chroma request; default 30 000. */
  readonly timeoutMs?: number
}

/**
 * An opened index and how to let it go.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { openIndex } from "lambdagent/rag"
 * const { index, location, close } = openIndex({ persistDirectory: ".rag" })
 * console.log(location) // ".rag/default.json"
 * await close()
 * ```
 */
export interface OpenedIndex {
  readonly index: RetrievalIndex
  /** A file path or a server URL, for messages. */
  readonly location: string
  /** Release the index (close the file or the client); call once. */
  readonly close: () => Promise<void>
}

/**
 * Open an index. Nothing is read, contacted or started until the index is first used.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { openIndex } from "lambdagent/rag"
 * const opened = openIndex({ backend: "chroma", persistDirectory: ".rag/chroma", embeddings: { provider: "hashing" } })
 * try {
 *   console.log(await opened.index.count())
 * } finally {
 *   await opened.close() // stops the local server it started
 * }
 * ```
 */
export const openIndex = (options: OpenIndexOptions): OpenedIndex => {
  const backend = options.backend ?? "simple"
  const name = SimpleIndex.checkName(options.name ?? "default")
  if (backend === "simple") {
    const mode = options.mode ?? "hybrid"
    const index = SimpleIndex.make({
      name,
      mode,
      ...(mode === "bm25" ? {} : { embeddings: embeddingsFrom(options.embeddings) }),
      ...(options.persistDirectory === undefined ? {} : { persistDirectory: options.persistDirectory })
    })
    return {
      index,
      location: options.persistDirectory === undefined ? "(memory)" : SimpleIndex.filePath(options.persistDirectory, name),
      close: () => index.close()
    }
  }
  if (backend !== "chroma") {
    throw new RagError({ reason: "InvalidConfig", message: `unknown backend ${JSON.stringify(backend)}: use simple or chroma` })
  }
  if (options.mode !== undefined && options.mode !== "vector") {
    throw new RagError({ reason: "InvalidConfig", message: `the chroma backend supports mode vector only, not ${options.mode}` })
  }
  const embeddings = embeddingsFrom(options.embeddings)
  const common = {
    name,
    embeddings,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs })
  }
  const url = options.chromaUrl ?? process.env["CHROMA_URL"]
  if (url !== undefined || options.persistDirectory === undefined) {
    const index = ChromaIndex.make({ ...common, ...(url === undefined ? {} : { url }) })
    return { index, location: url ?? "http://localhost:8000", close: () => index.close() }
  }
  const dataDir = options.persistDirectory
  let started: Promise<{ server: ChromaServer.RunningChromaServer; index: RetrievalIndex }> | undefined
  const get = (): Promise<{ server: ChromaServer.RunningChromaServer; index: RetrievalIndex }> => {
    started ??= ChromaServer.start({ path: dataDir })
      .then((server) => ({ server, index: ChromaIndex.make({ ...common, url: server.url }) }))
      .catch((cause: unknown) => {
        started = undefined
        throw cause
      })
    return started
  }
  const close = async (): Promise<void> => {
    const running = started
    started = undefined
    if (running === undefined) return
    const s = await running.catch(() => undefined)
    await s?.server.stop()
  }
  const index: RetrievalIndex = {
    backend: "chroma",
    name,
    mode: "vector",
    add: async (chunks, o) => (await get()).index.add(chunks, o),
    rebuild: async (chunks, o) => (await get()).index.rebuild(chunks, o),
    query: async (text, topK, minScore, o) => (await get()).index.query(text, topK, minScore, o),
    count: async (o) => (await get()).index.count(o),
    fingerprint: async (o) => (await get()).index.fingerprint(o),
    clear: async (o) => (await get()).index.clear(o),
    close
  }
  return { index, location: `${dataDir} (local Chroma server)`, close }
}
