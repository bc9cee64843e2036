/**
 * `lambdagent/rag`: retrieval-augmented generation for lambdagent agents.
 *
 * Ingest text, markdown and JSON into chunks, index them in an embedded hybrid index (`simple`:
 * BM25 and offline word-vector embeddings, fused) or a Chroma server (`chroma`), and give agents a
 * `rag_retrieve` tool or context-prepended inputs. `lambdagent rag eval` measures retrieval on
 * labelled questions.
 *
 * @since 0.1.0
 * @module lambdagent/rag
 */
export {
  type Chunk,
  chunkDocument,
  type ChunkMetadata,
  type ChunkOptions,
  defaultChunkOverlap,
  defaultChunkSize,
  type DocumentFormat,
  flattenJson,
  type MarkdownSection,
  markdownSections,
  type Span,
  splitSpans
} from "./chunk.ts"
export * as ChromaIndex from "./ChromaIndex.ts"
export * as ChromaServer from "./ChromaServer.ts"
export {
  type CommandResult,
  defaultPersistDirectory,
  evalCommand,
  type EvalCommandOptions,
  type EvalSummary,
  indexCommand,
  type IndexCommandOptions,
  type IndexLocationOptions,
  type IndexSummary,
  queryCommand,
  type QueryCommandOptions,
  type QuerySummary
} from "./commands.ts"
export {
  EmbeddingsConfig,
  fromConfig,
  type FromConfigOptions,
  parseRagConfig,
  RagConfig,
  type RagConfigInput,
  type RagRuntime
} from "./config.ts"
export * as Embeddings from "./Embeddings.ts"
export {
  evaluate,
  type Evaluation,
  type EvaluationMiss,
  type EvaluationRow,
  evaluationTable,
  LabelledQuestion,
  loadQuestions
} from "./evaluate.ts"
export {
  checkFusion,
  defaultFusion,
  type FusionCandidate,
  type FusionOptions,
  fuseScores,
  type RetrievalMode,
  retrievalModes,
  vectorShare
} from "./fusion.ts"
export {
  contextPrompt,
  formatHits,
  type JsonResult,
  noResults,
  type OutputFormat,
  sourceHeader,
  toJsonResults
} from "./format.ts"
export {
  chunkFiles,
  chunkSource,
  defaultMaxFileBytes,
  formatOf,
  ingest,
  type IngestOptions,
  type IngestResult,
  readDocument,
  scanSource,
  type SkippedFile,
  type SourceFile,
  type SourceScan
} from "./ingest.ts"
export { embeddingsFrom, type EmbeddingsSettings, openIndex, type OpenedIndex, type OpenIndexOptions } from "./open.ts"
export { isRagError, RagError, RagErrorReason } from "./RagError.ts"
export type { BuildReport, CallOptions, QueryOptions, RetrievalIndex, SearchHit } from "./RetrievalIndex.ts"
export * as SimpleIndex from "./SimpleIndex.ts"
export { searchTerms } from "./terms.ts"
export {
  RagQueryInput,
  ragTool,
  type RagToolOptions,
  retrieve,
  retrieveContext,
  type RetrieveOptions,
  search
} from "./tool.ts"
export * as VectorStore from "./VectorStore.ts"
export * as WordVectors from "./WordVectors.ts"
