/**
 * Pairs: `{"pair": [a, b]}`, taken apart by `fst` and `snd`.
 */
import { code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import { dataCost } from "./analysis.ts"
import type { Form } from "./Form.ts"

/** `{"pair": [first, second]}` */
export interface Pair {
  readonly _tag: "Pair"
  readonly first: Term.Term
  readonly second: Term.Term
}

/**
 * A pair, `{"pair": [a, b]}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.pair(Term.lit(1), Term.lit("one"))
 * ```
 */
export const pair = (first: Term.Term, second: Term.Term): Term.Term => ({ _tag: "Pair", first, second })

export const pairForm: Form<Pair> = {
  tag: "Pair",
  keys: ["pair"],
  parse: (p, node, key, obj) => {
    const [a, b] = p.tuple(node, key, obj[key], 2, "an array of 2 terms")
    return { kids: [a!, b!], build: ([x, y]) => pair(x!, y!) }
  },
  children: (t) => [t.first, t.second],
  withChildren: (t, [first, second]) => ({ ...t, first: first!, second: second! }),
  segments: () => [
    ["pair", 0],
    ["pair", 1]
  ],
  encode: (_, [a, b]) => ({ pair: [a!, b!] }),
  pretty: (_, [a, b], formal) => (formal ? `(pair ${a} ${b})` : `⟨${a}, ${b}⟩`),
  atomic: true,
  cost: dataCost,
  value: () => "data",
  compile: (t, kids) => code(Op.Pair, t, kids),
  events: []
}
