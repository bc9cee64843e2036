/**
 * `llm`: an LLM call, as a function from the input text to the model's answer — or, with an
 * `output` schema, to the JSON value it answered, checked against the schema and repaired by
 * asking again at most `retries` times.
 */
import type * as z from "zod"
import { code, type Code, Op } from "../internal/code.ts"
import { checkAnswer, repairPrompt, toJsonSchema, validatorOf } from "../internal/structured.ts"
import type * as LanguageModel from "../LanguageModel.ts"
import * as Oracle from "../Oracle.ts"
import type * as Term from "../Term.ts"
import { preview } from "../Trace.ts"
import * as Value from "../Value.ts"
import { agentCost, ONE_LLM, times } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"
import { isRecord, type Parser, type ParseNode } from "./parse.ts"
import { applyWithTools, type Calling, defaultMaxToolCalls, defaultToolRounds, resumeWithTools } from "./llmTools.ts"
import type { AgentMachine, OracleRequest } from "./step.ts"
import { isTerminate } from "./tool.ts"

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
  /**
   * Session mode, for providers that keep sessions of their own (`claude-code`): each conversation
   * resumes its own provider session instead of resending its history.
   */
  readonly session?: boolean
}

/**
 * The structured output of an `llm` term: its answer must be one JSON value matching `schema` (a
 * JSON Schema). `name` and `description` tell the model what the value is; `strict` asks for the
 * provider's strict schema adherence (default: when the schema allows it); `retries` is how many
 * times an answer that does not match is sent back to be repaired (default 2).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const o: Term.Output = { name: "city", schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }
 * ```
 */
export interface Output {
  readonly schema: LanguageModel.JsonSchema
  readonly name?: string
  readonly description?: string
  readonly strict?: boolean
  readonly retries?: number
}

/**
 * How many times an `llm` term's answer that does not match its output schema is sent back to the
 * model to be repaired, when its `output` does not say.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * console.log(Term.defaultOutputRetries) // 2
 * ```
 */
export const defaultOutputRetries = 2

/** `{"llm": {"system": …, "name"?, "model"?, "conversation"?, "maxHistoryTokens"?, "output"?}}` */
export interface Llm {
  readonly _tag: "Llm"
  readonly system: string
  readonly name?: string
  readonly model?: ModelSettings
  /** Keep the conversation across calls (default) or call statelessly. */
  readonly conversation?: boolean
  readonly maxHistoryTokens?: number
  /** Answer with a JSON value matching a schema (the call is then stateless). */
  readonly output?: Output
  /**
   * Tools the model may call (natively where it can): the calls of an answer are made and the
   * model is asked again with their results, at most `toolRounds` times (the call is then stateless).
   */
  readonly tools?: ReadonlyArray<string>
  /** Rounds of tool calls (default 1); the model answers the last round without tools. */
  readonly toolRounds?: number
  /** Calls of one answer that are made (default 8); the others are answered with an error. */
  readonly maxToolCalls?: number
}

/**
 * The options of {@link llm}: an `llm` node's fields, where the output schema may also be a zod
 * schema (converted to JSON Schema, which is what the term holds).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import * as z from "zod"
 * import type { Term } from "lambdagent"
 * const o: Term.LlmOptions = { system: "Extract the city.", output: { schema: z.object({ city: z.string() }) } }
 * ```
 */
export interface LlmOptions extends Omit<Llm, "_tag" | "output"> {
  readonly output?: Omit<Output, "schema"> & { readonly schema: LanguageModel.JsonSchema | z.ZodType }
}

/**
 * An LLM call: a function from the input text to the model's answer; with `output`, to the JSON
 * value it answered, checked against the schema (a zod schema or a JSON Schema).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import * as z from "zod"
 * import { Term } from "lambdagent"
 * Term.llm({ system: "Summarize.", name: "summarizer", model: { provider: "openai", name: "gpt-4o-mini" } })
 * Term.llm({ system: "Extract the person.", output: { name: "person", schema: z.object({ name: z.string(), age: z.number() }) } })
 * ```
 */
export const llm = (options: LlmOptions): Term.Term => {
  const { output, ...rest } = options
  return output === undefined ? { _tag: "Llm", ...rest } : { _tag: "Llm", ...rest, output: { ...output, schema: toJsonSchema(output.schema) } }
}

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
      case "session":
        if (typeof v !== "boolean") p.fail(at, "a boolean", key)
        out[key] = v
        break
      default:
        p.fail(at, "one of provider, name, temperature, maxTokens, topP, stop, baseUrl, timeout, session", key)
    }
  }
  return out as ModelSettings
}

const parseOutput = (p: Parser, at: ParseNode, value: unknown): Output => {
  const f = p.fields(at, "output", value, ["schema"], ["name", "description", "strict", "retries"])
  const outputAt = p.child(at, f, "output")
  if (!isRecord(f.schema)) return p.fail(outputAt, "a JSON Schema (an object)", "schema")
  const schema = f.schema as LanguageModel.JsonSchema
  try {
    validatorOf(schema)
  } catch (error) {
    p.fail(outputAt, `a JSON Schema (${error instanceof Error ? error.message : String(error)})`, "schema")
  }
  const name = f.name === undefined ? undefined : p.string(outputAt, f.name, "name")
  const description = f.description === undefined ? undefined : p.string(outputAt, f.description, "description")
  const strict = p.optionalBoolean(outputAt, f, "strict")
  const retries = f.retries === undefined ? undefined : p.count(outputAt, f.retries, "retries", 0)
  return {
    schema,
    ...(name !== undefined ? { name } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(strict !== undefined ? { strict } : {}),
    ...(retries !== undefined ? { retries } : {})
  }
}

const parseLlm = (p: Parser, node: ParseNode, key: string, value: unknown): Term.Term => {
  const f = p.fields(node, key, value, ["system"], ["name", "model", "conversation", "maxHistoryTokens", "output", "tools", "toolRounds", "maxToolCalls"])
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
  const output = f.output === undefined ? undefined : parseOutput(p, at, f.output)
  // a structured answer is one call (repaired as needed) on the input alone: it keeps no conversation
  if (output !== undefined && conversation === true) p.fail(at, "false or nothing: an llm with output keeps no conversation", "conversation")
  let tools: ReadonlyArray<string> | undefined
  if (f.tools !== undefined) {
    if (!Array.isArray(f.tools) || f.tools.some((t) => typeof t !== "string")) return p.fail(at, "an array of tool names", "tools")
    tools = f.tools as ReadonlyArray<string>
    if (output !== undefined) p.fail(at, "nothing beside output (compose an llm with output after this one)", "tools")
    if (conversation === true) p.fail(at, "false or nothing: an llm with tools keeps no conversation", "conversation")
  }
  const toolRounds = f.toolRounds === undefined ? undefined : p.count(at, f.toolRounds, "toolRounds", 1)
  const maxToolCalls = f.maxToolCalls === undefined ? undefined : p.count(at, f.maxToolCalls, "maxToolCalls", 1)
  if (tools === undefined && (toolRounds !== undefined || maxToolCalls !== undefined)) {
    p.fail(at, "tools beside toolRounds and maxToolCalls", toolRounds !== undefined ? "toolRounds" : "maxToolCalls")
  }
  return {
    _tag: "Llm",
    system,
    ...(name !== undefined ? { name } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(conversation !== undefined ? { conversation } : {}),
    ...(maxHistoryTokens !== undefined ? { maxHistoryTokens } : {}),
    ...(output !== undefined ? { output } : {}),
    ...(tools !== undefined ? { tools } : {}),
    ...(toolRounds !== undefined ? { toolRounds } : {}),
    ...(maxToolCalls !== undefined ? { maxToolCalls } : {})
  }
}

const clip = (text: string, max: number) => (text.length <= max ? text : text.slice(0, max) + "…")

const modelText = (model: ModelSettings | undefined): string => {
  if (model === undefined) return ""
  const name = [model.provider, model.name].filter((p) => p !== undefined).join("/")
  const temp = model.temperature === undefined ? "" : `, θ=${model.temperature}`
  return name === "" && temp === "" ? "" : `_{${name}${temp}}`
}

/** An `llm` call with an output schema, while its answer is checked and repaired. */
interface Answering {
  readonly input: Value.Value
  /** Answers so far. */
  attempts: number
  /** The answers that did not match and what was wrong with each, as turns for the model. */
  readonly repair: Array<LanguageModel.ChatMessage>
}

const request = (m: AgentMachine, term: Llm, input: Value.Value, repair?: ReadonlyArray<LanguageModel.ChatMessage>): OracleRequest => ({
  kind: "llm",
  id: m.nextRequestId(),
  term,
  input,
  ...(term.output !== undefined ? { output: term.output } : {}),
  ...(repair !== undefined ? { repair } : {})
})

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`

const step: AgentStep<Llm> = {
  apply: (m, c, _fn, input) => {
    const term = c.term as Llm
    if (term.tools !== undefined) return applyWithTools(m, c, input)
    if (term.output !== undefined) m.push(c, { input, attempts: 0, repair: [] } satisfies Answering)
    return request(m, term, input)
  },
  resume: (m, c: Code, state: Answering | Calling, value) => {
    if ("rounds" in state) return resumeWithTools(m, c, state, value)
    const term = c.term as Llm
    const output = term.output!
    const text = Value.toText(value)
    const checked = checkAnswer(text, output.schema)
    state.attempts++
    if ("json" in checked) return void m.done(Oracle.toValue(checked.json))
    if (m.tracing) m.record({ step: m.steps, kind: "output", name: "invalid", input: preview(text), output: preview(checked.problem) })
    const retries = output.retries ?? defaultOutputRetries
    if (state.attempts > retries) {
      return m.fail(
        "ValidationError",
        `the answer does not match the output schema${output.name !== undefined ? ` ${JSON.stringify(output.name)}` : ""} after ${plural(state.attempts, "attempt")}: ${checked.problem.replace(/\n/g, "; ")}`
      )
    }
    state.repair.push({ role: "assistant", content: text }, { role: "user", content: repairPrompt(checked.problem) })
    m.push(c, state)
    return request(m, term, state.input, [...state.repair])
  }
}

export const llmForm: Form<Llm, "output"> = {
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
    if (t.output !== undefined) out.output = t.output as unknown as Term.Json
    if (t.tools !== undefined) out.tools = t.tools
    if (t.toolRounds !== undefined) out.toolRounds = t.toolRounds
    if (t.maxToolCalls !== undefined) out.maxToolCalls = t.maxToolCalls
    return { llm: out }
  },
  pretty: (t, _, formal) => {
    const answer = `LLM${modelText(t.model)}("${clip(t.system.replace(/\s+/g, " ").trim(), 50)}")`
    const withTools =
      t.tools === undefined ? answer : `${answer}[${t.tools.join(", ")}]${t.toolRounds !== undefined && t.toolRounds !== 1 ? `×${t.toolRounds}` : ""}`
    const head = t.output === undefined ? withTools : `${withTools} : JSON${t.output.name !== undefined ? `⟨${t.output.name}⟩` : ""}`
    return formal ? `(λx. ${head}(x))` : t.name !== undefined ? `${t.name}:${head}` : head
  },
  atomic: true,
  capabilities: (t, into) => {
    into.llm = true
    for (const name of t.tools ?? []) if (!isTerminate(name)) into.tools.add(name)
  },
  cost: (t, _, context) => {
    if (t.tools !== undefined) {
      // one call, then one more per round; each round makes at most maxToolCalls calls
      const rounds = t.toolRounds ?? defaultToolRounds
      const hostTools = t.tools.some((name) => !isTerminate(name))
      return agentCost({ llmCalls: rounds + 1, toolCalls: hostTools ? rounds * (t.maxToolCalls ?? defaultMaxToolCalls) : 0 })
    }
    // an answer that does not match the output schema is asked for again, at most `retries` times
    return agentCost(t.output === undefined ? ONE_LLM : times(context.attempts(t.output.retries ?? defaultOutputRetries), ONE_LLM))
  },
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, kids, step),
  events: ["output"],
  agent: step
}
