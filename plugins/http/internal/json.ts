/**
 * JSON in and out: request bodies parsed with big integers kept exact, and responses written
 * with `bigint`s as exact integers.
 *
 * @since 0.1.0
 * @module
 */
import { type Runtime, Term, type Trace } from "lambdagent"
import { HttpFailure } from "../protocol.ts"

/**
 * Parse JSON text (keeping integers beyond 2^53 exact), failing with a 400 `InvalidJson`.
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import { parseJson } from "./json.ts"
 * parseJson('{"input": 1}') // { input: 1 }
 * ```
 */
export const parseJson = (text: string): unknown => {
  if (text.trim() === "")
    throw new HttpFailure({ status: 400, kind: "InvalidJson", message: 'the body is empty; send a JSON object such as {"input": "hello"}' })
  try {
    return Term.parseJsonText(text)
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message.replace(/^invalid JSON: /, "") : String(cause)
    throw new HttpFailure({ status: 400, kind: "InvalidJson", message: `the body is not JSON: ${detail}` })
  }
}

/**
 * JSON text of any value, with `bigint`s written as exact integers, nested any depth.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { toJsonText } from "./json.ts"
 * toJsonText({ n: 2n ** 63n - 1n }) // '{"n":9223372036854775807}'
 * ```
 */
export const toJsonText = (value: unknown): string => Term.stringify(value)

/**
 * The body of a successful run: `{ result, trace, stats }`.
 *
 * @since 0.1.0
 * @category encoding
 * @example
 * ```ts
 * import { createRuntime, Term } from "lambdagent"
 * import { runBody } from "./json.ts"
 * const output = await createRuntime().run(Term.llm({ system: "Repeat." }), "hi")
 * runBody(output) // { result: "hi", trace: [...], stats: {...} }
 * ```
 */
export const runBody = (output: Runtime.RunOutput): { result: unknown; trace: ReadonlyArray<Trace.TraceEvent>; stats: Runtime.RunOutput["stats"] } => ({
  result: output.result,
  trace: output.trace,
  stats: output.stats
})
