/**
 * Static analyses of terms: what a term is made of, which variables it leaves free, what it may
 * do besides pure computation, and how many LLM and tool calls it can make at worst — all without
 * running it. Every analysis walks the term iteratively (no recursion on the JavaScript stack) and
 * asks each node's form for its part, so the core, the YAML plugin and the MCP plugin get one
 * answer.
 *
 * @since 0.2.0
 * @module
 */
import { applied, type Bounds, type CapabilityBuilder, type Cost, type CostContext, max, plus, times, ZERO } from "./forms/analysis.ts"
import { type AnyNode, formOf } from "./forms/index.ts"
import { foldTree } from "./internal/tree.ts"

type Term = AnyNode

export type {
  /**
   * Worst-case numbers of LLM calls and tool calls of a term, found without running it.
   * `Infinity` means no static bound (recursion through `self` or `eval`, or a fold over a list of
   * unknown length that calls an agent).
   *
   * @since 0.1.0
   * @category analyses
   * @example
   * ```ts
   * import type { Term } from "lambdagent"
   * const b: Term.Bounds = { llmCalls: 20, toolCalls: 20 }
   * ```
   */
  Bounds
}

const children = (t: Term): ReadonlyArray<Term> => formOf(t).children(t)

/**
 * Number of nodes in a term.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.size(Term.add(Term.lit(1), Term.lit(2))) // 3
 * ```
 */
export const size = (term: Term): number => {
  let n = 0
  const stack: Array<Term> = [term]
  while (stack.length > 0) {
    n++
    for (const kid of children(stack.pop()!)) stack.push(kid)
  }
  return n
}

/** A persistent set of bound names: one cell per enclosing binder. */
interface Bound {
  readonly name: string
  readonly next: Bound | undefined
}

const isBound = (bound: Bound | undefined, name: string): boolean => {
  for (let b = bound; b !== undefined; b = b.next) if (b.name === name) return true
  return false
}

/** Visit every node in pre-order (left to right) with the names bound around it. */
const walk = (term: Term, visit: (node: Term, bound: Bound | undefined) => void): void => {
  const stack: Array<{ readonly node: Term; readonly bound: Bound | undefined }> = [{ node: term, bound: undefined }]
  while (stack.length > 0) {
    const { bound, node } = stack.pop()!
    visit(node, bound)
    const form = formOf(node)
    const kids = form.children(node)
    for (let i = kids.length - 1; i >= 0; i--) {
      const name = form.binds?.(node, i)
      stack.push({ node: kids[i]!, bound: name === undefined ? bound : { name, next: bound } })
    }
  }
}

/**
 * The variables a term uses without binding them (quoted code included), in order of first use.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.freeVariables(Term.lam("x", Term.add(Term.var("x"), Term.var("y")))) // Set { "y" }
 * ```
 */
export const freeVariables = (term: Term): ReadonlySet<string> => {
  const free = new Set<string>()
  walk(term, (node, bound) => {
    if (node._tag === "Var" && !isBound(bound, node.name)) free.add(node.name)
  })
  return free
}

/**
 * What a term may do besides pure computation: call LLMs, which tools (`terminate` is not a tool
 * call), use memory, run branches in parallel, recurse (`self`, `eval`, `code_of`), quote code,
 * ask to continue.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const c: Term.Capabilities = {
 *   llm: true, tools: new Set(["search"]), memory: false, parallel: false, recursion: false, codeOf: new Set(),
 *   self: false, eval: false, quote: false, continue: false, react: false, ask: false
 * }
 * ```
 */
export interface Capabilities {
  readonly llm: boolean
  /** Tools the term may call, in order of first use. */
  readonly tools: ReadonlySet<string>
  readonly memory: boolean
  readonly parallel: boolean
  /** `self`, `eval` or `code_of` appears: the term may recurse. */
  readonly recursion: boolean
  /** Tools whose code the term reads with `code_of` (`self` excluded), in order of first use. */
  readonly codeOf: ReadonlySet<string>
  /** `{"self": true}` or `{"code_of": "self"}`. */
  readonly self: boolean
  readonly eval: boolean
  readonly quote: boolean
  readonly continue: boolean
  /** A ReAct loop (its thinking step is an LLM or another agent). */
  readonly react: boolean
  /** An `ask` form: the run may pause for a person's answer. */
  readonly ask: boolean
}

/**
 * The capabilities a term uses (see {@link Capabilities}).
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.capabilities(Term.app(Term.tool("search"), Term.lit("q"))).tools // Set { "search" }
 * ```
 */
export const capabilities = (term: Term): Capabilities => {
  const into: CapabilityBuilder = {
    llm: false,
    memory: false,
    parallel: false,
    self: false,
    eval: false,
    quote: false,
    continue: false,
    react: false,
    ask: false,
    tools: new Set(),
    codeOf: new Set()
  }
  walk(term, (node) => formOf(node).capabilities?.(node, into))
  return { ...into, recursion: into.self || into.eval || into.codeOf.size > 0 }
}

/**
 * The worst case of a term, three ways. `requests` is what the run's `llmCalls` and `toolCalls`
 * budgets count: every call the machine can ask for, each guard attempt included. `logical` counts
 * each guard once, as if every first attempt passed. `wire` adds the retries below the machine
 * (the provider's retries of an LLM call, a tool client's retries of a tool call): the calls that
 * can reach a server.
 *
 * @since 0.2.0
 * @category analyses
 * @example
 * ```ts
 * import type { Analysis } from "lambdagent"
 * const r: Analysis.WorstCase = {
 *   requests: { llmCalls: 3, toolCalls: 0 },
 *   logical: { llmCalls: 1, toolCalls: 0 },
 *   wire: { llmCalls: 12, toolCalls: 0 }
 * }
 * ```
 */
export interface WorstCase {
  readonly requests: Bounds
  readonly logical: Bounds
  readonly wire: Bounds
}

/**
 * Retries below the machine, for {@link worstCase}'s `wire` figure.
 *
 * @since 0.2.0
 * @category analyses
 * @example
 * ```ts
 * import type { Analysis } from "lambdagent"
 * const o: Analysis.RetryOptions = { llmRetries: 3, toolRetries: 2 }
 * ```
 */
export interface RetryOptions {
  /** Retries of one LLM call by its provider (default 3, the providers' default). */
  readonly llmRetries?: number
  /** Retries of one tool call by its client, e.g. MCP `retryOnFail` (default 0). */
  readonly toolRetries?: number
}

/** Fixed-point rounds for the cost of applying an unknown function before calling it unbounded. */
const MAX_ROUNDS = 8

const sameBounds = (a: Bounds, b: Bounds) => a.llmCalls === b.llmCalls && a.toolCalls === b.toolCalls

/**
 * The calls of running `term` on an input: evaluating it, then applying its value once unless it
 * is data. The cost of applying a function not known statically (a variable, a computed value)
 * is the costliest function value of the term, found as a fixed point: a function passed around
 * can only be one of the term's own functions.
 */
const calls = (term: Term, countAttempts: boolean): Bounds => {
  const caps = capabilities(term)
  const recursion: Bounds = { llmCalls: caps.llm ? Infinity : 0, toolCalls: caps.tools.size > 0 ? Infinity : 0 }
  const attempts = countAttempts ? (retry: number) => retry + 1 : () => 1
  const round = (unknown: Bounds) => {
    let costliest = ZERO
    const context: CostContext = { unknown, recursion, attempts }
    const root = foldTree<Term, Cost>(term, children, (t, kids) => {
      const form = formOf(t)
      const cost = form.cost(t, kids, context)
      if (form.value(t) === "function") costliest = max(costliest, cost.call)
      return cost
    })
    return { root, costliest }
  }
  let unknown = ZERO
  let result = round(unknown)
  for (let rounds = 1; !sameBounds(result.costliest, unknown); rounds++) {
    // a cost that keeps growing is recursion through self-application: no bound
    unknown = rounds < MAX_ROUNDS ? result.costliest : times(Infinity, result.costliest)
    result = round(unknown)
    if (rounds >= MAX_ROUNDS) break
  }
  return formOf(term).value(term) === "data" ? result.root.eval : applied(result.root)
}

/**
 * Worst-case LLM calls and tool calls of running a term on an input once: evaluating it and, when
 * it is a function (every agent is), applying it. Loops multiply their body's bound by their
 * maximum, conditionals and routes take the costliest branch, guards multiply by their attempts,
 * folds over a literal list by its length; recursion through `self` or `eval` is `Infinity`
 * where it can call an oracle. The bound is sound: no run makes more calls.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.bounds(Term.react({ think: Term.llm({ system: "…" }), tools: ["search"], maxSteps: 20 }))
 * // { llmCalls: 20, toolCalls: 20 }
 * ```
 */
export const bounds = (term: Term): Bounds => calls(term, true)

/**
 * The worst case of a term counted three ways (see {@link WorstCase}).
 *
 * @since 0.2.0
 * @category analyses
 * @example
 * ```ts
 * import { Analysis, Term } from "lambdagent"
 * const guarded = Term.guard({ agent: Term.llm({ system: "JSON." }), validate: Term.lam("x", Term.isJson(Term.var("x"))), retry: 2, fallback: "last" })
 * Analysis.worstCase(guarded).logical // { llmCalls: 1, toolCalls: 0 }
 * Analysis.worstCase(guarded, { llmRetries: 1 }).wire // { llmCalls: 6, toolCalls: 0 }
 * ```
 */
export const worstCase = (term: Term, options: RetryOptions = {}): WorstCase => {
  const requests = calls(term, true)
  const llmRetries = options.llmRetries ?? 3
  const toolRetries = options.toolRetries ?? 0
  return {
    requests,
    logical: calls(term, false),
    wire: plus(times(1 + llmRetries, { llmCalls: requests.llmCalls, toolCalls: 0 }), times(1 + toolRetries, { llmCalls: 0, toolCalls: requests.toolCalls }))
  }
}

/**
 * Everything the static analyses tell about a term at once.
 *
 * @since 0.2.0
 * @category analyses
 * @example
 * ```ts
 * import type { Analysis } from "lambdagent"
 * const fn = (a: Analysis.Summary) => a.isFunction === true
 * ```
 */
export interface Summary {
  /** The forms used, in pre-order, each once (`lam`, `app`, `add`, …, `list` for an array literal). */
  readonly forms: ReadonlyArray<string>
  readonly size: number
  /** Variables used without a binder, in order of first use. */
  readonly freeVariables: ReadonlyArray<string>
  /** The JSON path from the root to the first free variable, when there is one. */
  readonly freeVariablePath?: ReadonlyArray<string | number>
  readonly capabilities: Capabilities
  /**
   * `true` when the term is certainly a function (a `lam` or an agent form), `false` when it is
   * certainly data, `undefined` when only evaluation can tell.
   */
  readonly isFunction: boolean | undefined
}

/** The form a node shows as in {@link Summary.forms}: its JSON key (`list` for an array); variables and literals are not listed. */
const formName = (t: Term): string | undefined => {
  if (t._tag === "Binary" || t._tag === "Unary") return t.op
  if (t._tag === "List") return "list"
  if (t._tag === "Var") return undefined
  return formOf(t).keys[0]
}

/**
 * Analyse a term in one pass over it (see {@link Summary}).
 *
 * @since 0.2.0
 * @category analyses
 * @example
 * ```ts
 * import { Analysis, Term } from "lambdagent"
 * const a = Analysis.summarize(Term.lam("x", Term.add(Term.var("x"), Term.var("y"))))
 * a.freeVariables // ["y"]
 * a.freeVariablePath // ["body", "add", 1]
 * ```
 */
export const summarize = (term: Term): Summary => {
  const forms = new Set<string>()
  const free = new Set<string>()
  let firstFree: Array<string | number> | undefined
  let n = 0
  // paths are only needed for the first free variable: walk with parent links, resolve once
  interface Entry {
    readonly node: Term
    readonly bound: Bound | undefined
    readonly parent: Entry | undefined
    readonly segments: ReadonlyArray<string | number>
  }
  const stack: Array<Entry> = [{ node: term, bound: undefined, parent: undefined, segments: [] }]
  while (stack.length > 0) {
    const entry = stack.pop()!
    const { bound, node } = entry
    n++
    const name = formName(node)
    if (name !== undefined) forms.add(name)
    if (node._tag === "Var" && !isBound(bound, node.name) && !free.has(node.name)) {
      free.add(node.name)
      if (firstFree === undefined) {
        const parts: Array<ReadonlyArray<string | number>> = []
        for (let e: Entry | undefined = entry; e !== undefined; e = e.parent) parts.push(e.segments)
        firstFree = parts.reverse().flat()
      }
    }
    const form = formOf(node)
    const kids = form.children(node)
    const segments = form.segments(node)
    for (let i = kids.length - 1; i >= 0; i--) {
      const binds = form.binds?.(node, i)
      stack.push({ node: kids[i]!, bound: binds === undefined ? bound : { name: binds, next: bound }, parent: entry, segments: segments[i]! })
    }
  }
  const kind = formOf(term).value(term)
  return {
    forms: [...forms],
    size: n,
    freeVariables: [...free],
    ...(firstFree !== undefined ? { freeVariablePath: firstFree } : {}),
    capabilities: capabilities(term),
    isFunction: kind === "function" ? true : kind === "data" ? false : undefined
  }
}
