/**
 * Static analysis of agent files: the rules of `rules.ts`, run on the parsed file and on the term
 * it compiles to (bounds, tool references, reachability). Each finding names its rule, level,
 * field, line and column, and what it means in the lambda calculus.
 *
 * @since 0.1.0
 * @module
 */
import { Errors, Evaluator, Term } from "lambdagent"
import { type Bounds, bounds } from "./bounds.ts"
import { dirname } from "node:path"
import {
  compileChecked,
  type ConfigInput,
  isTerminateName,
  loadSource,
  type Overrides,
  semanticIssues,
  type SharedMemoryRequirement,
  type ToolReference
} from "./compile.ts"
import { type FieldPath, formatFieldPath, isYamlError, type YamlError } from "./errors.ts"
import { type LintLevel, lintRules, ruleById } from "./rules.ts"
import { referenceFields } from "./reference.ts"
import { sandboxFindings } from "./sandbox.ts"
import type { AgentConfig, AgentFile, ModelConfig } from "./schema.ts"
import type { Source } from "./source.ts"
import { agentsOf, guardsOf, modelsOf, validateConfig } from "./validate.ts"
import { compileValidatorExpr, parseValidator } from "./validators.ts"

/**
 * One finding.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LintFinding } from "lambdagent/yaml"
 * const f: LintFinding = {
 *   rule: "L007", level: "warn", path: ["model", "temperature"], field: "model.temperature", line: 6, column: 16,
 *   message: "temperature 1.8 is above 1.5: outputs may be unstable", lambda: "a high-entropy ⊕_T: outputs may be unstable"
 * }
 * ```
 */
export interface LintFinding {
  readonly rule: string
  readonly level: LintLevel
  readonly path: FieldPath
  readonly field: string
  readonly line?: number
  readonly column?: number
  readonly message: string
  /** What the finding means for the term (the rule's lambda reading). */
  readonly lambda: string
}

/**
 * Options of {@link lint}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LintOptions } from "lambdagent/yaml"
 * const o: LintOptions = { level: "warn", ignore: ["L014"], maxLlmCalls: 20 }
 * ```
 */
export interface LintOptions {
  /** The least serious level reported (default `info`: everything). */
  readonly level?: LintLevel
  /** Run only these rules. */
  readonly rules?: ReadonlyArray<string>
  /** Skip these rules. */
  readonly ignore?: ReadonlyArray<string>
  /** L031 fires when the worst case exceeds this many LLM calls. */
  readonly maxLlmCalls?: number
  /** L031 fires when the worst case exceeds this many tool calls. */
  readonly maxToolCalls?: number
  /** The tools the runtime provides: `local` tools outside this list are L027. */
  readonly knownTools?: ReadonlyArray<string>
  readonly overrides?: Overrides
}

/**
 * The result of linting one file: its findings, or the error that stopped the analysis (a YAML
 * or schema error; semantic problems are findings).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { lint } from "lambdagent/yaml"
 * const result = lint("examples/agents/react.yml")
 * console.log(result.counts.error, result.bounds?.llmCalls)
 * ```
 */
export interface LintResult {
  readonly file?: string
  /** The agent's name, when the file could be read. */
  readonly name?: string
  readonly findings: ReadonlyArray<LintFinding>
  readonly error?: YamlError
  readonly bounds?: Bounds
  /** The compiled term (also for files that do not compile, with their problems left in). */
  readonly term?: Term.Term
  readonly counts: { readonly error: number; readonly warn: number; readonly info: number }
}

const LEVEL_RANK: Readonly<Record<LintLevel, number>> = { error: 0, warn: 1, info: 2 }

const DEFAULT_LLM_BUDGET = 100
const DEFAULT_TOOL_BUDGET = 500

const count = (n: number) => (n === Infinity ? "unbounded" : String(n))

const parentOf = (path: FieldPath): FieldPath | undefined => {
  const n = path.length
  if (n >= 3 && path[n - 3] === "router" && path[n - 2] === "routes") return path.slice(0, n - 3)
  if (n >= 2 && path[n - 2] === "router" && path[n - 1] === "default") return path.slice(0, n - 2)
  if (n >= 3 && path[n - 3] === "parallel" && path[n - 2] === "agents") return path.slice(0, n - 3)
  if (n >= 3 && path[n - 3] === "groupchat" && path[n - 2] === "agents") return path.slice(0, n - 3)
  if (n >= 2 && path[n - 2] === "groupchat" && path[n - 1] === "summaryAgent") return path.slice(0, n - 2)
  if (n >= 3 && path[n - 3] === "handoff" && path[n - 2] === "registry") return path.slice(0, n - 3)
  if (n >= 2 && path[n - 2] === "handoff" && path[n - 1] === "fallback") return path.slice(0, n - 2)
  if (n === 3 && path[0] === "subAgents" && path[2] === "inline") return []
  if (n === 3 && path[0] === "skills" && path[2] === "agent") return []
  return undefined
}

const mergeModel = (parent: ModelConfig | undefined, child: ModelConfig | undefined): ModelConfig | undefined =>
  child === undefined ? parent : parent === undefined ? child : { ...parent, ...Object.fromEntries(Object.entries(child).filter(([, v]) => v !== undefined)) }

const hasModel = (m: ModelConfig | undefined) => m !== undefined && (m.name !== undefined || m.provider !== undefined)

class Findings {
  readonly list: Array<LintFinding> = []

  constructor(private readonly locate: (path: FieldPath) => { line: number; column: number } | undefined) {}

  add(rule: string, path: FieldPath, message: string): void {
    const meta = ruleById(rule)!
    const pos = this.locate(path)
    this.list.push({
      rule,
      level: meta.level,
      path,
      field: formatFieldPath(path),
      ...(pos !== undefined ? { line: pos.line, column: pos.column } : {}),
      message,
      lambda: meta.lambda
    })
  }
}

const sameLabel = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

/** Rules on one agent's own fields. */
/** The registry names a prompt hands off to (`HANDOFF name`). */
const handoffTargets = (prompt: string | undefined, names: ReadonlyArray<string>): ReadonlyArray<string> =>
  prompt === undefined ? [] : names.filter((n) => new RegExp(`HANDOFF\\s*:?\\s*${n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w-])`).test(prompt))

/** A cycle of hand-offs, as the names along it (the first repeated at the end). */
const handoffCycle = (edges: ReadonlyMap<string, ReadonlyArray<string>>): ReadonlyArray<string> | undefined => {
  const visit = (name: string, path: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
    if (path.includes(name)) return [...path.slice(path.indexOf(name)), name]
    for (const next of edges.get(name) ?? []) {
      const found = visit(next, [...path, name])
      if (found !== undefined) return found
    }
    return undefined
  }
  for (const name of edges.keys()) {
    const found = visit(name, [])
    if (found !== undefined) return found
  }
  return undefined
}

const agentRules = (f: Findings, agent: AgentConfig, path: FieldPath, type: string, overrides: Overrides): void => {
  const at = (...rest: Array<string | number>) => [...path, ...rest]
  const chat = agent.groupchat
  if (type === "groupchat" && chat !== undefined) {
    const turns = (chat.maxRounds ?? 10) * chat.agents.length
    if (turns > 50)
      f.add(
        "L042",
        chat.maxRounds !== undefined ? at("groupchat", "maxRounds") : at("groupchat"),
        `the chat may take ${turns} turns (${chat.maxRounds ?? 10} rounds × ${chat.agents.length} agents): lower maxRounds or add termination`
      )
  }
  const h = agent.handoff
  if (type === "handoff" && h !== undefined) {
    const names = Object.keys(h.registry)
    const handsTo = new Map(names.map((n) => [n, handoffTargets(h.registry[n]!.systemPrompt, names)]))
    const selected = h.selector.targets ?? names
    for (const name of names) {
      if (!selected.includes(name) && ![...handsTo.entries()].some(([from, to]) => from !== name && to.includes(name))) {
        f.add("L043", at("handoff", "registry", name), `delegate ${JSON.stringify(name)} is not among selector.targets and no delegate hands off to it`)
      }
    }
    const cycle = handoffCycle(handsTo)
    if (cycle !== undefined)
      f.add(
        "L045",
        at("handoff", "registry", cycle[0]!),
        `delegates hand off in a cycle (${cycle.join(" → ")}): it ends after maxDepth ${h.maxDepth ?? 3} hand-offs with a budget error`
      )
  }
  const react = agent.react
  if (type === "react") {
    const maxSteps = overrides.maxSteps ?? react?.maxSteps
    if (!(agent.mcp?.localTools ?? []).some(isTerminateName)) {
      f.add(
        "L004",
        agent.mcp?.localTools !== undefined ? at("mcp", "localTools") : agent.mcp !== undefined ? at("mcp") : at("type"),
        `react agent without a terminate tool: it stops only when a thought names no tool${react?.earlyStop !== undefined ? ", when earlyStop holds" : ""} or after maxSteps`
      )
    }
    if (maxSteps !== undefined && maxSteps > 50) {
      if (overrides.maxSteps !== undefined)
        f.add(
          "L010",
          react?.maxSteps !== undefined ? at("react", "maxSteps") : react !== undefined ? at("react") : at("type"),
          `maxSteps is ${maxSteps} by the overrides (above 50): long runs and high cost`
        )
      else f.add("L010", at("react", "maxSteps"), `react.maxSteps is ${maxSteps} (above 50): long runs and high cost`)
    }
    if (maxSteps === undefined)
      f.add("L017", agent.react !== undefined ? at("react") : at("type"), "react.maxSteps is not set: the loop is bounded by the default of 10 steps")
  }
  for (const { model, path: mp } of modelsOf(agent, path)) {
    if (model.temperature !== undefined && model.temperature > 1.5)
      f.add("L007", [...mp, "temperature"], `temperature ${model.temperature} is above 1.5: outputs may be unstable`)
    if (model.temperature === 0) f.add("L014", [...mp, "temperature"], "temperature 0: deterministic sampling")
    if (model.contextWindow !== undefined && (model.maxHistoryTokens !== undefined || model.conversation === false)) {
      f.add(
        "L030",
        [...mp, "contextWindow"],
        model.conversation === false
          ? "contextWindow has no effect with conversation: false (no history is kept)"
          : "contextWindow has no effect: maxHistoryTokens is set"
      )
    }
    if (model.maxHistoryTokens !== undefined && model.conversation === false) {
      f.add("L030", [...mp, "maxHistoryTokens"], "maxHistoryTokens has no effect with conversation: false (no history is kept)")
    }
    if (model.session === true) {
      if (model.provider !== undefined && model.provider !== "claude-code" && model.provider !== "claude-code+session") {
        f.add("L030", [...mp, "session"], `session applies to provider claude-code; it has no effect with provider ${model.provider}`)
      } else if (model.conversation === false) {
        f.add("L030", [...mp, "session"], "session has no effect with conversation: false (each call starts a fresh session)")
      }
    }
  }
  const memory = agent.memory
  if (memory !== undefined && memory.enabled !== false) {
    const ttl = memory.ttl ?? 0
    const size = memory.size ?? 10
    if (ttl === 0) f.add("L008", memory.ttl !== undefined ? at("memory", "ttl") : at("memory"), "memory.ttl is 0: entries never expire")
    if (size === 0) f.add("L009", at("memory", "size"), "memory.size is 0: no entry is ever read back, so memory has no effect")
    f.add("L015", at("memory"), `memory enabled: strategy=${memory.strategy ?? "local"}, size=${size}, ttl=${ttl}s, scope=${memory.scope ?? "session"}`)
  } else if (memory !== undefined && Object.keys(memory).length > 1) {
    f.add("L030", at("memory"), "memory is disabled (enabled: false): its other fields have no effect")
  }
  const rag = agent.rag
  if (rag !== undefined && rag.enabled !== false) {
    const agentic = type === "react" && rag.agentic !== false
    f.add(
      "L016",
      at("rag"),
      agentic ? "retrieval enabled: the agent can call rag_retrieve" : "retrieval enabled: context is retrieved (rag_retrieve_context) before every call"
    )
    if (rag.agentic === true && type !== "react") {
      f.add("L030", at("rag", "agentic"), `rag.agentic applies to react agents; this ${type} agent retrieves context before every call instead`)
    }
  } else if (rag !== undefined && Object.keys(rag).length > 1) {
    f.add("L030", at("rag"), "retrieval is disabled (enabled: false): its other fields have no effect")
  }
  for (const { guard, path: gp } of guardsOf(agent, path)) {
    const retry = guard.retry ?? 0
    if (retry > 5) f.add("L012", [...gp, "retry"], `guard.retry is ${retry} (above 5): up to ${retry + 1} runs of the agent per input`)
    if (retry === 0)
      f.add("L025", guard.retry !== undefined ? [...gp, "retry"] : gp, "the guard has no retries: an invalid output goes straight to the fallback")
    const fallback = guard.fallback
    if (typeof fallback === "string" && fallback !== "error" && fallback !== "empty" && fallback !== "last") {
      const text = JSON.stringify(fallback)
      f.add(
        "L052",
        [...gp, "fallback"],
        `fallback ${text} is the answer after the last invalid output here (the specification's fallback value); the Python reference fails with a ValidationError on any fallback but empty and last. Write {value: ${text}} to keep the answer without this warning, or error to fail as the reference did`
      )
    }
    if (guard.validator !== undefined) {
      const validator = compileValidatorExpr(parseValidator(guard.validator)) as Term.Of<"Lam">
      if (!Term.freeVariables(validator.body).has("x")) {
        let constant: unknown
        let raises = ""
        try {
          constant = Evaluator.evaluate(validator.body)
        } catch (e) {
          // a validator that raises is false, every time when it does not read x
          constant = e instanceof Errors.EvalError ? false : undefined
          if (e instanceof Errors.EvalError) raises = ` (it raises ${e.kind}: ${e.message})`
        }
        if (constant === true)
          f.add("L029", [...gp, "validator"], "the validator does not depend on x and is always true: the guard never fails and its fallback is unreachable")
        if (constant === false)
          f.add(
            "L029",
            [...gp, "validator"],
            `the validator does not depend on x and is always false${raises}: every output is rejected, so the agent's result is unreachable`
          )
      }
    }
  }
  if (type === "router" && agent.router !== undefined) {
    const router = agent.router
    const labels = Object.keys(router.routes ?? {})
    if (router.default === undefined) f.add("L013", at("router"), "router without default: an input whose label matches no route is a RouteError")
    if (router.classifier.categories !== undefined) {
      for (const [i, category] of router.classifier.categories.entries()) {
        if (!labels.some((l) => sameLabel(l, category))) {
          f.add(
            "L028",
            at("router", "classifier", "categories", i),
            `category ${JSON.stringify(category)} has no route: inputs labelled ${category} ${router.default !== undefined ? "go to the default" : "are a RouteError"}`
          )
        }
      }
      for (const label of labels) {
        if (!router.classifier.categories.some((c) => sameLabel(c, label))) {
          f.add(
            "L028",
            at("router", "routes", label),
            `route ${JSON.stringify(label)} is not among classifier.categories: the classifier is never asked to answer it`
          )
        }
      }
    }
    labels.forEach((label, i) => {
      const earlier = labels.slice(0, i).find((l) => sameLabel(l, label))
      if (earlier !== undefined) {
        f.add(
          "L029",
          at("router", "routes", label),
          `routes ${JSON.stringify(earlier)} and ${JSON.stringify(label)} differ only in letter case; labels are matched in lower case, so an exact answer always selects ${JSON.stringify(label)}`
        )
      }
      if (label.trim() === "") {
        f.add(
          "L029",
          at("router", "routes", label),
          `the empty route label matches every answer: ${labels.length > i + 1 ? "the routes after it are reachable only by an exact answer and " : ""}${router.default !== undefined ? "the default is unreachable" : "no input is a RouteError"}`
        )
      } else if (label !== label.trim()) {
        f.add(
          "L029",
          at("router", "routes", label),
          `route ${JSON.stringify(label)} has surrounding spaces; answers are trimmed, so it is selected only when an answer contains it`
        )
      }
    })
  }
  const named = (names: ReadonlyArray<string | undefined>, where: (i: number) => FieldPath, what: string) => {
    const seen = new Set<string>()
    names.forEach((name, i) => {
      if (name === undefined) return
      if (seen.has(name)) f.add("L024", where(i), `two ${what} are named ${JSON.stringify(name)}: traces cannot tell them apart`)
      seen.add(name)
    })
  }
  if (agent.chain !== undefined)
    named(
      agent.chain.steps.map((s) => s.name),
      (i) => at("chain", "steps", i, "name"),
      "chain steps"
    )
  if (agent.parallel !== undefined)
    named(
      agent.parallel.agents.map((a) => a.name ?? a.agentId),
      (i) => at("parallel", "agents", i),
      "parallel agents"
    )

  // Fields that do not apply to this type.
  const noEffect = (key: "react" | "chain" | "router" | "parallel" | "groupchat" | "handoff", types: ReadonlyArray<string>) => {
    if (agent[key] !== undefined && !types.includes(type)) f.add("L030", at(key), `${key}: has no effect on a ${type} agent`)
  }
  noEffect("react", ["react"])
  noEffect("chain", ["chain"])
  noEffect("router", ["router"])
  noEffect("parallel", ["parallel"])
  noEffect("groupchat", ["groupchat"])
  noEffect("handoff", ["handoff"])
  if (agent.systemPrompt !== undefined && (type === "chain" || type === "router" || type === "parallel" || type === "groupchat" || type === "handoff")) {
    const why =
      type === "chain"
        ? "each step has its own prompt"
        : type === "router"
          ? "the classifier and the routes have their own prompts"
          : type === "parallel"
            ? "each branch has its own prompt"
            : type === "groupchat"
              ? "each participant has its own prompt"
              : "the selector and the delegates have their own prompts"
    f.add("L030", at("systemPrompt"), `systemPrompt has no effect on a ${type} agent (${why})`)
  }
  if (type === "react" && react?.thinkPrompt !== undefined && agent.systemPrompt !== undefined) {
    f.add("L030", at("systemPrompt"), "systemPrompt has no effect: react.thinkPrompt replaces it")
  }
  const usesTools = type === "react" || (type === "chain" && (agent.chain?.steps ?? []).some((s) => s.tool !== undefined))
  if (agent.mcp !== undefined && !usesTools) f.add("L030", at("mcp"), `mcp: has no effect on a ${type} agent that calls no tools`)
  if (agent.parallel?.mergePrompt !== undefined && agent.parallel.merge !== "custom") {
    f.add("L030", at("parallel", "mergePrompt"), `mergePrompt has no effect with merge: ${agent.parallel.merge ?? "tuple"} (only merge: custom uses it)`)
  }
  agent.chain?.steps.forEach((s, i) => {
    if (s.tool !== undefined && s.model !== undefined) f.add("L030", at("chain", "steps", i, "model"), "a tool step's model has no effect")
    if ((s.tool !== undefined || s.ask !== undefined) && s.output !== undefined) {
      f.add(
        "L030",
        at("chain", "steps", i, "output"),
        `${s.tool !== undefined ? "a tool" : "an ask"} step's output has no effect (only an LLM step answers JSON)`
      )
    }
    if (s.output !== undefined && s.model?.conversation === true) {
      f.add("L030", at("chain", "steps", i, "model", "conversation"), "conversation has no effect beside output: a structured answer keeps no conversation")
    }
  })
  if (agent.output !== undefined && type === "simple" && agent.model?.conversation === true) {
    f.add("L030", at("model", "conversation"), "conversation has no effect beside output: a structured answer keeps no conversation")
  }
  if (agent.mcp?.policy?.mode === "disable") {
    const disabled = [...Object.values(agent.mcp.onlineTool ?? {}).flat(), ...(agent.mcp.localTools ?? []).filter((t) => !isTerminateName(t))]
    if (disabled.length > 0)
      f.add(
        "L029",
        at("mcp", "policy", "mode"),
        `mcp.policy.mode is disable: ${disabled.join(", ")} ${disabled.length === 1 ? "is" : "are"} never offered to the agent`
      )
  }
}

/** Rules that need the whole file or the compiled term. */
const fileRules = (
  f: Findings,
  file: AgentFile,
  compiled: {
    readonly term: Term.Term
    readonly tools: ReadonlyArray<ToolReference>
    readonly sharedMemory?: SharedMemoryRequirement
    readonly origins: ReadonlyMap<Term.Term, FieldPath>
  },
  worst: Bounds,
  options: LintOptions
): void => {
  const overrides = options.overrides ?? {}
  // L002: an LLM without a model, reported at the outermost agent that lacks one.
  const effective = new Map<string, ModelConfig | undefined>()
  const reported: Array<FieldPath> = []
  for (const { agent, path, type } of agentsOf(file)) {
    const parent = parentOf(path)
    const model = mergeModel(parent === undefined ? undefined : effective.get(JSON.stringify(parent)), agent.model)
    effective.set(JSON.stringify(path), model)
    if (overrides.model !== undefined) continue
    const components: Array<ModelConfig | undefined> = []
    if (type === "simple" || type === "react") components.push(model)
    agent.chain?.steps.forEach((s) => {
      if (s.prompt !== undefined) components.push(mergeModel(model, s.model))
    })
    if (type === "router" && agent.router !== undefined) components.push(mergeModel(model, agent.router.classifier.model))
    if (type === "parallel" && agent.parallel?.merge === "custom") components.push(model)
    if (components.some((m) => !hasModel(m)) && !reported.some((r) => JSON.stringify(path.slice(0, r.length)) === JSON.stringify(r))) {
      reported.push(path)
      f.add(
        "L002",
        agent.model !== undefined ? [...path, "model"] : path.length === 0 ? ["type"] : path,
        "no model configured (no provider or name): the runtime's default model will be used, or the run fails"
      )
    }
  }

  // L011: react agents whose only tool is terminate (from the compiled tool list).
  const agentAt = new Map(agentsOf(file).map((a) => [JSON.stringify(a.path), a.agent]))
  for (const [node, path] of compiled.origins) {
    if (node._tag === "React" && node.tools.every((t) => t === "terminate")) {
      const agentPath = path.slice(0, -1)
      const agent = agentAt.get(JSON.stringify(agentPath))
      f.add(
        "L011",
        agent?.mcp !== undefined ? [...agentPath, "mcp"] : [...agentPath, "type"],
        "the react agent has no tools besides terminate: it can only think"
      )
    }
  }

  // L037, L038 and L030: shared memory.
  sharedMemoryRules(f, file, compiled)

  // L030: cli.server fields of another mode, or of a block serve does not use by itself.
  cliServerRules(f, file)

  // L040, L041 and L030: the sandbox.
  for (const finding of sandboxFindings(file)) f.add(finding.rule, finding.path, finding.message)

  // L026: remote dependencies.
  const servers = new Set<string>()
  for (const { agent } of agentsOf(file)) for (const s of Object.keys(agent.mcp?.onlineTool ?? {})) servers.add(s)
  for (const s of file.mcpServers ?? []) servers.add(s.name)
  const remote: Array<string> = []
  if (servers.size > 0) remote.push(`MCP servers ${[...servers].join(", ")}`)
  const cli = Object.keys(file.cli?.agents ?? {})
  if (cli.length > 0) remote.push(`CLI agents ${cli.join(", ")}`)
  const a2a = (file.a2a?.clients ?? []).map((c) => c.name)
  if (a2a.length > 0) remote.push(`A2A agents ${a2a.join(", ")}`)
  if (remote.length > 0) f.add("L026", ["type"], `remote dependencies: ${remote.join("; ")}`)

  // L027 and L033: tool references.
  const known = options.knownTools === undefined ? undefined : new Set(options.knownTools)
  for (const ref of compiled.tools) {
    const path = pathOf(ref.usedAt[0]!, compiled, ref)
    if (!ref.declared) {
      f.add(
        "L027",
        path,
        `tool ${JSON.stringify(ref.name)} is not declared (mcp.onlineTool, mcp.localTools, mcpServers, cli.agents, a2a.clients or the overrides)`
      )
    } else if (ref.kind === "local" && known !== undefined && !known.has(ref.name)) {
      f.add("L027", path, `tool ${JSON.stringify(ref.name)} is not one the runtime provides (${[...known].join(", ") || "none"})`)
    }
  }
  const unconnected = new Set<string>()
  for (const ref of compiled.tools) {
    if (ref.kind === "mcp" && ref.connection === undefined && ref.server !== undefined && !unconnected.has(ref.server)) {
      unconnected.add(ref.server)
      const owner = agentsOf(file).find(({ agent }) => agent.mcp?.onlineTool?.[ref.server!] !== undefined)
      f.add(
        "L033",
        owner !== undefined ? [...owner.path, "mcp", "onlineTool", ref.server] : ["type"],
        `MCP server ${JSON.stringify(ref.server)} has no connection: add app.mcp.custom.nodes.${ref.server} (url) or an mcpServers entry`
      )
    }
  }

  // L018, L031, L032: bounds.
  const runtime = file.runtime
  const llmBudget = runtime?.maxLlmCalls ?? DEFAULT_LLM_BUDGET
  const toolBudget = runtime?.maxToolCalls ?? DEFAULT_TOOL_BUDGET
  if (worst.llmCalls > llmBudget) {
    f.add(
      "L018",
      runtime?.maxLlmCalls !== undefined ? ["runtime", "maxLlmCalls"] : ["type"],
      `up to ${count(worst.llmCalls)} LLM calls, above the run's budget of ${llmBudget}${runtime?.maxLlmCalls === undefined ? " (the default; set runtime.maxLlmCalls)" : ""}`
    )
  }
  if (worst.toolCalls > toolBudget) {
    f.add(
      "L018",
      runtime?.maxToolCalls !== undefined ? ["runtime", "maxToolCalls"] : ["type"],
      `up to ${count(worst.toolCalls)} tool calls, above the run's budget of ${toolBudget}${runtime?.maxToolCalls === undefined ? " (the default; set runtime.maxToolCalls)" : ""}`
    )
  }
  if (options.maxLlmCalls !== undefined && worst.llmCalls > options.maxLlmCalls) {
    f.add("L031", ["type"], `up to ${count(worst.llmCalls)} LLM calls, above --max-llm-calls ${options.maxLlmCalls}`)
  }
  if (options.maxToolCalls !== undefined && worst.toolCalls > options.maxToolCalls) {
    f.add("L031", ["type"], `up to ${count(worst.toolCalls)} tool calls, above --max-tool-calls ${options.maxToolCalls}`)
  }
  f.add(
    "L032",
    ["type"],
    `worst case per input: ${count(worst.llmCalls)} LLM call${worst.llmCalls === 1 ? "" : "s"}, ${count(worst.toolCalls)} tool call${worst.toolCalls === 1 ? "" : "s"}`
  )
}

/** L030 for `cli.server`: `socketPath` without mode socket, `port` without mode tcp. */
const cliServerRules = (f: Findings, file: AgentFile): void => {
  const server = file.cli?.server
  if (server === undefined) return
  const mode = server.mode ?? "pipe"
  if (server.socketPath !== undefined && mode !== "socket")
    f.add("L030", ["cli", "server", "socketPath"], `cli.server.socketPath applies to mode socket; it has no effect with mode ${mode}`)
  if (server.port !== undefined && mode !== "tcp")
    f.add("L030", ["cli", "server", "port"], `cli.server.port applies to mode tcp; it has no effect with mode ${mode}`)
}

/** The `sharedMemory:` block: what it enables, whether any agent uses it, fields without effect. */
const sharedMemoryRules = (
  f: Findings,
  file: AgentFile,
  compiled: { readonly tools: ReadonlyArray<ToolReference>; readonly sharedMemory?: SharedMemoryRequirement }
): void => {
  const block = file.sharedMemory
  if (block === undefined) return
  const shared = compiled.sharedMemory
  if (shared === undefined) {
    if (Object.keys(block).length > 1) f.add("L030", ["sharedMemory"], "sharedMemory is disabled (enabled: false): its other fields have no effect")
    return
  }
  const where = shared.strategy === "sqlite" ? ` (${shared.path})` : shared.strategy === "redis" ? ` (${shared.url ?? "LAMBDAGENT_REDIS_URL"})` : ""
  f.add(
    "L037",
    ["sharedMemory"],
    `shared memory enabled: strategy=${shared.strategy}${where}, namespace=${shared.namespace}, appendOnly=${shared.appendOnly}, size=${shared.size}` +
      `, shown to agents=${shared.inject}, answers recorded=${shared.publish}`
  )
  if (!compiled.tools.some((t) => t.kind === "shared")) {
    f.add(
      "L038",
      block.inject !== undefined ? ["sharedMemory", "inject"] : ["sharedMemory"],
      "no agent reads or writes the shared memory: inject shows it only to simple, react and chain agents, publish is off, and no react agent can call its tools"
    )
  }
  const misplaced: ReadonlyArray<readonly ["path" | "url" | "customStore", string]> = [
    ["path", "sqlite"],
    ["url", "redis"],
    ["customStore", "custom"]
  ]
  for (const [key, strategy] of misplaced) {
    if (block[key] !== undefined && shared.strategy !== strategy) {
      f.add("L030", ["sharedMemory", key], `sharedMemory.${key} applies to strategy ${strategy}; it has no effect with strategy ${shared.strategy}`)
    }
  }
}

/** The field path where a tool is used: the first `usedAt` entry parsed back. */
const pathOf = (field: string, compiled: { readonly origins: ReadonlyMap<Term.Term, FieldPath> }, ref: ToolReference): FieldPath => {
  for (const [node, path] of compiled.origins) {
    if (node._tag === "Tool" && node.name === ref.name && formatFieldPath(path) === field) return path
  }
  const parsed: Array<string | number> = []
  const re = /([A-Za-z_$][\w$-]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/g
  for (let m = re.exec(field); m !== null; m = re.exec(field)) {
    parsed.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : JSON.parse(`"${m[3]!}"`)))
  }
  return field === "(root)" ? [] : parsed
}

const finish = (result: Omit<LintResult, "counts">, options: LintOptions): LintResult => {
  const minimum = LEVEL_RANK[options.level ?? "info"]
  const only = options.rules === undefined ? undefined : new Set(options.rules.map((r) => r.toUpperCase()))
  const ignore = new Set((options.ignore ?? []).map((r) => r.toUpperCase()))
  const findings = result.findings
    .filter((x) => LEVEL_RANK[x.level] <= minimum && (only === undefined || only.has(x.rule)) && !ignore.has(x.rule))
    .sort(
      (a, b) =>
        LEVEL_RANK[a.level] - LEVEL_RANK[b.level] ||
        (a.line ?? Infinity) - (b.line ?? Infinity) ||
        (a.column ?? Infinity) - (b.column ?? Infinity) ||
        a.rule.localeCompare(b.rule) ||
        a.message.localeCompare(b.message)
    )
  const counts = { error: 0, warn: 0, info: 0 }
  for (const x of findings) counts[x.level]++
  return { ...result, findings, counts }
}

/**
 * Lint a parsed {@link Source}. YAML and schema errors are returned in `error` (no findings);
 * semantic problems are error findings.
 *
 * @since 0.1.0
 * @category linting
 * @example
 * ```ts
 * import { lintSource, parseSource } from "lambdagent/yaml"
 * const result = lintSource(parseSource("type: react\nsystemPrompt: Use tools.\nmodel: {name: gpt-4o}\n"))
 * result.findings.map((f) => f.rule) // ["L004", "L011", "L017", "L032"]
 * ```
 */
export const lintSource = (source: Source, options: LintOptions = {}): LintResult => {
  const overrides = options.overrides ?? {}
  const base = source.file !== undefined ? { file: source.file } : {}
  let file: AgentFile
  try {
    file = validateConfig(source, { providers: Object.keys(overrides.providers ?? {}) })
  } catch (e) {
    if (isYamlError(e)) return finish({ ...base, findings: [], error: e }, options)
    throw e
  }
  const f = new Findings((p) => source.locate(p))
  for (const field of referenceFields(source.value)) {
    const fix = field.fix
    const [read, migrate] =
      fix._tag === "set"
        ? [`read as ${JSON.stringify(fix.value)}`, `writes ${JSON.stringify(fix.value)}`]
        : fix._tag === "rename"
          ? [`read as ${fix.to}`, `renames it ${fix.to}`]
          : ["no effect", "removes it"]
    f.add("L051", field.path, `a field of the Python reference, ${read} here: ${field.why} (lambdagent migrate ${migrate})`)
  }
  for (const issue of semanticIssues(file, { overrides })) f.add(issue.rule!, issue.path, issue.message)
  for (const { agent, path, type } of agentsOf(file)) agentRules(f, agent, path, type, overrides)
  const all = agentsOf(file)
  file.skills?.forEach((skill, i) => {
    const listed = all.some(({ agent, type }) => type === "react" && (agent.mcp?.localTools ?? []).includes(skill.name))
    const selected = all.some(
      ({ agent, type }) => type === "skill" && (agent.skill?.tags === undefined || skill.tags?.some((t) => agent.skill!.tags!.includes(t)))
    )
    if (!listed && !selected)
      f.add("L044", ["skills", i], `skill ${JSON.stringify(skill.name)} is not in any react agent's mcp.localTools and no type: skill agent selects it`)
  })
  file.channels?.forEach((channel, i) => {
    const uses = (op: "send" | "receive") => all.some(({ agent }) => agent[op] === channel.name)
    const name = JSON.stringify(channel.name)
    if (!uses("receive")) f.add("L048", ["channels", i], `channel ${name} has no receiver: no agent says receive: ${channel.name}`)
    if (!uses("send")) f.add("L049", ["channels", i], `channel ${name} has no sender: no agent says send: ${channel.name}`)
  })
  let compiled: ReturnType<typeof compileChecked>
  try {
    // sub-agent files are compiled too: a missing file or a cycle is the file's error
    compiled = compileChecked(file, overrides, source.file !== undefined ? { baseDir: dirname(source.file), file: source.file } : {})
  } catch (e) {
    if (isYamlError(e)) return finish({ ...base, findings: f.list, error: e }, options)
    throw e
  }
  const worst = bounds(compiled.term)
  fileRules(f, file, compiled, worst, options)
  return finish({ ...base, name: file.name ?? file.agentId ?? "agent", findings: f.list, bounds: worst, term: compiled.term }, options)
}

/**
 * Lint an agent file (a path or YAML text). A file that cannot be read or parsed gives a result
 * with `error` set.
 *
 * @since 0.1.0
 * @category linting
 * @example
 * ```ts
 * import { lint } from "lambdagent/yaml"
 * const result = lint("type: react\nsystemPrompt: Think.\nreact: {maxSteps: 0}\n", { level: "error" })
 * result.findings.map((f) => f.rule) // ["L002", "L004", "L003"] (errors, by position)
 * ```
 */
export const lint = (input: ConfigInput, options: LintOptions = {}): LintResult => {
  let source: Source
  try {
    source = loadSource(input)
  } catch (e) {
    if (!isYamlError(e)) throw e
    const file =
      typeof input === "string"
        ? !input.includes("\n") && /\.ya?ml$/i.test(input.trim())
          ? input.trim()
          : undefined
        : "path" in input
          ? input.path
          : input.file
    return finish({ ...(file !== undefined ? { file } : {}), findings: [], error: e }, options)
  }
  return lintSource(source, options)
}

/**
 * Every rule id, for validating `--rules` and `--ignore` lists.
 *
 * @since 0.1.0
 * @category rules
 * @example
 * ```ts
 * import { ruleIds } from "lambdagent/yaml"
 * ruleIds.includes("L029") // true
 * ```
 */
export const ruleIds: ReadonlyArray<string> = lintRules.map((r) => r.id)
