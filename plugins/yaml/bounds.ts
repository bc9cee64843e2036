/**
 * Worst-case counts of LLM and tool calls for one application of a term: loops and retries
 * multiply, routers take their most expensive branch, parallel branches add up. A count that no
 * finite bound covers (a fold over a list of unknown length, `eval`, self-application) is
 * `Infinity`.
 *
 * @since 0.1.0
 * @module
 */
import { Term } from "lambdagent"

/**
 * Worst-case calls.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Bounds } from "lambdagent/yaml"
 * const b: Bounds = { llmCalls: 20, toolCalls: 20 }
 * ```
 */
export interface Bounds {
  readonly llmCalls: number
  readonly toolCalls: number
}

const zero: Bounds = { llmCalls: 0, toolCalls: 0 }
const plus = (a: Bounds, b: Bounds): Bounds => ({ llmCalls: a.llmCalls + b.llmCalls, toolCalls: a.toolCalls + b.toolCalls })
const times = (n: number, a: Bounds): Bounds => ({
  llmCalls: a.llmCalls === 0 ? 0 : n * a.llmCalls,
  toolCalls: a.toolCalls === 0 ? 0 : n * a.toolCalls
})
const max = (a: Bounds, b: Bounds): Bounds => ({ llmCalls: Math.max(a.llmCalls, b.llmCalls), toolCalls: Math.max(a.toolCalls, b.toolCalls) })
const sum = (bs: ReadonlyArray<Bounds>) => bs.reduce(plus, zero)
const unbounded: Bounds = { llmCalls: Infinity, toolCalls: Infinity }

/** Calls made while evaluating `t` as an expression (building a function costs nothing). */
const evaluating = (t: Term.Term): Bounds => {
  switch (t._tag) {
    case "App":
      return sum([evaluating(t.func), evaluating(t.arg), applying(t.func)])
    case "If":
      return plus(evaluating(t.cond), max(evaluating(t.then), evaluating(t.else)))
    case "Fold":
      return t.list._tag === "List" || t.list._tag === "Nil"
        ? sum([evaluating(t.func), evaluating(t.init), evaluating(t.list), times(t.list._tag === "Nil" ? 0 : t.list.items.length, applying(t.func))])
        : isFree(applying(t.func)) ? sum([evaluating(t.init), evaluating(t.list)]) : unbounded
    case "Eval":
    case "Continue":
      return unbounded
    case "Lam":
    case "Llm":
    case "Tool":
    case "Compose":
    case "Loop":
    case "Route":
    case "Par":
    case "Guard":
    case "Memory":
    case "React":
    case "Quote":
      return zero
    default:
      return sum(Term.children(t).map(evaluating))
  }
}

const isFree = (b: Bounds) => b.llmCalls === 0 && b.toolCalls === 0

/** Calls made by applying `t` (a function) to one argument. */
const applying = (t: Term.Term): Bounds => {
  switch (t._tag) {
    case "Lam":
      return evaluating(t.body)
    case "Llm":
      return { llmCalls: 1, toolCalls: 0 }
    case "Tool":
      return { llmCalls: 0, toolCalls: 1 }
    case "Compose":
      return sum(t.stages.map(applying))
    case "Loop":
      return times(t.max, plus(applying(t.body), t.until === undefined ? zero : applying(t.until)))
    case "Route": {
      const branches = [...t.routes.map(([, a]) => applying(a)), ...(t.default === undefined ? [] : [applying(t.default)])]
      return plus(applying(t.classify), branches.reduce(max, zero))
    }
    case "Par":
      return plus(sum(t.branches.map(applying)), typeof t.merge === "string" ? zero : applying(t.merge))
    case "Guard":
      return plus(
        times(t.retry + 1, plus(applying(t.agent), applying(t.validate))),
        typeof t.fallback === "string" ? zero : evaluating(t.fallback.value)
      )
    case "Memory":
      return applying(t.agent)
    case "React": {
      // At most maxSteps thoughts, each followed by at most one tool call.
      const think = applying(t.think)
      return times(t.maxSteps, { llmCalls: think.llmCalls, toolCalls: think.toolCalls + 1 })
    }
    case "App":
      // A function computed by an application: its cost is not known statically.
      return isFree(evaluating(t)) && !mayCall(t) ? zero : unbounded
    default:
      return mayCall(t) ? unbounded : zero
  }
}

/** Whether a term contains anything that could call an oracle when applied. */
const mayCall = (t: Term.Term): boolean => {
  const stack = [t]
  while (stack.length > 0) {
    const node = stack.pop()!
    switch (node._tag) {
      case "Llm":
      case "Tool":
      case "React":
      case "Memory":
      case "Par":
      case "Eval":
      case "Self":
      case "CodeOf":
        return true
    }
    stack.push(...Term.children(node))
  }
  return false
}

/**
 * The most LLM and tool calls one application of `term` to an input can make. Calls of the
 * `__builtin_*` tools (validators, output parsers) count as tool calls, because the runtime's
 * tool budget counts them too.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { bounds } from "lambdagent/yaml"
 * const think = Term.llm({ system: "Think." })
 * bounds(Term.react({ think, tools: ["search", "terminate"], maxSteps: 5 })) // { llmCalls: 5, toolCalls: 5 }
 * bounds(Term.loop({ body: Term.compose([think, think]), max: 3 })) // { llmCalls: 6, toolCalls: 0 }
 * ```
 */
export const bounds = (term: Term.Term): Bounds => applying(term)
