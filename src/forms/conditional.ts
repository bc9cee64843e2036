/**
 * The conditional: `{"if": {"cond": c, "then": t, "else": e}}`; only the branch taken is evaluated.
 */
import { code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import { max, plus } from "./analysis.ts"
import type { Form } from "./Form.ts"

/** `{"if": {"cond": c, "then": t, "else": e}}` */
export interface If {
  readonly _tag: "If"
  readonly cond: Term.Term
  readonly then: Term.Term
  readonly else: Term.Term
}

/**
 * A conditional, `{"if": {"cond": c, "then": t, "else": e}}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.if(Term.lit(true), Term.lit(1), Term.lit(2))
 * ```
 */
export const conditional = (cond: Term.Term, then: Term.Term, else_: Term.Term): Term.Term => ({ _tag: "If", cond, then, else: else_ })

export const ifForm: Form<If> = {
  tag: "If",
  keys: ["if"],
  parse: (p, node, key, obj) => {
    const f = p.fields(node, key, obj[key], ["cond", "then", "else"])
    return {
      kids: [p.sub(node, f.cond, key, "cond"), p.sub(node, f.then, key, "then"), p.sub(node, f.else, key, "else")],
      build: ([c, t, e]) => conditional(c!, t!, e!)
    }
  },
  children: (t) => [t.cond, t.then, t.else],
  withChildren: (t, [cond, then, else_]) => ({ ...t, cond: cond!, then: then!, else: else_! }),
  segments: () => [
    ["if", "cond"],
    ["if", "then"],
    ["if", "else"]
  ],
  encode: (_, [c, t, e]) => ({ if: { cond: c!, then: t!, else: e! } }),
  pretty: (_, [c, t, e], formal) => (formal ? `(if ${c} ${t} ${e})` : `if ${c} then ${t} else ${e}`),
  atomic: false,
  cost: (_, [c, t, e]) => ({ eval: plus(c!.eval, max(t!.eval, e!.eval)), call: max(t!.call, e!.call) }),
  value: () => "unknown",
  compile: (t, kids) => code(Op.If, t, kids),
  events: []
}
