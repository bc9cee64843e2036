/**
 * `groupchat`: several named agents take turns on one shared transcript. A scheduler picks each
 * speaker (round robin, a seeded random draw, or an LLM choosing among the names); the chat ends
 * when a message holds a termination keyword, when the `until` predicate holds of a message, or
 * after `maxRounds` rounds (a round is as many turns as there are agents). The answer is the
 * summary agent's, or the last message.
 *
 * Every turn applies the speaker to one text: the task, the most recent messages that fit in the
 * history budget, and whose turn it is. The number of turns is bounded statically by
 * `maxRounds × agents`, so the worst-case cost of a chat is known before it runs.
 */
import { code, type Code, Op } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import { preview } from "../Trace.ts"
import * as Value from "../Value.ts"
import { agentCost, applied, max, plus, times, ZERO } from "./analysis.ts"
import type { AgentStep, Form } from "./Form.ts"
import { subscript } from "./loop.ts"
import { isRecord } from "./parse.ts"
import type { AgentMachine } from "./step.ts"

/**
 * How a group chat picks the next speaker: in turn, by a random draw from `seed` (the same seed
 * gives the same order), or by asking an agent, which answers with a name.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * const s: Term.Scheduler = { llm: Term.llm({ system: "Who speaks next?", conversation: false }) }
 * ```
 */
export type Scheduler = "round_robin" | { readonly random: number } | { readonly llm: Term.Term }

/** `{"groupchat": {"agents": [{"name": n, "agent": a}, …], "maxRounds": r, "scheduler": s, "keywords": [k, …], "until"?: p, "summary"?: a, "maxHistoryTokens"?: n}}` */
export interface GroupChat {
  readonly _tag: "GroupChat"
  readonly agents: ReadonlyArray<readonly [name: string, agent: Term.Term]>
  readonly maxRounds: number
  readonly scheduler: Scheduler
  /** A message containing one of these ends the chat. */
  readonly keywords: ReadonlyArray<string>
  /** A pure predicate on each message; when it holds, the chat ends. */
  readonly until?: Term.Term
  /** Applied to the transcript at the end; its answer is the chat's. */
  readonly summary?: Term.Term
  /** The transcript each turn sees is cut to the newest messages within this many tokens (≈ 4 characters each). */
  readonly maxHistoryTokens?: number
}

/**
 * The default termination keywords of a group chat.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * console.log(Term.defaultKeywords) // ["CONSENSUS", "DONE"]
 * ```
 */
export const defaultKeywords: ReadonlyArray<string> = ["CONSENSUS", "DONE"]

const DEFAULT_HISTORY_TOKENS = 80_000

/**
 * A group chat: named agents take turns on a shared transcript until a termination keyword, the
 * `until` predicate, or `maxRounds` rounds.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * Term.groupChat({
 *   agents: [["writer", Term.llm({ system: "Write.", conversation: false })], ["critic", Term.llm({ system: "Criticize; say DONE when good.", conversation: false })]],
 *   maxRounds: 3,
 *   scheduler: "round_robin",
 *   keywords: ["DONE"]
 * })
 * ```
 */
export const groupChat = (options: Omit<GroupChat, "_tag">): Term.Term => ({ _tag: "GroupChat", ...options })

interface Message {
  readonly speaker: string
  readonly text: string
}

type Phase = "select" | "speak" | "check" | "summary"

interface State {
  readonly fn: Value.Closure
  readonly task: string
  readonly transcript: Array<Message>
  turns: number
  /** The index of the last speaker (-1 before the first turn). */
  last: number
  /** The random scheduler's generator state. */
  seed: number
  phase: Phase
}

/** Where each optional child sits among the compiled items. */
interface Layout extends AgentStep<GroupChat> {
  readonly selector: number
  readonly until: number
  readonly summary: number
}

/** The next state and draw of a 32-bit mulberry generator (small, fast, and the same everywhere). */
const draw = (seed: number): readonly [next: number, value: number] => {
  const next = (seed + 0x6d2b79f5) | 0
  let t = next
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return [next, ((t ^ (t >>> 14)) >>> 0) / 4294967296]
}

/** The transcript as text, newest messages kept within `budget` characters. */
export const transcriptText = (messages: ReadonlyArray<{ readonly speaker: string; readonly text: string }>, budget: number): string => {
  let used = 0
  let first = messages.length
  while (first > 0) {
    const m = messages[first - 1]!
    const size = m.speaker.length + m.text.length + 3
    if (used + size > budget && first < messages.length) break
    used += size
    first--
  }
  let text = first > 0 ? `[${first} earlier message${first === 1 ? "" : "s"} omitted]\n` : ""
  for (let i = first; i < messages.length; i++) text += `${messages[i]!.speaker}: ${messages[i]!.text}\n`
  return text
}

const budgetOf = (term: GroupChat) => (term.maxHistoryTokens ?? DEFAULT_HISTORY_TOKENS) * 4

const turnInput = (term: GroupChat, state: State, speaker: string): string =>
  state.transcript.length === 0
    ? `[Task]\n${state.task}\n\n[You are ${speaker}; you speak first.]`
    : `[Task]\n${state.task}\n\n[Conversation]\n${transcriptText(state.transcript, budgetOf(term))}\n[You are ${speaker}; it is your turn.]`

const finish = (m: AgentMachine, c: Code, state: State, reason: string) => {
  const term = c.term as GroupChat
  if (m.tracing) m.record({ step: m.steps, kind: "groupchat", name: "end", input: reason, output: `${state.turns} turns` })
  const layout = c.x as Layout
  if (term.summary !== undefined) {
    state.phase = "summary"
    m.push(c, state)
    m.call(c.items![layout.summary]!, state.fn, `[Task]\n${state.task}\n\n[Conversation]\n${transcriptText(state.transcript, budgetOf(term))}`)
    return
  }
  const last = state.transcript[state.transcript.length - 1]
  m.done(last === undefined ? "" : last.text)
}

const speak = (m: AgentMachine, c: Code, state: State, index: number) => {
  const term = c.term as GroupChat
  state.last = index
  state.phase = "speak"
  m.push(c, state)
  m.call(c.items![index]!, state.fn, turnInput(term, state, term.agents[index]![0]))
}

/** The agent an LLM scheduler named: the exact name (any case), else the first name its answer contains. */
const named = (term: GroupChat, answer: string): number => {
  const wanted = answer.trim().toLowerCase()
  const exact = term.agents.findIndex(([name]) => name.toLowerCase() === wanted)
  if (exact >= 0) return exact
  return term.agents.findIndex(([name]) => wanted.includes(name.toLowerCase()))
}

const nextTurn = (m: AgentMachine, c: Code, state: State) => {
  const term = c.term as GroupChat
  const n = term.agents.length
  if (state.turns >= term.maxRounds * n) return finish(m, c, state, `maxRounds ${term.maxRounds}`)
  const scheduler = term.scheduler
  if (scheduler === "round_robin") return speak(m, c, state, (state.last + 1) % n)
  if ("random" in scheduler) {
    const [seed, value] = draw(state.seed)
    state.seed = seed
    // the same agent never speaks twice in a row when there is another
    if (n === 1 || state.last < 0) return speak(m, c, state, Math.floor(value * n))
    const pick = Math.floor(value * (n - 1))
    return speak(m, c, state, pick >= state.last ? pick + 1 : pick)
  }
  state.phase = "select"
  m.push(c, state)
  const names = term.agents.map(([name]) => name).join(", ")
  m.call(
    c.items![(c.x as Layout).selector]!,
    state.fn,
    `[Participants]\n${names}\n\n[Task]\n${state.task}\n\n[Conversation]\n${transcriptText(state.transcript, budgetOf(term))}\nAnswer with the name of the next speaker.`
  )
}

const step: AgentStep<GroupChat> = {
  apply: (m, c, fn, input) => {
    const term = c.term as GroupChat
    const seed = typeof term.scheduler === "object" && "random" in term.scheduler ? term.scheduler.random : 0
    nextTurn(m, c, { fn, task: Value.toText(input), transcript: [], turns: 0, last: -1, seed, phase: "speak" })
    return undefined
  },
  resume: (m, c, state: State, value) => {
    const term = c.term as GroupChat
    switch (state.phase) {
      case "select": {
        const answer = Value.toText(value)
        let index = named(term, answer)
        if (index < 0) {
          index = (state.last + 1) % term.agents.length
          if (m.tracing) {
            m.record({
              step: m.steps,
              kind: "groupchat",
              name: "scheduler",
              input: preview(answer),
              output: `unknown speaker; round robin: ${term.agents[index]![0]}`
            })
          }
        }
        speak(m, c, state, index)
        return undefined
      }
      case "speak": {
        const text = Value.toText(value)
        const speaker = term.agents[state.last]![0]
        state.transcript.push({ speaker, text })
        state.turns++
        const n = term.agents.length
        if (m.tracing)
          m.record({ step: m.steps, kind: "groupchat", name: speaker, input: `round ${Math.floor((state.turns - 1) / n) + 1}`, output: preview(text) })
        const keyword = term.keywords.find((k) => text.includes(k))
        if (keyword !== undefined) return void finish(m, c, state, `keyword ${keyword}`)
        if (term.until !== undefined) {
          state.phase = "check"
          m.pushCatching(c, state)
          m.call(c.items![(c.x as Layout).until]!, state.fn, text)
          return undefined
        }
        nextTurn(m, c, state)
        return undefined
      }
      case "check":
        if (m.isTrue(value, "a group chat's termination predicate")) finish(m, c, state, "until")
        else nextTurn(m, c, state)
        return undefined
      case "summary":
        m.done(value)
        return undefined
    }
  },
  // A termination predicate that raises (int() of a word) does not end the chat: it is false, as
  // a Python predicate that raises is.
  raised: (m, c, state: State, error) => {
    if (m.tracing) m.record({ step: m.steps, kind: "groupchat", name: "until raised", error: preview(`${error.kind}: ${error.message}`) })
    nextTurn(m, c, state)
    return undefined
  }
}

const childrenOf = (t: GroupChat): Array<Term.Term> => {
  const kids = t.agents.map(([, agent]) => agent)
  if (typeof t.scheduler === "object" && "llm" in t.scheduler) kids.push(t.scheduler.llm)
  if (t.until !== undefined) kids.push(t.until)
  if (t.summary !== undefined) kids.push(t.summary)
  return kids
}

const layoutOf = (t: GroupChat): Omit<Layout, keyof AgentStep<GroupChat>> => {
  let next = t.agents.length
  const selector = typeof t.scheduler === "object" && "llm" in t.scheduler ? next++ : -1
  const until = t.until !== undefined ? next++ : -1
  const summary = t.summary !== undefined ? next++ : -1
  return { selector, until, summary }
}

const schedulerName = (s: Scheduler) => (s === "round_robin" ? "round_robin" : "random" in s ? `random(${s.random})` : "llm")

export const groupChatForm: Form<GroupChat, "groupchat"> = {
  tag: "GroupChat",
  keys: ["groupchat"],
  parse: (p, node, key, obj) => {
    const f = p.fields(node, key, obj[key], ["agents", "maxRounds", "scheduler", "keywords"], ["until", "summary", "maxHistoryTokens"])
    const at = p.child(node, f, key)
    if (!Array.isArray(f.agents) || f.agents.length === 0) return p.fail(at, 'a non-empty array of {"name", "agent"}', "agents")
    const agentsAt = p.child(at, f.agents, "agents")
    const names: Array<string> = []
    const kids = f.agents.map((entry, i) => {
      if (!isRecord(entry) || !Object.hasOwn(entry, "agent") || Object.keys(entry).some((k) => k !== "name" && k !== "agent")) {
        return p.fail(agentsAt, 'an object with "name", "agent"', i)
      }
      const entryAt = p.child(agentsAt, entry, i)
      const name = p.string(entryAt, entry.name, "name", "a non-empty name")
      if (name === "" || names.includes(name)) p.fail(entryAt, "a non-empty name no other agent of the chat has", "name")
      names.push(name)
      return p.sub(node, entry.agent, key, "agents", i, "agent")
    })
    const maxRounds = p.count(at, f.maxRounds, "maxRounds", 1)
    const s = f.scheduler
    let scheduler: "round_robin" | { readonly random: number } | "llm"
    if (s === "round_robin") scheduler = s
    else if (isRecord(s) && Object.keys(s).length === 1 && Object.hasOwn(s, "random")) {
      scheduler = { random: p.count(p.child(at, s, "scheduler"), s.random, "random", 0) }
    } else if (isRecord(s) && Object.keys(s).length === 1 && Object.hasOwn(s, "llm")) {
      scheduler = "llm"
      kids.push(p.sub(node, s.llm, key, "scheduler", "llm"))
    } else return p.fail(at, '"round_robin", {"random": seed} or {"llm": agent}', "scheduler")
    if (!Array.isArray(f.keywords) || f.keywords.some((k) => typeof k !== "string" || k === "")) {
      return p.fail(at, "an array of non-empty strings", "keywords")
    }
    const keywords = f.keywords as ReadonlyArray<string>
    if (f.until !== undefined) kids.push(p.sub(node, f.until, key, "until"))
    if (f.summary !== undefined) kids.push(p.sub(node, f.summary, key, "summary"))
    const maxHistoryTokens = f.maxHistoryTokens === undefined ? undefined : p.count(at, f.maxHistoryTokens, "maxHistoryTokens", 1)
    return {
      kids,
      build: (ts) => {
        let next = names.length
        return groupChat({
          agents: names.map((name, i) => [name, ts[i]!] as const),
          maxRounds,
          scheduler: scheduler === "llm" ? { llm: ts[next++]! } : scheduler,
          keywords,
          ...(f.until !== undefined ? { until: ts[next++]! } : {}),
          ...(f.summary !== undefined ? { summary: ts[next++]! } : {}),
          ...(maxHistoryTokens !== undefined ? { maxHistoryTokens } : {})
        })
      }
    }
  },
  children: childrenOf,
  withChildren: (t, kids) => {
    const layout = layoutOf(t)
    return {
      ...t,
      agents: t.agents.map(([name], i) => [name, kids[i]!] as const),
      ...(layout.selector >= 0 ? { scheduler: { llm: kids[layout.selector]! } } : {}),
      ...(layout.until >= 0 ? { until: kids[layout.until]! } : {}),
      ...(layout.summary >= 0 ? { summary: kids[layout.summary]! } : {})
    }
  },
  segments: (t) => {
    const layout = layoutOf(t)
    const out: Array<ReadonlyArray<string | number>> = t.agents.map((_, i) => ["groupchat", "agents", i, "agent"])
    if (layout.selector >= 0) out.push(["groupchat", "scheduler", "llm"])
    if (layout.until >= 0) out.push(["groupchat", "until"])
    if (layout.summary >= 0) out.push(["groupchat", "summary"])
    return out
  },
  encode: (t, kids) => {
    const layout = layoutOf(t)
    const out: Record<string, Term.Json> = {
      agents: t.agents.map(([name], i) => ({ name, agent: kids[i]! })),
      maxRounds: t.maxRounds,
      scheduler: layout.selector >= 0 ? { llm: kids[layout.selector]! } : (t.scheduler as Term.Json),
      keywords: t.keywords
    }
    if (layout.until >= 0) out.until = kids[layout.until]!
    if (layout.summary >= 0) out.summary = kids[layout.summary]!
    if (t.maxHistoryTokens !== undefined) out.maxHistoryTokens = t.maxHistoryTokens
    return { groupchat: out }
  },
  pretty: (t, kids) => {
    const layout = layoutOf(t)
    const speakers = t.agents.map(([name], i) => `${name}: ${kids[i]}`).join(", ")
    const scheduler = layout.selector >= 0 ? `llm ${kids[layout.selector]}` : schedulerName(t.scheduler)
    const stops = [...t.keywords.map((k) => JSON.stringify(k)), ...(layout.until >= 0 ? [kids[layout.until]!] : [])].join(" | ")
    const summary = layout.summary >= 0 ? ` >> ${kids[layout.summary]}` : ""
    return `GroupChat${subscript(t.maxRounds)}[${speakers}](next=${scheduler}, until=${stops || "∅"})${summary}`
  },
  atomic: false,
  cost: (t, kids) => {
    const layout = layoutOf(t)
    const turn = plus(
      max(...kids.slice(0, t.agents.length).map(applied)),
      layout.selector >= 0 ? applied(kids[layout.selector]!) : ZERO,
      layout.until >= 0 ? applied(kids[layout.until]!) : ZERO
    )
    return agentCost(plus(times(t.maxRounds * t.agents.length, turn), layout.summary >= 0 ? applied(kids[layout.summary]!) : ZERO))
  },
  value: () => "function",
  compile: (t, kids) => code(Op.Agent, t, [], { ...step, ...layoutOf(t) } satisfies Layout, kids),
  events: ["groupchat"],
  agent: step
}
