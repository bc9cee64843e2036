/**
 * An `llm` term given `tools`: one model call with the tools, the calls it asks for made at once,
 * and the model asked again with their results — at most `toolRounds` rounds, the last one
 * without tools (tool choice `none`), so the answer is text. The value is the last answer's text.
 */
import { writeJson } from "../internal/json.ts"
import { checkCallOf, InputProblem } from "../internal/nativeTools.ts"
import { extractWrittenToolCall } from "../internal/react.ts"
import type * as LanguageModel from "../LanguageModel.ts"
import * as Oracle from "../Oracle.ts"
import type * as Term from "../Term.ts"
import { preview } from "../Trace.ts"
import * as Value from "../Value.ts"
import type { Code } from "../internal/code.ts"
import type { AgentMachine, OracleRequest } from "./step.ts"
import { isTerminate } from "./tool.ts"

/**
 * Rounds of tool calls an `llm` term with `tools` makes when it does not say (`toolRounds`).
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * console.log(Term.defaultToolRounds) // 1
 * ```
 */
export const defaultToolRounds = 1

/**
 * Tool calls of one answer an `llm` term with `tools` makes when it does not say
 * (`maxToolCalls`): the calls after them are answered with an error, not made.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * console.log(Term.defaultMaxToolCalls) // 8
 * ```
 */
export const defaultMaxToolCalls = 8

/** An `llm` call with tools, between its model calls and its tool calls. */
export interface Calling {
  readonly input: Value.Value
  /**
   * The input, then each answer with calls and the calls' results. Never changed once made (a
   * round makes a longer one): each request carries it, and its reader may keep it.
   */
  transcript: ReadonlyArray<LanguageModel.ChatMessage>
  /** Rounds of calls made. */
  rounds: number
  /** The answer whose calls are being made: its text, its calls, their results, the calls the pending request makes. */
  pending:
    | {
        readonly text: string
        readonly calls: ReadonlyArray<LanguageModel.ToolCall>
        readonly results: Array<string>
        readonly batch: ReadonlyArray<number>
      }
    | undefined
}

type Llm = Term.Of<"Llm">

const ask = (m: AgentMachine, term: Llm, state: Calling): OracleRequest => {
  // after the last round the model answers without tools
  const last = state.rounds >= (term.toolRounds ?? defaultToolRounds)
  return {
    kind: "llm",
    id: m.nextRequestId(),
    term,
    input: state.input,
    tools: term.tools!,
    transcript: state.transcript,
    toolCalling: "auto",
    ...(last ? { toolChoice: "none" as const } : {})
  }
}

/** Apply an `llm` term with tools: its first model call. */
export const applyWithTools = (m: AgentMachine, c: Code, input: Value.Value): OracleRequest => {
  const state: Calling = { input, transcript: [{ role: "user", content: Value.toText(input) }], rounds: 0, pending: undefined }
  m.push(c, state)
  return ask(m, c.term as Llm, state)
}

/**
 * The calls a model wrote in its text (a model without native tools): a JSON or XML call of one of
 * the tools. A written `terminate` call is the model's final answer: its arguments.
 */
const writtenCalls = (text: string, tools: ReadonlyArray<string>, round: number): ReadonlyArray<LanguageModel.ToolCall> | string => {
  const call = extractWrittenToolCall(text)
  if (call !== undefined && isTerminate(call.tool)) return call.args !== undefined && call.args.trim() !== "" ? call.args : text
  if (call === undefined || !tools.includes(call.tool)) return []
  const json = call.json
  const args = typeof json === "object" && json !== null && !Array.isArray(json) ? writeJson(json) : writeJson({ input: call.args ?? "" })
  return [{ id: `call_${round}_0`, name: call.tool, arguments: args }]
}

/** A value returns to an `llm` term with tools: a model's answer, or the results of its calls. */
export const resumeWithTools = (m: AgentMachine, c: Code, state: Calling, value: Value.Value): OracleRequest | undefined => {
  const term = c.term as Llm
  const pending = state.pending
  if (pending !== undefined) {
    const batch = pending.batch
    let answers = batch.length === 1 ? Value.fromArray([value]) : value instanceof Value.List ? value : Value.nil
    for (let i = 0; i < batch.length; i++, answers = answers.length > 0 ? answers.tail : answers) {
      pending.results[batch[i]!] = answers.length > 0 ? Value.toText(answers.head) : ""
    }
    return followUp(m, c, state)
  }
  const answer = Oracle.readToolCallAnswer(value)
  const text = answer?.text ?? Value.toText(value)
  const calls = answer?.calls ?? writtenCalls(text, term.tools!, state.rounds)
  if (typeof calls === "string") return void m.done(calls)
  if (calls.length === 0 || state.rounds >= (term.toolRounds ?? defaultToolRounds)) return void m.done(text)
  const most = term.maxToolCalls ?? defaultMaxToolCalls
  const results: Array<string> = []
  const requests: Array<Oracle.ToolRequest> = []
  const batch: Array<number> = []
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!
    const args = checkCallOf(call, term.tools!, i, most)
    if (args instanceof InputProblem) {
      results.push(`[TOOL_ERROR] ${args.message}`)
      if (m.tracing) m.record({ step: m.steps, kind: "tool", name: call.name, input: preview(call.arguments), output: preview(results[i]!) })
      continue
    }
    results.push("")
    batch.push(i)
    requests.push({ kind: "tool", id: m.nextRequestId(), name: call.name, input: call.arguments, args, callId: call.id, observe: true })
  }
  state.pending = { text, calls, results, batch }
  if (requests.length === 0) return followUp(m, c, state)
  m.push(c, state)
  return requests.length === 1 ? requests[0]! : { kind: "tools", id: m.nextRequestId(), calls: requests }
}

/** A round's calls are answered: the answer and the results join the transcript, and the model is asked again. */
const followUp = (m: AgentMachine, c: Code, state: Calling): OracleRequest => {
  const { text, calls, results } = state.pending!
  state.pending = undefined
  const turn: Array<LanguageModel.ChatMessage> = [{ role: "assistant", content: text, toolCalls: calls }]
  for (let i = 0; i < calls.length; i++) turn.push({ role: "tool", toolCallId: calls[i]!.id, content: results[i]! })
  state.transcript = state.transcript.concat(turn)
  state.rounds++
  m.push(c, state)
  return ask(m, c.term as Llm, state)
}
