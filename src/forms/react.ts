/**
 * `react`: a bounded ReAct loop. Each step asks `think` for a thought, looks for a tool call in it
 * (JSON, then XML, then a keyword), calls the tool and observes; no call, or `terminate`, ends the
 * loop with the answer. An `earlyStop` predicate, applied to each step's observation, ends the
 * loop with that observation when it holds.
 *
 * A thinking `llm` sees the loop as a conversation: the task as the first user turn, then each
 * thought as an assistant turn and its observation as a user turn. The conversation grows by two
 * turns per step and is never re-rendered; each step's is a new list (the request that carried the
 * last one keeps it). Any other think term is applied to the state as text (see {@link stateText}).
 */
import { code, type Code, Op } from "../internal/code.ts"
import { writeJson } from "../internal/json.ts"
import { checkCallOf, InputProblem } from "../internal/nativeTools.ts"
import { extractToolCall, extractWrittenToolCall, type ToolCallIntent } from "../internal/react.ts"
import type * as LanguageModel from "../LanguageModel.ts"
import * as Oracle from "../Oracle.ts"
import type * as Term from "../Term.ts"
import { preview } from "../Trace.ts"
import * as Value from "../Value.ts"
import { agentCost, applied, max, ONE_TOOL, plus, times, ZERO } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"
import { defaultMaxToolCalls } from "./llmTools.ts"
import { subscript } from "./loop.ts"
import type { AgentMachine, OracleRequest } from "./step.ts"
import { isRecord } from "./parse.ts"
import { isTerminate } from "./tool.ts"

/**
 * How a ReAct agent's thinking model calls tools: `native` with the provider's tool calling (the
 * tools' schemas sent as tool definitions, the calls read from the answer), `text` by writing a
 * call in its answer (JSON, XML or a keyword), `auto` natively when the model can, else in text.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const calling: Term.ToolCalling = "auto"
 * ```
 */
export type ToolCalling = "native" | "text" | "auto"

const TOOL_CALLINGS: ReadonlyArray<ToolCalling> = ["native", "text", "auto"]

/** `{"react": {"think": t, "tools": [name, …], "maxSteps": n, "toolTimeout"?: seconds, "observe"?: b, "toolCalling"?: mode, "maxToolCalls"?: n, "earlyStop"?: p}}` */
export interface React {
  readonly _tag: "React"
  readonly think: Term.Term
  readonly tools: ReadonlyArray<string>
  readonly maxSteps: number
  /** Seconds before a tool call becomes a timeout observation. */
  readonly toolTimeout?: number
  /** Append tool observations to the state (default true). */
  readonly observe?: boolean
  /**
   * Tools that are agent terms (sub-agents, skills): a call of one of these names, which must be
   * among `tools`, applies the term in the same run (traced and budgeted with it) instead of
   * asking the host. Arguments `{"task": text}` pass the text.
   */
  readonly agents?: ReadonlyArray<readonly [name: string, agent: Term.Term]>
  /** How a thinking `llm` calls tools (default `text`); other think terms always answer in text. */
  readonly toolCalling?: ToolCalling
  /**
   * The most tool calls one answer of a natively calling model makes (default
   * {@link defaultMaxToolCalls}): the calls after them are answered with an error, not made, so
   * the worst-case bounds hold. A call written in the text is one call a step.
   */
  readonly maxToolCalls?: number
  /**
   * A predicate `λx. boolean` applied to each step's observation (the tool's result; the results
   * of a step's native calls joined by newlines): when it returns `true` the loop ends with that
   * observation as its answer, before the next thought. Meant to be pure (a validator-like
   * expression), so a replay recomputes it and nothing about it is recorded.
   */
  readonly earlyStop?: Term.Term
}

/**
 * A ReAct agent: think, pick a tool, observe, repeat, at most `maxSteps` times.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.react({ think: Term.llm({ system: "Use tools." }), tools: ["search", "terminate"], maxSteps: 10 })
 * ```
 */
export const react = (options: Omit<React, "_tag">): Term.Term => ({ _tag: "React", ...options })

interface Done {
  readonly thought: string
  readonly tool: string
  readonly observation: string
}

interface State {
  readonly fn: Value.Closure
  /** Steps done. */
  steps: number
  /** What the loop works on: the input (with `observe: false`, the last thought). */
  task: string
  /**
   * The conversation a thinking model sees. Never changed once made (a step makes a longer one):
   * each thinking request carries it, and whoever reads a request may keep it.
   */
  transcript: ReadonlyArray<LanguageModel.ChatMessage>
  /** What each step did, for the state as text. */
  log: Array<Done>
  thought: string
  tool: string
  /** Whether the value returning now is an observation (else a thought). */
  observing: boolean
  /** Whether the value returning now is the `earlyStop` predicate's answer about {@link observation}. */
  stopping: boolean
  /** The observation `earlyStop` is deciding on. */
  observation: string
  /** The native tool calls of the current step, while they are made. */
  native: NativeStep | undefined
}

/** A step's native tool calls: their results so far, and what is still to call. */
interface NativeStep {
  readonly calls: ReadonlyArray<LanguageModel.ToolCall>
  readonly results: Array<string>
  /** The calls the pending tool request makes (by index), until it is answered. */
  batch: ReadonlyArray<number>
  /** Agent calls still to make: the call's index, the agent's index, the task. */
  agents: Array<readonly [call: number, agent: number, task: string]> | undefined
  /** The call the running agent answers, or -1. */
  agentAt: number
}

/** The loop's state as text: the task, then each step's thought, action and observation. */
export const stateText = (task: string, log: ReadonlyArray<Done>): string => {
  let text = `[Task]\n${task}`
  log.forEach((d, i) => (text += `\n\n[Step ${i + 1}]\nThought: ${d.thought}\nAction: ${d.tool}\nObservation: ${d.observation}`))
  return text
}

const think = (m: AgentMachine, c: Code, state: State): OracleRequest | undefined => {
  state.observing = false
  state.stopping = false
  m.push(c, state)
  const thinker = c.a!
  if (thinker.term._tag === "Llm") {
    const transcript = state.transcript
    const calling = (c.term as React).toolCalling
    return {
      kind: "llm",
      id: m.nextRequestId(),
      term: thinker.term,
      input: transcript[transcript.length - 1]!.content,
      tools: (c.term as React).tools,
      transcript,
      ...(calling === "native" || calling === "auto" ? { toolCalling: calling } : {})
    }
  }
  m.call(thinker, state.fn, stateText(state.task, state.log))
  return undefined
}

const agentIndex = (term: React, tool: string): number => (term.agents === undefined ? -1 : term.agents.findIndex(([name]) => name === tool))

const final = (m: AgentMachine, thought: string, answer: string): void => {
  if (m.tracing) m.record({ step: m.steps, kind: "react", name: "final", output: preview(thought) })
  m.done(answer)
}

/** The call written in a thought (text tool calling): make it, or end with the answer. */
const writtenCall = (m: AgentMachine, c: Code, state: State, thought: string, call: ToolCallIntent | undefined): OracleRequest | undefined => {
  const term = c.term as React
  if (call === undefined || isTerminate(call.tool)) {
    return void final(m, thought, call !== undefined && call.args !== undefined && call.args.trim() !== "" ? call.args : thought)
  }
  state.tool = call.tool
  state.observing = true
  m.push(c, state)
  if (!term.tools.includes(call.tool)) {
    return void m.done(`[TOOL_ERROR] unknown tool ${JSON.stringify(call.tool)}; available: ${term.tools.join(", ")}`)
  }
  const agent = agentIndex(term, call.tool)
  if (agent >= 0) {
    if (m.tracing) m.record({ step: m.steps, kind: "react", name: `agent ${call.tool}`, input: preview(call.args ?? thought) })
    const json = call.json
    const task = isRecord(json) && typeof json.task === "string" ? json.task : (call.args ?? thought)
    return void m.call(c.items![agent]!, state.fn, task)
  }
  return {
    kind: "tool",
    id: m.nextRequestId(),
    name: call.tool,
    input: call.args ?? thought,
    ...(call.json !== undefined ? { args: call.json } : {}),
    ...(term.toolTimeout !== undefined ? { timeoutMs: term.toolTimeout * 1000 } : {}),
    observe: true
  }
}

/** The answer a native `terminate` call gives: its `answer`, else its arguments, else the thought. */
const terminateAnswer = (call: LanguageModel.ToolCall, thought: string): string => {
  let args: unknown
  try {
    args = JSON.parse(call.arguments)
  } catch {
    return call.arguments.trim() !== "" ? call.arguments : thought
  }
  if (isRecord(args)) {
    const answer = args.answer ?? args.args ?? args.input
    if (answer !== undefined) return typeof answer === "string" ? answer : writeJson(answer)
    return Object.keys(args).length === 0 ? thought : writeJson(args)
  }
  return typeof args === "string" ? args : writeJson(args)
}

const NO_CALLS: ReadonlyArray<number> = []

/**
 * The tool calls a model made natively: each is checked (a tool of the step, arguments that are
 * a JSON object) and an invalid one answered at once with what was wrong; the host tools' calls
 * are made together, then the agents' one by one. Plain loops and no closures: this runs at
 * every native step.
 */
const nativeCalls = (m: AgentMachine, c: Code, state: State, text: string, calls: ReadonlyArray<LanguageModel.ToolCall>): OracleRequest | undefined => {
  const term = c.term as React
  state.thought = text
  const count = calls.length
  if (count === 0) return writtenCall(m, c, state, text, extractWrittenToolCall(text))
  for (let i = 0; i < count; i++) if (isTerminate(calls[i]!.name)) return void final(m, text, terminateAnswer(calls[i]!, text))
  const most = term.maxToolCalls ?? defaultMaxToolCalls
  const results: Array<string> = []
  for (let i = 0; i < count; i++) results.push("")
  const step: NativeStep = { calls, results, batch: NO_CALLS, agents: undefined, agentAt: -1 }
  const requests: Array<Oracle.ToolRequest> = []
  const batch: Array<number> = []
  for (let i = 0; i < count; i++) {
    const call = calls[i]!
    const args = checkCallOf(call, term.tools, i, most)
    if (args instanceof InputProblem) {
      results[i] = `[TOOL_ERROR] ${args.message}`
      if (m.tracing) m.record({ step: m.steps, kind: "tool", name: call.name, input: preview(call.arguments), output: preview(results[i]!) })
      continue
    }
    const agent = agentIndex(term, call.name)
    if (agent >= 0) {
      const task = args.task
      ;(step.agents ??= []).push([i, agent, typeof task === "string" ? task : writeJson(args)])
      continue
    }
    batch.push(i)
    requests.push(
      term.toolTimeout === undefined
        ? { kind: "tool", id: m.nextRequestId(), name: call.name, input: call.arguments, args, callId: call.id, observe: true }
        : {
            kind: "tool",
            id: m.nextRequestId(),
            name: call.name,
            input: call.arguments,
            args,
            callId: call.id,
            timeoutMs: term.toolTimeout * 1000,
            observe: true
          }
    )
  }
  step.batch = batch
  state.native = step
  state.observing = true
  if (requests.length === 0) return nextNative(m, c, state)
  m.push(c, state)
  return requests.length === 1 ? requests[0]! : { kind: "tools", id: m.nextRequestId(), calls: requests }
}

/** Make the next agent call of the step, or, all calls answered, observe their results. */
const nextNative = (m: AgentMachine, c: Code, state: State): OracleRequest | undefined => {
  const step = state.native!
  const next = step.agents?.shift()
  if (next === undefined) {
    state.native = undefined
    const calls = step.calls
    const results = step.results
    // the assistant's turn with its calls, then each call's result under its id
    const turn: Array<LanguageModel.ChatMessage> = [{ role: "assistant", content: state.thought, toolCalls: calls }]
    let names = ""
    let observation = ""
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]!
      turn.push({ role: "tool", toolCallId: call.id, content: results[i]! })
      names = i === 0 ? call.name : `${names}, ${call.name}`
      observation = i === 0 ? results[i]! : `${observation}\n${results[i]!}`
    }
    return observed(m, c, state, turn, names, observation)
  }
  const [at, agent, task] = next
  step.agentAt = at
  m.push(c, state)
  if (m.tracing) m.record({ step: m.steps, kind: "react", name: `agent ${step.calls[at]!.name}`, input: preview(task) })
  return void m.call(c.items![agent]!, state.fn, task)
}

/** A step is done: its turn joins the conversation (with `observe: false`, only the thought goes on). */
const observed = (
  m: AgentMachine,
  c: Code,
  state: State,
  turn: ReadonlyArray<LanguageModel.ChatMessage>,
  tool: string,
  observation: string
): OracleRequest | undefined => {
  const term = c.term as React
  state.steps++
  if (term.observe === false) {
    state.task = state.thought
    state.transcript = [{ role: "user", content: state.thought }]
    state.log = []
  } else {
    state.transcript = state.transcript.concat(turn)
    state.log.push({ thought: state.thought, tool, observation })
  }
  if (term.earlyStop !== undefined) {
    state.stopping = true
    state.observation = observation
    m.pushCatching(c, state)
    return void m.call(c.b!, state.fn, observation)
  }
  return next(m, c, state)
}

/** After a step: another thought, or, the steps used up, the state as text. */
const next = (m: AgentMachine, c: Code, state: State): OracleRequest | undefined => {
  if (state.steps >= (c.term as React).maxSteps) return void m.done(stateText(state.task, state.log))
  return think(m, c, state)
}

/** `earlyStop` answered about the last observation: end with it, or go on. */
const decided = (m: AgentMachine, c: Code, state: State, value: Value.Value): OracleRequest | undefined => {
  state.stopping = false
  if (!m.isTrue(value, "react's earlyStop result")) return next(m, c, state)
  if (m.tracing) m.record({ step: m.steps, kind: "react", name: "early stop", output: preview(state.observation) })
  return void m.done(state.observation)
}

const step: AgentStep<React> = {
  apply: (m, c, fn, input) => {
    const task = Value.toText(input)
    return think(m, c, {
      fn,
      steps: 0,
      task,
      transcript: [{ role: "user", content: task }],
      log: [],
      thought: "",
      tool: "",
      observing: false,
      stopping: false,
      observation: "",
      native: undefined
    })
  },
  // An earlyStop predicate that raises (int() of a word) does not stop the loop: it is false, as a
  // Python predicate that raises is.
  raised: (m, c, state: State, error) => {
    state.stopping = false
    if (m.tracing)
      m.record({
        step: m.steps,
        kind: "react",
        name: "no early stop",
        output: preview(state.observation),
        error: preview(`earlyStop raised ${error.kind}: ${error.message}`)
      })
    return next(m, c, state)
  },
  resume: (m, c, state: State, value) => {
    const term = c.term as React
    if (state.stopping) return decided(m, c, state, value)
    if (!state.observing) {
      const answer = term.toolCalling === undefined || term.toolCalling === "text" ? undefined : Oracle.readToolCallAnswer(value)
      if (answer !== undefined) return nativeCalls(m, c, state, answer.text, answer.calls)
      const thought = Value.toText(value)
      state.thought = thought
      return writtenCall(m, c, state, thought, extractToolCall(thought, term.tools))
    }
    const native = state.native
    if (native !== undefined) {
      if (native.agentAt >= 0) {
        native.results[native.agentAt] = Value.toText(value)
        native.agentAt = -1
      } else {
        const batch = native.batch
        if (batch.length === 1) native.results[batch[0]!] = Value.toText(value)
        else {
          let answers = value instanceof Value.List ? value : Value.nil
          for (let i = 0; i < batch.length; i++, answers = answers.length > 0 ? answers.tail : answers) {
            native.results[batch[i]!] = answers.length > 0 ? Value.toText(answers.head) : ""
          }
        }
        native.batch = NO_CALLS
      }
      return nextNative(m, c, state)
    }
    const observation = Value.toText(value)
    return observed(
      m,
      c,
      state,
      [
        { role: "assistant", content: state.thought },
        { role: "user", content: `Observation: ${observation}` }
      ],
      state.tool,
      observation
    )
  }
}

/** A react node's children (see `children`) by role: the thinker, the agents, the `earlyStop` predicate. */
const parts = <A>(t: React, kids: ReadonlyArray<A>): { readonly thinker: A; readonly agents: ReadonlyArray<A>; readonly earlyStop: A | undefined } => {
  const count = t.agents?.length ?? 0
  return { thinker: kids[0]!, agents: kids.slice(1, 1 + count), earlyStop: t.earlyStop !== undefined ? kids[1 + count] : undefined }
}

export const reactForm: Form<React, "react"> = {
  tag: "React",
  keys: ["react"],
  parse: (p, node, key, obj) => {
    const f = p.fields(node, key, obj[key], ["think", "tools", "maxSteps"], ["toolTimeout", "observe", "agents", "toolCalling", "maxToolCalls", "earlyStop"])
    const at = p.child(node, f, key)
    if (!Array.isArray(f.tools) || f.tools.some((t) => typeof t !== "string")) return p.fail(at, "an array of tool names", "tools")
    const tools = f.tools as ReadonlyArray<string>
    const maxSteps = p.count(at, f.maxSteps, "maxSteps", 1)
    const toolTimeout = f.toolTimeout === undefined ? undefined : p.count(at, f.toolTimeout, "toolTimeout", 0)
    const observe = p.optionalBoolean(at, f, "observe")
    const toolCalling = f.toolCalling
    if (toolCalling !== undefined && !TOOL_CALLINGS.includes(toolCalling as ToolCalling)) p.fail(at, '"native", "text" or "auto"', "toolCalling")
    const maxToolCalls = f.maxToolCalls === undefined ? undefined : p.count(at, f.maxToolCalls, "maxToolCalls", 1)
    const kids = [p.sub(node, f.think, key, "think")]
    const names: Array<string> = []
    if (f.agents !== undefined) {
      if (!Array.isArray(f.agents)) return p.fail(at, 'an array of {"name", "agent"}', "agents")
      const agentsAt = p.child(at, f.agents, "agents")
      f.agents.forEach((entry, i) => {
        if (!isRecord(entry) || !Object.hasOwn(entry, "agent") || Object.keys(entry).some((k) => k !== "name" && k !== "agent")) {
          p.fail(agentsAt, 'an object with "name", "agent"', i)
        }
        const entryAt = p.child(agentsAt, entry, i)
        const name = p.string(entryAt, entry.name, "name")
        if (!tools.includes(name) || names.includes(name)) p.fail(entryAt, "a name among tools, given once", "name")
        names.push(name)
        kids.push(p.sub(node, entry.agent, key, "agents", i, "agent"))
      })
    }
    if (f.earlyStop !== undefined) kids.push(p.sub(node, f.earlyStop, key, "earlyStop"))
    return {
      kids,
      build: ([thinker, ...rest]) => {
        const agents = rest.slice(0, names.length)
        return react({
          think: thinker!,
          tools,
          maxSteps,
          ...(toolTimeout !== undefined ? { toolTimeout } : {}),
          ...(observe !== undefined ? { observe } : {}),
          ...(toolCalling !== undefined ? { toolCalling: toolCalling as ToolCalling } : {}),
          ...(maxToolCalls !== undefined ? { maxToolCalls } : {}),
          ...(f.agents !== undefined ? { agents: names.map((name, i) => [name, agents[i]!] as const) } : {}),
          ...(f.earlyStop !== undefined ? { earlyStop: rest[names.length]! } : {})
        })
      }
    }
  },
  children: (t) => [t.think, ...(t.agents ?? []).map(([, agent]) => agent), ...(t.earlyStop !== undefined ? [t.earlyStop] : [])],
  withChildren: (t, kids) => {
    const { thinker, agents, earlyStop } = parts(t, kids)
    return {
      ...t,
      think: thinker,
      ...(t.agents !== undefined ? { agents: t.agents.map(([name], i) => [name, agents[i]!] as const) } : {}),
      ...(earlyStop !== undefined ? { earlyStop } : {})
    }
  },
  segments: (t) => [
    ["react", "think"],
    ...(t.agents ?? []).map((_, i) => ["react", "agents", i, "agent"]),
    ...(t.earlyStop !== undefined ? [["react", "earlyStop"]] : [])
  ],
  encode: (t, kids) => {
    const { thinker, agents, earlyStop } = parts(t, kids)
    const out: Record<string, Term.Json> = { think: thinker, tools: t.tools, maxSteps: t.maxSteps }
    if (t.toolTimeout !== undefined) out.toolTimeout = t.toolTimeout
    if (t.observe !== undefined) out.observe = t.observe
    if (t.toolCalling !== undefined) out.toolCalling = t.toolCalling
    if (t.maxToolCalls !== undefined) out.maxToolCalls = t.maxToolCalls
    if (t.agents !== undefined) out.agents = t.agents.map(([name], i) => ({ name, agent: agents[i]! }))
    if (earlyStop !== undefined) out.earlyStop = earlyStop
    return { react: out }
  },
  pretty: (t, kids) => {
    const { thinker, agents, earlyStop } = parts(t, kids)
    const agentOf = (n: string) => {
      const i = t.agents?.findIndex(([name]) => name === n) ?? -1
      return i >= 0 ? agents[i]! : `Tool(${n})`
    }
    const cases = [...t.tools.filter((n) => !isTerminate(n)).map((n) => `(${n}, ${agentOf(n)})`), "(terminate, λx. x)"]
    const stop = earlyStop !== undefined ? ` ELSE IF (${earlyStop})(obs) THEN obs` : ""
    return `Y${subscript(t.maxSteps)}(λself. λstate. let t = ${thinker}(state) in CASE t [${cases.join(", ")}] >> IF is_terminate THEN t${stop} ELSE self(state ⊕ obs))`
  },
  atomic: false,
  capabilities: (t, into) => {
    into.react = true
    for (const name of t.tools) if (!isTerminate(name) && !t.agents?.some(([agent]) => agent === name)) into.tools.add(name)
  },
  cost: (t, kids) => {
    const { thinker, agents, earlyStop } = parts(t, kids)
    const hostTools = t.tools.some((n) => !isTerminate(n) && !t.agents?.some(([agent]) => agent === n))
    // a natively calling model may ask for several calls in one answer, each a tool or an agent
    const callsPerStep = t.toolCalling === "native" || t.toolCalling === "auto" ? (t.maxToolCalls ?? defaultMaxToolCalls) : 1
    const act = times(callsPerStep, max(hostTools ? ONE_TOOL : ZERO, ...agents.map(applied)))
    return agentCost(times(t.maxSteps, plus(applied(thinker), act, earlyStop !== undefined ? applied(earlyStop) : ZERO)))
  },
  value: () => "function",
  compile: (t, kids) => {
    const { thinker, agents, earlyStop } = parts(t, kids)
    // the thinker is `a`, the predicate `b`, the agents the items
    return code(Op.Agent, t, earlyStop !== undefined ? [thinker, earlyStop] : [thinker], step, agents)
  },
  events: ["react"],
  agent: step
}
