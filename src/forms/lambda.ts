/**
 * The λ-calculus core: variables, abstraction, application.
 */
import { code, Op, type Scope } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import { applied, plus, unknownCost, ZERO } from "./analysis.ts"
import type { Form } from "./Form.ts"

/** `{"var": name}` */
export interface Var {
  readonly _tag: "Var"
  readonly name: string
}

/** `{"lam": param, "body": body}` */
export interface Lam {
  readonly _tag: "Lam"
  readonly param: string
  readonly body: Term.Term
}

/** `{"app": {"func": f, "arg": a}}` */
export interface App {
  readonly _tag: "App"
  readonly func: Term.Term
  readonly arg: Term.Term
}

/**
 * A variable reference, `{"var": name}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.var("x")
 * ```
 */
export const variable = (name: string): Term.Term => ({ _tag: "Var", name })

/**
 * A lambda abstraction, `{"lam": param, "body": body}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.lam("x", Term.var("x"))
 * ```
 */
export const lam = (param: string, body: Term.Term): Term.Term => ({ _tag: "Lam", param, body })

/**
 * An application, `{"app": {"func": f, "arg": a}}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.app(Term.lam("x", Term.var("x")), Term.lit(1))
 * ```
 */
export const app = (func: Term.Term, arg: Term.Term): Term.Term => ({ _tag: "App", func, arg })

const lookup = (scope: Scope | undefined, name: string): number => {
  let i = 0
  for (let s = scope; s !== undefined; s = s.next, i++) if (s.name === name) return i
  return -1
}

export const varForm: Form<Var> = {
  tag: "Var",
  keys: ["var"],
  parse: (p, node, key, obj) => variable(p.string(node, obj[key], key, "a variable name (string)")),
  children: () => [],
  withChildren: (t) => t,
  segments: () => [],
  encode: (t) => ({ var: t.name }),
  pretty: (t) => t.name,
  atomic: true,
  cost: unknownCost,
  value: () => "unknown",
  compile: (t, kids, scope) => {
    const index = lookup(scope, t.name)
    return index < 0 ? code(Op.Unbound, t, kids, t.name) : code(Op.Var, t, kids, index)
  },
  events: []
}

export const lamForm: Form<Lam> = {
  tag: "Lam",
  keys: ["lam"],
  siblings: ["body"],
  parse: (p, node, key, obj) => {
    const param = p.string(node, obj[key], key, "a parameter name (string)")
    if (!Object.hasOwn(obj, "body")) return p.fail(node, 'a "body" next to "lam"')
    return { kids: [p.child(node, obj.body, "body")], build: ([body]) => lam(param, body!) }
  },
  children: (t) => [t.body],
  withChildren: (t, [body]) => ({ ...t, body: body! }),
  segments: () => [["body"]],
  encode: (t, [body]) => ({ lam: t.param, body: body! }),
  pretty: (t, [body], formal) => (formal ? `(λ${t.param}. ${body})` : `λ${t.param}. ${body}`),
  atomic: false,
  binds: (t) => t.param,
  cost: (_, [body]) => ({ eval: ZERO, call: body!.eval }),
  value: () => "function",
  compile: (t, kids) => code(Op.Lam, t, kids, t.param),
  events: []
}

export const appForm: Form<App> = {
  tag: "App",
  keys: ["app"],
  parse: (p, node, key, obj) => {
    const f = p.fields(node, key, obj[key], ["func", "arg"])
    return { kids: [p.sub(node, f.func, key, "func"), p.sub(node, f.arg, key, "arg")], build: ([func, arg]) => app(func!, arg!) }
  },
  children: (t) => [t.func, t.arg],
  withChildren: (t, [func, arg]) => ({ ...t, func: func!, arg: arg! }),
  segments: () => [
    ["app", "func"],
    ["app", "arg"]
  ],
  encode: (_, [func, arg]) => ({ app: { func: func!, arg: arg! } }),
  pretty: (t, [func, arg], formal, operand) => (formal ? `(${func} ${arg})` : `${t.func._tag === "Lam" ? `(${func})` : operand(0)} ${operand(1)}`),
  atomic: false,
  // applying `self` is recursion: as many calls as the recursion makes
  cost: (t, [func, arg], context) => ({
    eval: plus(t.func._tag === "Self" ? context.recursion : applied(func!), arg!.eval),
    call: context.unknown
  }),
  value: () => "unknown",
  compile: (t, kids) => code(Op.App, t, kids),
  events: []
}
