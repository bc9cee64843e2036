/**
 * Labelled evaluation of retrieval: questions with the document(s) that answer them, and recall@1,
 * recall@3 and mean reciprocal rank per kind of question and per retrieval mode.
 *
 * A question is answered at `k` when one of the first `k` retrieved chunks comes from an expected
 * document; its reciprocal rank is `1 / r` for the first such chunk at rank `r` (up to 10), else 0.
 *
 * @since 0.2.0
 * @module
 */
import * as fs from "node:fs/promises"
import * as z from "zod"
import type { RetrievalMode } from "./fusion.ts"
import { errorMessage, RagError } from "./RagError.ts"
import type { RetrievalIndex } from "./RetrievalIndex.ts"

/**
 * One labelled question: its text, its kind (any label; the example set uses `lexical`,
 * `paraphrase` and `confusable`) and the document(s) that answer it, as paths relative to the
 * indexed source or file names.
 *
 * @since 0.2.0
 * @category schemas
 * @example
 * ```ts
 * import { LabelledQuestion } from "lambdagent/rag"
 * LabelledQuestion.parse({ question: "How do I get my money back?", kind: "paraphrase", source: "refunds-annual.md" })
 * ```
 */
export const LabelledQuestion = z.strictObject({
  question: z.string().trim().min(1),
  kind: z.string().min(1).default("unlabelled"),
  source: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)])
})

/**
 * A parsed labelled question.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { LabelledQuestion } from "lambdagent/rag"
 * const q: LabelledQuestion = { question: "Why are leaves green?", kind: "lexical", source: "photosynthesis.txt" }
 * ```
 */
export type LabelledQuestion = z.output<typeof LabelledQuestion>

/**
 * Read a JSON array of labelled questions; fails with `SourceNotFound`, `SourceUnreadable` or
 * `InvalidSource` (with the first problems listed).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { loadQuestions } from "lambdagent/rag"
 * const questions = await loadQuestions("examples/rag/questions.json")
 * ```
 */
export const loadQuestions = async (file: string): Promise<Array<LabelledQuestion>> => {
  let raw: string
  try {
    raw = await fs.readFile(file, "utf8")
  } catch (cause) {
    const missing = (cause as { code?: unknown }).code === "ENOENT"
    throw new RagError({
      reason: missing ? "SourceNotFound" : "SourceUnreadable",
      message: missing ? `no such questions file: ${file}` : `cannot read ${file}: ${errorMessage(cause)}`,
      path: file,
      cause
    })
  }
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch (cause) {
    throw new RagError({ reason: "InvalidSource", message: `${file} is not JSON: ${errorMessage(cause)}`, path: file, cause })
  }
  const parsed = z.array(LabelledQuestion).min(1).safeParse(json)
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`)
    throw new RagError({
      reason: "InvalidSource",
      message: `${file} is not a list of labelled questions ({question, kind?, source}): ${problems.join("; ")}`,
      path: file
    })
  }
  return parsed.data
}

/**
 * Scores of one mode over one kind of question (or `all`).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { EvaluationRow } from "lambdagent/rag"
 * const r: EvaluationRow = { mode: "hybrid", kind: "paraphrase", questions: 30, recallAt1: 0.8, recallAt3: 1, mrr: 0.9 }
 * ```
 */
export interface EvaluationRow {
  readonly mode: RetrievalMode
  readonly kind: string
  readonly questions: number
  readonly recallAt1: number
  readonly recallAt3: number
  readonly mrr: number
}

/**
 * A question not answered within the first three chunks.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { EvaluationMiss } from "lambdagent/rag"
 * const m: EvaluationMiss = { mode: "bm25", kind: "paraphrase", question: "…", expected: ["a.md"], retrieved: ["b.md"] }
 * ```
 */
export interface EvaluationMiss {
  readonly mode: RetrievalMode
  readonly kind: string
  readonly question: string
  readonly expected: ReadonlyArray<string>
  /** Sources of the first three chunks. */
  readonly retrieved: ReadonlyArray<string>
}

/**
 * The outcome of {@link evaluate}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Evaluation } from "lambdagent/rag"
 * const e: Evaluation = { rows: [], misses: [] }
 * ```
 */
export interface Evaluation {
  /** Per mode: one row per kind (in order of first appearance), then `all`. */
  readonly rows: ReadonlyArray<EvaluationRow>
  readonly misses: ReadonlyArray<EvaluationMiss>
}

const depth = 10

/** Whether a chunk's source is one of the expected documents (a relative path or a file name). */
const matches = (source: string, expected: string): boolean => {
  const s = source.replaceAll("\\", "/")
  const e = expected.replaceAll("\\", "/").replace(/^\.\//, "")
  return s === e || s.endsWith(`/${e}`)
}

/**
 * Run every question against `index` in each of `modes` and score the rankings.
 *
 * @since 0.2.0
 * @category evaluation
 * @example
 * ```ts
 * import { evaluate, loadQuestions, SimpleIndex } from "lambdagent/rag"
 * const index = SimpleIndex.make({ persistDirectory: ".lambdagent/rag" })
 * const { rows } = await evaluate(index, await loadQuestions("questions.json"), ["bm25"])
 * ```
 */
export const evaluate = async (
  index: RetrievalIndex,
  questions: ReadonlyArray<LabelledQuestion>,
  modes: ReadonlyArray<RetrievalMode>,
  options?: { readonly signal?: AbortSignal }
): Promise<Evaluation> => {
  const rows: Array<EvaluationRow> = []
  const misses: Array<EvaluationMiss> = []
  const kinds = [...new Set(questions.map((q) => q.kind))]
  for (const mode of modes) {
    const ranks: Array<{ kind: string; rank: number }> = []
    for (const q of questions) {
      const hits = await index.query(q.question, depth, -Number.MAX_VALUE, {
        mode,
        ...(options?.signal === undefined ? {} : { signal: options.signal })
      })
      const expected = typeof q.source === "string" ? [q.source] : q.source
      const at = hits.findIndex((h) => expected.some((e) => matches(h.chunk.metadata.source, e)))
      const rank = at < 0 ? 0 : at + 1
      ranks.push({ kind: q.kind, rank })
      if (rank === 0 || rank > 3) {
        misses.push({ mode, kind: q.kind, question: q.question, expected, retrieved: hits.slice(0, 3).map((h) => h.chunk.metadata.source) })
      }
    }
    for (const kind of [...kinds, "all"]) {
      const of = ranks.filter((r) => kind === "all" || r.kind === kind)
      const share = (hit: (rank: number) => boolean): number => of.filter((r) => hit(r.rank)).length / of.length
      rows.push({
        mode,
        kind,
        questions: of.length,
        recallAt1: share((r) => r === 1),
        recallAt3: share((r) => r >= 1 && r <= 3),
        mrr: of.reduce((sum, r) => sum + (r.rank === 0 ? 0 : 1 / r.rank), 0) / of.length
      })
    }
  }
  return { rows, misses }
}

/**
 * The rows as an aligned text table.
 *
 * @since 0.2.0
 * @category evaluation
 * @example
 * ```ts
 * import { evaluationTable } from "lambdagent/rag"
 * console.log(evaluationTable([{ mode: "bm25", kind: "all", questions: 2, recallAt1: 0.5, recallAt3: 1, mrr: 0.75 }]))
 * ```
 */
export const evaluationTable = (rows: ReadonlyArray<EvaluationRow>): string => {
  const header = ["mode", "kind", "questions", "recall@1", "recall@3", "MRR"]
  const body = rows.map((r) => [r.mode, r.kind, String(r.questions), r.recallAt1.toFixed(3), r.recallAt3.toFixed(3), r.mrr.toFixed(3)])
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)))
  return [header, ...body]
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd()
    )
    .join("\n")
}
