/**
 * Static checks of a term before it becomes a tool: which forms and capabilities it uses, its
 * size, its free variables, whether it can recurse, and whether the server's capability policy
 * lets it run. Nothing here evaluates the term, and nothing recurses on the JavaScript stack.
 *
 * @since 0.1.0
 * @module
 */
import type { Evaluator } from "lambdagent"
import { Term } from "lambdagent"

/**
 * What a term uses, found without running it.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { analyzeTerm } from "lambdagent/mcp"
 * const a = analyzeTerm(Term.parse({ lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } }))
 * console.log(a.forms, a.size) // ["lam", "mul"] 4
 * ```
 */
export interface TermAnalysis {
  /** The forms used, in pre-order, each once (`lam`, `app`, `add`, …, `list` for an array literal). */
  readonly forms: ReadonlyArray<string>
  /** Number of nodes. */
  readonly size: number
  /** Variables used without an enclosing `lam` binding them, in order of first use. */
  readonly freeVariables: ReadonlyArray<string>
  /** Where the first free variable occurs (JSON path from the root), when there is one. */
  readonly freeVariablePath?: ReadonlyArray<string | number>
  readonly capabilities: Capabilities
  /**
   * `true` when the term is certainly a function (a `lam` or an agent form), `false` when it is
   * certainly data (a literal, list, pair, quote, …), `undefined` when only evaluation can tell.
   */
  readonly isFunction: boolean | undefined
}

/**
 * The capabilities a term uses: the tool protocol (`self`, `eval`, `quote`, `continue`, the
 * tools named by `code_of`) and the agent forms, which need an oracle to run.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { analyzeTerm } from "lambdagent/mcp"
 * analyzeTerm(Term.parse({ eval: { code_of: "is_odd" } })).capabilities.codeOf // ["is_odd"]
 * ```
 */
export interface Capabilities {
  /** `{"self": true}` or `{"code_of": "self"}`. */
  readonly self: boolean
  readonly eval: boolean
  readonly quote: boolean
  readonly continue: boolean
  /** Tools whose source the term reads with `code_of` (`"self"` excluded), in order of first use. */
  readonly codeOf: ReadonlyArray<string>
  /** `llm` forms (a `react` loop's thinking step is one). */
  readonly llm: boolean
  /** Host tools named by `tool` forms and `react` tool lists (`terminate` excluded). */
  readonly tools: ReadonlyArray<string>
  readonly memory: boolean
  readonly par: boolean
  readonly react: boolean
}

const FORM_OF: Partial<Record<Term.Tag, string>> = {
  Lam: "lam",
  App: "app",
  If: "if",
  Nil: "nil",
  Cons: "cons",
  List: "list",
  Pair: "pair",
  Fold: "fold",
  Quote: "quote",
  Eval: "eval",
  CodeOf: "code_of",
  Self: "self",
  Continue: "continue",
  Llm: "llm",
  Tool: "tool",
  Compose: "compose",
  Loop: "loop",
  Route: "route",
  Par: "par",
  Guard: "guard",
  Memory: "memory",
  React: "react"
}

const FUNCTION_TAGS: ReadonlySet<Term.Tag> = new Set<Term.Tag>([
  "Lam",
  "Llm",
  "Tool",
  "Compose",
  "Loop",
  "Route",
  "Par",
  "Guard",
  "Memory",
  "React"
])
const DATA_TAGS: ReadonlySet<Term.Tag> = new Set<Term.Tag>(["Lit", "Nil", "Cons", "List", "Pair", "Quote", "CodeOf", "Binary", "Unary"])

/** A persistent set of bound names: one cell per enclosing `lam`. */
interface Bound {
  readonly name: string
  readonly next: Bound | undefined
}

const isBound = (bound: Bound | undefined, name: string): boolean => {
  for (let b = bound; b !== undefined; b = b.next) if (b.name === name) return true
  return false
}

/**
 * Analyse a term: forms, size, free variables, capabilities and whether it is a function.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { analyzeTerm } from "lambdagent/mcp"
 * const a = analyzeTerm(Term.parse({ lam: "n", body: { continue: { input: { var: "m" } } } }))
 * console.log(a.freeVariables, a.capabilities.continue) // ["m"] true
 * ```
 */
export const analyzeTerm = (term: Term.Term): TermAnalysis => {
  const forms: Array<string> = []
  const seenForms = new Set<string>()
  const free: Array<string> = []
  const seenFree = new Set<string>()
  let firstFree: Term.Term | undefined
  const codeOf: Array<string> = []
  const tools: Array<string> = []
  let size = 0
  let self = false
  let usesEval = false
  let quote = false
  let cont = false
  let llm = false
  let memory = false
  let par = false
  let react = false

  const stack: Array<{ readonly term: Term.Term; readonly bound: Bound | undefined }> = [{ term, bound: undefined }]
  while (stack.length > 0) {
    const { bound, term: node } = stack.pop()!
    size++
    const form = node._tag === "Binary" || node._tag === "Unary" ? node.op : FORM_OF[node._tag]
    if (form !== undefined && !seenForms.has(form)) {
      seenForms.add(form)
      forms.push(form)
    }
    switch (node._tag) {
      case "Var":
        if (!isBound(bound, node.name) && !seenFree.has(node.name)) {
          seenFree.add(node.name)
          free.push(node.name)
          firstFree ??= node
        }
        break
      case "Self":
        self = true
        break
      case "CodeOf":
        if (node.name === "self") self = true
        else if (!codeOf.includes(node.name)) codeOf.push(node.name)
        break
      case "Eval":
        usesEval = true
        break
      case "Quote":
        quote = true
        break
      case "Continue":
        cont = true
        break
      case "Llm":
        llm = true
        break
      case "Tool":
        if (!tools.includes(node.name)) tools.push(node.name)
        break
      case "Memory":
        memory = true
        break
      case "Par":
        par = true
        break
      case "React":
        react = true
        for (const name of node.tools) if (name.toLowerCase() !== "terminate" && !tools.includes(name)) tools.push(name)
        break
      default:
        break
    }
    const inner: Bound | undefined = node._tag === "Lam" ? { name: node.param, next: bound } : bound
    const kids = Term.children(node)
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ term: kids[i]!, bound: inner })
  }

  const freeVariablePath = firstFree === undefined ? undefined : Term.pathTo(term, firstFree)
  return {
    forms,
    size,
    freeVariables: free,
    ...(freeVariablePath !== undefined ? { freeVariablePath } : {}),
    capabilities: { self, eval: usesEval, quote, continue: cont, codeOf, llm, tools, memory, par, react },
    isFunction: FUNCTION_TAGS.has(term._tag) ? true : DATA_TAGS.has(term._tag) ? false : undefined
  }
}

/**
 * Which agent capabilities evolved tools and `run` may use. Everything is off by default: evolved
 * tools are pure computations. Turning a capability on lets terms use it; running them also needs
 * an oracle that answers the requests (see `LambdaServerOptions.answerOracle`).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { AgentPolicy } from "lambdagent/mcp"
 * const policy: AgentPolicy = { llm: true, tools: ["search"] }
 * ```
 */
export interface AgentPolicy {
  /** Allow `llm` forms (and `react`, whose thinking step is a model). */
  readonly llm?: boolean
  /** Host tools `tool` forms and `react` loops may name; `"*"` allows any. */
  readonly tools?: ReadonlyArray<string> | "*"
  /** Allow `memory` forms. */
  readonly memory?: boolean
  /** Allow `par` (parallel branches). */
  readonly par?: boolean
}

const toolAllowed = (policy: AgentPolicy, name: string): boolean =>
  policy.tools === "*" || (policy.tools !== undefined && policy.tools.includes(name))

/**
 * The reasons a term's capabilities exceed a policy; empty when it may run.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { analyzeTerm, policyViolations } from "lambdagent/mcp"
 * const a = analyzeTerm(Term.parse({ tool: "search" }))
 * policyViolations(a.capabilities, {}) // ['host tool "search" (not in the allowed tools)']
 * policyViolations(a.capabilities, { tools: ["search"] }) // []
 * ```
 */
export const policyViolations = (capabilities: Capabilities, policy: AgentPolicy): ReadonlyArray<string> => {
  const out: Array<string> = []
  if (capabilities.llm && policy.llm !== true) out.push("llm (LLM calls are not enabled on this server)")
  for (const name of capabilities.tools) {
    if (!toolAllowed(policy, name)) out.push(`host tool ${JSON.stringify(name)} (not in the allowed tools)`)
  }
  if (capabilities.memory && policy.memory !== true) out.push("memory (not enabled on this server)")
  if (capabilities.par && policy.par !== true) out.push("par (parallel branches are not enabled on this server)")
  return out
}

/**
 * Why an oracle request may not be answered under a policy, or `undefined` when it may. This is
 * the run-time half of the gate: it also covers agent forms that arrive inside an input.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Evaluator, Term } from "lambdagent"
 * import { requestViolation } from "lambdagent/mcp"
 * const step = Evaluator.start(Term.app(Term.tool("rm"), Term.lit(1))).next()
 * if (step._tag === "Suspended") requestViolation(step.request, {}) // 'host tool "rm" is not allowed'
 * ```
 */
export const requestViolation = (request: Evaluator.OracleRequest, policy: AgentPolicy): string | undefined => {
  switch (request.kind) {
    case "llm":
      return policy.llm === true ? undefined : "LLM calls are not enabled on this server"
    case "tool":
      return toolAllowed(policy, request.name) ? undefined : `host tool ${JSON.stringify(request.name)} is not allowed`
    case "memory-read":
    case "memory-write":
      return policy.memory === true ? undefined : "memory is not enabled on this server"
    case "par":
      return policy.par === true ? undefined : "parallel branches are not enabled on this server"
  }
}

/**
 * Whether a tool can recurse, and how: `self` (or `code_of "self"`), `continue`, or a cycle of
 * `code_of` references through other tools (`mutual: is_even → is_odd → is_even`).
 *
 * `references` gives the `code_of` targets of every other registered tool.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { analyzeTerm, recursionOf } from "lambdagent/mcp"
 * const a = analyzeTerm(Term.parse({ lam: "n", body: { app: { func: { eval: { code_of: "is_odd" } }, arg: { var: "n" } } } }))
 * recursionOf("is_even", a.capabilities, (name) => (name === "is_odd" ? ["is_even"] : [])) // ["mutual: is_even → is_odd → is_even"]
 * ```
 */
export const recursionOf = (
  name: string,
  capabilities: Capabilities,
  references: (tool: string) => ReadonlyArray<string>
): ReadonlyArray<string> => {
  const out: Array<string> = []
  if (capabilities.self) out.push("self")
  if (capabilities.continue) out.push("continue")
  if (capabilities.codeOf.includes(name)) out.push(`code_of ${JSON.stringify(name)}`)
  // Breadth-first search for the shortest code_of path back to `name`.
  const previous = new Map<string, string>()
  const queue: Array<string> = []
  for (const target of capabilities.codeOf) {
    if (target !== name && !previous.has(target)) {
      previous.set(target, name)
      queue.push(target)
    }
  }
  for (let i = 0; i < queue.length; i++) {
    const current = queue[i]!
    for (const next of references(current)) {
      if (next === name) {
        const path = [current]
        for (let p = previous.get(current)!; p !== name; p = previous.get(p)!) path.unshift(p)
        out.push(`mutual: ${[name, ...path, name].join(" → ")}`)
        return out
      }
      if (!previous.has(next)) {
        previous.set(next, current)
        queue.push(next)
      }
    }
  }
  return out
}
