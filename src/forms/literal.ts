/**
 * Literals: JSON scalars. Integers outside the safe range of a JavaScript number are `bigint`s;
 * the language's integers are 64-bit and never wrap.
 */
import { code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import { dataCost } from "./analysis.ts"
import type { Form } from "./Form.ts"
import type { Parser, ParseNode } from "./parse.ts"

/** An integer, string, boolean or null. */
export interface Lit {
  readonly _tag: "Lit"
  readonly value: Term.Literal
}

/**
 * A literal term.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.lit(42)
 * ```
 */
export const lit = (value: Term.Literal): Term.Term => ({ _tag: "Lit", value })

const MIN_INT64 = -(2n ** 63n)
const MAX_INT64 = 2n ** 63n - 1n

/** A literal that needs no checks beyond its type (the fast path for large data lists). */
export const isPlainLiteral = (json: unknown): json is string | boolean | null | number =>
  json === null || typeof json === "string" || typeof json === "boolean" || (typeof json === "number" && Number.isSafeInteger(json))

/** A JSON scalar as a literal (negative zero is zero); anything else is an error. */
export const parseScalar = (p: Parser, node: ParseNode): Term.Term => {
  const json = node.json
  switch (typeof json) {
    case "string":
    case "boolean":
      return lit(json)
    case "bigint":
      if (json < MIN_INT64 || json > MAX_INT64) p.fail(node, "an integer within 64 bits")
      return lit(json)
    case "number": {
      if (!Number.isInteger(json)) p.fail(node, "an integer (the language has no fractions)")
      if (Number.isSafeInteger(json)) return lit(json === 0 ? 0 : json)
      // beyond 2^53 a JavaScript number is still an exact integer: keep that value as a bigint
      const exact = BigInt(json)
      if (exact < MIN_INT64 || exact > MAX_INT64) p.fail(node, "an integer within 64 bits")
      return lit(exact)
    }
    case "object":
      if (json === null) return lit(null)
  }
  return p.fail(node, "a JSON value")
}

/** A literal as text: JSON, with `bigint`s as plain integers. */
export const literalText = (value: Term.Literal): string => (typeof value === "bigint" ? value.toString() : JSON.stringify(value))

export const litForm: Form<Lit> = {
  tag: "Lit",
  keys: [],
  parse: (p, node) => parseScalar(p, node),
  children: () => [],
  withChildren: (t) => t,
  segments: () => [],
  encode: (t) => t.value,
  pretty: (t) => literalText(t.value),
  atomic: true,
  cost: dataCost,
  value: () => "data",
  compile: (t, kids) => code(Op.Const, t, kids, t.value),
  events: []
}
