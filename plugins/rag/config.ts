/**
 * The YAML `rag:` block as a zod schema, and {@link fromConfig}, which turns it into a ready
 * `rag_retrieve` tool and a context-prepending `retrieve` function.
 *
 * @since 0.1.0
 * @module
 */
import * as path from "node:path"
import type { Tools } from "lambdagent"
import * as z from "zod"
import { defaultChunkOverlap } from "./chunk.ts"
import { chunkSource } from "./ingest.ts"
import { openIndex } from "./open.ts"
import { errorMessage, RagError } from "./RagError.ts"
import type { BuildReport, RetrievalIndex } from "./RetrievalIndex.ts"
import { ragTool, retrieveContext } from "./tool.ts"

/**
 * The `embeddings:` sub-block: the embedder of `vector` and `hybrid` retrieval, for both backends.
 *
 * - `provider`: `local` (default; the offline word vectors shipped with lambdagent, see
 *   `WordVectors`), `hashing` (offline, deterministic, lexical only) or `openai` (any
 *   OpenAI-compatible `/embeddings` endpoint).
 * - `model`, `baseUrl`, `dimensions`, `timeoutMs`: for `openai`; `dimensions` also sets the
 *   hashing vector length (default 384).
 * - `apiKeyEnv`: the environment variable holding the API key (default `OPENAI_API_KEY`); keys
 *   are never written in the YAML itself.
 *
 * @since 0.1.0
 * @category schemas
 * @example
 * ```ts
 * import { EmbeddingsConfig } from "lambdagent/rag"
 * const e = EmbeddingsConfig.parse({ provider: "openai", model: "text-embedding-3-small" })
 * ```
 */
export const EmbeddingsConfig = z.strictObject({
  provider: z.enum(["local", "hashing", "openai"]).default("local"),
  model: z.string().min(1).optional(),
  baseUrl: z.url().optional(),
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name")
    .optional(),
  dimensions: z.number().int().min(2).max(65_536).optional(),
  timeoutMs: z.number().int().positive().optional()
})

/**
 * The parsed `embeddings:` block.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { EmbeddingsConfig } from "lambdagent/rag"
 * const e: EmbeddingsConfig = { provider: "hashing", dimensions: 256 }
 * ```
 */
export type EmbeddingsConfig = z.output<typeof EmbeddingsConfig>

const indexName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, "1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit")

/**
 * The YAML `rag:` block. Unknown keys are rejected (they are usually typos).
 *
 * | field | default | meaning |
 * |---|---|---|
 * | `enabled` | `true` | whether the agent gets retrieval at all |
 * | `source` | — | file(s) or directory(ies) to index, relative to the YAML file; absent: use an index built beforehand with `lambdagent rag index` |
 * | `name` | `default` | index name (file or collection) |
 * | `topK` | `3` | passages per retrieval |
 * | `chunkSize` | `1000` | characters per chunk at most |
 * | `chunkOverlap` | `min(150, chunkSize/4)` | characters shared by consecutive chunks |
 * | `backend` | `simple` | `simple` (embedded BM25 and vectors) or `chroma` |
 * | `mode` | `hybrid` (`simple`), `vector` (`chroma`) | `bm25`, `vector` or `hybrid` (BM25 and vectors fused) |
 * | `minScore` | `0` | lowest score kept, on the backend's scale |
 * | `format` | `numbered` | `numbered`, `plain` or `json` |
 * | `agentic` | `true` | `true`: inject the `rag_retrieve` tool; `false`: prepend context to every input |
 * | `persistDirectory` | — | `simple`: where `<name>.json` lives; `chroma`: the local server's data directory |
 * | `embeddings` | `{provider: local}` | see {@link EmbeddingsConfig} |
 * | `chromaUrl` | `CHROMA_URL` | a running Chroma server; absent with a `persistDirectory`: one is started |
 * | `maxFileBytes` | 10 MiB | larger files are refused |
 *
 * @since 0.1.0
 * @category schemas
 * @example
 * ```ts
 * import { RagConfig } from "lambdagent/rag"
 * const config = RagConfig.parse({ source: "./docs", topK: 5, backend: "simple", persistDirectory: ".rag" })
 * console.log(config.format) // "numbered"
 * ```
 */
export const RagConfig = z
  .strictObject({
    enabled: z.boolean().default(true),
    source: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    name: indexName.default("default"),
    topK: z.number().int().min(1).max(100).default(3),
    chunkSize: z.number().int().min(20).default(1000),
    chunkOverlap: z.number().int().min(0).optional(),
    backend: z.enum(["simple", "chroma"]).default("simple"),
    mode: z.enum(["bm25", "vector", "hybrid"]).optional(),
    minScore: z.number().default(0),
    format: z.enum(["numbered", "plain", "json"]).default("numbered"),
    agentic: z.boolean().default(true),
    persistDirectory: z.string().min(1).optional(),
    embeddings: EmbeddingsConfig.optional(),
    chromaUrl: z.url().optional(),
    maxFileBytes: z.number().int().positive().optional()
  })
  .superRefine((c, ctx) => {
    if (c.backend === "chroma" && c.mode !== undefined && c.mode !== "vector") {
      ctx.addIssue({ code: "custom", path: ["mode"], message: `the chroma backend supports mode vector only` })
    }
    if (c.chunkOverlap !== undefined && c.chunkOverlap >= c.chunkSize / 2) {
      ctx.addIssue({
        code: "custom",
        path: ["chunkOverlap"],
        message: `chunkOverlap must be less than half of chunkSize (${c.chunkSize})`
      })
    }
  })

/**
 * The parsed `rag:` block, defaults filled in.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { RagConfig } from "lambdagent/rag"
 * const c: RagConfig = RagConfig.parse({ source: "docs" })
 * ```
 */
export type RagConfig = z.output<typeof RagConfig>

/**
 * The `rag:` block as written (defaults optional).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { RagConfigInput } from "lambdagent/rag"
 * const c: RagConfigInput = { source: "docs", backend: "chroma" }
 * ```
 */
export type RagConfigInput = z.input<typeof RagConfig>

/**
 * Parse a `rag:` block, failing with `InvalidConfig` and every problem listed as `path: message`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { parseRagConfig } from "lambdagent/rag"
 * parseRagConfig({ topK: 0 }) // throws RagError InvalidConfig: "rag.topK: Too small: expected number to be >=1"
 * ```
 */
export const parseRagConfig = (input: unknown): RagConfig => {
  const parsed = RagConfig.safeParse(input ?? {})
  if (parsed.success) return parsed.data
  const problems = parsed.error.issues.map((i) => `rag${i.path.map((p) => `.${String(p)}`).join("")}: ${i.message}`)
  throw new RagError({ reason: "InvalidConfig", message: problems.join("; "), cause: parsed.error })
}

/**
 * What {@link fromConfig} builds.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { fromConfig } from "lambdagent/rag"
 * const rag = fromConfig({ source: "docs" }, ".")
 * const prompt = await rag.retrieve("What is BM25?")
 * await rag.close()
 * ```
 */
export interface RagRuntime {
  readonly config: RagConfig
  /** The `rag_retrieve` tool, for `agentic: true`. */
  readonly tool: Tools.ToolDefinition<string>
  /** Context-prepended input, for `agentic: false`: `[Retrieved Context]\n…\n\n[Question]\n<input>`. */
  readonly retrieve: (input: string, options?: { readonly signal?: AbortSignal }) => Promise<string>
  /** The index, (re)built from `source` on first use when the source changed. */
  readonly index: RetrievalIndex
  /** Stop anything started for the index (a local Chroma server). */
  readonly close: () => Promise<void>
}

/**
 * Options of {@link fromConfig} that do not belong in YAML.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { FromConfigOptions } from "lambdagent/rag"
 * const o: FromConfigOptions = { onWarning: (m) => console.error(m) }
 * ```
 */
export interface FromConfigOptions {
  /** Told when a rebuild failed and the previous index is used instead; default `process.emitWarning`. */
  readonly onWarning?: (message: string) => void
}

/**
 * Build retrieval from a `rag:` block. Relative `source` and `persistDirectory` are resolved
 * against `baseDir` (the YAML file's directory).
 *
 * Nothing is read until the first retrieval. Then, when there is a `source`, the index is rebuilt
 * if the source's fingerprint (paths, sizes, modification times) differs from the one recorded
 * with the index, so a persisted index is reused across runs until the documents change. If that
 * rebuild fails while an older index exists, the older index keeps answering and `onWarning` is
 * told; with no older index the retrieval fails with the {@link RagError}. `enabled` and `agentic`
 * are for the caller: use `tool` when `agentic`, `retrieve` otherwise.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { fromConfig } from "lambdagent/rag"
 * const rag = fromConfig({ source: "./knowledge", topK: 4, persistDirectory: ".rag" }, "/srv/agents")
 * const tools = rag.config.agentic ? [rag.tool] : []
 * const input = rag.config.agentic ? "question" : await rag.retrieve("question")
 * ```
 */
export const fromConfig = (input: RagConfigInput, baseDir: string, options?: FromConfigOptions): RagRuntime => {
  const config = parseRagConfig(input)
  const resolve = (p: string): string => path.resolve(baseDir, p)
  const opened = openIndex({
    backend: config.backend,
    name: config.name,
    ...(config.mode === undefined ? {} : { mode: config.mode }),
    ...(config.persistDirectory === undefined ? {} : { persistDirectory: resolve(config.persistDirectory) }),
    ...(config.chromaUrl === undefined ? {} : { chromaUrl: config.chromaUrl }),
    ...(config.embeddings === undefined ? {} : { embeddings: config.embeddings })
  })
  const warn = options?.onWarning ?? ((message: string) => process.emitWarning(message, "RagWarning"))
  const inner = opened.index
  let ready: Promise<void> | undefined

  const prepare = async (): Promise<void> => {
    if (config.source === undefined) return
    const { chunks, scan } = await chunkSource(config.source, {
      baseDir,
      chunkSize: config.chunkSize,
      chunkOverlap: config.chunkOverlap ?? Math.min(defaultChunkOverlap, Math.floor(config.chunkSize / 4)),
      ...(config.maxFileBytes === undefined ? {} : { maxFileBytes: config.maxFileBytes })
    }).catch(async (cause: unknown) => {
      if ((await inner.count().catch(() => 0)) > 0) {
        warn(`rag: cannot read the source (${errorMessage(cause)}); using the existing index "${config.name}"`)
        return { chunks: undefined, scan: undefined }
      }
      throw cause
    })
    if (chunks === undefined || scan === undefined) return
    if ((await inner.fingerprint()) === scan.fingerprint && (await inner.count()) > 0) return
    try {
      await inner.rebuild(chunks, { fingerprint: scan.fingerprint })
    } catch (cause) {
      if ((await inner.count().catch(() => 0)) > 0) {
        warn(`rag: rebuilding index "${config.name}" failed (${errorMessage(cause)}); using the previous index`)
        return
      }
      throw cause
    }
  }
  const ensure = (): Promise<void> => {
    ready ??= prepare().catch((cause: unknown) => {
      ready = undefined
      throw cause
    })
    return ready
  }

  const index: RetrievalIndex = {
    backend: inner.backend,
    name: inner.name,
    ...(inner.mode === undefined ? {} : { mode: inner.mode }),
    add: async (chunks, o) => {
      await ensure()
      return inner.add(chunks, o)
    },
    rebuild: (chunks, o): Promise<BuildReport> => inner.rebuild(chunks, o),
    query: async (text, topK, minScore, o) => {
      await ensure()
      return inner.query(text, topK, minScore, o)
    },
    count: async (o) => {
      await ensure()
      return inner.count(o)
    },
    fingerprint: (o) => inner.fingerprint(o),
    clear: async (o) => {
      ready = undefined
      await inner.clear(o)
    },
    close: () => opened.close()
  }
  const retrieveOptions = { index, topK: config.topK, minScore: config.minScore, format: config.format }
  return {
    config,
    index,
    tool: ragTool(retrieveOptions),
    retrieve: (text, o) => retrieveContext(text, { ...retrieveOptions, ...(o?.signal === undefined ? {} : { signal: o.signal }) }),
    close: () => opened.close()
  }
}
