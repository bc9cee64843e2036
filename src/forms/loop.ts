/**
 * `loop`: bounded iteration, the `Yₙ` of the notation. The body is applied to its own result up to
 * `max` times, stopping early when `until` holds of the result.
 */
import { code, type Code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import { preview } from "../Trace.ts"
import * as Value from "../Value.ts"
import { agentCost, applied, plus, times, ZERO } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"
import type { AgentMachine } from "./step.ts"

/** `{"loop": {"body": f, "max": n, "until"?: p, "failOnExhaustion"?: b}}` */
export interface Loop {
  readonly _tag: "Loop"
  readonly body: Term.Term
  readonly max: number
  readonly until?: Term.Term
  /** Fail with a budget error when `max` passes without `until` holding. */
  readonly failOnExhaustion?: boolean
}

/**
 * Bounded iteration: apply `body` up to `max` times, stopping early when `until` holds of the result.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.loop({ body: Term.lam("n", Term.add(Term.var("n"), Term.lit(1))), max: 10 })
 * ```
 */
export const loop = (options: Omit<Loop, "_tag">): Term.Term => ({ _tag: "Loop", ...options })

const SUBSCRIPT = "₀₁₂₃₄₅₆₇₈₉"

/** A count as subscript digits (`Y₂₀`). */
export const subscript = (n: number): string => String(n).replace(/\d/g, (d) => SUBSCRIPT[Number(d)]!)

interface State {
  readonly fn: Value.Closure
  /** Iterations done. */
  done: number
  current: Value.Value
  /** Whether the value returning now is the exit test's answer (else the body's result). */
  testing: boolean
}

const iterate = (m: AgentMachine, c: Code, state: State) => {
  state.testing = false
  m.push(c, state)
  m.call(c.a!, state.fn, state.current)
}

const step: AgentStep<Loop> = {
  apply: (m, c, fn, input) => {
    if ((c.term as Loop).max === 0) return void m.done(input)
    iterate(m, c, { fn, done: 0, current: input, testing: false })
    return undefined
  },
  resume: (m, c, state: State, value) => {
    const term = c.term as Loop
    if (state.testing) {
      if (m.isTrue(value, "a loop's exit test")) return void m.done(state.current)
    } else {
      state.current = value
      state.done++
      if (m.tracing) m.record({ step: m.steps, kind: "loop", name: `iteration ${state.done}`, output: preview(Value.toText(value)) })
      if (c.b !== undefined) {
        state.testing = true
        m.push(c, state)
        m.call(c.b, state.fn, value)
        return undefined
      }
    }
    if (state.done < term.max) return void iterate(m, c, state)
    if (term.failOnExhaustion === true) m.exhausted("loop", term.max, `loop ran ${term.max} iterations without meeting its exit test`)
    m.done(state.current)
    return undefined
  }
}

export const loopForm: Form<Loop, "loop"> = {
  tag: "Loop",
  keys: ["loop"],
  parse: (p, node, key, obj) => {
    const f = p.fields(node, key, obj[key], ["body", "max"], ["until", "failOnExhaustion"])
    const at = p.child(node, f, key)
    const max = p.count(at, f.max, "max", 0)
    const failOnExhaustion = p.optionalBoolean(at, f, "failOnExhaustion")
    const kids = [p.sub(node, f.body, key, "body")]
    if (f.until !== undefined) kids.push(p.sub(node, f.until, key, "until"))
    return {
      kids,
      build: ([body, until]) =>
        loop({
          body: body!,
          max,
          ...(until !== undefined ? { until } : {}),
          ...(failOnExhaustion !== undefined ? { failOnExhaustion } : {})
        })
    }
  },
  children: (t) => (t.until === undefined ? [t.body] : [t.body, t.until]),
  withChildren: (t, [body, until]) => (t.until === undefined ? { ...t, body: body! } : { ...t, body: body!, until: until! }),
  segments: () => [
    ["loop", "body"],
    ["loop", "until"]
  ],
  encode: (t, [body, until]) => {
    const out: Record<string, Term.Json> = { body: body!, max: t.max }
    if (t.until !== undefined) out.until = until!
    if (t.failOnExhaustion !== undefined) out.failOnExhaustion = t.failOnExhaustion
    return { loop: out }
  },
  pretty: (t, [body, until], formal) => {
    const test = t.until === undefined ? "" : formal ? ` ${until}` : `, until ${until}`
    return formal ? `(Y${subscript(t.max)} ${body}${test})` : `Y${subscript(t.max)}(${body}${test})`
  },
  atomic: false,
  cost: (t, [body, until]) => agentCost(times(t.max, plus(applied(body!), until === undefined ? ZERO : applied(until)))),
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, kids, step),
  events: ["loop"],
  agent: step
}
