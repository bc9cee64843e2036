/**
 * `compose`: a pipeline, `compose([f, g])` is `λx. g(f(x))`.
 */
import { code, type Code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import type * as Value from "../Value.ts"
import { agentCost, applied, plus } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"

/** `{"compose": [stage, …]}` */
export interface Compose {
  readonly _tag: "Compose"
  readonly stages: ReadonlyArray<Term.Term>
}

/**
 * A pipeline: `compose([f, g])` is `λx. g(f(x))`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.compose([Term.llm({ system: "Extract facts." }), Term.llm({ system: "Write a summary." })])
 * ```
 */
export const compose = (stages: ReadonlyArray<Term.Term>): Term.Term => ({ _tag: "Compose", stages })

interface State {
  readonly fn: Value.Closure
  /** The stage running now. */
  stage: number
}

// the last stage is a tail call: its value is the pipeline's, so no frame waits for it
const step: AgentStep<Compose> = {
  apply: (m, c, fn, input) => {
    if (c.items!.length > 1) m.push(c, { fn, stage: 0 } satisfies State)
    m.call(c.items![0]!, fn, input)
    return undefined
  },
  resume: (m, c: Code, state: State, value) => {
    const stages = c.items!
    if (++state.stage >= stages.length) return void m.done(value)
    if (state.stage < stages.length - 1) m.push(c, state)
    m.call(stages[state.stage]!, state.fn, value)
    return undefined
  }
}

export const composeForm: Form<Compose> = {
  tag: "Compose",
  keys: ["compose"],
  parse: (p, node, key, obj) => {
    const value = obj[key]
    if (!Array.isArray(value) || value.length === 0) return p.fail(node, "a non-empty array of stages", key)
    const at = p.child(node, value, key)
    return { kids: value.map((s, i) => p.child(at, s, i)), build: (stages) => compose(stages) }
  },
  children: (t) => t.stages,
  withChildren: (t, stages) => ({ ...t, stages }),
  segments: (t) => t.stages.map((_, i) => ["compose", i]),
  encode: (_, stages) => ({ compose: stages }),
  pretty: (_, stages, formal) => (formal ? `(λx. ${stages.reduce((acc, stage) => `(${stage} ${acc})`, "x")})` : stages.join(" >> ")),
  atomic: false,
  cost: (_, kids) => agentCost(plus(...kids.map(applied))),
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, [], step, kids),
  events: [],
  agent: step
}
