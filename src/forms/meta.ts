/**
 * Code as data and the tool protocol: `quote`, `eval`, `code_of`, `self`, `continue`.
 */
import { code, type Code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import * as Value from "../Value.ts"
import { applied, dataCost, evalAll, plus, UNBOUNDED, ZERO } from "./analysis.ts"
import type { Form } from "./Form.ts"

/** `{"quote": t}` */
export interface Quote {
  readonly _tag: "Quote"
  readonly term: Term.Term
}

/** `{"eval": t}` */
export interface Eval {
  readonly _tag: "Eval"
  readonly term: Term.Term
}

/** `{"code_of": name}` */
export interface CodeOf {
  readonly _tag: "CodeOf"
  readonly name: string
}

/** `{"self": true}` */
export interface Self {
  readonly _tag: "Self"
}

/** `{"continue": {"input": x}}` */
export interface Continue {
  readonly _tag: "Continue"
  readonly input: Term.Term
}

/**
 * Quote a term: code as data, `{"quote": t}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.quote(Term.add(Term.lit(1), Term.lit(2)))
 * ```
 */
export const quote = (term: Term.Term): Term.Term => ({ _tag: "Quote", term })

/**
 * Evaluate quoted code, `{"eval": t}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.eval(Term.quote(Term.lit(1)))
 * ```
 */
export const evaluate = (term: Term.Term): Term.Term => ({ _tag: "Eval", term })

/**
 * The source of a named tool as quoted code, `{"code_of": name}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.eval(Term.codeOf("square"))
 * ```
 */
export const codeOf = (name: string): Term.Term => ({ _tag: "CodeOf", name })

/**
 * The running tool itself, `{"self": true}` (only inside a named tool).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.app(Term.self, Term.lit(3))
 * ```
 */
export const self: Term.Term = { _tag: "Self" }

/**
 * Ask the caller to run the current tool again with a new input, `{"continue": {"input": x}}`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.continue(Term.sub(Term.var("n"), Term.lit(1)))
 * ```
 */
export const continueWith = (input: Term.Term): Term.Term => ({ _tag: "Continue", input })

export const quoteForm: Form<Quote> = {
  tag: "Quote",
  keys: ["quote"],
  parse: (p, node, key, obj) => ({ kids: [p.sub(node, obj[key], key)], build: ([t]) => quote(t!) }),
  children: (t) => [t.term],
  withChildren: (t, [term]) => ({ ...t, term: term! }),
  segments: () => [["quote"]],
  encode: (_, [t]) => ({ quote: t! }),
  pretty: (_, [t], formal) => (formal ? `(quote ${t})` : `⌜${t}⌝`),
  atomic: false,
  capabilities: (_, into) => void (into.quote = true),
  // quoted code costs nothing until it is evaluated; `call` carries what evaluating it would cost
  cost: (_, [quoted]) => ({ eval: ZERO, call: quoted!.eval }),
  value: () => "data",
  // quoted code is data: `eval` compiles it where it runs
  compiled: () => [],
  compile: (t, kids) => code(Op.Quote, t, kids, new Value.Quoted(t.term)),
  events: []
}

export const evalForm: Form<Eval> = {
  tag: "Eval",
  keys: ["eval"],
  parse: (p, node, key, obj) => ({ kids: [p.sub(node, obj[key], key)], build: ([t]) => evaluate(t!) }),
  children: (t) => [t.term],
  withChildren: (t, [term]) => ({ ...t, term: term! }),
  segments: () => [["eval"]],
  encode: (_, [t]) => ({ eval: t! }),
  pretty: (_, [t], formal) => (formal ? `(eval ${t})` : `eval(${t})`),
  atomic: false,
  capabilities: (_, into) => void (into.eval = true),
  cost: (t, kids, context) => ({
    // evaluating a literal quote costs what the quoted code costs; computed code (from an input,
    // from another tool's `code_of`) can be anything
    eval: t.term._tag === "Quote" ? applied(kids[0]!) : plus(evalAll(kids), UNBOUNDED),
    call: context.unknown
  }),
  value: () => "unknown",
  compile: (t, kids, scope) => code(Op.Eval, t, kids, { scope, cache: new Map<Term.Term, Code>() }),
  events: []
}

export const codeOfForm: Form<CodeOf> = {
  tag: "CodeOf",
  keys: ["code_of"],
  parse: (p, node, key, obj) => codeOf(p.string(node, obj[key], key, "a tool name (string)")),
  children: () => [],
  withChildren: (t) => t,
  segments: () => [],
  encode: (t) => ({ code_of: t.name }),
  pretty: (t, _, formal) => (formal ? `(code_of ${JSON.stringify(t.name)})` : `code_of(${t.name})`),
  atomic: true,
  capabilities: (t, into) => {
    if (t.name === "self") into.self = true
    else into.codeOf.add(t.name)
  },
  cost: dataCost,
  value: () => "data",
  compile: (t, kids) => code(Op.CodeOf, t, kids, t.name),
  events: []
}

export const selfForm: Form<Self> = {
  tag: "Self",
  keys: ["self"],
  parse: () => self,
  children: () => [],
  withChildren: (t) => t,
  segments: () => [],
  encode: () => ({ self: true }),
  pretty: () => "self",
  atomic: true,
  capabilities: (_, into) => void (into.self = true),
  cost: (_, __, context) => ({ eval: ZERO, call: context.recursion }),
  value: () => "unknown",
  compile: (t, kids) => code(Op.Self, t, kids),
  events: []
}

export const continueForm: Form<Continue, "continue"> = {
  tag: "Continue",
  keys: ["continue"],
  parse: (p, node, key, obj) => {
    const f = p.fields(node, key, obj[key], ["input"])
    return { kids: [p.sub(node, f.input, key, "input")], build: ([t]) => continueWith(t!) }
  },
  children: (t) => [t.input],
  withChildren: (t, [input]) => ({ ...t, input: input! }),
  segments: () => [["continue", "input"]],
  encode: (_, [input]) => ({ continue: { input: input! } }),
  pretty: (_, [input], formal) => (formal ? `(continue ${input})` : `continue(${input})`),
  atomic: false,
  capabilities: (_, into) => void (into.continue = true),
  cost: dataCost,
  value: () => "data",
  compile: (t, kids) => code(Op.Continue, t, kids),
  events: ["continue"]
}
