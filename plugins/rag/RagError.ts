/**
 * The one error type of the retrieval plugin, with a stable `reason` for each failure mode.
 *
 * Every asynchronous function of `lambdagent/rag` rejects with a {@link RagError} (never with a raw
 * `fs`, `fetch` or Chroma error): hosts switch on `reason`, people read `message`, and the original
 * error stays in `cause`.
 *
 * @since 0.1.0
 * @module
 */
import * as Schema from "effect/Schema"
import { Errors } from "lambdagent"

/**
 * Why a retrieval operation failed.
 *
 * - `SourceNotFound`: a file or directory to ingest does not exist.
 * - `SourceUnreadable`: it exists but cannot be read (permissions, not a regular file).
 * - `InvalidSource`: an unsupported file type given explicitly, or a JSON file that does not parse.
 * - `FileTooLarge`: a file is larger than `maxFileBytes`.
 * - `InvalidConfig`: bad options (chunk sizes, an unknown backend, a missing API key, …).
 * - `IndexNotFound`: querying an index that was never built.
 * - `IndexCorrupt`: a persisted index that cannot be read back.
 * - `BackendUnavailable`: the Chroma server or the embeddings endpoint refused the connection.
 * - `Timeout`: a backend or embeddings call took longer than its timeout.
 * - `BackendFailed`: the backend answered with an error.
 * - `EmbeddingFailed`: the embeddings endpoint answered with an error or a malformed body.
 * - `MissingDependency`: an optional package (`chromadb`) is not installed.
 * - `Aborted`: the caller's `AbortSignal` fired.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { RagErrorReason } from "lambdagent/rag"
 * const r: RagErrorReason = "FileTooLarge"
 * ```
 */
export type RagErrorReason = typeof RagErrorReason.Type

/**
 * The reasons of a {@link RagError}, as a schema (see {@link RagErrorReason} for what each means).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { RagErrorReason } from "lambdagent/rag"
 * RagErrorReason.literals.includes("Timeout") // true
 * ```
 */
export const RagErrorReason = Schema.Literals([
  "SourceNotFound",
  "SourceUnreadable",
  "InvalidSource",
  "FileTooLarge",
  "InvalidConfig",
  "IndexNotFound",
  "IndexCorrupt",
  "BackendUnavailable",
  "Timeout",
  "BackendFailed",
  "EmbeddingFailed",
  "MissingDependency",
  "Aborted"
])

/**
 * A failed retrieval operation. It is an `Error` (so it can be thrown and caught by promise code),
 * a tagged Effect error (so `Effect.catchTag("RagError", …)` works) and a Schema-backed lambdagent
 * error (so it encodes as JSON and `Errors.isLambdagentError` recognises it).
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { RagError } from "lambdagent/rag"
 * const e = new RagError({ reason: "SourceNotFound", message: "no such file: docs/a.md", path: "docs/a.md" })
 * console.log(e._tag, e.reason) // "RagError" "SourceNotFound"
 * ```
 */
export class RagError extends Errors.TaggedError<RagError>()("RagError", {
  reason: RagErrorReason,
  message: Schema.String,
  /** The file, directory or URL concerned, when there is one. */
  path: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * Whether a value is a {@link RagError}. Checks the tag, so it also recognises errors thrown by
 * another bundled copy of the plugin.
 *
 * @since 0.1.0
 * @category guards
 * @example
 * ```ts
 * import { isRagError } from "lambdagent/rag"
 * try {
 *   throw new Error("boom")
 * } catch (e) {
 *   console.log(isRagError(e)) // false
 * }
 * ```
 */
export const isRagError = (u: unknown): u is RagError =>
  typeof u === "object" &&
  u !== null &&
  (u as { readonly _tag?: unknown })._tag === "RagError" &&
  typeof (u as { readonly reason?: unknown }).reason === "string"

/**
 * An error's message, or its string form. Not part of the public entry point.
 *
 * @since 0.1.0
 * @category internal
 * @example
 * ```ts
 * import { errorMessage } from "./RagError.ts"
 * errorMessage(new Error("boom")) // "boom"
 * ```
 */
export const errorMessage = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/**
 * Turn an `fs` failure on `path` into a {@link RagError} (`SourceNotFound` or `SourceUnreadable`). Not part of the public entry point.
 *
 * @since 0.1.0
 * @category internal
 * @example
 * ```ts
 * import { fromFsError } from "./RagError.ts"
 * fromFsError(Object.assign(new Error("x"), { code: "EACCES" }), "a.md", "read").reason // "SourceUnreadable"
 * ```
 */
export const fromFsError = (cause: unknown, path: string, verb: "read" | "list" | "open"): RagError => {
  const code = (cause as { readonly code?: unknown } | null)?.code
  if (code === "ENOENT" || code === "ENOTDIR") {
    return new RagError({ reason: "SourceNotFound", message: `no such file or directory: ${path}`, path, cause })
  }
  if (code === "EACCES" || code === "EPERM") {
    return new RagError({ reason: "SourceUnreadable", message: `permission denied: cannot ${verb} ${path}`, path, cause })
  }
  return new RagError({
    reason: "SourceUnreadable",
    message: `cannot ${verb} ${path}: ${errorMessage(cause)}`,
    path,
    cause
  })
}

/**
 * Throw `Aborted` when the signal has fired. Not part of the public entry point.
 *
 * @since 0.1.0
 * @category internal
 * @example
 * ```ts
 * import { throwIfAborted } from "./RagError.ts"
 * throwIfAborted(AbortSignal.abort()) // throws RagError Aborted
 * ```
 */
export const throwIfAborted = (signal: AbortSignal | undefined): void => {
  if (signal?.aborted === true) {
    throw new RagError({ reason: "Aborted", message: "the retrieval was cancelled", cause: signal.reason })
  }
}

/**
 * The useful part of a fetch failure: undici hides the reason (`ECONNREFUSED`, …) in `cause`. Not part of the public entry point.
 *
 * @since 0.1.0
 * @category internal
 * @example
 * ```ts
 * import { describeFetchError } from "./RagError.ts"
 * describeFetchError(new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } })) // "ECONNREFUSED"
 * ```
 */
export const describeFetchError = (cause: unknown): string => {
  const inner = (cause as { cause?: { code?: unknown; message?: unknown } } | null)?.cause
  if (inner !== undefined && inner !== null) {
    if (typeof inner.code === "string") return `${inner.code}${typeof inner.message === "string" ? ` (${inner.message})` : ""}`
    if (typeof inner.message === "string") return inner.message
  }
  return errorMessage(cause)
}
