/**
 * `ask`: put a question to a person. Applied to an input, it suspends the run on an `ask` request
 * (the question and the input); the person's answer is its value. With no one to answer at once,
 * the run pauses as a checkpoint and goes on when it is resumed with the answer (docs/durable.md).
 */
import { code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import { agentCost, ZERO } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"

/** `{"ask": question}` */
export interface Ask {
  readonly _tag: "Ask"
  readonly question: string
}

/**
 * Ask a person: applied to an input, the run waits for their answer, which is the value.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.compose([Term.llm({ system: "Draft a plan." }), Term.ask("Approve this plan, or say what to change.")])
 * ```
 */
export const ask = (question: string): Term.Term => ({ _tag: "Ask", question })

const step: AgentStep<Ask> = {
  apply: (m, c, _fn, input) => ({ kind: "ask", id: m.nextRequestId(), question: (c.term as Ask).question, input })
}

export const askForm: Form<Ask> = {
  tag: "Ask",
  keys: ["ask"],
  parse: (p, node, key, obj) => ask(p.string(node, obj[key], key, "a question (string)")),
  children: () => [],
  withChildren: (t) => t,
  segments: () => [],
  encode: (t) => ({ ask: t.question }),
  pretty: (t, _, formal) => (formal ? `(λx. Ask(${JSON.stringify(t.question)}, x))` : `Ask(${JSON.stringify(t.question)})`),
  atomic: true,
  capabilities: (_, into) => void (into.ask = true),
  cost: () => agentCost(ZERO),
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, kids, step),
  events: [],
  agent: step
}
