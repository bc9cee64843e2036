/**
 * The error thrown for a model spec string that cannot be understood.
 *
 * @since 0.1.0
 * @internal
 */
import * as Data from "effect/Data"

/**
 * A model spec (`openai:gpt-4o-mini`, `scripted:echo`, …) that names no known provider or is
 * malformed. Thrown synchronously by `Providers.fromSpec` and `Scripted.parseSpec`: a bad spec is a
 * configuration mistake, reported before anything runs.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { Providers } from "lambdagent"
 * try {
 *   Providers.fromSpec("nope:model")
 * } catch (e) {
 *   if (e instanceof Providers.SpecError) console.error(e.message)
 * }
 * ```
 */
export class SpecError extends Data.TaggedError("SpecError")<{
  readonly spec: string
  readonly message: string
}> {}
