import { describe, expect, it } from "vitest"
import { Analysis, createRuntime, type LanguageModel, Scripted, Term } from "lambdagent"

const systemOf = (req: LanguageModel.ChatRequest) => req.messages[0]!.content
const lastUser = (req: LanguageModel.ChatRequest) => req.messages[req.messages.length - 1]!.content
const speaker = (name: string) => Term.llm({ system: name, conversation: false })

/** A model whose speakers answer from a per-speaker script, recording who spoke on what. */
const chatModel = (scripts: Record<string, ReadonlyArray<string>>, seen: Array<{ system: string; input: string }> = []) => {
  const turns = new Map<string, number>()
  return Scripted.respond((req) => {
    const system = systemOf(req)
    seen.push({ system, input: lastUser(req) })
    const script = scripts[system] ?? ["…"]
    const i = turns.get(system) ?? 0
    turns.set(system, i + 1)
    return script[Math.min(i, script.length - 1)]!
  })
}

const run = async (term: Term.Term, model: LanguageModel.LanguageModelShape, input = "plan a trip") => {
  const runtime = createRuntime({ model, trace: "agent" })
  try {
    return await runtime.run(term, input)
  } finally {
    await runtime.close()
  }
}

const turnsOf = (trace: ReadonlyArray<{ kind: string; name: string; output?: string }>) =>
  trace.filter((e) => e.kind === "groupchat" && e.name !== "end" && e.name !== "scheduler").map((e) => `${e.name}:${e.output}`)

describe("groupchat", () => {
  const three = [
    ["alice", speaker("alice")],
    ["bob", speaker("bob")],
    ["carol", speaker("carol")]
  ] as const

  it("round robin: each agent speaks in turn on the shared transcript, and a keyword ends the chat", async () => {
    const seen: Array<{ system: string; input: string }> = []
    const model = chatModel({ alice: ["a1", "a2"], bob: ["b1", "b2 DONE"], carol: ["c1"] }, seen)
    const term = Term.groupChat({ agents: three, maxRounds: 10, scheduler: "round_robin", keywords: Term.defaultKeywords })
    const result = await run(term, model)
    expect(result.result).toBe("b2 DONE")
    expect(turnsOf(result.trace)).toEqual(["alice:a1", "bob:b1", "carol:c1", "alice:a2", "bob:b2 DONE"])
    expect(result.trace.find((e) => e.kind === "groupchat" && e.name === "end")?.input).toBe("keyword DONE")
    expect(seen[0]!.input).toBe("[Task]\nplan a trip\n\n[You are alice; you speak first.]")
    expect(seen[2]!.input).toBe("[Task]\nplan a trip\n\n[Conversation]\nalice: a1\nbob: b1\n\n[You are carol; it is your turn.]")
  })

  it("maxRounds bounds the turns at rounds × agents, and the summary agent answers", async () => {
    const model = chatModel({ alice: ["a"], bob: ["b"], summary: ["the summary"] })
    const term = Term.groupChat({
      agents: three.slice(0, 2),
      maxRounds: 3,
      scheduler: "round_robin",
      keywords: ["DONE"],
      summary: speaker("summary")
    })
    const result = await run(term, model)
    expect(result.result).toBe("the summary")
    expect(turnsOf(result.trace)).toHaveLength(6)
    expect(result.trace.find((e) => e.kind === "groupchat" && e.name === "end")?.input).toBe("maxRounds 3")
    expect(Analysis.worstCase(term).requests.llmCalls).toBe(7)
  })

  it("random: the same seed gives the same order, never the same speaker twice in a row", async () => {
    const order = async (seed: number) => {
      const term = Term.groupChat({ agents: three, maxRounds: 4, scheduler: { random: seed }, keywords: [] })
      return turnsOf((await run(term, chatModel({}))).trace).map((t) => t.split(":")[0])
    }
    const first = await order(42)
    expect(await order(42)).toEqual(first)
    expect(first).toHaveLength(12)
    for (let i = 1; i < first.length; i++) expect(first[i]).not.toBe(first[i - 1])
    expect(new Set(first).size).toBe(3)
    expect(await order(7)).not.toEqual(first)
  })

  it("llm scheduler: the selector names the next speaker; an unknown name falls back to round robin, traced", async () => {
    const seen: Array<{ system: string; input: string }> = []
    const model = chatModel({ pick: ["carol", "Bob, please", "nobody", "alice"], alice: ["a CONSENSUS"], bob: ["b"], carol: ["c"] }, seen)
    const term = Term.groupChat({ agents: three, maxRounds: 5, scheduler: { llm: speaker("pick") }, keywords: ["CONSENSUS"] })
    const result = await run(term, model)
    // carol, then bob (named in the answer), then "nobody": round robin after bob is carol
    expect(turnsOf(result.trace)).toEqual(["carol:c", "bob:b", "carol:c", "alice:a CONSENSUS"])
    const fallback = result.trace.find((e) => e.kind === "groupchat" && e.name === "scheduler")
    expect(fallback).toMatchObject({ input: "nobody", output: "unknown speaker; round robin: carol" })
    expect(seen[0]!.input).toMatch(/^\[Participants\]\nalice, bob, carol\n\n\[Task\]\nplan a trip/)
  })

  it("until: a pure predicate on each message ends the chat", async () => {
    const model = chatModel({ alice: ["draft", "final: ok"], bob: ["looks weak"] })
    const term = Term.groupChat({
      agents: three.slice(0, 2),
      maxRounds: 5,
      scheduler: "round_robin",
      keywords: [],
      until: Term.lam("m", Term.startsWith(Term.var("m"), Term.lit("final")))
    })
    const result = await run(term, model)
    expect(result.result).toBe("final: ok")
    expect(result.trace.find((e) => e.kind === "groupchat" && e.name === "end")?.input).toBe("until")
  })

  it("a predicate that is not boolean is a type error of the term", async () => {
    const term = Term.groupChat({ agents: three.slice(0, 1), maxRounds: 2, scheduler: "round_robin", keywords: [], until: Term.lam("m", Term.var("m")) })
    await expect(run(term, chatModel({}))).rejects.toMatchObject({ _tag: "EvalError", kind: "TypeError" })
  })

  it("the transcript each turn sees is cut to the history budget, newest messages kept", async () => {
    const seen: Array<{ system: string; input: string }> = []
    const long = "x".repeat(200)
    const model = chatModel({ alice: [long], bob: [long] }, seen)
    const term = Term.groupChat({ agents: three.slice(0, 2), maxRounds: 3, scheduler: "round_robin", keywords: [], maxHistoryTokens: 120 })
    await run(term, model)
    const last = seen[seen.length - 1]!.input
    expect(last).toContain("[3 earlier messages omitted]")
    expect(last.split("\n").filter((l) => l.endsWith(long))).toHaveLength(2)
  })

  it("nested agents: any agent term can take a turn", async () => {
    const model = chatModel({ inner: ["from the chain"] })
    const term = Term.groupChat({
      agents: [["team", Term.compose([speaker("inner"), Term.lam("s", Term.concat(Term.var("s"), Term.lit(" DONE")))])]],
      maxRounds: 2,
      scheduler: "round_robin",
      keywords: ["DONE"]
    })
    expect((await run(term, model)).result).toBe("from the chain DONE")
  })

  it("prints in lambda notation and parses back from JSON", () => {
    const term = Term.groupChat({ agents: three.slice(0, 2), maxRounds: 10, scheduler: { random: 1 }, keywords: ["DONE"] })
    expect(Term.pretty(term)).toMatch(/^GroupChat₁₀\[alice: alice:?LLM|^GroupChat₁₀\[alice: LLM/)
    expect(Term.parse(Term.encode(term))).toEqual(term)
    expect(() => Term.parse({ groupchat: { agents: [], maxRounds: 1, scheduler: "round_robin", keywords: [] } })).toThrow(/agents: expected a non-empty array/)
    expect(() =>
      Term.parse({
        groupchat: {
          agents: [
            { name: "a", agent: { llm: { system: "a" } } },
            { name: "a", agent: { llm: { system: "b" } } }
          ],
          maxRounds: 1,
          scheduler: "round_robin",
          keywords: []
        }
      })
    ).toThrow(/\$\.groupchat\.agents\[1\]\.name: expected a non-empty name no other agent/)
    expect(() =>
      Term.parse({ groupchat: { agents: [{ name: "a", agent: { llm: { system: "a" } } }], maxRounds: 1, scheduler: "fifo", keywords: [] } })
    ).toThrow(/scheduler: expected "round_robin", \{"random": seed\} or \{"llm": agent\}/)
  })
})
