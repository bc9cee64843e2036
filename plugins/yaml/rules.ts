/**
 * The lint rules: each has a stable id, a level, a one-line title and what it means in the
 * lambda calculus. `docs/lint.md` describes each one in full.
 *
 * @since 0.1.0
 * @module
 */

/**
 * How serious a finding is. Errors make `lint` exit with code 3.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LintLevel } from "lambdagent/yaml"
 * const l: LintLevel = "warn"
 * ```
 */
export type LintLevel = "error" | "warn" | "info"

/**
 * A lint rule.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { lintRules } from "lambdagent/yaml"
 * const rule = lintRules.find((r) => r.id === "L004")!
 * console.log(rule.level, rule.title) // "error" "react agent without a terminate tool"
 * ```
 */
export interface LintRule {
  readonly id: string
  readonly level: LintLevel
  readonly title: string
  /** What the finding means for the compiled term. */
  readonly lambda: string
  /** Whether compiling fails with a `SemanticError` when the rule fires. */
  readonly blocksCompile: boolean
}

const rule = (id: string, level: LintLevel, title: string, lambda: string, blocksCompile = false): LintRule => ({
  id,
  level,
  title,
  lambda,
  blocksCompile
})

/**
 * Every rule, in id order. L001–L016 are the rules of the original specification; L017, L018 and
 * L023–L026 adapt the reference implementation's extra rules; L027–L035 are analyses of the
 * compiled term and the tool declarations; L036–L038 concern `sharedMemory`; L039–L041 concern
 * `sandbox`; L042–L045 concern group chats, hand-offs and skills; L046–L049 channels; L050
 * structured output; L051 fields of the Python reference's format; L052 a guard fallback the
 * reference reads differently.
 *
 * @since 0.1.0
 * @category rules
 * @example
 * ```ts
 * import { lintRules } from "lambdagent/yaml"
 * console.log(lintRules.map((r) => r.id).slice(0, 3)) // ["L001", "L002", "L003"]
 * ```
 */
export const lintRules: ReadonlyArray<LintRule> = [
  rule("L001", "error", "empty prompt", "λx. ⊥ — the function body is undefined: the LLM has no instruction", true),
  rule("L002", "error", "no model configured", "no computation unit: LLM_{θ,p} has no model, so the β-reduction cannot run unless the runtime supplies one"),
  rule("L003", "error", "react.maxSteps is 0", "Y₀(g) = ⊥ — the agent never executes", true),
  rule(
    "L004",
    "error",
    "react agent without a terminate tool",
    "Y without the base case terminate = λx.x: the loop only ends at its bound or when a thought names no tool"
  ),
  rule("L005", "error", "router without routes", "CASE with no branches: every input is a RouteError", true),
  rule("L006", "error", "chain without steps", "an empty composition: the pipeline does nothing", true),
  rule("L007", "warn", "temperature above 1.5", "a high-entropy ⊕_T: outputs may be unstable"),
  rule("L008", "warn", "memory never expires", "Γ' = Γ ∪ store with ttl 0: bindings are never collected"),
  rule("L009", "warn", "memory of size 0", "Γ' = Γ ∪ ∅ = Γ: the memory has no effect"),
  rule("L010", "warn", "react.maxSteps above 50", "Y₅₀₊: long runs and high cost"),
  rule("L011", "warn", "react agent with no tools besides terminate", "CASE over terminate only: a pure reasoning loop that can only think"),
  rule("L012", "warn", "guard.retry above 5", "{x:T | P(x)} retried more than 5 times: many repeated calls"),
  rule("L013", "warn", "router without default", "CASE without (_, default): an unclassified input is a RouteError"),
  rule("L014", "info", "temperature 0", "⊕_0: deterministic sampling"),
  rule("L015", "info", "memory enabled", "Γ' = Γ ∪ store: a stateful agent"),
  rule("L016", "info", "retrieval enabled", "an external knowledge oracle Tool(rag_retrieve)"),
  rule("L017", "warn", "react.maxSteps not set", "Y₁₀ by default: the bound was not chosen"),
  rule(
    "L018",
    "warn",
    "worst case above the run's budget",
    "the bound on LLM or tool calls (loops multiply) exceeds the budget the run will have; it may stop with BudgetExceeded"
  ),
  rule("L023", "error", "route to an empty answer", 'a CASE branch λx. "": the route answers nothing', true),
  rule("L024", "warn", "duplicate step or branch name", "two stages with one name: traces cannot tell them apart"),
  rule("L025", "warn", "guard without retries", "{x:T | P(x)} checked once: an invalid output goes straight to the fallback"),
  rule("L026", "info", "remote dependencies", "oracles outside the process (MCP servers, CLI agents, A2A agents)"),
  rule("L027", "error", "unknown tool", "Tool(name) that nothing declares: the call fails at run time"),
  rule("L028", "warn", "router categories and routes disagree", "the classifier's codomain and the CASE labels differ"),
  rule("L029", "warn", "unreachable branch", "a branch no input can select"),
  rule("L030", "warn", "field has no effect", "a field with no meaning for this agent: it does not change the term"),
  rule("L031", "error", "worst case above the lint budget", "the bound on LLM or tool calls exceeds --max-llm-calls / --max-tool-calls"),
  rule("L032", "info", "worst-case bounds", "the most LLM and tool calls one application of the term can make"),
  rule("L033", "warn", "MCP server without a connection", "Tool_MCP(server, name) with no endpoint: the runtime cannot reach it"),
  rule("L034", "error", "tool name declared twice", "one Tool(name) bound to two implementations", true),
  rule("L035", "error", "custom memory without a store", "Memory(agent, ?) — the store is missing", true),
  rule("L036", "error", "custom shared memory without a store", "SharedMemory(?) — the store every agent shares is missing", true),
  rule("L037", "info", "shared memory enabled", "Σ shared by every agent: Γ' = Γ ∪ Σ before each agent, Σ' = Σ ∪ {k ↦ v} on each write"),
  rule("L038", "warn", "shared memory no agent uses", "Σ that no term reads or writes: the block has no effect"),
  rule("L039", "error", "sandbox limit no command can run under", "SandboxedTool(t, P) with P below any process's needs: every call of t fails", true),
  rule(
    "L040",
    "warn",
    "CLI agent that cannot start under the sandbox's memory",
    "SandboxedTool(cli, P): the program's runtime reserves more address space than P allows, so every call fails"
  ),
  rule("L041", "info", "sandbox enabled", "map(λt. SandboxedTool(t, P), Tools(term)): every process-running tool under P; the term is unchanged"),
  rule("L042", "warn", "group chat with very many turns", "GroupChatₙ[a₁…aₖ] with n × k above 50 turns: the bound holds, but the worst case is large"),
  rule(
    "L043",
    "warn",
    "delegate nothing can reach",
    "Handoff(select; […, name: a, …]) where neither the selector nor any delegate's HANDOFF names it: a is dead code"
  ),
  rule("L044", "warn", "skill no agent uses", "a skill bound in the registry that no react agent lists and no type: skill agent selects"),
  rule("L045", "info", "hand-off cycle", "delegates whose prompts hand off to each other: the cycle is cut by the hand-off depth budget"),
  rule("L046", "error", "unknown channel", "Send(c) or Receive(c) outside every Channels[…] that declares c: the message fails at run time", true),
  rule("L047", "error", "channel declared twice", "Channels[c:n, c:m]: one name bound to two channels", true),
  rule("L048", "warn", "channel with no receiver", "Send(c) in Channels[c:n] with no Receive(c): a send past the capacity waits forever (a Deadlock)"),
  rule("L049", "warn", "channel with no sender", "Receive(c) in Channels[c:n] with no Send(c): every receive waits forever (a Deadlock)"),
  rule("L050", "error", "output schema that cannot be checked", "LLM(x) : JSON⟨S⟩ with an S no answer can be checked against", true),
  rule(
    "L051",
    "warn",
    "field of the Python reference with no effect here",
    "no term: the field is read and dropped (or rewritten, as lambdagent migrate would)"
  ),
  rule(
    "L052",
    "warn",
    "guard fallback text the Python reference fails on",
    "Guard(a, p, fallback = λ_. s): the text s is the answer after the last invalid output, where the reference fails with ValidationError"
  )
]

/**
 * A rule by id.
 *
 * @since 0.1.0
 * @category rules
 * @example
 * ```ts
 * import { ruleById } from "lambdagent/yaml"
 * ruleById("L013")?.level // "warn"
 * ```
 */
export const ruleById = (id: string): LintRule | undefined => lintRules.find((r) => r.id === id)
