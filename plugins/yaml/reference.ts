/**
 * Fields of agent files written for the Python reference implementation of lambdagent that have
 * no meaning here. The schema accepts them (a config the reference runs is never refused for
 * them): they are dropped before validation, lint reports each one (L051) with the reason it has
 * no effect, and `lambdagent migrate` rewrites or removes them.
 *
 * @since 0.2.0
 * @module
 */
import type { FieldPath } from "./errors.ts"

/**
 * How `lambdagent migrate` rewrites a field: `remove` drops it, `set` writes `value` at `path`
 * (the field itself, or another one) instead, `rename` gives the field at `path` the key `to`
 * (same value, same place in its mapping).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { MigrationFix } from "lambdagent/yaml"
 * const fix: MigrationFix = { _tag: "set", path: ["sandbox", "network"], value: true }
 * ```
 */
export type MigrationFix =
  | { readonly _tag: "remove"; readonly path: FieldPath }
  | { readonly _tag: "set"; readonly path: FieldPath; readonly value: unknown }
  | { readonly _tag: "rename"; readonly path: FieldPath; readonly to: string }

/**
 * A field of the reference's format found in a file: where it is, why it has no effect here, and
 * how `lambdagent migrate` rewrites it.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { ReferenceField } from "lambdagent/yaml"
 * const f: ReferenceField = {
 *   path: ["runtime", "costBudget"],
 *   why: "runs are budgeted in tokens and calls, not money: use runtime.maxTokens or runtime.maxLlmCalls",
 *   fix: { _tag: "remove", path: ["runtime", "costBudget"] }
 * }
 * ```
 */
export interface ReferenceField {
  readonly path: FieldPath
  /** Why the field has no effect here (and what to write instead, when something does). */
  readonly why: string
  readonly fix: MigrationFix
}

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const FRAMEWORK_KEY =
  "a field of another agent framework that the reference only reads to detect the framework in lint; neither the reference nor lambdagent runs it"

/** Keys the reference accepts on any agent mapping, with why they have no effect here. */
const agentKeys: Readonly<Record<string, string>> = {
  role: "the reference reads role, goal and backstory only in lint; the agent's instruction is systemPrompt",
  goal: "the reference reads role, goal and backstory only in lint; the agent's instruction is systemPrompt",
  backstory: "the reference reads role, goal and backstory only in lint; the agent's instruction is systemPrompt",
  hooks: "the reference stores hooks without running them; here hooks are registered in code (Runtime options), not in agent files",
  isolation: "the reference stores isolation without using it; tools that start processes are confined by the sandbox: block",
  max_iter: `${FRAMEWORK_KEY}; the react loop's bound is react.maxSteps`,
  max_iterations: `${FRAMEWORK_KEY}; the react loop's bound is react.maxSteps`,
  max_steps: `${FRAMEWORK_KEY}; the react loop's bound is react.maxSteps`,
  max_turns: `${FRAMEWORK_KEY}; a group chat's bound is groupchat.maxRounds`,
  max_rounds: `${FRAMEWORK_KEY}; a group chat's bound is groupchat.maxRounds`,
  max_round: `${FRAMEWORK_KEY}; a group chat's bound is groupchat.maxRounds`,
  max_consecutive_auto_reply: FRAMEWORK_KEY,
  is_termination_msg: `${FRAMEWORK_KEY}; a group chat ends on groupchat.termination`,
  stop_condition: FRAMEWORK_KEY,
  allow_delegation: `${FRAMEWORK_KEY}; delegation is type: handoff`,
  agents: `${FRAMEWORK_KEY}; several agents are type: groupchat, handoff or parallel`,
  crew: `${FRAMEWORK_KEY}; several agents are type: groupchat, handoff or parallel`,
  tools: `${FRAMEWORK_KEY}; a react agent's tools are mcp.localTools, mcp.onlineTool and mcpServers`,
  llm: `${FRAMEWORK_KEY}; the model is model:`,
  llm_config: `${FRAMEWORK_KEY}; the model is model:`,
  model_config: `${FRAMEWORK_KEY}; the model is model:`,
  assistant_agent: FRAMEWORK_KEY,
  agent_type: `${FRAMEWORK_KEY}; the agent's kind is type:`,
  chain_type: `${FRAMEWORK_KEY}; the agent's kind is type:`,
  llm_chain: FRAMEWORK_KEY,
  prompt_template: `${FRAMEWORK_KEY}; the agent's instruction is systemPrompt`
}

const guardKeys: Readonly<Record<string, string>> = {
  dangerousCommandBlock:
    "tool calls are not screened by command patterns (in the reference this only gated tools named shell, bash, exec or command); confine commands with the sandbox: block",
  highRiskConfirmation:
    "tool calls are not screened by command patterns (in the reference this only gated tools named shell, bash, exec or command); confine commands with the sandbox: block"
}

/** The memory strategies of this format; the reference accepts any name. */
const memoryStrategies: ReadonlyArray<unknown> = ["local", "redis", "sqlite", "custom"]

/**
 * The reference's retrieval parameters (its RAG API's names) under `rag:`: each one either is a
 * field here under another spelling, or has no effect (why).
 */
const ragKeys: Readonly<Record<string, { readonly to: string } | { readonly why: string }>> = {
  top_k: { to: "topK" },
  min_score: { to: "minScore" },
  chunk_size: { to: "chunkSize" },
  persist_directory: { to: "persistDirectory" },
  collection_name: { to: "name" },
  collectionName: { to: "name" },
  documents: {
    why: "the reference's API indexes texts handed to it in code; here rag.source names the files or directories to index: write the texts into a file and name it"
  },
  metadatas: { why: "the reference's API attaches metadata to texts handed to it in code; here each passage is labelled with the file it comes from" },
  always_retrieve: { why: "with agentic: false (the default) context is retrieved before every call, which is what always_retrieve asked for" },
  alwaysRetrieve: { why: "with agentic: false (the default) context is retrieved before every call, which is what alwaysRetrieve asked for" }
}

const cardWhy = (field: string) =>
  `the reference's agent card field ${field} is not configurable here: the card lambdagent serve publishes is built from the agent (name, description) and a2a.server (url, version, skills)`

/** Fields of the reference's agent card under `a2a.server:`, with why they have no effect here. */
const a2aServerKeys: Readonly<Record<string, string>> = {
  name: "the card's name is the agent's: set name at the top level of the file",
  description: "the card's description is the agent's: set description at the top level of the file",
  provider: cardWhy("provider"),
  documentation_url: cardWhy("documentation_url"),
  documentationUrl: cardWhy("documentationUrl"),
  input_modes: "the card lists the media types the server reads (text/plain and application/json); they are not configurable",
  output_modes: "the card lists the media types the server answers with (text/plain and application/json); they are not configurable",
  defaultInputModes: "the card lists the media types the server reads (text/plain and application/json); they are not configurable",
  defaultOutputModes: "the card lists the media types the server answers with (text/plain and application/json); they are not configurable",
  authentication: "the server checks no credentials of its own: put it behind a proxy that does, and give clients their a2a.clients[].headers",
  capabilities: "the card states the server's capabilities (streaming, no push notifications) itself",
  tags: "the card's tags belong to its skills here: a2a.server.skills[].tags",
  lambda_type: "the reference's extension field x-lambdagent.lambda_type is not published"
}

const stepTypeWhy = "chain steps are not typed; a skill's inputType and outputType describe it in words"

const networkLevels: Readonly<Record<string, boolean>> = { full: true, none: false, off: false, disabled: false }

/**
 * Where agent mappings sit below an agent mapping of the raw document, as the schema nests them.
 */
const childAgents = (agent: Record<string, unknown>, path: FieldPath): ReadonlyArray<{ agent: Record<string, unknown>; path: FieldPath }> => {
  const out: Array<{ agent: Record<string, unknown>; path: FieldPath }> = []
  const push = (value: unknown, at: FieldPath) => {
    if (isMapping(value)) out.push({ agent: value, path: at })
  }
  const each = (block: string, key: string) => {
    const inner = agent[block]
    if (!isMapping(inner)) return
    const value = inner[key]
    if (Array.isArray(value)) value.forEach((a, i) => push(a, [...path, block, key, i]))
    else if (isMapping(value) && (key === "routes" || key === "registry")) {
      // most routes of a large router are plain answers: no path for them
      for (const k in value) if (isMapping(value[k])) push(value[k], [...path, block, key, k])
    } else push(value, [...path, block, key])
  }
  each("router", "routes")
  each("router", "default")
  each("parallel", "agents")
  each("groupchat", "agents")
  each("groupchat", "summaryAgent")
  each("handoff", "registry")
  each("handoff", "fallback")
  if (path.length === 0) {
    if (isMapping(agent.subAgents)) for (const [k, s] of Object.entries(agent.subAgents)) if (isMapping(s)) push(s.inline, ["subAgents", k, "inline"])
    if (Array.isArray(agent.skills)) agent.skills.forEach((s, i) => isMapping(s) && push(s.agent, ["skills", i, "agent"]))
  }
  return out
}

/** Every agent mapping of a raw document, depth first in document order. */
const agentsIn = (document: unknown): ReadonlyArray<{ agent: Record<string, unknown>; path: FieldPath }> => {
  if (!isMapping(document)) return []
  const out: Array<{ agent: Record<string, unknown>; path: FieldPath }> = []
  const stack: Array<{ agent: Record<string, unknown>; path: FieldPath }> = [{ agent: document, path: [] }]
  while (stack.length > 0) {
    const next = stack.pop()!
    out.push(next)
    const children = childAgents(next.agent, next.path)
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
  }
  return out
}

/**
 * A duration the reference takes in fractional seconds (`toolTimeout: 2.5`), where the core counts
 * whole seconds: rounded up, so a timeout is never shorter than written and a positive ttl never
 * becomes 0 (forever).
 */
const roundUpSeconds = (block: unknown, at: FieldPath, key: string, out: Array<ReferenceField>): void => {
  if (!isMapping(block)) return
  const seconds = block[key]
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || Number.isInteger(seconds) || seconds < 0) return
  const whole = Math.ceil(seconds)
  out.push({
    path: [...at, key],
    why: `durations are whole seconds here: the reference's ${seconds} is rounded up to ${whole}`,
    fix: { _tag: "set", path: [...at, key], value: whole }
  })
}

const agentFields = (agent: Record<string, unknown>, path: FieldPath, out: Array<ReferenceField>): void => {
  const remove = (at: FieldPath, why: string) => out.push({ path: at, why, fix: { _tag: "remove", path: at } })
  for (const key of Object.keys(agent)) if (Object.hasOwn(agentKeys, key)) remove([...path, key], agentKeys[key]!)
  const guardAt = (guard: unknown, at: FieldPath) => {
    if (!isMapping(guard)) return
    const inert = Object.keys(guard).filter((key) => Object.hasOwn(guardKeys, key))
    if (inert.length === 0) return
    if (guard.validator === undefined && guard.maxOutputLength === undefined) {
      // Only command screening: without it the guard has nothing to check.
      remove(at, `${inert.join(" and ")}: ${guardKeys[inert[0]!]!}; without them this guard checks nothing (it has no validator or maxOutputLength)`)
    } else for (const key of inert) remove([...at, key], guardKeys[key]!)
  }
  guardAt(agent.guard, [...path, "guard"])
  const rag = agent.rag
  if (isMapping(rag)) {
    for (const key of Object.keys(rag)) {
      if (!Object.hasOwn(ragKeys, key)) continue
      const known = ragKeys[key]!
      const at = [...path, "rag", key]
      if ("why" in known) remove(at, known.why)
      else if (Object.hasOwn(rag, known.to)) remove(at, `the reference's spelling of rag.${known.to}, which the file sets too`)
      else out.push({ path: at, why: `the reference's spelling of rag.${known.to}`, fix: { _tag: "rename", path: at, to: known.to } })
    }
  }
  const memory = agent.memory
  if (isMapping(memory) && typeof memory.strategy === "string" && !memoryStrategies.includes(memory.strategy)) {
    const at = [...path, "memory", "strategy"]
    out.push({
      path: at,
      why: `the reference only records the strategy's name (${JSON.stringify(memory.strategy)}) and keeps memory in the process; here that is local (the others: redis, sqlite, custom)`,
      fix: { _tag: "set", path: at, value: "local" }
    })
  }
  if (isMapping(agent.react) && "thinkTimeout" in agent.react) {
    remove([...path, "react", "thinkTimeout"], "the reference reads it without using it; a think call is bounded by model.timeout (seconds per LLM call)")
  }
  roundUpSeconds(agent.react, [...path, "react"], "toolTimeout", out)
  roundUpSeconds(memory, [...path, "memory"], "ttl", out)
  const parallel = agent.parallel
  if (isMapping(parallel) && parallel.merge === "custom" && parallel.mergePrompt === undefined) {
    const at = [...path, "parallel", "mergePrompt"]
    out.push({
      path: at,
      why: "the reference merges with a default prompt when merge: custom has none; here that prompt is written out",
      fix: { _tag: "set", path: at, value: referenceMergePrompt }
    })
  }
  if (isMapping(agent.parallel) && "isolation" in agent.parallel) {
    remove([...path, "parallel", "isolation"], "the reference stores it without using it; branches never share state except through sharedMemory:")
  }
  const chain = agent.chain
  if (isMapping(chain) && Array.isArray(chain.steps)) {
    chain.steps.forEach((step, i) => {
      if (!isMapping(step)) return
      const at = [...path, "chain", "steps", i]
      for (const key of ["inputType", "outputType"]) if (key in step) remove([...at, key], stepTypeWhy)
      guardAt(step.guard, [...at, "guard"])
    })
  }
}

const topLevelFields = (file: Record<string, unknown>, out: Array<ReferenceField>): void => {
  const remove = (at: FieldPath, why: string) => out.push({ path: at, why, fix: { _tag: "remove", path: at } })
  if (isMapping(file.runtime) && "costBudget" in file.runtime) {
    remove(["runtime", "costBudget"], "runs are budgeted in tokens and calls, not money: use runtime.maxTokens or runtime.maxLlmCalls")
  }
  const sandbox = file.sandbox
  if (isMapping(sandbox)) {
    if ("filesystem" in sandbox) {
      remove(["sandbox", "filesystem"], "the sandbox has no filesystem levels: a sandboxed process may write only its work_dir and a private /tmp")
    }
    const network = sandbox.network
    if (typeof network === "string") {
      const level = networkLevels[network.toLowerCase()]
      if (level === undefined) remove(["sandbox", "network"], `sandbox.network is true or false here; ${JSON.stringify(network)} has no equivalent`)
      else
        out.push({
          path: ["sandbox", "network"],
          why: `sandbox.network is true or false here: the reference's ${JSON.stringify(network)} is ${level}`,
          fix: { _tag: "set", path: ["sandbox", "network"], value: level }
        })
    }
  }
  const a2a = file.a2a
  if (a2a !== undefined && !isMapping(a2a)) {
    remove(["a2a"], "the reference reads a2a only in lint; here a2a.server serves this agent and a2a.clients calls remote agents")
  } else if (isMapping(a2a)) {
    if ("enabled" in a2a)
      remove(["a2a", "enabled"], "the reference reads a2a only in lint; here a2a.server serves this agent and a2a.clients calls remote agents")
    const server = a2a.server
    if (isMapping(server)) for (const key of Object.keys(server)) if (Object.hasOwn(a2aServerKeys, key)) remove(["a2a", "server", key], a2aServerKeys[key]!)
  }
}

/**
 * The fields of a raw agent document (as YAML parsed it, before validation) that belong to the
 * reference's format and have no effect here, in document order of the agents.
 *
 * @since 0.2.0
 * @category analyses
 * @example
 * ```ts
 * import { referenceFields } from "lambdagent/yaml"
 * const found = referenceFields({ type: "simple", systemPrompt: "Hi", role: "helper", runtime: { costBudget: 2 } })
 * console.log(found.map((f) => f.path.join("."))) // ["role", "runtime.costBudget"]
 * ```
 */
export const referenceFields = (document: unknown): ReadonlyArray<ReferenceField> => {
  const out: Array<ReferenceField> = []
  for (const { agent, path } of agentsIn(document)) {
    agentFields(agent, path, out)
    if (path.length === 0) topLevelFields(agent, out)
  }
  return out
}

/**
 * The system prompt the reference gives a simple or react agent that has none.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { referenceDefaultPrompt } from "lambdagent/yaml"
 * console.log(referenceDefaultPrompt) // "You are a helpful assistant."
 * ```
 */
export const referenceDefaultPrompt = "You are a helpful assistant."

/**
 * The system prompt of the merging LLM of a `parallel` agent with `merge: custom` and no
 * `mergePrompt`, as a file of the reference may leave it. The merger reads the answers as
 * sections headed `[name]:` and separated by `---`.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { referenceMergePrompt } from "lambdagent/yaml"
 * console.log(referenceMergePrompt.startsWith("Merge")) // true
 * ```
 */
export const referenceMergePrompt =
  "You receive the answers of several agents to the same input, each headed by [its name]: and separated by ---. Merge them into one answer: keep what they agree on, resolve or point out where they contradict each other, and add nothing none of them says."

/**
 * Everything `lambdagent migrate` changes in a raw document: the {@link referenceFields}, and the
 * reference's default system prompt written into every simple or react agent that has none (the
 * reference runs such an agent with it; here a missing prompt is error L001).
 *
 * @since 0.2.0
 * @category analyses
 * @example
 * ```ts
 * import { migrationFields } from "lambdagent/yaml"
 * const found = migrationFields({ type: "simple", agentId: "helper", max_iter: 3 })
 * console.log(found.map((f) => f.path.join("."))) // ["max_iter", "systemPrompt"]
 * ```
 */
export const migrationFields = (document: unknown): ReadonlyArray<ReferenceField> => {
  const out = [...referenceFields(document)]
  for (const { agent, path } of agentsIn(document)) {
    const type = agent.type ?? "simple"
    const prompt = agent.systemPrompt
    if ((type === "simple" || type === "react") && (prompt === undefined || prompt === null || (typeof prompt === "string" && prompt.trim() === ""))) {
      const at = [...path, "systemPrompt"]
      out.push({
        path: at,
        why: "the reference runs an agent without a prompt with its default prompt; here a simple or react agent needs one (L001)",
        fix: { _tag: "set", path: at, value: referenceDefaultPrompt }
      })
    }
  }
  return out
}

/**
 * The document with the fixes applied, as `lambdagent migrate` writes it and as the compiler reads
 * it: a mapping a removal leaves empty is removed too. The document is not changed; only the
 * mappings and lists on the way to a fixed field are copied.
 *
 * @since 0.2.0
 * @category analyses
 * @example
 * ```ts
 * import { applyFixes, referenceFields } from "lambdagent/yaml"
 * const doc = { type: "simple", systemPrompt: "Hi", goal: "help", sandbox: { network: "full" } }
 * console.log(applyFixes(doc, referenceFields(doc).map((f) => f.fix))) // { type: "simple", systemPrompt: "Hi", sandbox: { network: true } }
 * ```
 */
export const applyFixes = (document: unknown, fixes: ReadonlyArray<MigrationFix>): unknown => {
  const apply = (value: unknown, path: FieldPath, fix: MigrationFix): unknown => {
    const [head, ...rest] = path as [string | number, ...Array<string | number>]
    if (Array.isArray(value)) {
      if (typeof head !== "number" || head >= value.length) return value
      const copy = value.slice()
      copy[head] = apply(value[head], rest, fix)
      return copy
    }
    if (!isMapping(value)) return value
    if (fix._tag === "rename" && rest.length === 0) {
      if (!Object.hasOwn(value, head)) return value
      // the renamed key keeps its place, so the order of the mapping stays as written
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k === head ? fix.to : k, v]))
    }
    const copy = { ...value }
    if (rest.length > 0) {
      if (!Object.hasOwn(value, head)) return value
      const inner = apply(value[head], rest, fix)
      // A block the removal left empty goes too: an empty sandbox: would turn the sandbox on.
      if (fix._tag === "remove" && isMapping(inner) && Object.keys(inner).length === 0) delete copy[head]
      else copy[head] = inner
    } else if (fix._tag === "remove") delete copy[head]
    else if (fix._tag === "set") copy[head] = fix.value
    return copy
  }
  return fixes.reduce((doc, fix) => (fix.path.length === 0 ? doc : apply(doc, fix.path, fix)), document)
}
