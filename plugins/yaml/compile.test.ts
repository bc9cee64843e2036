import { readdirSync } from "node:fs"
import { Budget, createRuntime, Sandbox, Scripted, Term, Tools, Value } from "lambdagent"
import { describe, expect, it } from "vitest"
import { compileConfig, fromConfig, loadConfig, type CompiledAgent, toolReferences } from "./compile.ts"
import { SchemaError, SemanticError } from "./errors.ts"
import { parseSource } from "./source.ts"
import { runAgent, runParallel } from "./test-helpers.ts"
import type { AgentConfig } from "./schema.ts"
import { agentsOf, validateConfig } from "./validate.ts"

const compile = (config: unknown, overrides = {}) => compileConfig(config, { overrides })
const termOf = (config: unknown, overrides = {}) => compile(config, overrides).term
const json = (t: Term.Term) => Term.encode(t) as Record<string, any>

const semanticRules = (f: () => unknown): Array<string> => {
  try {
    f()
  } catch (e) {
    if (e instanceof SemanticError) return e.issues.map((i) => i.rule!)
    throw e
  }
  throw new Error("expected a SemanticError")
}

describe("type: simple", () => {
  it("compiles to one llm term carrying the prompt, the name and every model setting", () => {
    const term = termOf({
      type: "simple",
      name: "Summarizer",
      systemPrompt: "Summarize.",
      model: {
        provider: "openai",
        name: "gpt-4o-mini",
        temperature: 0.4,
        maxTokens: 512,
        topP: 0.9,
        stopSequences: ["END"],
        baseUrl: "http://127.0.0.1:8080/v1",
        timeout: 20,
        conversation: true,
        maxHistoryTokens: 3000
      }
    })
    expect(json(term)).toEqual({
      llm: {
        system: "Summarize.",
        name: "Summarizer",
        model: {
          provider: "openai",
          name: "gpt-4o-mini",
          temperature: 0.4,
          maxTokens: 512,
          topP: 0.9,
          stop: ["END"],
          baseUrl: "http://127.0.0.1:8080/v1",
          timeout: 20
        },
        conversation: true,
        maxHistoryTokens: 3000
      }
    })
  })

  it("names the call after name, then agentId, then 'agent'", () => {
    expect((termOf({ type: "simple", systemPrompt: "Hi", agentId: "a-1" }) as Term.Of<"Llm">).name).toBe("a-1")
    expect((termOf({ type: "simple", systemPrompt: "Hi", agentId: "a-1", name: "Nice" }) as Term.Of<"Llm">).name).toBe("Nice")
    expect((termOf({ type: "simple", systemPrompt: "Hi" }) as Term.Of<"Llm">).name).toBe("agent")
  })

  it("caps history at min(contextWindow / 2, 80000) when maxHistoryTokens is absent", () => {
    const llm = (model: Record<string, unknown>) => termOf({ type: "simple", systemPrompt: "Hi", model }) as Term.Of<"Llm">
    expect(llm({ contextWindow: 8192 }).maxHistoryTokens).toBe(4096)
    expect(llm({ contextWindow: 200_000 }).maxHistoryTokens).toBe(80_000)
    expect(llm({ contextWindow: 8192, maxHistoryTokens: 1000 }).maxHistoryTokens).toBe(1000)
    expect(llm({ contextWindow: 8192, conversation: false }).maxHistoryTokens).toBeUndefined()
    expect(llm({ contextWindow: 8192, conversation: false }).conversation).toBe(false)
    expect(llm({}).model).toBeUndefined()
  })
})

describe("output", () => {
  const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }

  it("gives a simple agent's llm the output schema, and no conversation", () => {
    const term = termOf({
      type: "simple",
      systemPrompt: "Where is it?",
      model: { provider: "openai", maxHistoryTokens: 500 },
      output: { schema, name: "place", retries: 1, strict: true }
    })
    expect(json(term)).toEqual({
      llm: { system: "Where is it?", name: "agent", model: { provider: "openai" }, output: { schema, name: "place", strict: true, retries: 1 } }
    })
    // the compiled term reads back as it was written
    expect(Term.parse(Term.encode(term))).toEqual(term)
    expect(Term.bounds(term).llmCalls).toBe(2)
  })

  it("puts any other agent's answer in the schema's shape with one more LLM call", () => {
    const term = termOf({
      type: "react",
      name: "finder",
      systemPrompt: "Find it.",
      react: { maxSteps: 3 },
      mcp: { localTools: ["search", "terminate"] },
      output: { schema }
    }) as Term.Of<"Compose">
    expect(term._tag).toBe("Compose")
    expect(term.stages.map((s) => s._tag)).toEqual(["React", "Llm"])
    const format = term.stages[1] as Term.Of<"Llm">
    expect(format.name).toBe("finder.output")
    expect(format.output).toEqual({ schema })
    expect(format.conversation).toBeUndefined()
    // three thoughts, and the formatting call with its two repairs
    expect(Term.bounds(term).llmCalls).toBe(3 + 3)
  })

  it("gives a chain's LLM step its output schema", () => {
    const term = termOf({ type: "chain", chain: { steps: [{ prompt: "A." }, { prompt: "B.", output: { schema } }] } }) as Term.Of<"Compose">
    expect((term.stages[0] as Term.Of<"Llm">).output).toBeUndefined()
    expect((term.stages[1] as Term.Of<"Llm">).output).toEqual({ schema })
  })

  it("refuses a schema that cannot be checked (L050)", () => {
    expect(semanticRules(() => termOf({ type: "simple", systemPrompt: "Hi", output: { schema: { type: "wat" } } }))).toEqual(["L050"])
  })
})

describe("type: react", () => {
  const react = {
    type: "react",
    name: "R",
    systemPrompt: "Use tools.",
    model: { name: "m" },
    react: { maxSteps: 20, toolTimeout: 15, observationEnabled: false },
    mcp: { onlineTool: { srv: ["search", "calc"] }, localTools: ["clock", "terminate"], policy: { mode: "auto", retryOnFail: 2 } },
    app: { mcp: { custom: { nodes: { srv: { url: "https://mcp.example.com", endpoint: "/mcp", headers: { Authorization: "${TOKEN}" }, timeout: 9 } } } } }
  }

  it("compiles to a react term whose think is the agent's llm and whose tools are the declared ones", () => {
    const t = termOf(react) as Term.Of<"React">
    expect(t._tag).toBe("React")
    expect(t.maxSteps).toBe(20)
    expect(t.toolTimeout).toBe(15)
    expect(t.observe).toBe(false)
    expect(t.tools).toEqual(["search", "calc", "clock", "terminate"])
    expect(t.think).toEqual(Term.llm({ system: "Use tools.", name: "R.think", model: { name: "m" } }))
  })

  it("records where each tool comes from: MCP with its connection and policy, local, terminate", () => {
    const refs = new Map(compile(react).tools.map((r) => [r.name, r]))
    expect(refs.get("search")).toMatchObject({
      kind: "mcp",
      server: "srv",
      declared: true,
      connection: { transport: "http", url: "https://mcp.example.com", endpoint: "/mcp", headers: { Authorization: "${TOKEN}" }, timeout: 9 },
      policy: { mode: "auto", retryOnFail: 2 },
      usedAt: ["mcp.onlineTool.srv[0]"]
    })
    expect(refs.get("clock")).toMatchObject({ kind: "local", declared: true })
    expect(refs.get("terminate")).toMatchObject({ kind: "terminate" })
  })

  it("reads terminate in any letter case, as the loop does, and writes it in lower case", () => {
    const t = termOf({ type: "react", systemPrompt: "x", mcp: { localTools: ["search", "Terminate"], policy: { mode: "disable" } } }) as Term.Of<"React">
    expect(t.tools).toEqual(["terminate"])
    const u = termOf({ type: "react", systemPrompt: "x", mcp: { localTools: ["search", "TERMINATE"] } }) as Term.Of<"React">
    expect(u.tools).toEqual(["search", "terminate"])
  })

  it("defaults maxSteps to 10 and leaves toolTimeout and observe to the runtime", () => {
    const t = termOf({ type: "react", systemPrompt: "x", mcp: { localTools: ["terminate"] } }) as Term.Of<"React">
    expect(t.maxSteps).toBe(10)
    expect(t.toolTimeout).toBeUndefined()
    expect(t.observe).toBeUndefined()
  })

  it("uses react.thinkPrompt as the think step's prompt", () => {
    const t = termOf({ type: "react", systemPrompt: "ignored", react: { thinkPrompt: "Think hard." } }) as Term.Of<"React">
    expect((t.think as Term.Of<"Llm">).system).toBe("Think hard.")
  })

  it("compiles react.earlyStop to a predicate on each observation that ends the loop with it", async () => {
    const yaml = `type: react\nsystemPrompt: Search until found.\nreact:\n  maxSteps: 8\n  earlyStop: "x.startswith('FOUND')"\nmcp: {localTools: [search, terminate]}\n`
    const t = fromConfig(yaml) as Term.Of<"React">
    expect(Term.pretty(t.earlyStop!)).toBe('λx. x startsWith "FOUND"')
    // the predicate is pure: the worst case stays maxSteps thoughts and tool calls
    expect(Term.bounds(t)).toEqual({ llmCalls: 8, toolCalls: 8 })
    const pages = ["nothing here", "still nothing", "FOUND: the answer", "never read"]
    let page = 0
    const search = Tools.define({ name: "search", description: "Search.", run: () => pages[page++]! })
    const model = Scripted.respond(() => '{"tool": "search", "args": "q"}')
    const runtime = createRuntime({ model, resolveModel: () => model, tools: [search] })
    try {
      const out = await runtime.run(t, "find it")
      expect(out.value).toBe("FOUND: the answer")
      expect(out.stats).toMatchObject({ llmCalls: 3, toolCalls: 3 })
    } finally {
      await runtime.close()
    }
  })

  it("an earlyStop that raises on an observation (int() of a word) does not stop the loop", async () => {
    const yaml = `type: react\nsystemPrompt: Count.\nreact:\n  maxSteps: 8\n  earlyStop: "int(x) > 2"\nmcp: {localTools: [count, terminate]}\n`
    const t = fromConfig(yaml) as Term.Of<"React">
    const pages = ["one", "2", "many", "7", "never read"]
    let page = 0
    const count = Tools.define({ name: "count", description: "Count.", run: () => pages[page++]! })
    const model = Scripted.respond(() => '{"tool": "count", "args": "q"}')
    const runtime = createRuntime({ model, resolveModel: () => model, tools: [count] })
    try {
      const out = await runtime.run(t, "count", { trace: "agent" })
      expect(out.value).toBe("7")
      expect(out.stats).toMatchObject({ toolCalls: 4 })
      expect(out.trace.filter((e) => e.kind === "react" && e.name === "no early stop").map((e) => e.error)).toEqual([
        'earlyStop raised ValueError: toInt: "one" is not an integer',
        'earlyStop raised ValueError: toInt: "many" is not an integer'
      ])
    } finally {
      await runtime.close()
    }
  })

  it("refuses an earlyStop that is not a validator expression, at its line", () => {
    expect(() => fromConfig('type: react\nsystemPrompt: x\nreact:\n  earlyStop: "import os"\n')).toThrow(SchemaError)
    const error = (() => {
      try {
        fromConfig('type: react\nsystemPrompt: x\nreact:\n  earlyStop: "y > 1"\n')
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(SchemaError)
    expect((error as SchemaError).issues[0]).toMatchObject({ field: "react.earlyStop", line: 4 })
  })

  it("with mcp.policy.mode disable offers only terminate", () => {
    const t = termOf({ ...react, mcp: { ...react.mcp, policy: { mode: "disable" } } }) as Term.Of<"React">
    expect(t.tools).toEqual(["terminate"])
  })

  it("adds mcpServers tools, cli agents and a2a clients to the top-level react agent", () => {
    const agent = compile({
      type: "react",
      systemPrompt: "x",
      mcp: { localTools: ["terminate"] },
      mcpServers: [
        { name: "files", transport: "stdio", command: "mcp-files", args: ["--root", "."], tools: ["read_file"] },
        { name: "web", transport: "http", url: "https://web.example.com/mcp", tools: ["fetch"] }
      ],
      cli: { agents: { summarizer: { command: "lambdagent run s.yml -", format: "json", timeout: 60, retry: 1 } } },
      a2a: { clients: [{ name: "planner", url: "https://a2a.example.com", timeout: 30 }] }
    })
    expect((agent.term as Term.Of<"React">).tools).toEqual(["terminate", "read_file", "fetch", "summarizer", "planner"])
    const refs = new Map(agent.tools.map((r) => [r.name, r]))
    expect(refs.get("read_file")).toMatchObject({
      kind: "mcp",
      server: "files",
      connection: { transport: "stdio", command: "mcp-files", args: ["--root", "."] }
    })
    expect(refs.get("fetch")?.connection).toEqual({ transport: "http", url: "https://web.example.com/mcp" })
    expect(refs.get("summarizer")).toMatchObject({ kind: "cli", cli: { command: "lambdagent run s.yml -", format: "json", timeout: 60, retry: 1 } })
    expect(refs.get("planner")).toMatchObject({ kind: "a2a", a2a: { url: "https://a2a.example.com", timeout: 30 } })
  })

  it("gives sub-agents only the tools they list; listing a global tool resolves to it", () => {
    const agent = compile({
      type: "router",
      router: {
        classifier: { prompt: "which?" },
        routes: { work: { type: "react", systemPrompt: "w", mcp: { localTools: ["summarizer", "terminate"] } } },
        default: "no"
      },
      cli: { agents: { summarizer: { command: "sum" } } }
    })
    const react = (agent.term as Term.Of<"Route">).routes[0]![1] as Term.Of<"React">
    expect(react.tools).toEqual(["summarizer", "terminate"])
    expect(agent.tools.find((t) => t.name === "summarizer")?.kind).toBe("cli")
  })
})

describe("cli:NAME references (seed C14)", () => {
  it("resolve cli:sub in localTools and chain tool steps to the program sub; the model sees sub", () => {
    const react = compile({
      type: "router",
      router: {
        classifier: { prompt: "which?" },
        routes: { work: { type: "react", systemPrompt: "w", mcp: { localTools: ["cli:sub", "terminate"] } } },
        default: { type: "chain", chain: { steps: [{ tool: "cli:sub" }, { prompt: "Polish." }] } }
      },
      cli: { agents: { sub: { command: "lambdagent run sub.yml --quiet -" } } }
    })
    const route = react.term as Term.Of<"Route">
    expect((route.routes[0]![1] as Term.Of<"React">).tools).toEqual(["sub", "terminate"])
    expect(Term.toJsonText(route.default!)).toContain('{"tool":"sub"}')
    expect(react.tools.filter((t) => t.kind === "cli")).toEqual([
      expect.objectContaining({ name: "sub", cli: { command: "lambdagent run sub.yml --quiet -" } })
    ])
  })

  it("leave cli:NAME alone when no program has that name, so lint names the unknown tool", () => {
    const agent = compile({ type: "react", systemPrompt: "x", mcp: { localTools: ["cli:other", "terminate"] }, cli: { agents: { sub: { command: "x" } } } })
    expect((agent.term as Term.Of<"React">).tools).toContain("cli:other")
  })
})

describe("cli.pipelines (seed §17.3)", () => {
  const programs = { summarizer: { command: "sum" }, translator: { command: "tr" } }

  it("compiles a pipeline to its steps composed, and parallel: true to the steps side by side, joined", () => {
    const agent = compile({
      type: "chain",
      chain: { steps: [{ tool: "research_and_translate" }, { tool: "both" }] },
      cli: {
        agents: programs,
        pipelines: { research_and_translate: { steps: ["summarizer", "translator"] }, both: { steps: ["summarizer", "cli:translator"], parallel: true } }
      }
    })
    const [serial, side] = (agent.term as Term.Of<"Compose">).stages
    expect(Term.toJsonText(serial!)).toBe('{"compose":[{"tool":"summarizer"},{"tool":"translator"}]}')
    expect(side).toMatchObject({
      _tag: "Par",
      merge: "concat",
      branches: [
        { _tag: "Tool", name: "summarizer" },
        { _tag: "Tool", name: "translator" }
      ]
    })
    expect(agent.tools.map((t) => `${t.name}:${t.kind}`).sort()).toEqual(["summarizer:cli", "translator:cli"])
  })

  it("gives the top-level react agent every pipeline as an agent tool, described by its steps", () => {
    const agent = compile({
      type: "react",
      systemPrompt: "Help.",
      mcp: { localTools: ["terminate"] },
      cli: { agents: programs, pipelines: { research_and_translate: { steps: ["summarizer", "translator"] } } }
    })
    const react = agent.term as Term.Of<"React">
    expect(react.tools).toContain("research_and_translate")
    expect(react.agents?.find(([name]) => name === "research_and_translate")?.[1]._tag).toBe("Compose")
    expect(Term.toJsonText(agent.term)).toContain("- research_and_translate: the pipeline summarizer >> translator")
  })

  it("refuses a pipeline with no steps or an unknown field", () => {
    expect(() => compile({ type: "simple", systemPrompt: "x", cli: { pipelines: { p: { steps: [] } } } })).toThrow(/cli\.pipelines\.p\.steps/)
    expect(() => compile({ type: "simple", systemPrompt: "x", cli: { pipelines: { p: { steps: ["a"], serial: true } } } })).toThrow(/serial/)
  })
})

describe("type: chain", () => {
  const chain = {
    type: "chain",
    model: { provider: "openai", name: "gpt-4o-mini", temperature: 0.2 },
    chain: {
      steps: [
        { name: "extract", prompt: "Extract." },
        { prompt: "Analyze.", guard: { validator: "len(x) > 50", retry: 2 }, outputParser: "text" },
        { name: "draft", prompt: "Draft.", model: { temperature: 0.9 }, outputParser: "json" }
      ]
    }
  }

  it("compiles to a compose of the steps, in order", () => {
    const t = termOf(chain) as Term.Of<"Compose">
    expect(t._tag).toBe("Compose")
    expect(t.stages).toHaveLength(3)
    expect((t.stages[0] as Term.Of<"Llm">).name).toBe("extract")
  })

  it("names unnamed steps step<i> and wraps a step's guard around it", () => {
    const guard = (termOf(chain) as Term.Of<"Compose">).stages[1] as Term.Of<"Guard">
    expect(guard._tag).toBe("Guard")
    expect(guard.retry).toBe(2)
    expect(guard.fallback).toBe("error")
    expect((guard.agent as Term.Of<"Llm">).name).toBe("step2")
    expect(Term.pretty(guard.validate)).toBe("λx. (length(x)) > 50")
  })

  it("merges a step's model over the agent's, field by field, and appends the output parser", () => {
    const third = (termOf(chain) as Term.Of<"Compose">).stages[2] as Term.Of<"Compose">
    expect(third._tag).toBe("Compose")
    expect((third.stages[0] as Term.Of<"Llm">).model).toEqual({ provider: "openai", name: "gpt-4o-mini", temperature: 0.9 })
    expect(third.stages[1]).toEqual(Term.tool("__builtin_parse_json"))
  })

  it("runs the steps left to right: λx. draft(step2(extract(x)))", () => {
    const steps = [{ name: "extract", prompt: "Extract." }, { prompt: "Analyze." }, { name: "draft", prompt: "Draft." }]
    const { calls, value } = runAgent(termOf({ type: "chain", chain: { steps } }), "text", { llm: ({ name, input }) => `${name}(${input})` })
    expect(calls.llm.map((c) => c.name)).toEqual(["extract", "step2", "draft"])
    expect(value).toBe("draft(step2(extract(text)))")
  })

  it("compiles a tool step to a tool reference, declared or not", () => {
    const agent = compile({ type: "chain", chain: { steps: [{ tool: "fetch_page" }, { prompt: "Summarize." }] }, mcp: { localTools: ["fetch_page"] } })
    expect((agent.term as Term.Of<"Compose">).stages[0]).toEqual(Term.tool("fetch_page"))
    expect(agent.tools.find((t) => t.name === "fetch_page")).toMatchObject({ kind: "local", declared: true, usedAt: ["chain.steps[0].tool"] })
    const undeclared = compile({ type: "chain", chain: { steps: [{ tool: "mystery" }] } })
    expect(undeclared.tools[0]).toMatchObject({ name: "mystery", declared: false })
  })

  it("parses number and boolean outputs with the parser builtins", () => {
    const t = termOf({
      type: "chain",
      chain: {
        steps: [
          { prompt: "Count.", outputParser: "number" },
          { prompt: "Yes?", outputParser: "boolean" }
        ]
      }
    }) as Term.Of<"Compose">
    const { value } = runAgent(t.stages[0]!, "x", { llm: () => " 41.5 " })
    expect(value).toBe(42)
    expect(runAgent(t.stages[1]!, "x", { llm: () => "Yes." }).value).toBe(true)
  })
})

describe("type: router", () => {
  const router = {
    type: "router",
    name: "Desk",
    model: { provider: "anthropic", name: "claude", temperature: 0.3 },
    router: {
      classifier: { prompt: "Classify.", categories: ["code", "math", "hello"], model: { temperature: 0 } },
      routes: {
        code: { name: "coder", systemPrompt: "You code." },
        math: { type: "simple", systemPrompt: "You do maths.", model: { name: "other" } },
        hello: "Hello there!"
      },
      default: { systemPrompt: "You help." }
    }
  }

  it("compiles to a route with a classifier, one branch per route and a default", () => {
    const t = termOf(router) as Term.Of<"Route">
    expect(t._tag).toBe("Route")
    expect(t.routes.map(([l]) => l)).toEqual(["code", "math", "hello"])
    const classify = t.classify as Term.Of<"Llm">
    expect(classify.name).toBe("Desk.classifier")
    expect(classify.system).toBe("Classify.\n\nAnswer with exactly one of: code, math, hello.")
    expect(classify.conversation).toBe(false)
    expect(classify.model).toEqual({ provider: "anthropic", name: "claude", temperature: 0 })
    expect((t.default as Term.Of<"Llm">).name).toBe("default")
  })

  it("compiles sub-agents recursively, inheriting the parent's model field by field", () => {
    const t = termOf(router) as Term.Of<"Route">
    expect(t.routes[0]![1]).toEqual(Term.llm({ system: "You code.", name: "coder", model: { provider: "anthropic", name: "claude", temperature: 0.3 } }))
    expect((t.routes[1]![1] as Term.Of<"Llm">).model).toEqual({ provider: "anthropic", name: "other", temperature: 0.3 })
    expect((t.routes[1]![1] as Term.Of<"Llm">).name).toBe("math")
  })

  it("compiles a string route to a constant function", () => {
    const hello = (termOf(router) as Term.Of<"Route">).routes[2]![1]
    expect(hello).toEqual(Term.lam("x", Term.lit("Hello there!")))
  })

  it("dispatches on the classifier's answer, falling back to the default", () => {
    const t = termOf(router)
    const ask = (label: string) => runAgent(t, "q", { llm: ({ name }) => (name === "Desk.classifier" ? label : `answer from ${name}`) })
    expect(ask("math").value).toBe("answer from math")
    expect(ask(" Code ").value).toBe("answer from coder")
    expect(ask("hello").value).toBe("Hello there!")
    expect(ask("hello").calls.llm).toHaveLength(1)
    expect(ask("weather").value).toBe("answer from default")
  })

  it("asks for the route labels when there are no categories", () => {
    const t = termOf({ type: "router", router: { classifier: { prompt: "Pick." }, routes: { a: "A", b: "B" } } }) as Term.Of<"Route">
    expect((t.classify as Term.Of<"Llm">).system).toBe("Pick.\n\nAnswer with exactly one of: a, b.")
    expect(t.default).toBeUndefined()
  })
})

describe("type: parallel", () => {
  const branches = [
    { name: "researcher", systemPrompt: "Research." },
    { name: "critic", systemPrompt: "Critique." }
  ]

  it("compiles to par with a tuple merge by default", () => {
    const t = termOf({ type: "parallel", parallel: { agents: branches } }) as Term.Of<"Par">
    expect(t._tag).toBe("Par")
    expect(t.merge).toBe("tuple")
    expect(t.branches.map((b) => (b as Term.Of<"Llm">).name)).toEqual(["researcher", "critic"])
    const { value } = runParallel(t, "topic")
    expect(Value.toJson(value)).toEqual({ pair: ["(researcher)", "(critic)"] })
  })

  it("compiles merge: concat", () => {
    const t = termOf({ type: "parallel", parallel: { agents: branches, merge: "concat" } }) as Term.Of<"Par">
    expect(t.merge).toBe("concat")
    expect(runParallel(t, "topic").value).toBe("(researcher)\n\n(critic)")
  })

  it("compiles merge: custom to an LLM that receives the labelled results", () => {
    const t = termOf({ type: "parallel", name: "Panel", parallel: { agents: branches, merge: "custom", mergePrompt: "Synthesize." } }) as Term.Of<"Par">
    const merge = t.merge as Term.Of<"Compose">
    expect(merge.stages[1]).toMatchObject({ _tag: "Llm", name: "Panel.merge", system: "Synthesize." })
    const { calls, value } = runParallel(t, "topic", { llm: ({ name, input }) => (name === "Panel.merge" ? `merged: ${input}` : `${name} says hi`) })
    expect(value).toBe("merged: [researcher]:\nresearcher says hi\n\n---\n\n[critic]:\ncritic says hi")
    expect(calls.llm.map((c) => c.name)).toEqual(["researcher", "critic", "Panel.merge"])
  })

  it("passes the raw list to the merge LLM when a branch does not yield text", () => {
    const t = termOf({
      type: "parallel",
      parallel: {
        agents: [{ systemPrompt: "A" }, { type: "parallel", parallel: { agents: [{ systemPrompt: "B" }, { systemPrompt: "C" }] } }],
        merge: "custom",
        mergePrompt: "Merge."
      }
    }) as Term.Of<"Par">
    expect((t.merge as Term.Term)._tag).toBe("Llm")
    expect((t.branches[1] as Term.Of<"Par">).branches).toHaveLength(2)
  })
})

describe("memory, guard, rag and the wrapping order", () => {
  it("wraps core → guard → memory, memory outermost", () => {
    const t = termOf({
      type: "simple",
      systemPrompt: "Chat.",
      guard: { validator: "len(x) > 0", retry: 1 },
      memory: { enabled: true, strategy: "redis", size: 20, ttl: 7200, scope: "user" }
    }) as Term.Of<"Memory">
    expect(t._tag).toBe("Memory")
    expect(t.size).toBe(20)
    expect(t.ttl).toBe(7200)
    expect(t.scope).toBe("user")
    expect(t.agent._tag).toBe("Guard")
    expect((t.agent as Term.Of<"Guard">).agent._tag).toBe("Llm")
  })

  it("defaults memory to size 10, ttl 0, session scope, local strategy; enabled: false removes it", () => {
    const agent = compile({ type: "simple", systemPrompt: "x", memory: {} })
    expect(agent.term).toMatchObject({ _tag: "Memory", size: 10, ttl: 0, scope: "session" })
    expect(agent.memory).toEqual([{ path: "memory", strategy: "local", size: 10, ttl: 0, scope: "session" }])
    expect(termOf({ type: "simple", systemPrompt: "x", memory: { enabled: false, size: 5 } })._tag).toBe("Llm")
  })

  it("records a custom store's name", () => {
    expect(compile({ type: "simple", systemPrompt: "x", memory: { strategy: "custom", customStore: "crm" } }).memory[0]).toMatchObject({
      strategy: "custom",
      customStore: "crm"
    })
  })

  it("maps guard fallbacks: error, empty, last, a text, and {value}", () => {
    const fallback = (f: unknown) => (termOf({ type: "simple", systemPrompt: "x", guard: { validator: "True", fallback: f } }) as Term.Of<"Guard">).fallback
    expect(fallback(undefined)).toBe("error")
    expect(fallback("empty")).toBe("empty")
    expect(fallback("last")).toBe("last")
    expect(fallback("n/a")).toEqual({ value: Term.lit("n/a") })
    expect(fallback({ value: 3 })).toEqual({ value: Term.lit(3) })
    expect(fallback({ value: "error" })).toEqual({ value: Term.lit("error") })
  })

  it("adds maxOutputLength to the validator", () => {
    const g = termOf({ type: "simple", systemPrompt: "x", guard: { maxOutputLength: 5, retry: 1, fallback: "empty" } }) as Term.Of<"Guard">
    expect(Term.pretty(g.validate)).toBe("λx. (length(x)) ≤ 5")
    const outputs = ["far too long", "short"]
    expect(runAgent(g, "in", { llm: ({ index }) => outputs[index]! }).value).toBe("short")
    expect(runAgent(g, "in", { llm: () => "far too long" }).value).toBe("")
  })

  it("judges an output its validator raises on as invalid (int() of a word), as the reference does", () => {
    const t = termOf({ type: "simple", systemPrompt: "x", guard: { validator: "int(x) > 5", retry: 2, fallback: "last" } })
    const outputs = ["many", "3", " 12\n"]
    const { calls, value } = runAgent(t, "in", { llm: ({ index }) => outputs[index]! })
    expect(value).toBe(" 12\n")
    expect(calls.llm).toHaveLength(3)
    expect(runAgent(t, "in", { llm: () => "many" }).value).toBe("many")
    const strict = termOf({ type: "simple", systemPrompt: "x", guard: { validator: "float(x) <= 0.5" } })
    expect(runAgent(strict, "in", { llm: () => "0.25" }).value).toBe("0.25")
    expect(() => runAgent(strict, "in", { llm: () => "low" })).toThrow(
      /guard failed after 1 attempt; last output: low \(the validator raised ValueError: toFloat: "low" is not a number\)/
    )
  })

  it("retries until the validator accepts", () => {
    const t = termOf({ type: "simple", systemPrompt: "x", guard: { validator: "x.startswith('{') and 'error' not in x", retry: 3 } })
    const outputs = ["nope", "{error}", '{"ok": true}']
    const { calls, value } = runAgent(t, "in", { llm: ({ index }) => outputs[index]! })
    expect(value).toBe('{"ok": true}')
    expect(calls.llm).toHaveLength(3)
  })

  it("compiles agentic retrieval to a rag_retrieve tool of a react agent", () => {
    const agent = compile({ type: "react", systemPrompt: "x", mcp: { localTools: ["terminate"] }, rag: { source: "docs", topK: 5 } })
    expect((agent.term as Term.Of<"React">).tools).toEqual(["terminate", "rag_retrieve"])
    expect(agent.tools.find((t) => t.name === "rag_retrieve")).toMatchObject({ kind: "rag", rag: { source: "docs", topK: 5 } })
  })

  it("retrieves context before the agent otherwise", () => {
    const simple = termOf({ type: "simple", systemPrompt: "x", rag: { source: "docs" } }) as Term.Of<"Compose">
    expect(simple.stages).toEqual([Term.tool("rag_retrieve_context"), Term.llm({ system: "x", name: "agent" })])
    const react = termOf({ type: "react", systemPrompt: "x", rag: { source: "docs", agentic: false } }) as Term.Of<"Compose">
    expect(react.stages[0]).toEqual(Term.tool("rag_retrieve_context"))
    expect(react.stages[1]!._tag).toBe("React")
    const chain = termOf({ type: "chain", chain: { steps: [{ prompt: "a" }, { prompt: "b" }] }, rag: { source: "docs" } }) as Term.Of<"Compose">
    expect(chain.stages).toHaveLength(3)
    expect(termOf({ type: "simple", systemPrompt: "x", rag: { enabled: false, source: "docs" } })._tag).toBe("Llm")
  })

  it("turns runtime limits into the run's budget and keeps runtime settings", () => {
    const agent = compile({
      type: "simple",
      systemPrompt: "x",
      runtime: {
        engine: "cek",
        maxSteps: 5000,
        timeout: 1.5,
        maxLlmCalls: 3,
        maxToolCalls: 4,
        maxTokens: 9000,
        maxDepth: 2000,
        maxEvalDepth: 7,
        maxMemoryMb: 16,
        maxInputBytes: 4096
      },
      checkpoint: { enabled: true, directory: ".ckpt" }
    })
    // every budget a run has can be set from the file
    expect(agent.budget).toEqual({
      steps: 5000,
      timeMs: 1500,
      llmCalls: 3,
      toolCalls: 4,
      tokens: 9000,
      depth: 2000,
      evalDepth: 7,
      memory: 16 * 1024 * 1024,
      inputBytes: 4096
    })
    expect(Object.keys(agent.budget).sort()).toEqual(Object.keys(Budget.defaults).sort())
    expect(agent.runtime).toEqual({ engine: "cek", checkpoint: { enabled: true, directory: ".ckpt" } })
  })
})

describe("sandbox", () => {
  it("compiles the preset and its overrides to runtime.sandbox, and leaves the term as it was", () => {
    const base = { type: "react", systemPrompt: "x", react: { maxSteps: 3 }, mcp: { localTools: ["terminate"] }, cli: { agents: { wc: { command: "wc -l" } } } }
    const plain = compile(base)
    const strict = compile({ ...base, sandbox: { policy: "strict", network: true, memory_mb: 128 } })
    expect(strict.runtime.sandbox).toEqual({ ...Sandbox.presets.strict, network: true, memoryMb: 128 })
    expect(Term.toJsonText(strict.term)).toBe(Term.toJsonText(plain.term))
    expect(strict.tools).toEqual(plain.tools)
    expect(plain.runtime.sandbox).toBeUndefined()
    expect(compile({ ...base, sandbox: {} }).runtime.sandbox).toEqual(Sandbox.presets.default)
    expect(compile({ ...base, sandbox: { enabled: false, policy: "strict" } }).runtime.sandbox).toBeUndefined()
  })

  it("takes every field of seed §20.1, and work_dir relative to the file", () => {
    const agent = compileConfig(
      {
        type: "simple",
        systemPrompt: "x",
        sandbox: {
          enabled: true,
          policy: "permissive",
          timeout: 60,
          memory_mb: 4096,
          network: false,
          allow_subprocess: false,
          max_output_bytes: 100,
          max_fds: 16,
          work_dir: "out"
        }
      },
      { baseDir: "/srv/agents" }
    )
    expect(agent.runtime.sandbox).toEqual({
      preset: "permissive",
      timeout: 60,
      memoryMb: 4096,
      network: false,
      allowSubprocess: false,
      maxOutputBytes: 100,
      maxFds: 16,
      workDir: "/srv/agents/out"
    })
  })

  it("refuses limits no command can run under (L039), and sandbox below the top level", () => {
    let error: unknown
    try {
      compile({ type: "simple", systemPrompt: "x", sandbox: { timeout: 0 } })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(SemanticError)
    expect((error as SemanticError).issues.map((i) => [i.rule, i.field, i.message])).toEqual([
      ["L039", "sandbox.timeout", "sandbox.timeout is 0: every command would be stopped before it used any CPU time"]
    ])
    expect(() => compile({ type: "router", router: { classifier: { prompt: "c" }, routes: { a: { systemPrompt: "a", sandbox: {} } } } })).toThrow(/sandbox/)
    expect(() => compile({ type: "simple", systemPrompt: "x", sandbox: { policy: "lenient" } })).toThrow(/strict.*default.*permissive/s)
  })
})

describe("sharedMemory", () => {
  const show = Term.tool("shared_memory_context")

  it("defaults to a local, rebindable memory shown to the agent, and shows it before the core", () => {
    const agent = compile({ type: "simple", systemPrompt: "x", sharedMemory: {} })
    expect(agent.sharedMemory).toEqual({
      strategy: "local",
      namespace: "shared",
      appendOnly: false,
      initial: {},
      size: 1000,
      inject: true,
      publish: false
    })
    expect((agent.term as Term.Of<"Compose">).stages).toEqual([show, Term.llm({ system: "x", name: "agent" })])
    expect(agent.tools.map((t) => `${t.name}:${t.kind}`)).toEqual(["shared_memory_context:shared"])
    const off = compile({ type: "simple", systemPrompt: "x", sharedMemory: { enabled: false, appendOnly: true } })
    expect(off.sharedMemory).toBeUndefined()
    expect(off.term._tag).toBe("Llm")
  })

  it("keeps the store settings: a sqlite path (default beside the file), a redis URL, a custom store; initial values as text", () => {
    const of = (block: Record<string, unknown>) => compile({ type: "simple", systemPrompt: "x", sharedMemory: block }).sharedMemory
    expect(of({ strategy: "sqlite" })).toMatchObject({ strategy: "sqlite", path: ".lambdagent/shared-memory.db" })
    expect(of({ strategy: "sqlite", path: "team.db", namespace: "team", size: 50 })).toMatchObject({ path: "team.db", namespace: "team", size: 50 })
    expect(of({ strategy: "redis", url: "redis://127.0.0.1:6379/2" })).toMatchObject({ strategy: "redis", url: "redis://127.0.0.1:6379/2" })
    expect(of({ strategy: "redis" })).not.toHaveProperty("url")
    expect(of({ strategy: "custom", customStore: "team" })).toMatchObject({ customStore: "team" })
    expect(of({ appendOnly: true, store: { goal: "ship", round: 3, draft: false } })).toMatchObject({
      appendOnly: true,
      initial: { goal: "ship", round: "3", draft: "false" }
    })
  })

  it("gives every react agent the read and write tools, and shared_append when append-only", () => {
    const agent = compile({
      type: "router",
      sharedMemory: { appendOnly: true },
      router: {
        classifier: { prompt: "which?" },
        routes: {
          work: { type: "react", systemPrompt: "w", mcp: { localTools: ["terminate"] } },
          idle: { type: "react", systemPrompt: "i", mcp: { localTools: ["terminate"], policy: { mode: "disable" } } }
        }
      }
    })
    const route = agent.term as Term.Of<"Route">
    const react = (label: string) => (route.routes.find(([l]) => l === label)![1] as Term.Of<"Compose">).stages[1] as Term.Of<"React">
    expect(react("work").tools).toEqual(["terminate", "shared_read", "shared_write", "shared_append"])
    expect(react("idle").tools).toEqual(["terminate"])
    expect(
      (compile({ type: "react", systemPrompt: "x", mcp: { localTools: ["terminate"] }, sharedMemory: {} }).term as Term.Of<"Compose">).stages[1]
    ).toMatchObject({
      tools: ["terminate", "shared_read", "shared_write"]
    })
    expect(agent.tools.filter((t) => t.kind === "shared").map((t) => t.name)).toEqual(["shared_read", "shared_write", "shared_append", "shared_memory_context"])
  })

  it("publish records each agent's answer under its name and passes the value on unchanged", () => {
    const agent = compile({
      type: "parallel",
      sharedMemory: { publish: true, inject: false },
      parallel: {
        agents: [
          { name: "researcher", systemPrompt: "r" },
          { name: "critic", systemPrompt: "c" }
        ],
        merge: "custom",
        mergePrompt: "Merge."
      }
    })
    const par = (agent.term as Term.Of<"Compose">).stages[0] as Term.Of<"Par">
    const published: Array<unknown> = []
    const branch = runAgent(par.branches[0]!, "topic", { tool: (name, input) => (published.push([name, input]), "published") })
    expect(branch.value).toBe("(researcher)")
    expect(published).toEqual([["shared_publish", ["researcher", "(researcher)"]]])
    // the branches still yield text, so the merge gets the labelled join
    expect(((par.merge as Term.Of<"Compose">).stages[1] as Term.Of<"Llm">).name).toBe("agent.merge")
    // and the whole parallel agent is published too, after its merge
    const whole = (agent.term as Term.Of<"Compose">).stages[1]!
    expect(Term.pretty(whole)).toContain("shared_publish")
    expect(agent.tools.map((t) => t.name)).toEqual(["shared_publish"])
  })

  it("wraps retrieval → shared memory → core, then guard, publish, memory outermost", () => {
    const t = termOf({
      type: "simple",
      name: "bot",
      systemPrompt: "x",
      rag: { source: "docs" },
      guard: { validator: "len(x) > 0", retry: 1 },
      memory: { size: 3 },
      sharedMemory: { publish: true }
    }) as Term.Of<"Memory">
    const published = t.agent as Term.Of<"Compose">
    const guard = published.stages[0] as Term.Of<"Guard">
    expect((guard.agent as Term.Of<"Compose">).stages).toEqual([Term.tool("rag_retrieve_context"), show, Term.llm({ system: "x", name: "bot" })])
    const answers: Array<[string, unknown]> = []
    const run = runAgent(guard, "question", { llm: () => "answer", tool: (name, input) => (answers.push([name, input]), `<${name}>`) })
    expect(run.value).toBe("answer")
    expect(run.calls.llm[0]!.input).toBe("<shared_memory_context>")
    expect(answers.map(([name]) => name)).toEqual(["rag_retrieve_context", "shared_memory_context"])
    expect(runAgent(published, "q", { llm: () => "answer", tool: (name, input) => (answers.push([name, input]), `<${name}>`) }).value).toBe("answer")
    expect(answers.at(-1)).toEqual(["shared_publish", ["bot", "answer"]])
  })

  it("needs a store for strategy custom (L036), which the overrides may give", () => {
    const custom = { type: "simple", systemPrompt: "x", sharedMemory: { strategy: "custom" } }
    expect(semanticRules(() => compile(custom))).toEqual(["L036"])
    expect(compile(custom, { sharedMemoryStore: {} as never }).sharedMemory).toMatchObject({ strategy: "custom" })
  })
})

describe("overrides", () => {
  const file = {
    type: "router",
    model: { provider: "openai", name: "gpt-4o", baseUrl: "http://127.0.0.1:1/v1", temperature: 0.5 },
    router: { classifier: { prompt: "?" }, routes: { a: { type: "react", systemPrompt: "r", react: { maxSteps: 3 } } } }
  }

  it("replace the model name of every call, or the provider too with provider:name", () => {
    const t = termOf(file, { model: "gpt-5" }) as Term.Of<"Route">
    expect((t.classify as Term.Of<"Llm">).model).toEqual({ provider: "openai", name: "gpt-5", temperature: 0.5, baseUrl: "http://127.0.0.1:1/v1" })
    const t2 = termOf(file, { model: "ollama:llama3:8b" }) as Term.Of<"Route">
    expect((t2.classify as Term.Of<"Llm">).model).toEqual({ provider: "ollama", name: "llama3:8b", temperature: 0.5 })
  })

  it("replace the temperature and the maxSteps of every react agent", () => {
    const t = termOf(file, { temperature: 0, maxSteps: 7 }) as Term.Of<"Route">
    const react = t.routes[0]![1] as Term.Of<"React">
    expect(react.maxSteps).toBe(7)
    expect((react.think as Term.Of<"Llm">).model?.temperature).toBe(0)
  })

  it("add injected tools to the top-level react agent and attach their definitions", () => {
    const clock = Tools.define({ name: "clock", description: "the time", run: () => "noon" })
    const agent = compile({ type: "react", systemPrompt: "x", mcp: { localTools: ["terminate"] } }, { tools: ["weather", clock] })
    expect((agent.term as Term.Of<"React">).tools).toEqual(["terminate", "weather", "clock"])
    expect(agent.tools.find((t) => t.name === "clock")).toMatchObject({ kind: "injected", definition: clock })
    expect(compile({ type: "chain", chain: { steps: [{ tool: "weather" }] } }, { tools: ["weather"] }).tools[0]).toMatchObject({
      kind: "injected",
      declared: true
    })
  })

  it("accept providers passed in the overrides, and memory stores for strategy custom", () => {
    expect(() => compile({ type: "simple", systemPrompt: "x", model: { provider: "my-gateway" } })).toThrow(SchemaError)
    const agent = compile({ type: "simple", systemPrompt: "x", model: { provider: "my-gateway" } }, { providers: { "my-gateway": {} as never } })
    expect(agent.providers).toEqual(["my-gateway"])
    const custom = { type: "simple", systemPrompt: "x", memory: { strategy: "custom" } }
    expect(semanticRules(() => compile(custom))).toEqual(["L035"])
    expect(compile(custom, { memoryStore: {} as never }).term._tag).toBe("Memory")
  })

  it("are checked", () => {
    expect(() => compile({ type: "simple", systemPrompt: "x" }, { temperature: 3 })).toThrow(/overrides.temperature: expected a number from 0 to 2/)
    expect(() => compile({ type: "simple", systemPrompt: "x" }, { maxSteps: 0 })).toThrow(/overrides.maxSteps/)
    expect(() => compile({ type: "simple", systemPrompt: "x" }, { model: " " })).toThrow(/overrides.model/)
  })
})

describe("semantic errors", () => {
  it("L001: an agent with no behaviour", () => {
    expect(semanticRules(() => compile({ type: "simple" }))).toEqual(["L001"])
    expect(semanticRules(() => compile({ type: "react", systemPrompt: "  " }))).toEqual(["L001"])
    // thinkPrompt replaces systemPrompt: a blank one would leave the think step without instruction.
    expect(semanticRules(() => compile({ type: "react", systemPrompt: "Real.", react: { thinkPrompt: "" } }))).toEqual(["L001"])
    expect((termOf({ type: "react", react: { thinkPrompt: "Think." } }) as Term.Of<"React">).think).toMatchObject({ system: "Think." })
    expect(semanticRules(() => compile({ type: "chain", chain: { steps: [{ prompt: "" }] } }))).toEqual(["L001"])
    expect(semanticRules(() => compile({ type: "router", router: { classifier: { prompt: "" }, routes: { a: "A" } } }))).toEqual(["L001"])
  })

  it("L003, L005, L006, L023, L034", () => {
    expect(semanticRules(() => compile({ type: "react", systemPrompt: "x", react: { maxSteps: 0 } }))).toEqual(["L003"])
    expect(compile({ type: "react", systemPrompt: "x", react: { maxSteps: 0 } }, { maxSteps: 2 }).term).toMatchObject({ maxSteps: 2 })
    expect(semanticRules(() => compile({ type: "router", router: { classifier: { prompt: "?" }, routes: {} } }))).toEqual(["L005"])
    expect(semanticRules(() => compile({ type: "chain", chain: { steps: [] } }))).toEqual(["L006"])
    expect(semanticRules(() => compile({ type: "router", router: { classifier: { prompt: "?" }, routes: { a: " " }, default: "" } }))).toEqual(["L023", "L023"])
    expect(semanticRules(() => compile({ type: "react", systemPrompt: "x", mcp: { onlineTool: { a: ["search"], b: ["search"] } } }))).toEqual(["L034"])
  })

  it("name the position of the problem", () => {
    try {
      fromConfig("type: chain\nchain:\n  steps: []\n")
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(SemanticError)
      const err = e as SemanticError
      expect(err.rule).toBe("L006")
      expect([err.field, err.line, err.column]).toEqual(["chain.steps", 3, 10])
      expect(err.message).toBe("3:10: chain.steps: the chain has no steps [L006]")
    }
  })
})

describe("nested sub-agents", () => {
  it("compile at any depth, each with its own type", () => {
    const agent = compile({
      type: "router",
      model: { name: "base" },
      router: {
        classifier: { prompt: "?" },
        routes: {
          research: {
            type: "parallel",
            parallel: {
              agents: [
                { type: "react", name: "searcher", systemPrompt: "Search.", mcp: { localTools: ["web", "terminate"] }, guard: { validator: "len(x) > 0" } },
                { type: "chain", chain: { steps: [{ prompt: "Outline." }, { prompt: "Write." }] }, memory: { size: 3 } }
              ],
              merge: "concat"
            }
          }
        },
        default: "Sorry."
      }
    })
    const par = (agent.term as Term.Of<"Route">).routes[0]![1] as Term.Of<"Par">
    const guard = par.branches[0] as Term.Of<"Guard">
    expect(guard.agent).toMatchObject({ _tag: "React", tools: ["web", "terminate"] })
    expect(((guard.agent as Term.Of<"React">).think as Term.Of<"Llm">).model).toEqual({ name: "base" })
    expect(par.branches[1]).toMatchObject({ _tag: "Memory", size: 3 })
    expect(agent.origins.get(guard)).toEqual(["router", "routes", "research", "parallel", "agents", 0, "guard"])
    expect(agent.memory[0]!.path).toBe("router.routes.research.parallel.agents[1].memory")
  })
})

describe("inputs and determinism", () => {
  const examples = readdirSync("examples/agents")
    .filter((f) => f.endsWith(".yml"))
    .sort()

  it("has an example of every kind", () => {
    expect(examples).toEqual([
      "approval.yml",
      "assistant.yml",
      "calculator.yml",
      "chain.yml",
      "guard.yml",
      "memory.yml",
      "parallel.yml",
      "pipeline.yml",
      "react.yml",
      "review-chat.yml",
      "router.yml",
      "sandboxed.yml",
      "simple.yml",
      "support-desk.yml",
      "team.yml"
    ])
  })

  it.each(examples)("compiles %s to the same bytes every time, and the term parses back to itself", (file) => {
    const first = Term.toJsonText(fromConfig(`examples/agents/${file}`))
    const second = Term.toJsonText(fromConfig(`examples/agents/${file}`))
    expect(second).toBe(first)
    const term = fromConfig(`examples/agents/${file}`)
    expect(Term.parse(Term.encode(term))).toEqual(term)
  })

  it("supports anchors, aliases and << merge keys", () => {
    const yaml = [
      "type: parallel",
      "x-model: &base {provider: openai, name: gpt-4o-mini, temperature: 0.2}",
      "parallel:",
      "  agents:",
      "    - {systemPrompt: A, model: *base}",
      "    - systemPrompt: B",
      "      model:",
      "        <<: *base",
      "        temperature: 0.9",
      ""
    ].join("\n")
    expect(() => fromConfig(yaml)).toThrow(/unknown key "x-model"/)
    const ok = yaml.replace("x-model: &base", "model: &base")
    const par = fromConfig(ok) as Term.Of<"Par">
    expect((par.branches[0] as Term.Of<"Llm">).model).toEqual({ provider: "openai", name: "gpt-4o-mini", temperature: 0.2 })
    expect((par.branches[1] as Term.Of<"Llm">).model).toEqual({ provider: "openai", name: "gpt-4o-mini", temperature: 0.9 })
  })

  it("reads a path, {path}, YAML text and {text, file} alike", () => {
    const text = "type: simple\nname: S\nsystemPrompt: Hi\n"
    const a = fromConfig(text)
    const b = fromConfig({ text, file: "inline.yml" })
    expect(Term.toJsonText(a)).toBe(Term.toJsonText(b))
    expect(Term.toJsonText(fromConfig({ path: "examples/agents/simple.yml" }))).toBe(Term.toJsonText(fromConfig("examples/agents/simple.yml")))
    expect(compileConfig({ type: "simple", systemPrompt: "other" }, { source: parseSource(text, "inline.yml") }).term).toMatchObject({ system: "other" })
    const loaded: CompiledAgent = loadConfig("examples/agents/react.yml")
    expect(loaded.file).toBe("examples/agents/react.yml")
    expect(loaded.baseDir).toBe("examples/agents")
  })

  it("lists tool references through toolReferences, from a file, a compiled agent or a parsed object", () => {
    expect(toolReferences({ type: "react", systemPrompt: "x", mcp: { localTools: ["terminate", "clock"] } }).map((t) => t.kind)).toEqual(["terminate", "local"])
    expect(toolReferences(loadConfig("examples/agents/guard.yml")).every((t) => t.kind === "builtin")).toBe(true)
    expect(toolReferences("examples/agents/react.yml").map((t) => `${t.name}:${t.kind}`)).toEqual([
      "web_search:mcp",
      "calculator:local",
      "terminate:terminate",
      "summarizer:cli"
    ])
  })
})

describe("agentsOf", () => {
  it("lists a validated file's agents once; a file built in code is walked at every call", () => {
    const validated = validateConfig(parseSource("type: router\nrouter:\n  classifier: {prompt: p}\n  routes: {a: {systemPrompt: A}, b: B}\n"))
    expect(agentsOf(validated)).toBe(agentsOf(validated))
    expect(agentsOf(validated).map((a) => a.path.join("."))).toEqual(["", "router.routes.a"])
    const routes: Record<string, AgentConfig | string> = { a: { systemPrompt: "A" } }
    const built = { type: "router", router: { classifier: { prompt: "p" }, routes } } as AgentConfig
    expect(agentsOf(built)).toHaveLength(2)
    routes.b = { systemPrompt: "B" }
    expect(agentsOf(built)).toHaveLength(3)
  })
})
