/**
 * `guard`: validate an agent's output with a pure predicate term, retry, then fall back.
 */
import { code, type Code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import { preview } from "../Trace.ts"
import * as Value from "../Value.ts"
import { agentCost, applied, plus, times, ZERO } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"
import { isRecord } from "./parse.ts"
import type { AgentMachine } from "./step.ts"

/**
 * What a `guard` returns when every attempt failed validation: fail (`error`), the empty string,
 * the last attempt, or a fixed value.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * const f: Term.Fallback = { value: Term.lit("n/a") }
 * ```
 */
export type Fallback = "error" | "empty" | "last" | { readonly value: Term.Term }

/** `{"guard": {"agent": a, "validate": p, "retry"?: n, "fallback"?: …}}` */
export interface Guard {
  readonly _tag: "Guard"
  readonly agent: Term.Term
  readonly validate: Term.Term
  readonly retry: number
  readonly fallback: Fallback
}

/**
 * Validate an agent's output with a pure predicate term, retry, then fall back. A predicate that
 * raises an error of its own (not an exhausted budget) judges the output invalid.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.guard({
 *   agent: Term.llm({ system: "Write JSON." }),
 *   validate: Term.lam("x", Term.gt(Term.length(Term.var("x")), Term.lit(0))),
 *   retry: 2,
 *   fallback: "last"
 * })
 * ```
 */
export const guard = (options: Omit<Guard, "_tag">): Term.Term => ({ _tag: "Guard", ...options })

interface State {
  readonly fn: Value.Closure
  readonly input: Value.Value
  attempts: number
  last: Value.Value
  /** Whether the value returning now is the validator's answer (else the agent's output). */
  validating: boolean
}

const attempt = (m: AgentMachine, c: Code, state: State) => {
  state.validating = false
  m.push(c, state)
  m.call(c.a!, state.fn, state.input)
}

/** After an attempt was judged: answer it, try again, or fall back. */
const judge = (m: AgentMachine, c: Code, state: State, valid: boolean, raised?: string): undefined => {
  const term = c.term as Guard
  state.attempts++
  if (m.tracing) {
    m.record({
      step: m.steps,
      kind: "guard",
      name: valid ? "valid" : "invalid",
      output: preview(Value.toText(state.last)),
      ...(raised !== undefined ? { error: preview(`the validator raised ${raised}`) } : {})
    })
  }
  if (valid) return void m.done(state.last)
  if (state.attempts <= term.retry) return void attempt(m, c, state)
  const fallback = term.fallback
  if (fallback === "error") {
    const why = raised !== undefined ? ` (the validator raised ${raised})` : ""
    return m.fail(
      "ValidationError",
      `guard failed after ${state.attempts} attempt${state.attempts === 1 ? "" : "s"}; last output: ${preview(Value.toText(state.last))}${why}`
    )
  }
  if (fallback === "empty") m.done("")
  else if (fallback === "last") m.done(state.last)
  else m.evaluate(c.c!, state.fn)
  return undefined
}

const step: AgentStep<Guard> = {
  apply: (m, c, fn, input) => {
    attempt(m, c, { fn, input, attempts: 0, last: null, validating: false })
    return undefined
  },
  resume: (m, c, state: State, value) => {
    if (!state.validating) {
      state.last = value
      state.validating = true
      m.pushCatching(c, state)
      m.call(c.b!, state.fn, value)
      return undefined
    }
    return judge(m, c, state, m.isTrue(value, "a guard's validator result"))
  },
  // A validator that raises (int() of "abc", length of a number…) judges the output invalid, as a
  // Python validator that raises does; budgets are never caught.
  raised: (m, c, state: State, error) => judge(m, c, state, false, `${error.kind}: ${error.message}`)
}

export const guardForm: Form<Guard, "guard"> = {
  tag: "Guard",
  keys: ["guard"],
  parse: (p, node, key, obj) => {
    const f = p.fields(node, key, obj[key], ["agent", "validate"], ["retry", "fallback"])
    const at = p.child(node, f, key)
    const retry = f.retry === undefined ? 0 : p.count(at, f.retry, "retry", 0)
    const kids = [p.sub(node, f.agent, key, "agent"), p.sub(node, f.validate, key, "validate")]
    const fb = f.fallback ?? "error"
    if (fb === "error" || fb === "empty" || fb === "last") {
      return { kids, build: ([a, v]) => guard({ agent: a!, validate: v!, retry, fallback: fb }) }
    }
    if (!isRecord(fb) || !Object.hasOwn(fb, "value") || Object.keys(fb).length !== 1) {
      return p.fail(at, '"error", "empty", "last" or {"value": term}', "fallback")
    }
    kids.push(p.sub(node, fb.value, key, "fallback", "value"))
    return { kids, build: ([a, v, d]) => guard({ agent: a!, validate: v!, retry, fallback: { value: d! } }) }
  },
  children: (t) => (typeof t.fallback === "object" ? [t.agent, t.validate, t.fallback.value] : [t.agent, t.validate]),
  withChildren: (t, [agent, validate, value]) =>
    typeof t.fallback === "object" ? { ...t, agent: agent!, validate: validate!, fallback: { value: value! } } : { ...t, agent: agent!, validate: validate! },
  segments: () => [
    ["guard", "agent"],
    ["guard", "validate"],
    ["guard", "fallback", "value"]
  ],
  encode: (t, [agent, validate, value]) => ({
    guard: { agent: agent!, validate: validate!, retry: t.retry, fallback: typeof t.fallback === "string" ? t.fallback : { value: value! } }
  }),
  pretty: (t, kids) => `Guard(${kids[0]}, ${kids[1]}, retry=${t.retry}, fallback=${typeof t.fallback === "string" ? t.fallback : kids[2]})`,
  atomic: false,
  cost: (t, [agent, validate, fallback], context) =>
    agentCost(plus(times(context.attempts(t.retry), plus(applied(agent!), applied(validate!))), fallback?.eval ?? ZERO)),
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, kids, step),
  events: ["guard"],
  agent: step
}
