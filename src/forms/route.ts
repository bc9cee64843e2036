/**
 * `route`: classify the input, then run the agent of the matching label (`CASE` with a default).
 */
import { code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import { preview } from "../Trace.ts"
import * as Value from "../Value.ts"
import { agentCost, applied, max, plus } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"
import { isRecord } from "./parse.ts"

/** `{"route": {"classify": c, "routes": {label: agent, …}, "default"?: agent}}` */
export interface Route {
  readonly _tag: "Route"
  readonly classify: Term.Term
  readonly routes: ReadonlyArray<readonly [label: string, agent: Term.Term]>
  readonly default?: Term.Term
}

/**
 * Classify the input, then run the agent of the matching label (CASE with a default).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.route({
 *   classify: Term.llm({ system: "Answer code or math." }),
 *   routes: [["code", Term.llm({ system: "You write code." })], ["math", Term.llm({ system: "You do math." })]]
 * })
 * ```
 */
export const route = (options: Omit<Route, "_tag">): Term.Term => ({
  _tag: "Route",
  ...options,
  // routes are kept in the order a JSON object of them has, so encoding and parsing keep it
  routes: inObjectOrder(options.routes)
})

/** The first route of each label, in the order a JSON object of them has (linear in the routes). */
const inObjectOrder = (routes: Route["routes"]): Route["routes"] => {
  const first = new Map<string, Route["routes"][number]>()
  for (const entry of routes) if (!first.has(entry[0])) first.set(entry[0], entry)
  // An object lists its array-index keys ascending, then the other keys as first inserted;
  // building one with many keys to read that order back costs more than the routes themselves.
  const indices: Array<Route["routes"][number]> = []
  const names: Array<Route["routes"][number]> = []
  for (const entry of first.values()) (isArrayIndex(entry[0]) ? indices : names).push(entry)
  if (indices.length === 0) return names
  indices.sort((a, b) => Number(a[0]) - Number(b[0]))
  return [...indices, ...names]
}

/** Whether a key is an array index, which a JavaScript object orders before its other keys. */
const isArrayIndex = (key: string): boolean => /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) < 2 ** 32 - 1

interface State {
  readonly fn: Value.Closure
  readonly input: Value.Value
}

interface RouteStep extends AgentStep<Route> {
  readonly labels: ReadonlyMap<string, number>
}

const step: AgentStep<Route> = {
  apply: (m, c, fn, input) => {
    m.push(c, { fn, input } satisfies State)
    m.call(c.items![0]!, fn, input)
    return undefined
  },
  resume: (m, c, state: State, value) => {
    const term = c.term as Route
    const label = Value.toText(value).trim().toLowerCase()
    let index = (c.x as RouteStep).labels.get(label)
    if (index === undefined) {
      const found = term.routes.findIndex(([l]) => label.includes(l.toLowerCase()))
      if (found >= 0) index = found
    }
    const items = c.items!
    let chosen: number
    let chosenName: string
    if (index !== undefined) {
      chosen = index + 1
      chosenName = term.routes[index]![0]
    } else if (term.default !== undefined) {
      chosen = items.length - 1
      chosenName = "default"
    } else {
      return m.fail("RouteError", `no route for ${JSON.stringify(label)}; routes: ${term.routes.map(([l]) => l).join(", ")}`)
    }
    if (m.tracing) m.record({ step: m.steps, kind: "route", name: chosenName, input: preview(label) })
    m.call(items[chosen]!, state.fn, state.input)
    return undefined
  }
}

export const routeForm: Form<Route, "route"> = {
  tag: "Route",
  keys: ["route"],
  parse: (p, node, key, obj) => {
    const f = p.fields(node, key, obj[key], ["classify", "routes"], ["default"])
    const at = p.child(node, f, key)
    const routes = f.routes
    if (!isRecord(routes)) return p.fail(at, "an object of label → agent", "routes")
    const labels = Object.keys(routes)
    const kids = [p.sub(node, f.classify, key, "classify"), ...labels.map((l) => p.sub(node, routes[l], key, "routes", l))]
    if (f.default !== undefined) kids.push(p.sub(node, f.default, key, "default"))
    return {
      kids,
      build: (ts) =>
        route({
          classify: ts[0]!,
          routes: labels.map((l, i) => [l, ts[i + 1]!] as const),
          ...(f.default !== undefined ? { default: ts[labels.length + 1]! } : {})
        })
    }
  },
  children: (t) => {
    const kids = [t.classify, ...t.routes.map(([, agent]) => agent)]
    if (t.default !== undefined) kids.push(t.default)
    return kids
  },
  withChildren: (t, kids) => {
    const routes = t.routes.map(([label], i) => [label, kids[i + 1]!] as const)
    return t.default === undefined ? { ...t, classify: kids[0]!, routes } : { ...t, classify: kids[0]!, routes, default: kids[routes.length + 1]! }
  },
  segments: (t) => [["route", "classify"], ...t.routes.map(([label]) => ["route", "routes", label]), ["route", "default"]],
  encode: (t, kids) => {
    const routes: Record<string, Term.Json> = {}
    t.routes.forEach(([label], i) => (routes[label] = kids[i + 1]!))
    const out: Record<string, Term.Json> = { classify: kids[0]!, routes }
    if (t.default !== undefined) out.default = kids[t.routes.length + 1]!
    return { route: out }
  },
  pretty: (t, kids, formal) => {
    const cases = t.routes.map(([label], i) => `(${JSON.stringify(label)}, ${kids[i + 1]})`)
    if (t.default !== undefined) cases.push(`(_, ${kids[t.routes.length + 1]})`)
    return formal ? `(λx. CASE (${kids[0]} x) [${cases.join(" ")}] x)` : `CASE (${kids[0]}) [${cases.join(", ")}]`
  },
  atomic: false,
  cost: (_, kids) => agentCost(plus(applied(kids[0]!), max(...kids.slice(1).map(applied)))),
  value: () => "function",
  // each node's step carries its labels, lower-cased for matching
  compile: (t, kids) => code(Op.Agent, t, [], { ...step, labels: new Map(t.routes.map(([label], i) => [label.toLowerCase(), i])) }, kids),
  events: ["route"],
  agent: step
}
