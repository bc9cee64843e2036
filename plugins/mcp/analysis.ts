/**
 * Static checks of a term before it becomes a tool: which forms and capabilities it uses, its
 * size, its free variables, whether it can recurse, and whether the server's capability policy
 * lets it run. Nothing here evaluates the term, and nothing recurses on the JavaScript stack.
 *
 * @since 0.1.0
 * @module
 */
import type { Oracle, Term } from "lambdagent"
import { Analysis } from "lambdagent"

/**
 * What a term uses, found without running it (the core's `Analysis.Summary`).
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
export type TermAnalysis = Analysis.Summary

/**
 * The capabilities a term uses (the core's `Analysis.Capabilities`).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Capabilities } from "lambdagent/mcp"
 * const pure = (c: Capabilities) => !c.llm && c.tools.size === 0 && !c.memory && !c.parallel
 * ```
 */
export type Capabilities = Analysis.Capabilities

/**
 * Analyse a term: its forms, size, free variables, capabilities (see `Analysis.summarize`).
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { analyzeTerm } from "lambdagent/mcp"
 * analyzeTerm(Term.parse({ lam: "x", body: { var: "y" } })).freeVariables // ["y"]
 * ```
 */
export const analyzeTerm = (term: Term.Term): TermAnalysis => Analysis.summarize(term)

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

const toolAllowed = (policy: AgentPolicy, name: string): boolean => policy.tools === "*" || policy.tools?.includes(name) === true

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
  if (capabilities.parallel && policy.par !== true) out.push("par (parallel branches are not enabled on this server)")
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
export const requestViolation = (request: Oracle.Request, policy: AgentPolicy): string | undefined => {
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
    case "channels":
    case "send":
    case "receive":
      // messages between parts of the term itself: they reach nothing outside it
      return undefined
    case "ask":
      return "a question to a person (ask) has no one to answer it on this server"
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
export const recursionOf = (name: string, capabilities: Capabilities, references: (tool: string) => ReadonlyArray<string>): ReadonlyArray<string> => {
  const out: Array<string> = []
  if (capabilities.self) out.push("self")
  if (capabilities.continue) out.push("continue")
  if (capabilities.codeOf.has(name)) out.push(`code_of ${JSON.stringify(name)}`)
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
