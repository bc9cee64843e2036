/**
 * `llm`: an LLM call, as a function from the input text to the model's answer.
 */
import { code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import { agentCost, ONE_LLM } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"
import { isRecord, type Parser, type ParseNode } from "./parse.ts"

/**
 * Settings of the model an `llm` term calls. Every field is optional: absent fields come from the
 * runtime's default model.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const m: Term.ModelSettings = { provider: "openai", name: "gpt-4o-mini", temperature: 0 }
 * ```
 */
export interface ModelSettings {
  readonly provider?: string
  readonly name?: string
  readonly temperature?: number
  readonly maxTokens?: number
  readonly topP?: number
  readonly stop?: ReadonlyArray<string>
  readonly baseUrl?: string
  /** Seconds before one call is abandoned. */
  readonly timeout?: number
}

/** `{"llm": {"system": …, "name"?, "model"?, "conversation"?, "maxHistoryTokens"?}}` */
export interface Llm {
  readonly _tag: "Llm"
  readonly system: string
  readonly name?: string
  readonly model?: ModelSettings
  /** Keep the conversation across calls (default) or call statelessly. */
  readonly conversation?: boolean
  readonly maxHistoryTokens?: number
}

/**
 * An LLM call: a function from the input text to the model's answer.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.llm({ system: "Summarize.", name: "summarizer", model: { provider: "openai", name: "gpt-4o-mini" } })
 * ```
 */
export const llm = (options: Omit<Llm, "_tag">): Term.Term => ({ _tag: "Llm", ...options })

const modelSettings = (p: Parser, at: ParseNode, m: Readonly<Record<string, unknown>>): ModelSettings => {
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(m)) {
    switch (key) {
      case "provider":
      case "name":
      case "baseUrl":
        out[key] = p.string(at, v, key)
        break
      case "temperature":
      case "topP":
      case "timeout":
        if (typeof v !== "number" || !Number.isFinite(v) || v < 0) p.fail(at, "a non-negative number", key)
        out[key] = v
        break
      case "maxTokens":
        out[key] = p.count(at, v, key, 1)
        break
      case "stop":
        if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) p.fail(at, "an array of strings", key)
        out[key] = v
        break
      default:
        p.fail(at, "one of provider, name, temperature, maxTokens, topP, stop, baseUrl, timeout", key)
    }
  }
  return out as ModelSettings
}

const parseLlm = (p: Parser, node: ParseNode, key: string, value: unknown): Term.Term => {
  const f = p.fields(node, key, value, ["system"], ["name", "model", "conversation", "maxHistoryTokens"])
  const at = p.child(node, f, key)
  const system = p.string(at, f.system, "system")
  const name = f.name === undefined ? undefined : p.string(at, f.name, "name")
  const conversation = p.optionalBoolean(at, f, "conversation")
  const maxHistoryTokens = f.maxHistoryTokens === undefined ? undefined : p.count(at, f.maxHistoryTokens, "maxHistoryTokens", 1)
  let model: ModelSettings | undefined
  if (f.model !== undefined) {
    if (!isRecord(f.model)) return p.fail(at, "an object of model settings", "model")
    model = modelSettings(p, p.child(at, f.model, "model"), f.model)
  }
  return llm({
    system,
    ...(name !== undefined ? { name } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(conversation !== undefined ? { conversation } : {}),
    ...(maxHistoryTokens !== undefined ? { maxHistoryTokens } : {})
  })
}

const clip = (text: string, max: number) => (text.length <= max ? text : text.slice(0, max) + "…")

const modelText = (model: ModelSettings | undefined): string => {
  if (model === undefined) return ""
  const name = [model.provider, model.name].filter((p) => p !== undefined).join("/")
  const temp = model.temperature === undefined ? "" : `, θ=${model.temperature}`
  return name === "" && temp === "" ? "" : `_{${name}${temp}}`
}

const step: AgentStep<Llm> = {
  apply: (m, c, _fn, input) => ({ kind: "llm", id: m.nextRequestId(), term: c.term as Llm, input })
}

export const llmForm: Form<Llm> = {
  tag: "Llm",
  keys: ["llm"],
  parse: (p, node, key, obj) => parseLlm(p, node, key, obj[key]),
  children: () => [],
  withChildren: (t) => t,
  segments: () => [],
  encode: (t) => {
    const out: Record<string, Term.Json> = { system: t.system }
    if (t.name !== undefined) out.name = t.name
    if (t.model !== undefined) out.model = t.model as Term.Json
    if (t.conversation !== undefined) out.conversation = t.conversation
    if (t.maxHistoryTokens !== undefined) out.maxHistoryTokens = t.maxHistoryTokens
    return { llm: out }
  },
  pretty: (t, _, formal) => {
    const head = `LLM${modelText(t.model)}("${clip(t.system.replace(/\s+/g, " ").trim(), 50)}")`
    return formal ? `(λx. ${head}(x))` : t.name !== undefined ? `${t.name}:${head}` : head
  },
  atomic: true,
  capabilities: (_, into) => void (into.llm = true),
  cost: () => agentCost(ONE_LLM),
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, kids, step),
  events: [],
  agent: step
}
