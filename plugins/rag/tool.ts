/**
 * Retrieval for agents: the `rag_retrieve` tool (agentic mode, the agent decides when to search)
 * and {@link retrieveContext} (prepended mode, every input gets context first).
 *
 * @since 0.1.0
 * @module
 */
import { Tools } from "lambdagent"
import * as z from "zod"
import { contextPrompt, formatHits, type OutputFormat } from "./format.ts"
import { RagError } from "./RagError.ts"
import type { RetrievalIndex, SearchHit } from "./RetrievalIndex.ts"

/**
 * How to search and show the results.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { SimpleIndex, type RetrieveOptions } from "lambdagent/rag"
 * const o: RetrieveOptions = { index: SimpleIndex.memory(), topK: 5, minScore: 0.5, format: "plain" }
 * ```
 */
export interface RetrieveOptions {
  readonly index: RetrievalIndex
  /** Passages to return at most; default 3. */
  readonly topK?: number
  /** Lowest score kept (on the backend's scale, see `SearchHit`); default 0. */
  readonly minScore?: number
  /** Default `numbered`. */
  readonly format?: OutputFormat
}

/**
 * Options of {@link ragTool}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { SimpleIndex, type RagToolOptions } from "lambdagent/rag"
 * const o: RagToolOptions = { index: SimpleIndex.memory(), name: "search_handbook", description: "Search the staff handbook" }
 * ```
 */
export interface RagToolOptions extends RetrieveOptions {
  /** Default `rag_retrieve`. */
  readonly name?: string
  readonly description?: string
  /** Milliseconds before the call is abandoned; default the tools default (30 s). */
  readonly timeoutMs?: number
}

/**
 * The tool's input: a query string, or `{"query": "…"}` (what models often send), or a number.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { RagQueryInput } from "lambdagent/rag"
 * console.log(RagQueryInput.parse({ query: "tea" })) // "tea"
 * ```
 */
export const RagQueryInput: z.ZodType<string> = z
  .union([z.string(), z.number().transform(String), z.object({ query: z.string() }).transform((o) => o.query)])
  .pipe(z.string().trim().min(1, "the query is empty"))

const settings = (options: RetrieveOptions): { topK: number; minScore: number; format: OutputFormat } => {
  const format = options.format ?? "numbered"
  if (format !== "numbered" && format !== "plain" && format !== "json") {
    throw new RagError({ reason: "InvalidConfig", message: `unknown format ${JSON.stringify(format)}: use numbered, plain or json` })
  }
  return { topK: options.topK ?? 3, minScore: options.minScore ?? 0, format }
}

/**
 * Search the index: the best `topK` hits with a score of at least `minScore`.
 *
 * @since 0.1.0
 * @category retrieval
 * @example
 * ```ts
 * import { SimpleIndex, search } from "lambdagent/rag"
 * const hits = await search("green tea", { index: SimpleIndex.memory(), topK: 2 })
 * console.log(hits) // []
 * ```
 */
export const search = (query: string, options: RetrieveOptions & { readonly signal?: AbortSignal }): Promise<Array<SearchHit>> => {
  const { minScore, topK } = settings(options)
  return options.index.query(query, topK, minScore, options.signal === undefined ? {} : { signal: options.signal })
}

/**
 * Search and format the results as text (see {@link OutputFormat}).
 *
 * @since 0.1.0
 * @category retrieval
 * @example
 * ```ts
 * import { SimpleIndex, retrieve } from "lambdagent/rag"
 * console.log(await retrieve("green tea", { index: SimpleIndex.memory() })) // No relevant passages found for "green tea".
 * ```
 */
export const retrieve = async (query: string, options: RetrieveOptions & { readonly signal?: AbortSignal }): Promise<string> =>
  formatHits(await search(query, options), settings(options).format, query)

/**
 * The non-agentic mode: search with the whole input and return the input with the context in
 * front, exactly
 *
 * ```text
 * [Retrieved Context]
 * <passages in the chosen format, or: No relevant passages found for "<input>".>
 *
 * [Question]
 * <input>
 * ```
 *
 * @since 0.1.0
 * @category retrieval
 * @example
 * ```ts
 * import { SimpleIndex, retrieveContext } from "lambdagent/rag"
 * const prompt = await retrieveContext("How long do I steep green tea?", { index: SimpleIndex.memory() })
 * console.log(prompt.startsWith("[Retrieved Context]\n")) // true
 * ```
 */
export const retrieveContext = async (input: string, options: RetrieveOptions & { readonly signal?: AbortSignal }): Promise<string> =>
  contextPrompt(input, await retrieve(input, options))

/**
 * The `rag_retrieve` tool (kind `rag`): takes a query and answers with the formatted passages.
 * Give it to an agent to let it decide when to search.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tools } from "lambdagent"
 * import { SimpleIndex, ingest, ragTool } from "lambdagent/rag"
 * const index = SimpleIndex.memory()
 * await index.rebuild((await ingest("docs")).chunks)
 * const tool = ragTool({ index, topK: 3 })
 * const text = await Effect.runPromise(Tools.call(tool, "how do I install it?"))
 * ```
 */
export const ragTool = (options: RagToolOptions): Tools.ToolDefinition<string> => {
  const { format, minScore, topK } = settings(options)
  const description =
    options.description ??
    `Search the knowledge base and return the ${topK} most relevant passages, each with its source. ` +
      `Input: a search query in plain words (for example the question, or its key terms).`
  return Tools.define<string>({
    name: options.name ?? "rag_retrieve",
    kind: "rag",
    description,
    input: RagQueryInput,
    source: `${options.index.backend}:${options.index.name}`,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    run: (query, { signal }) => retrieve(query, { ...options, topK, minScore, format, signal })
  })
}
