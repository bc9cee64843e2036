/**
 * `lambdagent rag index <source> [--backend B] [--mode M]`, `lambdagent rag query "<question>" [--top-k N]`
 * and `lambdagent rag eval [--questions FILE] [--mode M]`.
 */
import type { Command } from "commander"
import type { Registration } from "./shell.ts"
import { CliError, ExitCode } from "./io.ts"


type Mode = "bm25" | "vector" | "hybrid"
const modes: ReadonlyArray<Mode> = ["bm25", "vector", "hybrid"]

interface Location {
  readonly backend?: "simple" | "chroma"
  readonly mode?: string
  readonly persistDirectory?: string
  readonly name?: string
  readonly chromaUrl?: string
  readonly format: "text" | "json"
}

const location = (options: Location) => {
  if (options.backend !== undefined && options.backend !== "simple" && options.backend !== "chroma") {
    throw new CliError(`--backend expects simple or chroma, got ${JSON.stringify(options.backend)}`, ExitCode.failed, "UsageError")
  }
  return {
    ...(options.backend !== undefined ? { backend: options.backend } : {}),
    ...(options.mode !== undefined ? { mode: modeOf(options.mode) } : {}),
    ...(options.persistDirectory !== undefined ? { persistDirectory: options.persistDirectory } : {}),
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.chromaUrl !== undefined ? { chromaUrl: options.chromaUrl } : {})
  }
}

const modeOf = (text: string): Mode => {
  const mode = modes.find((m) => m === text)
  if (mode === undefined) throw new CliError(`--mode expects bm25, vector or hybrid, got ${JSON.stringify(text)}`, ExitCode.failed, "UsageError")
  return mode
}

const positive = (text: string | undefined, flag: string): number | undefined => {
  if (text === undefined) return undefined
  const n = Number(text)
  if (!Number.isInteger(n) || n <= 0) throw new CliError(`${flag} expects a positive integer, got ${JSON.stringify(text)}`, ExitCode.failed, "UsageError")
  return n
}

const withLocation = (command: Command) =>
  command
    .option("--backend <backend>", "simple (embedded BM25 and vectors, default) or chroma")
    .option("--mode <mode>", "hybrid (default for simple), vector (chroma) or bm25")
    .option("--persist-directory <dir>", "where the index lives")
    .option("--name <name>", "index name")
    .option("--chroma-url <url>", "a running Chroma server (default: start a local one)")
    .option("--format <format>", "text or json", "text")

export const registerRag: Registration = (program, run) => {
  const rag = program.command("rag").description("retrieval over your documents")
  withLocation(
    rag.command("index")
      .description("index files or directories (text, markdown, JSON)")
      .argument("<source...>", "files or directories")
      .option("--chunk-size <n>", "characters per chunk")
      .option("--chunk-overlap <n>", "characters shared by neighbouring chunks")
  ).action(async (sources: Array<string>, options: Location & { chunkSize?: string; chunkOverlap?: string }) =>
    run(async () => {
      const plugin = await import("lambdagent/rag")
      const chunkSize = positive(options.chunkSize, "--chunk-size")
      const chunkOverlap = options.chunkOverlap === undefined ? undefined : Number(options.chunkOverlap)
      const result = await plugin.indexCommand(sources, {
        ...location(options),
        ...(chunkSize !== undefined ? { chunkSize } : {}),
        ...(chunkOverlap !== undefined && Number.isFinite(chunkOverlap) ? { chunkOverlap } : {})
      })
      process.stdout.write(options.format === "json" ? JSON.stringify(result.json) + "\n" : result.text.replace(/\n?$/, "\n"))
    }, () => options.format)
  )
  withLocation(
    rag.command("query")
      .description("retrieve the passages that best answer a question")
      .argument("<question>", "the question")
      .option("--top-k <n>", "how many passages (default 3)")
      .option("--min-score <s>", "drop passages scoring below this")
  ).action(async (question: string, options: Location & { topK?: string; minScore?: string }) =>
    run(async () => {
      const plugin = await import("lambdagent/rag")
      const topK = positive(options.topK, "--top-k")
      const minScore = options.minScore === undefined ? undefined : Number(options.minScore)
      const result = await plugin.queryCommand(question, {
        ...location(options),
        ...(topK !== undefined ? { topK } : {}),
        ...(minScore !== undefined && Number.isFinite(minScore) ? { minScore } : {})
      })
      process.stdout.write(options.format === "json" ? JSON.stringify(result.json) + "\n" : result.text.replace(/\n?$/, "\n"))
    }, () => options.format)
  )
  withLocation(
    rag.command("eval")
      .description("measure retrieval on labelled questions: recall@1, recall@3 and MRR per kind")
      .option("--questions <file>", "JSON list of {question, kind, source} (default questions.json)")
  ).action(async (options: Location & { questions?: string }) =>
    run(async () => {
      const plugin = await import("lambdagent/rag")
      const { mode, ...where } = location(options)
      const result = await plugin.evalCommand({
        ...where,
        ...(mode !== undefined ? { modes: [mode] } : {}),
        ...(options.questions !== undefined ? { questions: options.questions } : {})
      }).catch((cause: unknown) => {
        if (plugin.isRagError(cause) && cause.reason === "SourceNotFound") throw new CliError(cause.message, ExitCode.notFound, "FileNotFound")
        throw cause
      })
      process.stdout.write(options.format === "json" ? JSON.stringify(result.json) + "\n" : result.text.replace(/\n?$/, "\n"))
    }, () => options.format)
  )
}
