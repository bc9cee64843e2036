/**
 * The oracle protocol: the requests the machine makes when it reaches a node it cannot reduce by
 * itself (an LLM call, a tool call, a memory read or write, parallel branches), and the one rule
 * that turns an oracle's answer into a value.
 *
 * A run is the machine's reductions interleaved with these requests; the `Driver` answers them.
 * Each request carries an `id`, unique within its machine (a `par` branch is a machine of its
 * own, named by its branch path), so a recorded answer can be matched to its request when a run
 * is replayed. A request is a value: nothing in it changes once the machine has made it, so its
 * reader may keep it after answering it. See `docs/semantics.md` for the rules.
 *
 * @since 0.2.0
 * @module
 */
import { writeJson } from "./internal/json.ts"
import { foldTree } from "./internal/tree.ts"
import type * as LanguageModel from "./LanguageModel.ts"
import type * as Term from "./Term.ts"
import * as Value from "./Value.ts"

/**
 * An LLM call: the `llm` node, its input, and for a ReAct thinking step the tools it may call and
 * the conversation so far (`transcript`: the task, then each thought and observation).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Oracle } from "lambdagent"
 * const show = (r: Oracle.LlmRequest) => `${r.term.name ?? "llm"}: ${String(r.input)}`
 * ```
 */
export interface LlmRequest {
  readonly kind: "llm"
  readonly id: number
  readonly term: Term.Of<"Llm">
  readonly input: Value.Value
  readonly tools?: ReadonlyArray<string>
  readonly transcript?: ReadonlyArray<LanguageModel.ChatMessage>
  /**
   * How the model is offered `tools`: `native` sends them as the provider's tool definitions (the
   * answer is then a {@link toolCallAnswer}), `auto` does so when the model calls tools natively
   * (`LanguageModelShape.nativeTools`) and else asks for calls in the text. Absent: in the text.
   */
  readonly toolCalling?: "native" | "auto"
  /** The tool choice sent with the tools (default `auto`): `none` asks for a final answer. */
  readonly toolChoice?: LanguageModel.ToolChoice
  /**
   * For an `llm` term with an output schema: the answer must be one JSON value matching it (the
   * machine checks it when the answer comes back).
   */
  readonly output?: Term.Output
  /**
   * The answers to this input that did not match the output schema, each followed by what was
   * wrong with it: turns sent after the input, to have the model repair its answer.
   */
  readonly repair?: ReadonlyArray<LanguageModel.ChatMessage>
}

/**
 * A tool call. `observe` is true for a ReAct agent's calls: a failure becomes an observation the
 * agent reads. `args` holds the arguments when the machine already has them as JSON (parsed from a
 * model's answer), so they need not be parsed again.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Oracle } from "lambdagent"
 * const r: Oracle.ToolRequest = { kind: "tool", id: 1, name: "search", input: "effect 4", observe: false }
 * ```
 */
export interface ToolRequest {
  readonly kind: "tool"
  readonly id: number
  readonly name: string
  readonly input: Value.Value
  readonly args?: unknown
  readonly timeoutMs?: number
  readonly observe: boolean
  /**
   * The id of the model's native tool call this request makes: its `args` are the call's JSON
   * arguments object, and a text tool's text is its `input` property.
   */
  readonly callId?: string
}

/**
 * Several tool calls a model asked for in one turn, made at the same time; the answer is the list
 * of their results, in call order. The driver counts each against the `toolCalls` budget and
 * answers each with the `tool` handler.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Oracle } from "lambdagent"
 * const names = (r: Oracle.ToolCallsRequest) => r.calls.map((c) => c.name)
 * ```
 */
export interface ToolCallsRequest {
  readonly kind: "tools"
  readonly id: number
  readonly calls: ReadonlyArray<ToolRequest>
}

/**
 * Read the recent entries of a `memory` node's scope (the answer is the input with the entries
 * prepended), or store an exchange (the answer is ignored; the output is the node's result).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Oracle } from "lambdagent"
 * const isRead = (r: Oracle.MemoryRequest) => r.kind === "memory-read"
 * ```
 */
export type MemoryRequest =
  | { readonly kind: "memory-read"; readonly id: number; readonly term: Term.Of<"Memory">; readonly input: Value.Value }
  | {
      readonly kind: "memory-write"
      readonly id: number
      readonly term: Term.Of<"Memory">
      readonly input: Value.Value
      readonly output: Value.Value
    }

/**
 * Run a `par` node's branches on `input`; the answer is the list of their results, in branch
 * order. The driver runs each branch as a machine of its own (`Execution.branch`).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Oracle } from "lambdagent"
 * const width = (r: Oracle.ParRequest) => r.term.branches.length
 * ```
 */
export interface ParRequest {
  readonly kind: "par"
  readonly id: number
  readonly term: Term.Of<"Par">
  readonly input: Value.Value
}

/**
 * An `ask` node's question to a person, with the input it was applied to; the answer is the
 * person's reply. A run with no one to answer at once pauses here (`RunPaused`).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Oracle } from "lambdagent"
 * const prompt = (r: Oracle.AskRequest) => `${r.question}\n\n${String(r.input)}`
 * ```
 */
export interface AskRequest {
  readonly kind: "ask"
  readonly id: number
  readonly question: string
  readonly input: Value.Value
}

/**
 * Run a `channels` node's agent on `input` in a fresh scope holding the declared channels; the
 * answer is the agent's result. The driver runs the agent as a machine of its own
 * (`Execution.scoped`).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Oracle } from "lambdagent"
 * const names = (r: Oracle.ChannelsRequest) => r.term.declare.map((d) => d.name)
 * ```
 */
export interface ChannelsRequest {
  readonly kind: "channels"
  readonly id: number
  readonly term: Term.Of<"Channels">
  readonly input: Value.Value
}

/**
 * Pass a message on a channel of an enclosing `channels` scope: `send` offers `value` (the answer
 * is the value, once the channel has taken it), `receive` asks for the next one (the answer is
 * it). Either waits while the channel cannot serve it.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Oracle } from "lambdagent"
 * const r: Oracle.ChannelRequest = { kind: "send", id: 1, channel: "drafts", value: "hello" }
 * ```
 */
export type ChannelRequest =
  | { readonly kind: "send"; readonly id: number; readonly channel: string; readonly value: Value.Value }
  | { readonly kind: "receive"; readonly id: number; readonly channel: string }

/**
 * A node the machine cannot reduce by itself.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Oracle } from "lambdagent"
 * const kinds: ReadonlyArray<Oracle.Request["kind"]> = ["llm", "tool", "tools", "memory-read", "memory-write", "par", "ask", "channels", "send", "receive"]
 * ```
 */
export type Request = LlmRequest | ToolRequest | ToolCallsRequest | MemoryRequest | ParRequest | AskRequest | ChannelsRequest | ChannelRequest

/**
 * A short description of a request, for messages: `an LLM call (writer)`, `a call of tool "search"`.
 *
 * @since 0.2.0
 * @category formatting
 * @example
 * ```ts
 * import { Oracle, Term } from "lambdagent"
 * Oracle.describe({ kind: "tool", id: 1, name: "t", input: 1, observe: false }) // 'a call of tool "t"'
 * ```
 */
export const describe = (request: Request): string => {
  switch (request.kind) {
    case "llm":
      return `an LLM call${request.term.name !== undefined ? ` (${request.term.name})` : ""}`
    case "tool":
      return `a call of tool ${JSON.stringify(request.name)}`
    case "tools":
      return `${request.calls.length} tool calls (${request.calls.map((c) => c.name).join(", ")})`
    case "memory-read":
    case "memory-write":
      return "a memory store"
    case "par":
      return "parallel branches"
    case "ask":
      return `a question to a person (${JSON.stringify(request.question)})`
    case "channels":
      return "a channels scope"
    case "send":
      return `a send on channel ${JSON.stringify(request.channel)}`
    case "receive":
      return `a receive on channel ${JSON.stringify(request.channel)}`
  }
}

/**
 * The value of an oracle's answer — the one rule every driver uses: values pass through; strings,
 * booleans, safe integers and 64-bit `bigint`s are themselves; `null` and `undefined` are null; arrays
 * become lists; a number that is not a safe integer (a fraction, `1e300`, `NaN`) becomes its
 * decimal text, so nothing is rounded away; any other object becomes its JSON text (`bigint`s exact).
 * Arrays and objects nested any depth convert without recursion.
 *
 * @since 0.2.0
 * @category conversions
 * @example
 * ```ts
 * import { Oracle, Value } from "lambdagent"
 * Oracle.toValue(1.5) // "1.5"
 * Value.toJson(Oracle.toValue([1, [2, 3]])) // [1, [2, 3]]
 * Oracle.toValue({ a: 1 }) // '{"a":1}'
 * ```
 */
export const toValue = (answer: unknown): Value.Value =>
  Array.isArray(answer)
    ? foldTree<unknown, Value.Value>(answer, childrenOfArray, (node, kids) => (Array.isArray(node) ? Value.fromArray(kids) : leafValue(node)))
    : leafValue(answer)

// nested arrays are folded without recursion, so an answer nested any depth is a value
const childrenOfArray = (node: unknown): ReadonlyArray<unknown> => (Array.isArray(node) ? node : [])

const leafValue = (answer: unknown): Value.Value => {
  if (answer === null || answer === undefined) return null
  switch (typeof answer) {
    case "string":
    case "boolean":
      return answer
    case "bigint":
      return answer >= -(2n ** 63n) && answer < 2n ** 63n ? answer : answer.toString()
    case "number":
      return Number.isSafeInteger(answer) ? (answer === 0 ? 0 : answer) : String(answer)
    case "object":
      break
    default:
      return String(answer)
  }
  if (
    answer instanceof Value.List ||
    answer instanceof Value.Pair ||
    answer instanceof Value.Quoted ||
    answer instanceof Value.Closure ||
    answer instanceof Value.Continuation
  )
    return answer
  try {
    return writeJson(answer)
  } catch {
    // only a cyclic object has no JSON text
    return String(answer)
  }
}

/**
 * The answer to an LLM request made with native tool calling (`LlmRequest.toolCalling`): the
 * model's text and the tool calls it asked for, as a value (a pair of the text and a list of
 * `[id, name, arguments]` lists), so checkpoints and recordings keep the calls.
 *
 * @since 0.2.0
 * @category conversions
 * @example
 * ```ts
 * import { Oracle, Value } from "lambdagent"
 * const answer = Oracle.toolCallAnswer("", [{ id: "call_1", name: "add", arguments: "{\"a\":1,\"b\":2}" }])
 * Value.toJson(answer) // { pair: ["", [["call_1", "add", "{\"a\":1,\"b\":2}"]]] }
 * ```
 */
export const toolCallAnswer = (text: string, calls: ReadonlyArray<LanguageModel.ToolCall>): Value.Value =>
  new (ToolCallPair ??= toolCallPairClass())(text, calls)

/** A tool-call answer made in this process: a pair that keeps the text and calls it was made of. */
type ToolCallPair = Value.Pair & { readonly text: string; readonly calls: ReadonlyArray<LanguageModel.ToolCall> }

/**
 * The class of tool-call answers made in this process, so the machine reads their calls back
 * without decoding the list (a restored or replayed answer is a plain pair, decoded). Made on
 * first use: this module and `Value` import each other, so `Value.Pair` may not exist yet while
 * this module loads.
 */
let ToolCallPair: (new (text: string, calls: ReadonlyArray<LanguageModel.ToolCall>) => ToolCallPair) | undefined

const toolCallPairClass = () =>
  class extends Value.Pair {
    constructor(
      readonly text: string,
      readonly calls: ReadonlyArray<LanguageModel.ToolCall>
    ) {
      let list = Value.nil
      for (let i = calls.length - 1; i >= 0; i--) {
        const c = calls[i]!
        list = new Value.List(Value.fromArray([c.id, c.name, c.arguments]), list, list.length + 1)
      }
      super(text, list)
    }
  }

/**
 * The text and tool calls of a {@link toolCallAnswer}; `undefined` for any other value (a model
 * that answered in text).
 *
 * @since 0.2.0
 * @category conversions
 * @example
 * ```ts
 * import { Oracle } from "lambdagent"
 * Oracle.readToolCallAnswer(Oracle.toolCallAnswer("done", []))?.text // "done"
 * Oracle.readToolCallAnswer("done") // undefined
 * ```
 */
export const readToolCallAnswer = (value: Value.Value): { readonly text: string; readonly calls: ReadonlyArray<LanguageModel.ToolCall> } | undefined => {
  if (ToolCallPair !== undefined && value instanceof ToolCallPair) return value
  if (!(value instanceof Value.Pair) || typeof value.fst !== "string" || !(value.snd instanceof Value.List)) return undefined
  const calls: Array<LanguageModel.ToolCall> = []
  for (const item of Value.toArray(value.snd)) {
    if (!(item instanceof Value.List) || item.length !== 3) return undefined
    const [id, name, args] = Value.toArray(item)
    if (typeof id !== "string" || typeof name !== "string" || typeof args !== "string") return undefined
    calls.push({ id, name, arguments: args })
  }
  return { text: value.fst, calls }
}
