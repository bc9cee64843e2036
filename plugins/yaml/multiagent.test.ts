/**
 * The multi-agent types of agent files (groupchat, handoff) compiled and run on scripted models.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Analysis, createRuntime, type LanguageModel, Scripted, type Term } from "lambdagent"
import { describe, expect, it } from "vitest"
import { compileConfig, loadConfig } from "./compile.ts"
import { SchemaError } from "./errors.ts"

const systemOf = (req: LanguageModel.ChatRequest) => req.messages[0]!.content
const lastUser = (req: LanguageModel.ChatRequest) => req.messages[req.messages.length - 1]!.content

/** Answers by the first word of the system prompt that `replies` has a script for. */
const byPrompt = (replies: Record<string, ReadonlyArray<string>>, seen: Array<[string, string]> = []) => {
  const used = new Map<string, number>()
  return Scripted.respond((req) => {
    const key = Object.keys(replies).find((k) => systemOf(req).includes(k)) ?? "?"
    seen.push([key, lastUser(req)])
    const i = used.get(key) ?? 0
    used.set(key, i + 1)
    const script = replies[key] ?? ["…"]
    return script[Math.min(i, script.length - 1)]!
  })
}

const runWith = async (term: Term.Term, model: LanguageModel.LanguageModelShape, input: string) => {
  const runtime = createRuntime({ model, resolveModel: () => model, trace: "agent" })
  try {
    return await runtime.run(term, input)
  } finally {
    await runtime.close()
  }
}

describe("type: groupchat", () => {
  it("examples/agents/review-chat.yml: the participants take turns until the editor says CONSENSUS, then the summary answers", async () => {
    const agent = loadConfig("examples/agents/review-chat.yml")
    expect(Analysis.worstCase(agent.term).requests).toEqual({ llmCalls: 13, toolCalls: 0 })
    const seen: Array<[string, string]> = []
    const model = byPrompt(
      {
        "You draft": ["Draft one.", "Draft two, shorter."],
        "weakest sentence": ["The opening is vague."],
        ready: ["Not yet: no date.", "CONSENSUS"],
        "final announcement": ["Draft two, shorter."]
      },
      seen
    )
    const result = await runWith(agent.term, model, "Announce the new search feature.")
    expect(result.result).toBe("Draft two, shorter.")
    const turns = result.trace.filter((e) => e.kind === "groupchat" && e.name !== "end").map((e) => e.name)
    expect(turns).toEqual(["writer", "critic", "editor", "writer", "critic", "editor"])
    expect(seen.map(([k]) => k).at(-1)).toBe("final announcement")
    expect(seen.at(-1)![1]).toContain("editor: CONSENSUS")
  })

  it("defaults: 10 rounds, round robin, keywords CONSENSUS and DONE; speakers keep no conversation", () => {
    const { term } = compileConfig({ type: "groupchat", groupchat: { agents: [{ name: "a", systemPrompt: "A" }, { systemPrompt: "B" }] } })
    const chat = term as Term.Of<"GroupChat">
    expect(chat.maxRounds).toBe(10)
    expect(chat.scheduler).toBe("round_robin")
    expect(chat.keywords).toEqual(["CONSENSUS", "DONE"])
    expect(chat.agents.map(([n]) => n)).toEqual(["a", "agent2"])
    expect((chat.agents[0]![1] as Term.Of<"Llm">).conversation).toBe(false)
    expect(Analysis.worstCase(term).requests.llmCalls).toBe(20)
  })

  it("scheduler llm: the scheduler prompt lists the names; random keeps its seed", () => {
    const llm = compileConfig({
      type: "groupchat",
      groupchat: {
        agents: [
          { name: "a", systemPrompt: "A" },
          { name: "b", systemPrompt: "B" }
        ],
        scheduler: "llm",
        schedulerPrompt: "Pick.",
        maxRounds: 2
      }
    }).term as Term.Of<"GroupChat">
    const selector = (llm.scheduler as { llm: Term.Of<"Llm"> }).llm
    expect(selector.system).toBe("Pick.\n\nAnswer with exactly one of: a, b.")
    expect(Analysis.worstCase(llm).requests.llmCalls).toBe(8)
    const random = compileConfig({ type: "groupchat", groupchat: { agents: [{ systemPrompt: "A" }], scheduler: "random", seed: 9 } })
      .term as Term.Of<"GroupChat">
    expect(random.scheduler).toEqual({ random: 9 })
  })

  it("a termination.custom that raises (int() of a word) is false: the chat goes on", async () => {
    const { term } = compileConfig({
      type: "groupchat",
      groupchat: { agents: [{ name: "a", systemPrompt: "A" }], maxRounds: 5, termination: { keywords: [], custom: "int(x) >= 3" } }
    })
    const result = await runWith(term, Scripted.sequence(["one", "2", "three", " 4 ", "never"]), "go")
    expect(result.result).toBe(" 4 ")
  })

  it("termination.custom is a guard expression compiled to a pure term; a syntax error points into it", async () => {
    const { term } = compileConfig({
      type: "groupchat",
      groupchat: { agents: [{ name: "a", systemPrompt: "A" }], termination: { keywords: [], custom: "'agreed' in x" } }
    })
    const result = await runWith(term, Scripted.sequence(["no", "maybe", "we agreed", "never"]), "go")
    expect(result.result).toBe("we agreed")
    expect(() => compileConfig({ type: "groupchat", groupchat: { agents: [{ systemPrompt: "A" }], termination: { custom: "len(x) >" } } })).toThrow(SchemaError)
    try {
      compileConfig({ type: "groupchat", groupchat: { agents: [{ systemPrompt: "A" }], termination: { custom: "len(x) >" } } })
    } catch (e) {
      expect((e as SchemaError).issues[0]!.path).toEqual(["groupchat", "termination", "custom"])
    }
  })

  it("a nested config takes a turn: a chain as a participant", async () => {
    const { term } = compileConfig({
      type: "groupchat",
      groupchat: {
        maxRounds: 1,
        agents: [
          { name: "pipeline", type: "chain", chain: { steps: [{ prompt: "first" }, { prompt: "second" }] } },
          { name: "judge", systemPrompt: "judge" }
        ]
      }
    })
    const result = await runWith(
      term,
      Scripted.respond((req) => `${systemOf(req)}(${lastUser(req).length})`),
      "go"
    )
    expect(result.trace.filter((e) => e.kind === "llm").map((e) => e.name)).toEqual(["step1", "step2", "judge"])
    expect(result.result).toMatch(/^judge\(\d+\)$/)
  })

  it("type groupchat without its block is an error at type", () => {
    expect(() => compileConfig({ type: "groupchat" })).toThrow(/type groupchat needs a groupchat: block/)
  })
})

describe("type: handoff", () => {
  it("examples/agents/support-desk.yml: billing hands off to tech with a note, tech answers", async () => {
    const agent = loadConfig("examples/agents/support-desk.yml")
    expect(Analysis.worstCase(agent.term).requests).toEqual({ llmCalls: 4, toolCalls: 0 })
    const seen: Array<[string, string]> = []
    const model = byPrompt(
      {
        "which desk": ["billing"],
        "You are the billing desk": ["HANDOFF tech: the app crashes when paying"],
        "You are the tech desk": ["Update the app to 2.1; the crash is fixed there."]
      },
      seen
    )
    const result = await runWith(agent.term, model, "I was charged but the app crashed")
    expect(result.result).toBe("Update the app to 2.1; the crash is fixed there.")
    expect(result.trace.filter((e) => e.kind === "handoff").map((e) => `${e.name}/${e.output}`)).toEqual(["billing/hop 0", "tech/hop 1"])
    expect(seen.find(([k]) => k === "You are the tech desk")![1]).toBe("the app crashes when paying")
  })

  it("an unknown name goes to the fallback, traced; a hand-off past maxDepth is a budget error", async () => {
    const agent = loadConfig("examples/agents/support-desk.yml")
    const toFallback = await runWith(agent.term, byPrompt({ "which desk": ["sales"], "general desk": ["Hello!"] }), "hi")
    expect(toFallback.result).toBe("Hello!")
    expect(toFallback.trace.find((e) => e.kind === "handoff")).toMatchObject({ name: "fallback", input: "sales" })
    const pingPong = byPrompt({ "which desk": ["billing"], "You are the billing desk": ["HANDOFF tech"], "You are the tech desk": ["HANDOFF billing"] })
    await expect(runWith(agent.term, pingPong, "help")).rejects.toMatchObject({ _tag: "BudgetExceeded", budget: "loop", limit: 2 })
  })

  it("registry names must be one word; selector targets must be in the registry", () => {
    expect(() => compileConfig({ type: "handoff", handoff: { selector: { prompt: "?" }, registry: { "two words": { systemPrompt: "x" } } } })).toThrow(
      /cannot name a delegate/
    )
    expect(() => compileConfig({ type: "handoff", handoff: { selector: { prompt: "?", targets: ["b"] }, registry: { a: { systemPrompt: "x" } } } })).toThrow(
      /target "b" is not in the registry/
    )
  })
})

describe("subAgents and skills", () => {
  const think = (req: LanguageModel.ChatRequest) => systemOf(req).startsWith("You help with documents")

  it("examples/agents/assistant.yml: the react agent calls an inline sub-agent, a sub-agent file and a skill in the same run", async () => {
    const agent = loadConfig("examples/agents/assistant.yml")
    // the sub-agents and the skill are terms of the run, not host tools
    expect(agent.tools.map((t) => t.name)).toEqual(["terminate"])
    expect(Analysis.worstCase(agent.term).requests).toEqual({ llmCalls: 12, toolCalls: 0 })
    const plan = [
      '{"tool": "call_summarizer", "args": {"task": "Bike lanes were approved. Work starts in May."}}',
      '{"tool": "call_translator", "args": {"task": "Bike lanes approved."}}',
      '{"tool": "headline", "args": "Bike lanes approved."}',
      '{"tool": "terminate", "args": "done"}'
    ]
    let step = 0
    const seen: Array<string> = []
    const model = Scripted.respond((req) => {
      if (think(req)) return plan[step++]!
      seen.push(`${systemOf(req).split(" ")[0]}<${lastUser(req)}>`)
      return `answer of ${systemOf(req).split(" ")[0]}`
    })
    const result = await runWith(agent.term, model, "Handle the bike lane article.")
    expect(result.result).toBe("done")
    expect(seen).toEqual(["Summarize<Bike lanes were approved. Work starts in May.>", "Translate<Bike lanes approved.>", "Write<Bike lanes approved.>"])
    expect(result.trace.filter((e) => e.kind === "react" && e.name.startsWith("agent ")).map((e) => e.name)).toEqual([
      "agent call_summarizer",
      "agent call_translator",
      "agent headline"
    ])
  })

  it("a sub-agent that calls itself is refused at compile time with the cycle", () => {
    const config = {
      type: "react",
      systemPrompt: "root",
      subAgents: { loop: { inline: { type: "react", systemPrompt: "again", mcp: { localTools: ["call_loop", "terminate"] } } } }
    }
    expect(() => compileConfig(config)).toThrow(/sub-agent cycle: call_loop → call_loop/)
  })

  it("sub-agent files that call each other are refused with the path of the cycle", () => {
    const dir = mkdtempSync(join(tmpdir(), "lambdagent-subagents-"))
    try {
      writeFileSync(join(dir, "a.yml"), "type: react\nsystemPrompt: a\nsubAgents:\n  b:\n    config: b.yml\n")
      writeFileSync(join(dir, "b.yml"), "type: react\nsystemPrompt: b\nsubAgents:\n  a:\n    config: a.yml\n")
      expect(() => loadConfig(join(dir, "a.yml"))).toThrow(/sub-agent cycle: a\.yml → b\.yml → a\.yml/)
      expect(() => loadConfig({ text: "type: react\nsystemPrompt: x\nsubAgents:\n  gone:\n    config: missing.yml\n", file: join(dir, "c.yml") })).toThrow(
        /missing\.yml/
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("a sub-agent needs inline or config; skill names are unique", () => {
    expect(() => compileConfig({ type: "react", systemPrompt: "x", subAgents: { s: { description: "d" } } })).toThrow(/needs inline .* or config/)
    expect(() =>
      compileConfig({
        type: "simple",
        systemPrompt: "x",
        skills: [
          { name: "a", agent: { systemPrompt: "1" } },
          { name: "a", agent: { systemPrompt: "2" } }
        ]
      })
    ).toThrow(/a second skill named "a"/)
  })

  const skills = [
    { name: "summarize", description: "Summarizes text.", tags: ["text"], agent: { systemPrompt: "Summarize." } },
    { name: "translate", description: "Translates text into French.", tags: ["text", "language"], agent: { systemPrompt: "Translate." } },
    { name: "add", description: "Adds numbers.", tags: ["math"], agent: { systemPrompt: "Add." } }
  ]

  it("type skill, select description: an LLM classifier picks among the tagged skills by their descriptions", async () => {
    const { term } = compileConfig({ type: "skill", skill: { select: "description", tags: ["text"] }, skills })
    const classifier = (term as Term.Of<"Route">).classify as Term.Of<"Llm">
    expect(classifier.system).toBe(
      "Pick the skill that fits the input.\n\n- summarize: Summarizes text.\n- translate: Translates text into French.\n\nAnswer with exactly one of: summarize, translate."
    )
    const model = Scripted.respond((req) => (systemOf(req).startsWith("Pick") ? "translate" : `${systemOf(req)} ${lastUser(req)}`))
    expect((await runWith(term, model, "hello")).result).toBe("Translate. hello")
  })

  it("type skill, select tag: the first skill with the tag, no classifier", async () => {
    const { term } = compileConfig({ type: "skill", skill: { select: "tag", tags: ["language"] }, skills })
    expect(Analysis.worstCase(term).requests.llmCalls).toBe(1)
    expect(
      (
        await runWith(
          term,
          Scripted.respond((req) => systemOf(req)),
          "x"
        )
      ).result
    ).toBe("Translate.")
    expect(() => compileConfig({ type: "skill", skill: { select: "tag", tags: ["cooking"] }, skills })).toThrow(/no skill has a tag among cooking/)
  })
})

describe("channels", () => {
  const fromYaml = (text: string) => loadConfig({ text })
  const pipeline = (channels: string, second = "receive: a\n      send: b") =>
    `type: parallel\n${channels}parallel:\n  agents:\n    - systemPrompt: A\n      send: a\n    - systemPrompt: B\n      ${second}\n    - systemPrompt: C\n      receive: b\n`

  it("examples/agents/pipeline.yml: the draft and the notes travel writer → reviewer → editor", async () => {
    const agent = loadConfig("examples/agents/pipeline.yml")
    expect(agent.term._tag).toBe("Channels")
    const model = Scripted.respond((req) => `${systemOf(req).split(" ")[0]} [${lastUser(req)}]`)
    const result = await runWith(agent.term, model, "tides")
    expect(result.result).toEqual(["Write [tides]", "Review [Write [tides]]", "Apply [Review [Write [tides]]]"])
    const messages = result.trace.filter((e) => e.kind === "send" || e.kind === "receive").map((e) => `${e.kind} ${e.name}`)
    expect(messages.sort()).toEqual(["receive drafts", "receive notes", "send drafts", "send notes"])
  })

  it("channels: becomes a channels scope around the term; receive and send are stages around the agent", () => {
    const { term } = fromYaml(`${pipeline("channels:\n  - {name: a}\n  - {name: b, capacity: 2}\n")}`)
    const scope = term as Term.Of<"Channels">
    expect(scope.declare).toEqual([
      { name: "a", capacity: 0 },
      { name: "b", capacity: 2 }
    ])
    const middle = (scope.agent as Term.Of<"Par">).branches[1] as Term.Of<"Compose">
    expect(middle.stages[0]).toEqual({ _tag: "Receive", channel: "a" })
    expect(middle.stages[middle.stages.length - 1]).toEqual({ _tag: "Send", channel: "b" })
  })

  it("a file whose agents all wait ends with a Deadlock naming the channels and branches", async () => {
    // B waits for C and C for B
    const { term } = fromYaml(
      `type: parallel\nchannels: [{name: a}, {name: b}]\nparallel:\n  agents:\n    - {systemPrompt: B, receive: a, send: b}\n    - {systemPrompt: C, receive: b, send: a}\n`
    )
    await expect(
      runWith(
        term,
        Scripted.respond(() => "x"),
        "go"
      )
    ).rejects.toMatchObject({
      _tag: "EvalError",
      kind: "Deadlock",
      message: expect.stringContaining(`branch 0 receives on "a"`)
    })
  })

  it("bad channels: an undeclared one, no channels: block, a repeat, a negative capacity, channels: below the top", () => {
    expect(() => fromYaml(pipeline("channels: [{name: a}]\n"))).toThrow(`receive names channel "b", which channels: does not declare (it declares "a")`)
    expect(() => fromYaml(pipeline(""))).toThrow(`send names channel "a", but the file has no channels: block`)
    expect(() => fromYaml(pipeline("channels: [{name: a}, {name: b}, {name: a}]\n"))).toThrow(`channel "a" is declared twice (first at channels[0])`)
    expect(() => fromYaml(pipeline("channels: [{name: a, capacity: -1}, {name: b}]\n"))).toThrow(SchemaError)
    expect(() => fromYaml(pipeline("channels: [{name: a, capacity: -1}, {name: b}]\n"))).toThrow(/channels\[0\]\.capacity/)
    expect(() => fromYaml(`type: parallel\nparallel:\n  agents:\n    - systemPrompt: A\n      channels: [{name: a}]\n`)).toThrow(
      /only at the top level|top level/
    )
  })
})
