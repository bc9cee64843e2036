/**
 * `lambdagent rag index <source> [--backend B] [--mode M]`, `lambdagent rag query "<question>" [--top-k N]`
 * and `lambdagent rag eval [--questions FILE] [--mode M]`.
 */
import type { Command } from "commander"
import type { Registration } from "./shell.ts"
import { CliError, ExitCode } from "./io.ts"
import { finite, integer, oneOf, textOrJson } from "./options.ts"

type Mode = "bm25" | "vector" | "hybrid"
const modes: ReadonlyArray<Mode> = ["bm25", "vector", "hybrid"]

interface Location {
  readonly backend?: "simple" | "chroma"
  readonly mode?: Mode
  readonly persistDirectory?: string
  readonly name?: string
  readonly chromaUrl?: string
  readonly format: "text" | "json"
}

const location = (options: Location) => {
  return {
    ...(options.backend !== undefined ? { backend: options.backend } : {}),
    ...(options.mode !== undefined ? { mode: options.mode } : {}),
    ...(options.persistDirectory !== undefined ? { persistDirectory: options.persistDirectory } : {}),
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.chromaUrl !== undefined ? { chromaUrl: options.chromaUrl } : {})
  }
}

const withLocation = (command: Command) =>
  command
    .option("--backend <backend>", "simple (embedded BM25 and vectors, default) or chroma", oneOf("--backend", ["simple", "chroma"]))
    .option("--mode <mode>", "hybrid (default for simple), vector (chroma) or bm25", oneOf("--mode", modes))
    .option("--persist-directory <dir>", "where the index lives")
    .option("--name <name>", "index name")
    .option("--chroma-url <url>", "a running Chroma server (default: start a local one)")
    .option("--format <format>", "text or json", textOrJson, "text")

export const registerRag: Registration = (program, run) => {
  const rag = program.command("rag").description("retrieval over your documents")
  withLocation(
    rag
      .command("index")
      .description("index files or directories (text, markdown, JSON)")
      .argument("<source...>", "files or directories")
      .option("--chunk-size <n>", "characters per chunk", integer("--chunk-size", 1))
      .option("--chunk-overlap <n>", "characters shared by neighbouring chunks", integer("--chunk-overlap", 0))
  ).action(async (sources: Array<string>, options: Location & { chunkSize?: number; chunkOverlap?: number }) =>
    run(
      async () => {
        const plugin = await import("lambdagent/rag")
        const { chunkOverlap, chunkSize } = options
        const result = await plugin.indexCommand(sources, {
          ...location(options),
          ...(chunkSize !== undefined ? { chunkSize } : {}),
          ...(chunkOverlap !== undefined ? { chunkOverlap } : {})
        })
        process.stdout.write(options.format === "json" ? JSON.stringify(result.json) + "\n" : result.text.replace(/\n?$/, "\n"))
      },
      () => options.format
    )
  )
  withLocation(
    rag
      .command("query")
      .description("retrieve the passages that best answer a question")
      .argument("<question>", "the question")
      .option("--top-k <n>", "how many passages (default 3)", integer("--top-k", 1))
      .option("--min-score <s>", "drop passages scoring below this", finite("--min-score"))
  ).action(async (question: string, options: Location & { topK?: number; minScore?: number }) =>
    run(
      async () => {
        const plugin = await import("lambdagent/rag")
        const { minScore, topK } = options
        const result = await plugin.queryCommand(question, {
          ...location(options),
          ...(topK !== undefined ? { topK } : {}),
          ...(minScore !== undefined ? { minScore } : {})
        })
        process.stdout.write(options.format === "json" ? JSON.stringify(result.json) + "\n" : result.text.replace(/\n?$/, "\n"))
      },
      () => options.format
    )
  )
  withLocation(
    rag
      .command("eval")
      .description("measure retrieval on labelled questions: recall@1, recall@3 and MRR per kind")
      .option("--questions <file>", "JSON list of {question, kind, source} (default questions.json)")
  ).action(async (options: Location & { questions?: string }) =>
    run(
      async () => {
        const plugin = await import("lambdagent/rag")
        const { mode, ...where } = location(options)
        const result = await plugin
          .evalCommand({
            ...where,
            ...(mode !== undefined ? { modes: [mode] } : {}),
            ...(options.questions !== undefined ? { questions: options.questions } : {})
          })
          .catch((cause: unknown) => {
            if (plugin.isRagError(cause) && cause.reason === "SourceNotFound") throw new CliError(cause.message, ExitCode.notFound, "FileNotFound")
            throw cause
          })
        process.stdout.write(options.format === "json" ? JSON.stringify(result.json) + "\n" : result.text.replace(/\n?$/, "\n"))
      },
      () => options.format
    )
  )
}
