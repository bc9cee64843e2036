/**
 * The error thrown for a model spec string that cannot be understood.
 *
 * @since 0.1.0
 * @internal
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "../../Errors.ts"

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
export class SpecError extends TaggedError<SpecError>()("SpecError", {
  spec: Schema.String,
  message: Schema.String
}) {}
