/**
 * `par`: run branches concurrently on the same input and merge their results. The machine asks
 * the driver to run the branches (a `par` request); each branch is a machine of its own.
 */
import { code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import * as Value from "../Value.ts"
import { agentCost, applied, plus, ZERO } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"

/**
 * How a `par` term combines its branches' results: `tuple` (a pair for two branches, a list
 * otherwise), `concat` (texts joined by a blank line), or a function term applied to the list.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const m: Term.Merge = "concat"
 * ```
 */
export type Merge = "tuple" | "concat" | Term.Term

/** `{"par": {"branches": [agent, …], "merge"?: "tuple" | "concat" | f}}` */
export interface Par {
  readonly _tag: "Par"
  readonly branches: ReadonlyArray<Term.Term>
  readonly merge: Merge
}

/**
 * Run branches concurrently on the same input and merge their results.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.par([Term.llm({ system: "Research." }), Term.llm({ system: "Critique." })], "concat")
 * ```
 */
export const par = (branches: ReadonlyArray<Term.Term>, merge: Merge = "tuple"): Term.Term => ({ _tag: "Par", branches, merge })

/**
 * The frame a `par` step leaves under its request: the machine builds each branch from its
 * closure (the branches are the node's first compiled items).
 */
export interface ParState {
  readonly fn: Value.Closure
}

const step: AgentStep<Par> = {
  apply: (m, c, fn, input) => {
    m.push(c, { fn } satisfies ParState)
    return { kind: "par", id: m.nextRequestId(), term: c.term as Par, input }
  },
  resume: (m, c, state: ParState, value) => {
    const merge = (c.term as Par).merge
    const results = value as Value.List
    if (merge === "tuple") return void m.done(results.length === 2 ? new Value.Pair(results.head, results.tail.head) : results)
    if (merge === "concat") return void m.done(Value.toArray(results).map(Value.toText).join("\n\n"))
    m.call(c.items![c.items!.length - 1]!, state.fn, results)
    return undefined
  }
}

export const parForm: Form<Par, "par"> = {
  tag: "Par",
  keys: ["par"],
  parse: (p, node, key, obj) => {
    const f = p.fields(node, key, obj[key], ["branches"], ["merge"])
    const at = p.child(node, f, key)
    if (!Array.isArray(f.branches) || f.branches.length === 0) return p.fail(at, "a non-empty array of branches", "branches")
    const bAt = p.child(at, f.branches, "branches")
    const kids = f.branches.map((b, i) => p.child(bAt, b, i))
    const merge = f.merge ?? "tuple"
    if (merge === "tuple" || merge === "concat") return { kids, build: (bs) => par(bs, merge) }
    if (typeof merge === "string") return p.fail(at, '"tuple", "concat" or a function term', "merge")
    kids.push(p.sub(node, merge, key, "merge"))
    return { kids, build: (ts) => par(ts.slice(0, -1), ts[ts.length - 1]!) }
  },
  children: (t) => (typeof t.merge === "string" ? t.branches : [...t.branches, t.merge]),
  withChildren: (t, kids) => (typeof t.merge === "string" ? { ...t, branches: kids } : { ...t, branches: kids.slice(0, -1), merge: kids[kids.length - 1]! }),
  segments: (t) => [...t.branches.map((_, i) => ["par", "branches", i]), ["par", "merge"]],
  encode: (t, kids) => ({
    par: {
      branches: typeof t.merge === "string" ? kids : kids.slice(0, -1),
      merge: typeof t.merge === "string" ? t.merge : kids[kids.length - 1]!
    }
  }),
  pretty: (t, kids, formal) => {
    const branches = typeof t.merge === "string" ? kids : kids.slice(0, -1)
    const head = branches.length === 2 ? `PAIR(${branches.join(", ")})` : `PAR(${branches.join(", ")})`
    const merge = typeof t.merge === "string" ? (t.merge === "concat" ? " >> concat" : "") : ` >> ${kids[kids.length - 1]}`
    return formal ? `(${head}${merge})` : `${head}${merge}`
  },
  atomic: false,
  capabilities: (_, into) => void (into.parallel = true),
  cost: (t, kids) => {
    const branches = typeof t.merge === "string" ? kids : kids.slice(0, -1)
    return agentCost(plus(...branches.map(applied), typeof t.merge === "string" ? ZERO : applied(kids[kids.length - 1]!)))
  },
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, [], step, kids),
  events: ["par"],
  agent: step
}
