/**
 * `memory`: give an agent memory. Recent entries of its scope are prepended to its input (a
 * `memory-read` request), and the exchange is stored after it answers (a `memory-write` request).
 */
import { code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import type * as Value from "../Value.ts"
import { agentCost, applied } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"

/** `{"memory": {"agent": a, "size"?: n, "ttl"?: seconds, "scope"?: "session" | "user" | "global"}}` */
export interface Memory {
  readonly _tag: "Memory"
  readonly agent: Term.Term
  readonly size: number
  /** Seconds; 0 means entries never expire. */
  readonly ttl: number
  readonly scope: "session" | "user" | "global"
}

/**
 * Give an agent memory: recent entries are prepended to its input and its result is stored.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.memory({ agent: Term.llm({ system: "Chat." }), size: 20, ttl: 3600, scope: "session" })
 * ```
 */
export const memory = (options: Omit<Memory, "_tag">): Term.Term => ({ _tag: "Memory", ...options })

interface State {
  readonly fn: Value.Closure
  readonly input: Value.Value
  /** What the value returning now is: the read's answer, the agent's output, or the write's. */
  phase: "read" | "agent" | "write"
  output: Value.Value
}

const step: AgentStep<Memory> = {
  apply: (m, c, fn, input) => {
    m.push(c, { fn, input, phase: "read", output: null } satisfies State)
    return { kind: "memory-read", id: m.nextRequestId(), term: c.term as Memory, input }
  },
  resume: (m, c, state: State, value) => {
    switch (state.phase) {
      case "read":
        state.phase = "agent"
        m.push(c, state)
        m.call(c.a!, state.fn, value)
        return undefined
      case "agent":
        state.phase = "write"
        state.output = value
        m.push(c, state)
        return { kind: "memory-write", id: m.nextRequestId(), term: c.term as Memory, input: state.input, output: value }
      case "write":
        m.done(state.output)
        return undefined
    }
  }
}

export const memoryForm: Form<Memory, "memory"> = {
  tag: "Memory",
  keys: ["memory"],
  parse: (p, node, key, obj) => {
    const f = p.fields(node, key, obj[key], ["agent"], ["size", "ttl", "scope"])
    const at = p.child(node, f, key)
    const size = f.size === undefined ? 10 : p.count(at, f.size, "size", 0)
    const ttl = f.ttl === undefined ? 0 : p.count(at, f.ttl, "ttl", 0)
    const scope = f.scope ?? "session"
    if (scope !== "session" && scope !== "user" && scope !== "global") return p.fail(at, '"session", "user" or "global"', "scope")
    return { kids: [p.sub(node, f.agent, key, "agent")], build: ([a]) => memory({ agent: a!, size, ttl, scope }) }
  },
  children: (t) => [t.agent],
  withChildren: (t, [agent]) => ({ ...t, agent: agent! }),
  segments: () => [["memory", "agent"]],
  encode: (t, [agent]) => ({ memory: { agent: agent!, size: t.size, ttl: t.ttl, scope: t.scope } }),
  pretty: (t, [agent]) => `Memory(${agent}, Γ ∪ ${t.scope}{size=${t.size}, ttl=${t.ttl}})`,
  atomic: false,
  capabilities: (_, into) => void (into.memory = true),
  cost: (_, [agent]) => agentCost(applied(agent!)),
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, kids, step),
  events: ["memory"],
  agent: step
}
