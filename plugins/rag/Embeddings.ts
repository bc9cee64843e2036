/**
 * Embeddings: turn texts into vectors for the `chroma` backend.
 *
 * Two implementations: {@link openAI} calls any OpenAI-compatible `POST /embeddings` endpoint,
 * and {@link hashing} is a deterministic, offline embedder (feature hashing of word unigrams and
 * bigrams) for tests and for use without a model.
 *
 * @since 0.1.0
 * @module
 */
import { describeFetchError, errorMessage, RagError, throwIfAborted } from "./RagError.ts"
import { searchTerms } from "./terms.ts"

/**
 * Something that embeds texts.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Embeddings } from "lambdagent/rag"
 * const e: Embeddings.Embeddings = Embeddings.hashing({ dimensions: 64 })
 * const [v] = await e.embed(["hello world"])
 * console.log(v?.length) // 64
 * ```
 */
export interface Embeddings {
  /** Names the model and its settings, e.g. `hashing-384` or `openai:text-embedding-3-small`. Stored with an index, so a query with another model is refused. */
  readonly id: string
  /** Vector length, when known in advance. */
  readonly dimensions?: number
  /** One vector per text, in order. */
  readonly embed: (texts: ReadonlyArray<string>, options?: { readonly signal?: AbortSignal }) => Promise<Array<Array<number>>>
  /**
   * Whether a word (as written in a text) contributes to its vector. Embedders with a fixed
   * vocabulary implement it, so hybrid retrieval leans on BM25 for the words they cannot see;
   * absent, every word counts as known.
   */
  readonly knows?: (word: string) => boolean
}

/**
 * Options of the hashing embedder.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Embeddings } from "lambdagent/rag"
 * const o: Embeddings.HashingOptions = { dimensions: 256 }
 * ```
 */
export interface HashingOptions {
  /** Vector length; default 384. */
  readonly dimensions?: number
}

/** 32-bit FNV-1a over UTF-16 code units, from a given offset basis. */
const fnv1a = (text: string, basis: number): number => {
  let h = basis
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  // Final avalanche (from MurmurHash3's fmix32), so nearby strings land far apart.
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

const hashTerm = (term: string): { bucket: number; sign: number } => ({
  bucket: fnv1a(term, 0x811c9dc5),
  sign: (fnv1a(term, 0x050c5d1f) & 1) === 0 ? 1 : -1
})

/**
 * A deterministic embedder: the text's search terms (see {@link searchTerms}) and adjacent-term
 * bigrams are hashed into `dimensions` buckets with a random sign (the "hashing trick"), weighted
 * by `1 + log(count)` (bigrams at half weight), and the vector is L2-normalised. The same text
 * always gives the same vector, on every machine; similar wording gives similar vectors. It knows
 * nothing of synonyms: use a real model for semantic search.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Embeddings } from "lambdagent/rag"
 * const e = Embeddings.hashing()
 * const [a, b] = await e.embed(["green tea", "tea, green"])
 * ```
 */
export const hashing = (options?: HashingOptions): Embeddings => {
  const dimensions = options?.dimensions ?? 384
  if (!Number.isInteger(dimensions) || dimensions < 2 || dimensions > 65_536) {
    throw new RagError({ reason: "InvalidConfig", message: `hashing dimensions must be an integer from 2 to 65536, got ${dimensions}` })
  }
  const cache = new Map<string, { bucket: number; sign: number }>()
  const lookup = (term: string): { bucket: number; sign: number } => {
    let h = cache.get(term)
    if (h === undefined) {
      h = hashTerm(term)
      if (cache.size > 200_000) cache.clear()
      cache.set(term, h)
    }
    return h
  }
  const embedOne = (text: string): Array<number> => {
    const terms = searchTerms(text)
    const counts = new Map<string, number>()
    const bump = (feature: string, weight: number): void => {
      counts.set(feature, (counts.get(feature) ?? 0) + weight)
    }
    for (let i = 0; i < terms.length; i++) {
      bump(terms[i]!, 1)
      if (i + 1 < terms.length) bump(`${terms[i]} ${terms[i + 1]}`, 0.5)
    }
    const vector = new Array<number>(dimensions).fill(0)
    for (const [feature, count] of counts) {
      const weight = count >= 1 ? 1 + Math.log(count) : count
      const { bucket, sign } = lookup(feature)
      vector[bucket % dimensions]! += sign * weight
    }
    let norm = 0
    for (const x of vector) norm += x * x
    norm = Math.sqrt(norm)
    return norm === 0 ? vector : vector.map((x) => x / norm)
  }
  return {
    id: `hashing-${dimensions}`,
    dimensions,
    embed: async (texts, callOptions) => {
      throwIfAborted(callOptions?.signal)
      return texts.map(embedOne)
    }
  }
}

/**
 * Options of the OpenAI-compatible embedder.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Embeddings } from "lambdagent/rag"
 * const o: Embeddings.OpenAIOptions = { model: "text-embedding-3-small", baseUrl: "http://localhost:11434/v1", timeoutMs: 10_000 }
 * ```
 */
export interface OpenAIOptions {
  /** Default `text-embedding-3-small`. */
  readonly model?: string
  /** Default `OPENAI_BASE_URL`, else `https://api.openai.com/v1`; the request goes to `<baseUrl>/embeddings`. */
  readonly baseUrl?: string
  /** Default `OPENAI_API_KEY`. Required for api.openai.com; local servers may take none. */
  readonly apiKey?: string
  /** Requested vector length (models that support it). */
  readonly dimensions?: number
  /** Milliseconds per request; default 30 000. */
  readonly timeoutMs?: number
  /** Texts per request; default 128. */
  readonly batchSize?: number
  /** Extra headers, e.g. for a proxy. */
  readonly headers?: Readonly<Record<string, string>>
  /** The fetch to use; default the global one. */
  readonly fetch?: typeof globalThis.fetch
}

/**
 * An embedder over an OpenAI-compatible `/embeddings` endpoint (OpenAI, Azure-style proxies,
 * Ollama, vLLM, LM Studio, …). Texts go in batches; each request has its own timeout. Failures are
 * {@link RagError}s: `InvalidConfig` (no API key for api.openai.com), `BackendUnavailable`
 * (connection refused), `Timeout`, `EmbeddingFailed` (an HTTP error, with the server's message, or a
 * malformed body).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Embeddings } from "lambdagent/rag"
 * const e = Embeddings.openAI({ model: "text-embedding-3-small" }) // reads OPENAI_API_KEY
 * const vectors = await e.embed(["What is BM25?"])
 * ```
 */
export const openAI = (options?: OpenAIOptions): Embeddings => {
  const model = options?.model ?? "text-embedding-3-small"
  const baseUrl = (options?.baseUrl ?? process.env["OPENAI_BASE_URL"] ?? "https://api.openai.com/v1").replace(/\/+$/, "")
  const apiKey = options?.apiKey ?? process.env["OPENAI_API_KEY"]
  const timeoutMs = options?.timeoutMs ?? 30_000
  const batchSize = options?.batchSize ?? 128
  const doFetch = options?.fetch ?? globalThis.fetch
  const url = `${baseUrl}/embeddings`
  if (apiKey === undefined && /^https:\/\/api\.openai\.com\b/.test(baseUrl)) {
    throw new RagError({
      reason: "InvalidConfig",
      message: "OpenAI embeddings need an API key: set OPENAI_API_KEY or pass apiKey (or point baseUrl at a server that needs none)"
    })
  }
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new RagError({ reason: "InvalidConfig", message: `batchSize must be a positive integer, got ${batchSize}` })
  }

  const request = async (input: ReadonlyArray<string>, signal: AbortSignal | undefined): Promise<Array<Array<number>>> => {
    throwIfAborted(signal)
    const timeout = AbortSignal.timeout(timeoutMs)
    const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout])
    let response: Response
    let body: string
    try {
      response = await doFetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }),
          ...options?.headers
        },
        body: JSON.stringify({
          model,
          input,
          encoding_format: "float",
          ...(options?.dimensions === undefined ? {} : { dimensions: options.dimensions })
        }),
        signal: combined
      })
      body = await response.text()
    } catch (cause) {
      if (signal?.aborted === true) {
        throw new RagError({ reason: "Aborted", message: "the embeddings request was cancelled", path: url, cause })
      }
      if (timeout.aborted) {
        throw new RagError({ reason: "Timeout", message: `embeddings request to ${url} timed out after ${timeoutMs} ms`, path: url, cause })
      }
      throw new RagError({
        reason: "BackendUnavailable",
        message: `cannot reach the embeddings endpoint ${url}: ${describeFetchError(cause)}`,
        path: url,
        cause
      })
    }
    if (!response.ok) {
      let detail = body.slice(0, 500)
      try {
        const parsed = JSON.parse(body) as { error?: { message?: unknown } | string }
        const msg = typeof parsed.error === "string" ? parsed.error : parsed.error?.message
        if (typeof msg === "string") detail = msg
      } catch {
        // not JSON: keep the text
      }
      throw new RagError({
        reason: "EmbeddingFailed",
        message: `embeddings endpoint ${url} answered ${response.status}${detail === "" ? "" : `: ${detail}`}`,
        path: url
      })
    }
    let data: Array<{ embedding?: unknown; index?: unknown }>
    try {
      const parsed = JSON.parse(body) as { data?: unknown }
      if (!Array.isArray(parsed.data)) throw new Error("no data array")
      data = parsed.data as Array<{ embedding?: unknown; index?: unknown }>
    } catch (cause) {
      throw new RagError({ reason: "EmbeddingFailed", message: `malformed embeddings response from ${url}: ${errorMessage(cause)}`, path: url, cause })
    }
    if (data.length !== input.length) {
      throw new RagError({
        reason: "EmbeddingFailed",
        message: `embeddings endpoint ${url} returned ${data.length} vectors for ${input.length} texts`,
        path: url
      })
    }
    const ordered = [...data].sort((a, b) => Number(a.index ?? 0) - Number(b.index ?? 0))
    return ordered.map((d, i) => {
      if (!Array.isArray(d.embedding) || d.embedding.some((x) => typeof x !== "number")) {
        throw new RagError({ reason: "EmbeddingFailed", message: `embedding ${i} from ${url} is not a list of numbers`, path: url })
      }
      return d.embedding as Array<number>
    })
  }

  return {
    id: `openai:${model}${options?.dimensions === undefined ? "" : `:${options.dimensions}`}`,
    ...(options?.dimensions === undefined ? {} : { dimensions: options.dimensions }),
    embed: async (texts, callOptions) => {
      const out: Array<Array<number>> = []
      for (let i = 0; i < texts.length; i += batchSize) {
        out.push(...(await request(texts.slice(i, i + batchSize), callOptions?.signal)))
      }
      return out
    }
  }
}
