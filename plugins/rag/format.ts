/**
 * How retrieved chunks are shown to a model or a person: `numbered`, `plain` or `json`.
 *
 * @since 0.1.0
 * @module
 */
import type { SearchHit } from "./RetrievalIndex.ts"

/**
 * An output format.
 *
 * - `numbered` (default): each passage under a header line
 *   `[Source 1, score=4.213 (docs/tea.md > Brewing > Green tea, chunk 3)]`, passages separated by a
 *   blank line. The header gives the file, the markdown section path when there is one, and the
 *   chunk's index in its file.
 * - `plain`: the passages only, separated by a blank line.
 * - `json`: `{"query": "…", "results": [{"rank", "score", "source", "chunk", "start", "end", "section"?, "text"}]}`.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { OutputFormat } from "lambdagent/rag"
 * const f: OutputFormat = "json"
 * ```
 */
export type OutputFormat = "numbered" | "plain" | "json"

/**
 * One result in the `json` format.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { JsonResult } from "lambdagent/rag"
 * const r: JsonResult = { rank: 1, score: 3.2, source: "tea.md", chunk: 0, start: 0, end: 40, section: ["Tea"], text: "…" }
 * ```
 */
export interface JsonResult {
  readonly rank: number
  readonly score: number
  readonly source: string
  readonly chunk: number
  readonly start: number
  readonly end: number
  readonly section?: ReadonlyArray<string>
  readonly text: string
}

/**
 * The text of an answer with no results, in the `numbered` and `plain` formats.
 *
 * @since 0.1.0
 * @category formatting
 * @example
 * ```ts
 * import { noResults } from "lambdagent/rag"
 * console.log(noResults("tea")) // No relevant passages found for "tea".
 * ```
 */
export const noResults = (query: string): string => `No relevant passages found for ${JSON.stringify(query)}.`

const roundScore = (score: number): number => Math.round(score * 1000) / 1000

/**
 * Hits as `json` results.
 *
 * @since 0.1.0
 * @category formatting
 * @example
 * ```ts
 * import { toJsonResults } from "lambdagent/rag"
 * console.log(toJsonResults([])) // []
 * ```
 */
export const toJsonResults = (hits: ReadonlyArray<SearchHit>): Array<JsonResult> =>
  hits.map((hit, i) => {
    const m = hit.chunk.metadata
    return {
      rank: i + 1,
      score: roundScore(hit.score),
      source: m.source,
      chunk: m.index,
      start: m.start,
      end: m.end,
      ...(m.section !== undefined && m.section.length > 0 ? { section: m.section } : {}),
      text: hit.chunk.text
    }
  })

/**
 * The header line of a passage in the `numbered` format.
 *
 * @since 0.1.0
 * @category formatting
 * @example
 * ```ts
 * import { sourceHeader } from "lambdagent/rag"
 * const hit = { score: 1.23456, chunk: { id: "a.md#2", text: "…", metadata: { source: "a.md", format: "markdown" as const, index: 2, start: 0, end: 1, heading: "Use", section: ["Guide", "Use"] } } }
 * console.log(sourceHeader(hit, 1)) // [Source 1, score=1.235 (a.md > Guide > Use, chunk 2)]
 * ```
 */
export const sourceHeader = (hit: SearchHit, rank: number): string => {
  const m = hit.chunk.metadata
  const where = [m.source, ...(m.section ?? [])].join(" > ")
  return `[Source ${rank}, score=${roundScore(hit.score).toFixed(3)} (${where}, chunk ${m.index})]`
}

/**
 * Format hits for a query. With no hits, `numbered` and `plain` give {@link noResults}, `json`
 * gives an empty `results` list.
 *
 * @since 0.1.0
 * @category formatting
 * @example
 * ```ts
 * import { formatHits } from "lambdagent/rag"
 * console.log(formatHits([], "numbered", "tea")) // No relevant passages found for "tea".
 * console.log(formatHits([], "json", "tea")) // {"query":"tea","results":[]}
 * ```
 */
export const formatHits = (hits: ReadonlyArray<SearchHit>, format: OutputFormat, query: string): string => {
  switch (format) {
    case "json":
      return JSON.stringify({ query, results: toJsonResults(hits) })
    case "plain":
      return hits.length === 0 ? noResults(query) : hits.map((h) => h.chunk.text).join("\n\n")
    case "numbered":
      return hits.length === 0 ? noResults(query) : hits.map((h, i) => `${sourceHeader(h, i + 1)}\n${h.chunk.text}`).join("\n\n")
  }
}

/**
 * The input of the non-agentic mode: retrieved context, then the question.
 *
 * ```text
 * [Retrieved Context]
 * <formatted passages, or the no-results line>
 *
 * [Question]
 * <input>
 * ```
 *
 * @since 0.1.0
 * @category formatting
 * @example
 * ```ts
 * import { contextPrompt } from "lambdagent/rag"
 * console.log(contextPrompt("Why?", "[Source 1, score=1.000 (a.txt, chunk 0)]\nBecause."))
 * ```
 */
export const contextPrompt = (input: string, context: string): string => `[Retrieved Context]\n${context}\n\n[Question]\n${input}`
