/**
 * The work behind `lambdagent rag index <source>`, `lambdagent rag query <question>` and
 * `lambdagent rag eval`: each returns printable text and a JSON-ready summary, and fails only with
 * {@link RagError}.
 *
 * @since 0.1.0
 * @module
 */
import * as path from "node:path"
import { defaultChunkOverlap } from "./chunk.ts"
import type { Embeddings } from "./Embeddings.ts"
import { type EvaluationMiss, type EvaluationRow, evaluate, evaluationTable, loadQuestions } from "./evaluate.ts"
import { type RetrievalMode, retrievalModes } from "./fusion.ts"
import { formatHits, type JsonResult, type OutputFormat, toJsonResults } from "./format.ts"
import { chunkSource, type SkippedFile } from "./ingest.ts"
import { type EmbeddingsSettings, openIndex } from "./open.ts"
import { errorMessage, isRagError, RagError } from "./RagError.ts"
import { checkQueryArgs } from "./RetrievalIndex.ts"

/**
 * Default index directory of the CLI for the `simple` backend: `.lambdagent/rag`.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { defaultPersistDirectory } from "lambdagent/rag"
 * console.log(defaultPersistDirectory.simple, defaultPersistDirectory.chroma) // .lambdagent/rag .lambdagent/chroma
 * ```
 */
export const defaultPersistDirectory = { simple: ".lambdagent/rag", chroma: ".lambdagent/chroma" } as const

/**
 * Where the index lives; shared by both commands.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { IndexLocationOptions } from "lambdagent/rag"
 * const o: IndexLocationOptions = { backend: "simple", persistDirectory: ".rag", name: "docs" }
 * ```
 */
export interface IndexLocationOptions {
  /** Default `simple`. */
  readonly backend?: "simple" | "chroma"
  /** Default {@link defaultPersistDirectory} for the backend (relative to `baseDir`). Ignored by `chroma` when `chromaUrl` is given. */
  readonly persistDirectory?: string
  /** Default `default`. */
  readonly name?: string
  /** A running Chroma server; default `CHROMA_URL`, else a local server on `persistDirectory`. */
  readonly chromaUrl?: string
  /** Embeddings of `vector` and `hybrid`; default the offline word vectors. Must be the same for `index` and `query`. */
  readonly embeddings?: EmbeddingsSettings | Embeddings
  /** `simple`: default `hybrid`; `chroma`: `vector` only. */
  readonly mode?: RetrievalMode
  /** Milliseconds per Chroma request; default 30 000. */
  readonly timeoutMs?: number
  /** Directory relative paths are resolved against; default the working directory. */
  readonly baseDir?: string
  readonly signal?: AbortSignal
}

/**
 * Options of {@link indexCommand}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { IndexCommandOptions } from "lambdagent/rag"
 * const o: IndexCommandOptions = { chunkSize: 800, chunkOverlap: 100, onFileError: "skip" }
 * ```
 */
export interface IndexCommandOptions extends IndexLocationOptions {
  readonly chunkSize?: number
  readonly chunkOverlap?: number
  readonly maxFileBytes?: number
  /** `fail` (default) or `skip` files that cannot be read. */
  readonly onFileError?: "fail" | "skip"
}

/**
 * What `rag index` did.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { IndexSummary } from "lambdagent/rag"
 * const s: IndexSummary = { backend: "simple", name: "default", location: ".lambdagent/rag/default.json", files: 3, chunks: 12, skipped: [], ms: 20 }
 * ```
 */
export interface IndexSummary {
  readonly backend: "simple" | "chroma"
  readonly name: string
  readonly location: string
  readonly files: number
  readonly chunks: number
  readonly skipped: ReadonlyArray<SkippedFile>
  readonly ms: number
}

/**
 * A command's output: `text` for people, `json` for `--json`.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { CommandResult } from "lambdagent/rag"
 * const r: CommandResult<{ ok: boolean }> = { text: "ok", json: { ok: true } }
 * ```
 */
export interface CommandResult<J> {
  readonly text: string
  readonly json: J
}

const asRagError = (cause: unknown): RagError => (isRagError(cause) ? cause : new RagError({ reason: "BackendFailed", message: errorMessage(cause), cause }))

const locate = (options: IndexLocationOptions) => {
  const backend = options.backend ?? "simple"
  if (backend !== "simple" && backend !== "chroma") {
    throw new RagError({ reason: "InvalidConfig", message: `unknown backend ${JSON.stringify(backend)}: use simple or chroma` })
  }
  const baseDir = options.baseDir ?? process.cwd()
  const persistDirectory = options.persistDirectory ?? defaultPersistDirectory[backend]
  return openIndex({
    backend,
    name: options.name ?? "default",
    persistDirectory: path.resolve(baseDir, persistDirectory),
    ...(options.chromaUrl === undefined ? {} : { chromaUrl: options.chromaUrl }),
    ...(options.embeddings === undefined ? {} : { embeddings: options.embeddings }),
    ...(options.mode === undefined ? {} : { mode: options.mode }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs })
  })
}

/** A location for messages: paths inside `baseDir` are shown relative to it. */
const displayLocation = (location: string, baseDir: string): string => location.split(`${path.resolve(baseDir)}${path.sep}`).join("")

/**
 * Index a source (files or directories): read, chunk, and atomically replace the index. The old
 * index stays in place if anything fails.
 *
 * @since 0.1.0
 * @category commands
 * @example
 * ```ts
 * import { indexCommand } from "lambdagent/rag"
 * const { text } = await indexCommand("docs", { backend: "simple", persistDirectory: ".rag" })
 * console.log(text) // Indexed 12 chunks from 3 files into simple index "default" at .rag/default.json in 15 ms.
 * ```
 */
export const indexCommand = async (source: string | ReadonlyArray<string>, options: IndexCommandOptions = {}): Promise<CommandResult<IndexSummary>> => {
  const baseDir = options.baseDir ?? process.cwd()
  try {
    const chunkSize = options.chunkSize ?? 1000
    const { chunks, scan, skipped } = await chunkSource(source, {
      baseDir,
      chunkSize,
      chunkOverlap: options.chunkOverlap ?? Math.min(defaultChunkOverlap, Math.floor(chunkSize / 4)),
      ...(options.maxFileBytes === undefined ? {} : { maxFileBytes: options.maxFileBytes }),
      ...(options.onFileError === undefined ? {} : { onFileError: options.onFileError }),
      ...(options.signal === undefined ? {} : { signal: options.signal })
    })
    const opened = locate(options)
    try {
      const report = await opened.index.rebuild(chunks, {
        fingerprint: scan.fingerprint,
        ...(options.signal === undefined ? {} : { signal: options.signal })
      })
      const files = scan.files.length - skipped.filter((s) => scan.files.some((f) => f.path === s.path)).length
      const summary: IndexSummary = {
        backend: options.backend ?? "simple",
        name: opened.index.name,
        location: displayLocation(opened.location, baseDir),
        files,
        chunks: report.chunks,
        skipped,
        ms: Math.round(report.ms)
      }
      const lines = [
        `Indexed ${summary.chunks} chunk${summary.chunks === 1 ? "" : "s"} from ${files} file${files === 1 ? "" : "s"} into ${summary.backend} index "${summary.name}" at ${summary.location} in ${summary.ms} ms.`
      ]
      if (skipped.length > 0) {
        lines.push(`Skipped ${skipped.length}:`)
        for (const s of skipped) lines.push(`  ${s.path}: ${s.reason}`)
      }
      return { text: lines.join("\n"), json: summary }
    } finally {
      await opened.close()
    }
  } catch (cause) {
    throw asRagError(cause)
  }
}

/**
 * Options of {@link queryCommand}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { QueryCommandOptions } from "lambdagent/rag"
 * const o: QueryCommandOptions = { topK: 5, minScore: 1, format: "plain" }
 * ```
 */
export interface QueryCommandOptions extends IndexLocationOptions {
  /** Default 3. */
  readonly topK?: number
  /** Default 0. */
  readonly minScore?: number
  /** Format of `text`; default `numbered`. */
  readonly format?: OutputFormat
}

/**
 * What `rag query` found.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { QuerySummary } from "lambdagent/rag"
 * const s: QuerySummary = { query: "tea", backend: "simple", name: "default", indexed: 0, results: [] }
 * ```
 */
export interface QuerySummary {
  readonly query: string
  readonly backend: "simple" | "chroma"
  readonly name: string
  /** Chunks in the index. */
  readonly indexed: number
  readonly results: ReadonlyArray<JsonResult>
}

/**
 * Query an index built by {@link indexCommand}. An empty or missing index is not an error: the
 * text says there are no results and how to build the index.
 *
 * @since 0.1.0
 * @category commands
 * @example
 * ```ts
 * import { queryCommand } from "lambdagent/rag"
 * const { text, json } = await queryCommand("how do I install it?", { persistDirectory: ".rag", topK: 3 })
 * console.log(text)
 * ```
 */
export const queryCommand = async (question: string, options: QueryCommandOptions = {}): Promise<CommandResult<QuerySummary>> => {
  const baseDir = options.baseDir ?? process.cwd()
  try {
    if (question.trim() === "") throw new RagError({ reason: "InvalidConfig", message: "the question is empty" })
    checkQueryArgs(options.topK ?? 3, options.minScore ?? 0)
    const opened = locate(options)
    try {
      const callOptions = options.signal === undefined ? {} : { signal: options.signal }
      const indexed = await opened.index.count(callOptions)
      const hits = indexed === 0 ? [] : await opened.index.query(question, options.topK ?? 3, options.minScore ?? 0, callOptions)
      const summary: QuerySummary = {
        query: question,
        backend: options.backend ?? "simple",
        name: opened.index.name,
        indexed,
        results: toJsonResults(hits)
      }
      const text =
        indexed === 0
          ? `No results: the ${summary.backend} index "${summary.name}" at ${displayLocation(opened.location, baseDir)} is empty or was never built. Build it with \`lambdagent rag index <source>\`.`
          : formatHits(hits, options.format ?? "numbered", question)
      return { text, json: summary }
    } finally {
      await opened.close()
    }
  } catch (cause) {
    throw asRagError(cause)
  }
}

/**
 * Options of {@link evalCommand}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { EvalCommandOptions } from "lambdagent/rag"
 * const o: EvalCommandOptions = { questions: "questions.json", modes: ["bm25", "hybrid"] }
 * ```
 */
export interface EvalCommandOptions extends Omit<IndexLocationOptions, "mode"> {
  /** The labelled questions (JSON); default `questions.json` (relative to `baseDir`). */
  readonly questions?: string
  /** Default: every mode the backend answers (`simple`: bm25, vector, hybrid; `chroma`: vector). */
  readonly modes?: ReadonlyArray<RetrievalMode>
}

/**
 * What `rag eval` measured.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { EvalSummary } from "lambdagent/rag"
 * const s: EvalSummary = { backend: "simple", name: "default", indexed: 94, questions: 98, rows: [], misses: [] }
 * ```
 */
export interface EvalSummary {
  readonly backend: "simple" | "chroma"
  readonly name: string
  /** Chunks in the index. */
  readonly indexed: number
  readonly questions: number
  readonly rows: ReadonlyArray<EvaluationRow>
  readonly misses: ReadonlyArray<EvaluationMiss>
}

/**
 * Measure an index built by {@link indexCommand} against labelled questions: recall@1, recall@3
 * and MRR per kind of question and per mode. An empty index is an `IndexNotFound` error.
 *
 * @since 0.2.0
 * @category commands
 * @example
 * ```ts
 * import { evalCommand } from "lambdagent/rag"
 * const { text } = await evalCommand({ questions: "examples/rag/questions.json" })
 * console.log(text)
 * ```
 */
export const evalCommand = async (options: EvalCommandOptions = {}): Promise<CommandResult<EvalSummary>> => {
  const baseDir = options.baseDir ?? process.cwd()
  try {
    const backend = options.backend ?? "simple"
    const modes = options.modes ?? (backend === "chroma" ? ["vector" as const] : retrievalModes)
    for (const mode of modes) {
      if (!retrievalModes.includes(mode)) {
        throw new RagError({ reason: "InvalidConfig", message: `unknown mode ${JSON.stringify(mode)}: use ${retrievalModes.join(", ")}` })
      }
    }
    const questions = await loadQuestions(path.resolve(baseDir, options.questions ?? "questions.json"))
    const needsVectors = modes.some((m) => m !== "bm25")
    const opened = locate({ ...options, mode: backend === "chroma" ? "vector" : needsVectors ? "hybrid" : "bm25" })
    try {
      const callOptions = options.signal === undefined ? {} : { signal: options.signal }
      const indexed = await opened.index.count(callOptions)
      if (indexed === 0) {
        throw new RagError({
          reason: "IndexNotFound",
          message: `the ${backend} index "${opened.index.name}" at ${displayLocation(opened.location, baseDir)} is empty or was never built: build it with \`lambdagent rag index <source>\``
        })
      }
      const { rows, misses } = await evaluate(opened.index, questions, modes, callOptions)
      const summary: EvalSummary = { backend, name: opened.index.name, indexed, questions: questions.length, rows, misses }
      const text = [
        `Evaluated ${questions.length} question${questions.length === 1 ? "" : "s"} against ${backend} index "${summary.name}" (${indexed} chunks).`,
        "",
        evaluationTable(rows)
      ].join("\n")
      return { text, json: summary }
    } finally {
      await opened.close()
    }
  } catch (cause) {
    throw asRagError(cause)
  }
}
