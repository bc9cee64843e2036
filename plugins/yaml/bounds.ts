/**
 * Worst-case bounds of compiled agents: the core's one analysis (`Analysis`), re-exported where
 * the YAML plugin's users look for it.
 *
 * @since 0.1.0
 * @module
 */
import { Analysis } from "lambdagent"

/**
 * Worst-case numbers of LLM calls and tool calls (`Infinity`: no static bound).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Bounds } from "lambdagent/yaml"
 * const b: Bounds = { llmCalls: 12, toolCalls: 12 }
 * ```
 */
export type Bounds = Analysis.Bounds

/**
 * The most LLM and tool calls one application of `term` to an input can make (`Analysis.bounds`).
 * Calls of the `__builtin_*` tools (validators, output parsers) count as tool calls, because the
 * runtime's tool budget counts them too.
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
export const bounds: (term: Parameters<typeof Analysis.bounds>[0]) => Bounds = Analysis.bounds
