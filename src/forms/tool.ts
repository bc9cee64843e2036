/**
 * `tool`: a named tool of the `Tools` service, as a function. `terminate` is the identity: it ends
 * a ReAct loop and is answered without a tool call.
 */
import { code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import { agentCost, ONE_TOOL, ZERO } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"

/** `{"tool": name}` */
export interface Tool {
  readonly _tag: "Tool"
  readonly name: string
}

/**
 * A named tool from the `Tools` service, as a function.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.app(Term.tool("search"), Term.lit("effect 4"))
 * ```
 */
export const tool = (name: string): Term.Term => ({ _tag: "Tool", name })

/** Whether a tool name is `terminate` (in any letter case, as the ReAct loop reads it). */
export const isTerminate = (name: string): boolean => name.length === 9 && name.toLowerCase() === "terminate"

const step: AgentStep<Tool> = {
  apply: (m, c, _fn, input) => ({ kind: "tool", id: m.nextRequestId(), name: (c.term as Tool).name, input, observe: false })
}

export const toolForm: Form<Tool> = {
  tag: "Tool",
  keys: ["tool"],
  parse: (p, node, key, obj) => tool(p.string(node, obj[key], key, "a tool name (string)")),
  children: () => [],
  withChildren: (t) => t,
  segments: () => [],
  encode: (t) => ({ tool: t.name }),
  pretty: (t, _, formal) => (formal ? `(λx. Tool("${t.name}", x))` : `Tool(${t.name})`),
  atomic: true,
  capabilities: (t, into) => {
    if (!isTerminate(t.name)) into.tools.add(t.name)
  },
  cost: (t) => agentCost(isTerminate(t.name) ? ZERO : ONE_TOOL),
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, kids, step),
  events: [],
  agent: step
}
