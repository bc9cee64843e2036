/**
 * `handoff`: dynamic delegation. A selector names the first delegate of a registry; a delegate
 * answers, or hands the task on by answering `HANDOFF <name>` on its first line (the rest, when
 * there is any, is the next delegate's input; else the task goes on as it was). A name outside the
 * registry goes to the fallback. Hand-offs are bounded by `maxDepth`, so the worst case is
 * `selector + (maxDepth + 1) × the costliest delegate`.
 */
import { code, type Code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import { preview } from "../Trace.ts"
import * as Value from "../Value.ts"
import { agentCost, applied, max, plus, times } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"
import { isRecord } from "./parse.ts"
import type { AgentMachine } from "./step.ts"

/** `{"handoff": {"select": s, "registry": [{"name": n, "agent": a}, …], "fallback"?: a, "maxDepth": n}}` */
export interface Handoff {
  readonly _tag: "Handoff"
  readonly select: Term.Term
  readonly registry: ReadonlyArray<readonly [name: string, agent: Term.Term]>
  readonly fallback?: Term.Term
  /** Most hand-offs after the first delegation. */
  readonly maxDepth: number
}

/**
 * Dynamic delegation: `select` names a delegate of `registry`; a delegate may answer
 * `HANDOFF <name>` to pass the task on, at most `maxDepth` times; unknown names go to `fallback`.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.handoff({
 *   select: Term.llm({ system: "Answer billing or tech.", conversation: false }),
 *   registry: [["billing", Term.llm({ system: "Billing desk." })], ["tech", Term.llm({ system: "Tech desk." })]],
 *   fallback: Term.llm({ system: "General desk." }),
 *   maxDepth: 2
 * })
 * ```
 */
export const handoff = (options: Omit<Handoff, "_tag">): Term.Term => ({ _tag: "Handoff", ...options })

/**
 * A hand-off in a delegate's answer: `HANDOFF <name>` (or `HANDOFF: <name>`) on the first line,
 * then an optional message (after `:` on the same line, or on the following lines).
 *
 * @since 0.2.0
 * @category parsing
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.handoffOf("HANDOFF billing: refund order 7") // { target: "billing", message: "refund order 7" }
 * Term.handoffOf("Here is your answer.") // undefined
 * ```
 */
export const handoffOf = (answer: string): { readonly target: string; readonly message?: string } | undefined => {
  const found = /^\s*HANDOFF\s*:?\s*([^\s:]+)[ \t]*(?::[ \t]*)?([\s\S]*)$/.exec(answer)
  if (found === null) return undefined
  const message = found[2]!.trim()
  return message === "" ? { target: found[1]! } : { target: found[1]!, message }
}

interface State {
  readonly fn: Value.Closure
  input: Value.Value
  hops: number
  /** Whether the value returning now is the selector's answer (else a delegate's). */
  selecting: boolean
}

interface Registry extends AgentStep<Handoff> {
  readonly names: ReadonlyMap<string, number>
}

/** The registry index of a name: exact (any case), else the first entry the answer contains; -1 for none. */
const indexOf = (c: Code, term: Handoff, answer: string): number => {
  const wanted = answer.trim().toLowerCase()
  const exact = (c.x as Registry).names.get(wanted)
  if (exact !== undefined) return exact
  return term.registry.findIndex(([name]) => wanted.includes(name.toLowerCase()))
}

const delegate = (m: AgentMachine, c: Code, state: State, answer: string) => {
  const term = c.term as Handoff
  const index = indexOf(c, term, answer)
  const items = c.items!
  state.selecting = false
  if (index >= 0) {
    if (m.tracing)
      m.record({ step: m.steps, kind: "handoff", name: term.registry[index]![0], input: preview(Value.toText(state.input)), output: `hop ${state.hops}` })
    m.push(c, state)
    return m.call(items[index + 1]!, state.fn, state.input)
  }
  if (term.fallback === undefined) {
    return m.fail("RouteError", `no delegate named ${JSON.stringify(answer.trim())}; registry: ${term.registry.map(([n]) => n).join(", ")}`)
  }
  if (m.tracing) m.record({ step: m.steps, kind: "handoff", name: "fallback", input: preview(answer.trim()), output: `hop ${state.hops}` })
  m.push(c, state)
  m.call(items[items.length - 1]!, state.fn, state.input)
}

const step: AgentStep<Handoff> = {
  apply: (m, c, fn, input) => {
    m.push(c, { fn, input, hops: 0, selecting: true } satisfies State)
    m.call(c.items![0]!, fn, input)
    return undefined
  },
  resume: (m, c, state: State, value) => {
    const text = Value.toText(value)
    if (state.selecting) return void delegate(m, c, state, text)
    const next = handoffOf(text)
    if (next === undefined) return void m.done(value)
    const term = c.term as Handoff
    if (state.hops >= term.maxDepth) {
      return m.exhausted(
        "loop",
        term.maxDepth,
        `hand-off depth of ${term.maxDepth} exhausted: a delegate handed off to ${JSON.stringify(next.target)} once more`
      )
    }
    state.hops++
    if (next.message !== undefined) state.input = next.message
    delegate(m, c, state, next.target)
    return undefined
  }
}

export const handoffForm: Form<Handoff, "handoff"> = {
  tag: "Handoff",
  keys: ["handoff"],
  parse: (p, node, key, obj) => {
    const f = p.fields(node, key, obj[key], ["select", "registry", "maxDepth"], ["fallback"])
    const at = p.child(node, f, key)
    if (!Array.isArray(f.registry) || f.registry.length === 0) return p.fail(at, 'a non-empty array of {"name", "agent"}', "registry")
    const registryAt = p.child(at, f.registry, "registry")
    const names: Array<string> = []
    const kids = [p.sub(node, f.select, key, "select")]
    f.registry.forEach((entry, i) => {
      if (!isRecord(entry) || !Object.hasOwn(entry, "agent") || Object.keys(entry).some((k) => k !== "name" && k !== "agent")) {
        p.fail(registryAt, 'an object with "name", "agent"', i)
      }
      const entryAt = p.child(registryAt, entry, i)
      const name = p.string(entryAt, entry.name, "name", "a non-empty name")
      if (name.trim() === "" || /\s/.test(name) || names.includes(name)) p.fail(entryAt, "a name without spaces that no other delegate has", "name")
      names.push(name)
      kids.push(p.sub(node, entry.agent, key, "registry", i, "agent"))
    })
    const maxDepth = p.count(at, f.maxDepth, "maxDepth", 0)
    if (f.fallback !== undefined) kids.push(p.sub(node, f.fallback, key, "fallback"))
    return {
      kids,
      build: (ts) =>
        handoff({
          select: ts[0]!,
          registry: names.map((name, i) => [name, ts[i + 1]!] as const),
          ...(f.fallback !== undefined ? { fallback: ts[names.length + 1]! } : {}),
          maxDepth
        })
    }
  },
  children: (t) => [t.select, ...t.registry.map(([, agent]) => agent), ...(t.fallback !== undefined ? [t.fallback] : [])],
  withChildren: (t, kids) => ({
    ...t,
    select: kids[0]!,
    registry: t.registry.map(([name], i) => [name, kids[i + 1]!] as const),
    ...(t.fallback !== undefined ? { fallback: kids[t.registry.length + 1]! } : {})
  }),
  segments: (t) => [["handoff", "select"], ...t.registry.map((_, i) => ["handoff", "registry", i, "agent"]), ["handoff", "fallback"]],
  encode: (t, kids) => {
    const out: Record<string, Term.Json> = {
      select: kids[0]!,
      registry: t.registry.map(([name], i) => ({ name, agent: kids[i + 1]! })),
      maxDepth: t.maxDepth
    }
    if (t.fallback !== undefined) out.fallback = kids[t.registry.length + 1]!
    return { handoff: out }
  },
  pretty: (t, kids) => {
    const entries = t.registry.map(([name], i) => `${name}: ${kids[i + 1]}`)
    if (t.fallback !== undefined) entries.push(`_: ${kids[t.registry.length + 1]}`)
    return `Handoff_{depth≤${t.maxDepth}}(${kids[0]}; [${entries.join(", ")}])`
  },
  atomic: false,
  cost: (t, kids) => agentCost(plus(applied(kids[0]!), times(t.maxDepth + 1, max(...kids.slice(1).map(applied))))),
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, [], { ...step, names: new Map(t.registry.map(([name], i) => [name.toLowerCase(), i])) } satisfies Registry, kids),
  events: ["handoff"],
  agent: step
}
