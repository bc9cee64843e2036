/**
 * Test support (not exported by the plugin): run a compiled agent term with scripted oracles,
 * recording every LLM and tool call, without a runtime.
 *
 * @since 0.1.0
 * @module
 */
import { Evaluator, Term, Value } from "lambdagent"
import { isBuiltinTool, runBuiltin } from "./builtins.ts"

/**
 * What the scripted oracles saw.
 *
 * @since 0.1.0
 * @category testing
 * @example
 * ```ts
 * import type { Calls } from "./test-helpers.ts"
 * const c: Calls = { llm: [], tools: [] }
 * ```
 */
export interface Calls {
  readonly llm: Array<{ readonly name: string; readonly system: string; readonly input: string }>
  readonly tools: Array<{ readonly name: string; readonly input: unknown }>
}

/**
 * Scripted answers.
 *
 * @since 0.1.0
 * @category testing
 * @example
 * ```ts
 * import type { Oracles } from "./test-helpers.ts"
 * const o: Oracles = { llm: (call) => `answer of ${call.name}` }
 * ```
 */
export interface Oracles {
  readonly llm?: (call: { readonly name: string; readonly system: string; readonly input: string; readonly index: number }) => string
  readonly tool?: (name: string, input: unknown) => Value.Value
}

/**
 * Run a `par` term the way `docs/language.md` defines it, from its parts: every branch on the
 * input, then the merge (`tuple`: a pair for two branches, a list otherwise; `concat`: the texts
 * joined by a blank line; a term: applied to the list of results).
 *
 * @since 0.1.0
 * @category testing
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { runParallel } from "./test-helpers.ts"
 * runParallel(Term.par([Term.llm({ system: "a", name: "a" })], "concat") as Term.Of<"Par">, "x").value // "(a)"
 * ```
 */
export const runParallel = (term: Term.Of<"Par">, input: string, oracles: Oracles = {}): { readonly value: Value.Value; readonly calls: Calls } => {
  const calls: Calls = { llm: [], tools: [] }
  const results = term.branches.map((b) => drive(Evaluator.start(Term.app(b, Term.lit(input))), oracles, calls))
  let value: Value.Value
  if (term.merge === "tuple") value = results.length === 2 ? new Value.Pair(results[0]!, results[1]!) : Value.fromArray(results)
  else if (term.merge === "concat") value = results.map(Value.toText).join("\n\n")
  else value = drive(Evaluator.start(Term.app(term.merge, Term.parse(Value.toJson(Value.fromArray(results))))), oracles, calls)
  return { value, calls }
}

const drive = (execution: Evaluator.Execution, oracles: Oracles, calls: Calls): Value.Value => {
  let step = execution.next()
  while (step._tag === "Suspended") {
    const request = step.request
    switch (request.kind) {
      case "llm": {
        const call = { name: request.term.name ?? "", system: request.term.system, input: Value.toText(request.input) }
        calls.llm.push(call)
        step = execution.resume(oracles.llm?.({ ...call, index: calls.llm.length - 1 }) ?? `(${call.name})`)
        break
      }
      case "tool": {
        calls.tools.push({ name: request.name, input: Value.toJson(request.input) })
        const answer = isBuiltinTool(request.name)
          ? runBuiltin(request.name, request.input)
          : (oracles.tool?.(request.name, Value.toJson(request.input)) ?? `[${request.name}]`)
        step = execution.resume(answer)
        break
      }
      case "memory-read":
      case "memory-write":
      case "par":
        // This driver answers model and tool requests only: `par` terms are run from their parts
        // (runParallel) and memory through a real runtime (acceptance.test.ts).
        throw new Error(`runAgent does not answer ${request.kind} requests; run the parts separately`)
    }
  }
  return step.value
}

/**
 * Apply an agent term to a text input, answering LLM calls with `oracles.llm` (default: the
 * call's name in parentheses), builtins with their implementations and other tools with
 * `oracles.tool` (default `[name]`).
 *
 * @since 0.1.0
 * @category testing
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { runAgent } from "./test-helpers.ts"
 * runAgent(Term.llm({ system: "Hi", name: "a" }), "x").value // "(a)"
 * ```
 */
export const runAgent = (term: Term.Term, input: string, oracles: Oracles = {}): { readonly value: Value.Value; readonly calls: Calls } => {
  const calls: Calls = { llm: [], tools: [] }
  const value = drive(Evaluator.start(Term.app(term, Term.lit(input))), oracles, calls)
  return { value, calls }
}
