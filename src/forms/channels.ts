/**
 * Channels: named message queues that let the branches of a `par` pass values to each other.
 *
 * - `channels` declares channels around an agent: applying it runs the agent in a fresh scope
 *   holding them (a `channels` request; the driver runs the agent as a machine of its own).
 * - `send` passes its input to a channel and returns it; with the channel full (capacity 0: no
 *   receiver waiting) it waits.
 * - `receive` ignores its input and returns the next value of a channel, waiting for one.
 *
 * A name is looked up in the innermost enclosing scope that declares it, when the message is
 * sent or received (a `send-receive` request the driver answers).
 */
import { code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import type * as Value from "../Value.ts"
import { agentCost, applied, ZERO } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"
import type { Parser, ParseNode } from "./parse.ts"

/**
 * A channel declaration: its name and how many values it holds before a sender waits (0: a
 * rendezvous, the sender waits until a receiver takes the value).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Term } from "lambdagent"
 * const c: Term.ChannelDeclaration = { name: "drafts", capacity: 1 }
 * ```
 */
export interface ChannelDeclaration {
  /** The channel's name, unique within its scope. */
  readonly name: string
  /** Values the channel buffers (0: rendezvous). */
  readonly capacity: number
}

/** `{"channels": {"declare": [{"name": c, "capacity"?: n}, …], "agent": a}}` */
export interface Channels {
  readonly _tag: "Channels"
  readonly declare: ReadonlyArray<ChannelDeclaration>
  readonly agent: Term.Term
}

/** `{"send": c}` */
export interface Send {
  readonly _tag: "Send"
  readonly channel: string
}

/** `{"receive": c}` */
export interface Receive {
  readonly _tag: "Receive"
  readonly channel: string
}

/**
 * Declare channels around an agent: the agent (and every `par` branch inside it) can `send` and
 * `receive` on them.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.channels([{ name: "c", capacity: 0 }], Term.par([
 *   Term.compose([Term.llm({ system: "Draft." }), Term.send("c")]),
 *   Term.compose([Term.receive("c"), Term.llm({ system: "Review." })])
 * ]))
 * ```
 */
export const channels = (declare: ReadonlyArray<ChannelDeclaration>, agent: Term.Term): Term.Term => ({ _tag: "Channels", declare, agent })

/**
 * Send the input on a channel and return it (waits while the channel is full).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.compose([Term.llm({ system: "Draft." }), Term.send("drafts")])
 * ```
 */
export const send = (channel: string): Term.Term => ({ _tag: "Send", channel })

/**
 * Receive the next value of a channel (the input is ignored; waits while the channel is empty).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.compose([Term.receive("drafts"), Term.llm({ system: "Review." })])
 * ```
 */
export const receive = (channel: string): Term.Term => ({ _tag: "Receive", channel })

/** The frame a `channels` step leaves under its request: the driver builds the agent's machine from its closure. */
export interface ChannelsState {
  readonly fn: Value.Closure
}

const scopeStep: AgentStep<Channels> = {
  apply: (m, c, fn, input) => {
    m.push(c, { fn } satisfies ChannelsState)
    return { kind: "channels", id: m.nextRequestId(), term: c.term as Channels, input }
  },
  resume: (m, _c, _state, value) => void m.done(value)
}

const sendStep: AgentStep<Send> = {
  apply: (m, c, _fn, input) => ({ kind: "send", id: m.nextRequestId(), channel: (c.term as Send).channel, value: input })
}

const receiveStep: AgentStep<Receive> = {
  apply: (m, c) => ({ kind: "receive", id: m.nextRequestId(), channel: (c.term as Receive).channel })
}

const channelName = (p: Parser, node: ParseNode, value: unknown, key: string | number): string => {
  const name = p.string(node, value, key, "a channel name (a non-empty string)")
  return name === "" ? p.fail(node, "a channel name (a non-empty string)", key) : name
}

const declarations = (p: Parser, at: ParseNode, value: unknown): ReadonlyArray<ChannelDeclaration> => {
  if (!Array.isArray(value) || value.length === 0) return p.fail(at, "a non-empty array of channel declarations", "declare")
  const list = p.child(at, value, "declare")
  const seen = new Set<string>()
  return value.map((d, i) => {
    const f = p.fields(list, i, d, ["name"], ["capacity"])
    const dAt = p.child(list, f, i)
    const name = channelName(p, dAt, f.name, "name")
    if (seen.has(name)) return p.fail(dAt, `a name not declared twice in one scope ("${name}" is)`, "name")
    seen.add(name)
    return { name, capacity: f.capacity === undefined ? 0 : p.count(dAt, f.capacity, "capacity", 0) }
  })
}

export const channelsForm: Form<Channels> = {
  tag: "Channels",
  keys: ["channels"],
  parse: (p, node, key, obj) => {
    const f = p.fields(node, key, obj[key], ["declare", "agent"])
    const at = p.child(node, f, key)
    const declare = declarations(p, at, f.declare)
    return { kids: [p.sub(node, f.agent, key, "agent")], build: ([agent]) => channels(declare, agent!) }
  },
  children: (t) => [t.agent],
  withChildren: (t, [agent]) => ({ ...t, agent: agent! }),
  segments: () => [["channels", "agent"]],
  encode: (t, [agent]) => ({ channels: { declare: t.declare.map((d) => ({ name: d.name, capacity: d.capacity })), agent: agent! } }),
  pretty: (t, [agent]) => `Channels[${t.declare.map((d) => `${d.name}:${d.capacity}`).join(", ")}](${agent})`,
  atomic: false,
  cost: (_, [agent]) => agentCost(applied(agent!)),
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, [], scopeStep, kids),
  events: [],
  agent: scopeStep
}

export const sendForm: Form<Send, "send"> = {
  tag: "Send",
  keys: ["send"],
  parse: (p, node, key, obj) => send(channelName(p, node, obj[key], key)),
  children: () => [],
  withChildren: (t) => t,
  segments: () => [],
  encode: (t) => ({ send: t.channel }),
  pretty: (t, _, formal) => (formal ? `(λx. Send("${t.channel}", x))` : `Send(${t.channel})`),
  atomic: true,
  cost: () => agentCost(ZERO),
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, kids, sendStep),
  events: ["send"],
  agent: sendStep
}

export const receiveForm: Form<Receive, "receive"> = {
  tag: "Receive",
  keys: ["receive"],
  parse: (p, node, key, obj) => receive(channelName(p, node, obj[key], key)),
  children: () => [],
  withChildren: (t) => t,
  segments: () => [],
  encode: (t) => ({ receive: t.channel }),
  pretty: (t, _, formal) => (formal ? `(λx. Receive("${t.channel}"))` : `Receive(${t.channel})`),
  atomic: true,
  cost: () => agentCost(ZERO),
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, kids, receiveStep),
  events: ["receive"],
  agent: receiveStep
}
