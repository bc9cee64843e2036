/**
 * The acceptance tests of the config specification, by their ids:
 *
 * - T01–T08: what each kind of file compiles to;
 * - E01–E05: compiled files run end to end on a runtime, with a scripted model (offline);
 * - L_T01–L_T06: the lint rule (id and level) each kind of mistake gives.
 *
 * Where the specification names a term form that lambdagent spells differently, the test checks
 * lambdagent's form (see docs/yaml.md) and its name says so: a simple agent is an `llm` term (the
 * λx. LLM_{θ,p}(x) the specification writes as `Lam`), a ReAct loop is a `react` term (Y_n, the
 * specification's `Loop(max_steps=n)`), and a parallel agent is `par(branches, merge)` with the
 * merge inside the `par` term instead of a separate `compose` stage after it.
 */
import fc from "fast-check"
import { createRuntime, type LanguageModel, Scripted, Term, Tools, type Trace, Value } from "lambdagent"
import { createLambdaServer } from "lambdagent/mcp"
import { describe, expect, it } from "vitest"
import * as z from "zod"
import { fromConfig, loadConfig } from "./compile.ts"
import { SemanticError } from "./errors.ts"
import { lint } from "./lint.ts"
import { runAgent, runParallel } from "./test-helpers.ts"

const MODEL = "model: {provider: openai, name: gpt-4o-mini, temperature: 0.3}"

/** Every node of a term, depth first, outermost first. */
const nodes = (term: Term.Term): Array<Term.Term> => {
  const out: Array<Term.Term> = []
  const stack = [term]
  while (stack.length > 0) {
    const t = stack.pop()!
    out.push(t)
    const kids = Term.children(t)
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!)
  }
  return out
}
const find = <T extends Term.Tag>(term: Term.Term, tag: T): Array<Term.Of<T>> => nodes(term).filter((t): t is Term.Of<T> => t._tag === tag)

const system = (req: LanguageModel.ChatRequest) => req.messages.find((m) => m.role === "system")?.content ?? ""
const lastUser = (req: LanguageModel.ChatRequest) => [...req.messages].reverse().find((m) => m.role === "user")?.content ?? ""
const llmEvents = (trace: ReadonlyArray<Trace.TraceEvent>) => trace.filter((e) => e.kind === "llm")
const toolEvents = (trace: ReadonlyArray<Trace.TraceEvent>) => trace.filter((e) => e.kind === "tool")

/** A runtime whose every LLM call, whatever the file's model, goes to `model`. */
const runtimeWith = (model: LanguageModel.LanguageModelShape, tools: ReadonlyArray<Tools.ToolDefinition> = []) =>
  createRuntime({ model, resolveModel: () => model, tools })

describe("12.1 compile correctness", () => {
  it("T01 type: simple compiles to one llm term, lambdagent's λx. LLM_{θ,p}(x) (the specification's Lam)", () => {
    const term = fromConfig("type: simple\nsystemPrompt: Summarize text.\nmodel: {name: claude-sonnet}\n")
    expect(term).toEqual(Term.llm({ system: "Summarize text.", name: "agent", model: { name: "claude-sonnet" } }))
    // It is a function of the input: applying it makes one LLM call on that input.
    const { value, calls } = runAgent(term, "a long text", { llm: ({ system, input }) => `${system} <- ${input}` })
    expect(value).toBe("Summarize text. <- a long text")
    expect(calls.llm).toHaveLength(1)
  })

  it("T02 type: react with maxSteps 20 compiles to a react term (Y₂₀, the specification's Loop) bounded by 20, also inside memory", () => {
    const react = `type: react\nsystemPrompt: Use the tools.\n${MODEL}\nreact: {maxSteps: 20}\nmcp:\n  onlineTool: {server: [search, calc]}\n  localTools: [terminate]\n`
    const bare = fromConfig(react) as Term.Of<"React">
    expect(bare._tag).toBe("React")
    expect(bare.maxSteps).toBe(20)
    expect(bare.tools).toEqual(["search", "calc", "terminate"])
    // The bound is the loop's: at most 20 think steps (and 20 tool calls) per input.
    expect(Term.bounds(bare)).toMatchObject({ llmCalls: 20, toolCalls: 20 })

    const wrapped = fromConfig(`${react}memory: {enabled: true, strategy: redis, size: 20, ttl: 7200}\n`) as Term.Of<"Memory">
    expect(wrapped._tag).toBe("Memory")
    expect(wrapped.agent).toEqual(bare)
  })

  it("T03 type: chain with three steps compiles to a compose of three stages", () => {
    const term = fromConfig(
      `type: chain\n${MODEL}\nchain:\n  steps:\n    - {name: a, prompt: A.}\n    - {name: b, prompt: B.}\n    - {name: c, prompt: C.}\n`
    ) as Term.Of<"Compose">
    expect(term._tag).toBe("Compose")
    expect(term.stages).toHaveLength(3)
    expect(term.stages.map((s) => (s as Term.Of<"Llm">).name)).toEqual(["a", "b", "c"])
  })

  it("T04 type: router with routes x and y compiles to a route with two routes", () => {
    const term = fromConfig(
      `type: router\n${MODEL}\nrouter:\n  classifier: {prompt: Classify.}\n  routes:\n    x: {systemPrompt: X.}\n    y: {systemPrompt: Y.}\n`
    ) as Term.Of<"Route">
    expect(term._tag).toBe("Route")
    expect(term.routes).toHaveLength(2)
    expect(term.routes.map(([label]) => label)).toEqual(["x", "y"])
    expect(term.routes.every(([, agent]) => agent._tag === "Llm")).toBe(true)
    expect(term.classify._tag).toBe("Llm")
  })

  it("T05 type: parallel with agents a and b compiles to par(a, b) whose merge runs after both (merge inside par, not a separate compose)", () => {
    const base = `type: parallel\nname: Panel\n${MODEL}\nparallel:\n  agents:\n    - {name: a, systemPrompt: A.}\n    - {name: b, systemPrompt: B.}\n`
    const tuple = fromConfig(base) as Term.Of<"Par">
    expect(tuple._tag).toBe("Par")
    expect(tuple.branches).toHaveLength(2)
    expect(tuple.merge).toBe("tuple")
    expect(Value.toJson(runParallel(tuple, "topic").value)).toEqual({ pair: ["(a)", "(b)"] })

    const custom = fromConfig(`${base}  merge: custom\n  mergePrompt: Synthesize.\n`) as Term.Of<"Par">
    expect(custom.branches).toHaveLength(2)
    const merge = custom.merge as Term.Of<"Compose">
    expect(merge._tag).toBe("Compose")
    expect(merge.stages[merge.stages.length - 1]).toMatchObject({ _tag: "Llm", name: "Panel.merge", system: "Synthesize." })
    const { value, calls } = runParallel(custom, "topic", { llm: ({ name, input }) => (name === "Panel.merge" ? `merged(${input})` : `${name}!`) })
    expect(calls.llm.map((c) => c.name)).toEqual(["a", "b", "Panel.merge"])
    expect(value).toBe("merged([a]:\na!\n\n---\n\n[b]:\nb!)")
  })

  it("T06 memory.enabled: true makes memory the outermost term, around the guard and the core", () => {
    const term = fromConfig(
      `type: react\nsystemPrompt: Think.\n${MODEL}\nreact: {maxSteps: 5}\nmcp: {localTools: [terminate]}\nguard: {validator: "len(x) > 0", retry: 1}\nmemory: {enabled: true, size: 5, ttl: 60}\n`
    )
    expect(term._tag).toBe("Memory")
    const memory = term as Term.Of<"Memory">
    expect(memory.agent._tag).toBe("Guard")
    expect((memory.agent as Term.Of<"Guard">).agent._tag).toBe("React")
    expect(find(term, "Memory")).toHaveLength(1)
    // enabled: false leaves the agent unwrapped.
    expect(fromConfig(`type: simple\nsystemPrompt: Hi.\n${MODEL}\nmemory: {enabled: false}\n`)._tag).toBe("Llm")
  })

  it("T06 (run) being outermost, memory reads before everything and writes the guarded result after everything", async () => {
    const term = fromConfig(
      `type: react\nsystemPrompt: Think.\n${MODEL}\nreact: {maxSteps: 5}\nmcp: {localTools: [terminate]}\nguard: {validator: "len(x) > 0", retry: 1}\nmemory: {size: 5, ttl: 60}\n`
    )
    const model = Scripted.respond((req) => JSON.stringify({ tool: "terminate", args: `answer to: ${lastUser(req)}` }))
    const runtime = runtimeWith(model)
    try {
      const first = await runtime.run(term, "first question")
      expect(first.value).toBe("answer to: first question")
      const second = await runtime.run(term, "second question")
      expect(second.trace.map((e) => `${e.kind}:${e.name}`)).toEqual(["memory:read", "llm:agent.think", "react:final", "guard:valid", "memory:write"])
      // The think step of the second run sees the first exchange.
      expect(second.value).toContain("user: first question")
      expect(second.value).toContain("assistant: answer to: first question")
      expect(second.value).toMatch(/\[Current Input\]\nsecond question$/)
    } finally {
      await runtime.close()
    }
  })

  it("T07 guard.validator puts a guard somewhere inside the term, with the validator compiled to λx. …", () => {
    const agentGuard = fromConfig(`type: simple\nsystemPrompt: Hi.\n${MODEL}\nguard: {validator: "len(x) > 3", retry: 2}\nmemory: {ttl: 60}\n`)
    const guards = find(agentGuard, "Guard")
    expect(guards).toHaveLength(1)
    expect(guards[0]!.retry).toBe(2)
    expect(Term.pretty(guards[0]!.validate)).toBe("λx. (length(x)) > 3")

    // Nested: a guard on a chain step inside a router route.
    const nested = fromConfig(
      `type: router\n${MODEL}\nrouter:\n  classifier: {prompt: Classify.}\n  routes:\n    write:\n      type: chain\n      chain:\n        steps:\n          - {prompt: Draft.}\n          - {prompt: Check., guard: {validator: "'error' not in x", retry: 1}}\n  default: Sorry.\n`
    )
    const inner = find(nested, "Guard")
    expect(inner).toHaveLength(1)
    expect(inner[0]!.agent).toMatchObject({ _tag: "Llm", system: "Check." })
    // The guard checks: an output with "error" is retried, and the next one is kept.
    const outputs = ["an error", "fine"]
    expect(runAgent(inner[0]!, "in", { llm: ({ index }) => outputs[index]! }).value).toBe("fine")

    expect(find(fromConfig(`type: simple\nsystemPrompt: Hi.\n${MODEL}\n`), "Guard")).toEqual([])
  })

  describe("T08 terminate in localTools is the tool terminate, the identity λx.x", () => {
    const react = `type: react\nsystemPrompt: Think.\n${MODEL}\nreact: {maxSteps: 5}\nmcp: {localTools: [search, terminate]}\n`

    it("the react term offers terminate, and the tool references say it is the identity", () => {
      const agent = loadConfig(react)
      expect((agent.term as Term.Of<"React">).tools).toContain("terminate")
      expect(agent.tools.find((t) => t.name === "terminate")).toMatchObject({ kind: "terminate", declared: true })
    })

    it('Tool("terminate") evaluates to its input, for any input, even when a runtime defines another terminate', async () => {
      // A chain step `tool: terminate` puts the Tool("terminate") node itself in the term.
      const chain = fromConfig(`type: chain\n${MODEL}\nmcp: {localTools: [terminate]}\nchain:\n  steps:\n    - {tool: terminate}\n`) as Term.Of<"Compose">
      const terminate = chain.stages[0]!
      expect(terminate).toEqual(Term.tool("terminate"))
      const impostor = Tools.define({ name: "terminate", description: "not the identity", run: () => "changed" })
      const runtime = createRuntime({ tools: [impostor] })
      try {
        await fc.assert(
          fc.asyncProperty(fc.oneof(fc.string(), fc.integer(), fc.boolean()), async (input) => {
            const out = await runtime.run(terminate, input)
            expect(out.result).toEqual(input)
            const whole = await runtime.run(chain, input)
            expect(whole.result).toEqual(input)
            expect(whole.stats.toolCalls).toBe(0)
          }),
          { numRuns: 50 }
        )
      } finally {
        await runtime.close()
      }
    })

    it("a thought that calls terminate ends the loop with terminate's argument, unchanged", async () => {
      const model = Scripted.sequence(['{"tool": "terminate", "args": "the answer, as given"}'])
      const runtime = runtimeWith(model)
      try {
        const out = await runtime.run(fromConfig(react), "question")
        expect(out.value).toBe("the answer, as given")
        expect(out.stats.llmCalls).toBe(1)
        expect(out.stats.toolCalls).toBe(0)
      } finally {
        await runtime.close()
      }
    })
  })
})

describe("12.2 end to end, with a scripted model", () => {
  // The specification's E01 runs an agent file of its own, which this repository does not have;
  // examples/agents/calculator.yml stands in for it: a react agent whose tool computes. Its tool
  // `run` belongs to the lambda MCP server, which the file starts as a child process; here the same
  // server runs in process (createLambdaServer) and the compiled tool reference is bound to its
  // `run` tool, so nothing is spawned and nothing leaves the machine.
  it('E01 the calculator config answers "1+1?" with a string containing 2, computed by its run tool', async () => {
    const agent = loadConfig("examples/agents/calculator.yml")
    const runRef = agent.tools.find((t) => t.name === "run")
    expect(runRef).toMatchObject({ kind: "mcp", server: "lambda" })
    const server = await createLambdaServer({ store: ":memory:", log: () => {} })
    const run = Tools.define({
      name: "run",
      description: "Run a lambda term on an input.",
      input: z.object({ code: z.unknown(), input: z.unknown() }),
      run: async (args) => {
        const result = await server.callTool("run", args as Record<string, unknown>)
        return result.content.map((c) => (c.type === "text" ? c.text : "")).join("")
      }
    })
    // The model asks the tool, then reports what the tool observed.
    const model = Scripted.respond((req) => {
      const observed = /Observation: (.*)$/m.exec(lastUser(req))
      return observed === null
        ? '{"tool": "run", "args": {"code": {"add": [1, 1]}, "input": null}}'
        : JSON.stringify({ tool: "terminate", args: `1+1 = ${observed[1]!.trim()}` })
    })
    const runtime = runtimeWith(model, [run])
    try {
      const out = await runtime.run(agent.term, "1+1等于几")
      expect(typeof out.value).toBe("string")
      expect(out.value).toContain("2")
      expect(out.value).toBe("1+1 = 2")
      expect(toolEvents(out.trace).map((e) => [e.name, e.output])).toEqual([["run", "2"]])
    } finally {
      await runtime.close()
      await server.close()
    }
  })

  it('E02 a simple agent answers "Hello" with a non-empty string (the file names the offline scripted provider)', async () => {
    const term = fromConfig("type: simple\nname: Greeter\nsystemPrompt: Greet the user.\nmodel: {provider: scripted, name: echo}\n")
    const runtime = createRuntime()
    try {
      const out = await runtime.run(term, "Hello")
      expect(typeof out.value).toBe("string")
      expect((out.value as string).length).toBeGreaterThan(0)
      expect(llmEvents(out.trace).map((e) => e.name)).toEqual(["Greeter"])
    } finally {
      await runtime.close()
    }
  })

  it("E03 a chain of three steps leaves three stage entries in the trace, in order", async () => {
    const term = fromConfig(
      `type: chain\n${MODEL}\nchain:\n  steps:\n    - {name: extract, prompt: Extract.}\n    - {name: analyze, prompt: Analyze.}\n    - {name: draft, prompt: Draft.}\n`
    )
    const runtime = runtimeWith(Scripted.respond((req) => `${system(req).replace(".", "")}(${lastUser(req)})`))
    try {
      const out = await runtime.run(term, "a paragraph of text")
      expect(llmEvents(out.trace).map((e) => e.name)).toEqual(["extract", "analyze", "draft"])
      expect(out.value).toBe("Draft(Analyze(Extract(a paragraph of text)))")
      expect(out.stats.llmCalls).toBe(3)
    } finally {
      await runtime.close()
    }
  })

  it("E04 a router sends a code question to the code agent (the classifier's answer is scripted)", async () => {
    const file = `type: router\nname: Desk\n${MODEL}\nrouter:\n  classifier:\n    prompt: Classify the question as code or math.\n    categories: [code, math]\n  routes:\n    code: {name: coder, systemPrompt: You write code.}\n    math: {name: mathematician, systemPrompt: You do maths.}\n  default: {name: assistant, systemPrompt: You help.}\n`
    const model = Scripted.respond((req) => {
      if (system(req).startsWith("Classify")) return /\b(def|function|python|bug)\b/i.test(lastUser(req)) ? "code" : "math"
      return `${system(req)} / ${lastUser(req)}`
    })
    const runtime = runtimeWith(model)
    try {
      const out = await runtime.run(fromConfig(file), "Why does my python function return None?")
      expect(out.value).toBe("You write code. / Why does my python function return None?")
      expect(llmEvents(out.trace).map((e) => e.name)).toEqual(["Desk.classifier", "coder"])
      expect(out.trace.filter((e) => e.kind === "route").map((e) => e.name)).toEqual(["code"])
      // The other way round, as a control: a maths question does not reach the coder.
      const other = await runtime.run(fromConfig(file), "What is 7 times 6?")
      expect(llmEvents(other.trace).map((e) => e.name)).toEqual(["Desk.classifier", "mathematician"])
    } finally {
      await runtime.close()
    }
  })

  describe("E05 a react agent with terminate stops within maxSteps", () => {
    const file = `type: react\nname: Solver\nsystemPrompt: Answer with the tools, then call terminate.\n${MODEL}\nreact: {maxSteps: 4}\nmcp: {localTools: [lookup, terminate]}\n`
    const lookup = Tools.define({ name: "lookup", description: "Look a fact up.", run: (q: string) => `fact about ${q}` })

    it("when the model calls terminate, after one tool call", async () => {
      const model = Scripted.sequence(['{"tool": "lookup", "args": "Paris"}', '{"tool": "terminate", "args": "Paris is the capital of France."}'])
      const runtime = runtimeWith(model, [lookup])
      try {
        const out = await runtime.run(fromConfig(file), "What is the capital of France?")
        expect(out.value).toBe("Paris is the capital of France.")
        expect(out.stats.llmCalls).toBe(2)
        expect(out.stats.llmCalls).toBeLessThanOrEqual(4)
        expect(toolEvents(out.trace).map((e) => [e.name, e.output])).toEqual([["lookup", "fact about Paris"]])
        expect(out.trace.some((e) => e.kind === "react" && e.name === "final")).toBe(true)
      } finally {
        await runtime.close()
      }
    })

    it("and, as a control, a model that never calls terminate is stopped by the bound after maxSteps rounds", async () => {
      const model = Scripted.respond(() => '{"tool": "lookup", "args": "again"}')
      const runtime = runtimeWith(model, [lookup])
      try {
        const out = await runtime.run(fromConfig(file), "Loop forever?")
        expect(out.stats.llmCalls).toBe(4)
        expect(toolEvents(out.trace)).toHaveLength(4)
      } finally {
        await runtime.close()
      }
    })
  })
})

describe("12.3 lint", () => {
  const findings = (yaml: string) => {
    const result = lint(yaml)
    expect(result.error).toBeUndefined()
    return result.findings
  }
  const expectFinding = (yaml: string, rule: string, level: "error" | "warn" | "info") => {
    const found = findings(yaml).filter((f) => f.rule === rule)
    expect(found.length, `${rule} in ${JSON.stringify(findings(yaml).map((f) => f.rule))}`).toBeGreaterThan(0)
    for (const f of found) expect(f.level).toBe(level)
  }
  const compileRules = (yaml: string) => {
    try {
      fromConfig(yaml)
    } catch (e) {
      if (e instanceof SemanticError) return e.issues.map((i) => i.rule)
      throw e
    }
    return []
  }
  const REACT = `type: react\nsystemPrompt: Use the tools.\n${MODEL}\nreact: {maxSteps: 10}\nmcp: {localTools: [search, terminate]}\n`

  it("L_T01 no systemPrompt is an ERROR L001 (and compiling fails with it)", () => {
    const yaml = `type: simple\n${MODEL}\n`
    expectFinding(yaml, "L001", "error")
    expect(compileRules(yaml)).toEqual(["L001"])
  })

  it("L_T02 a react agent without terminate is an ERROR L004", () => {
    expectFinding(REACT.replace("search, terminate", "search"), "L004", "error")
    expect(findings(REACT).map((f) => f.rule)).not.toContain("L004")
  })

  it("L_T03 maxSteps: 0 is an ERROR L003 (and compiling fails with it)", () => {
    const yaml = REACT.replace("maxSteps: 10", "maxSteps: 0")
    expectFinding(yaml, "L003", "error")
    expect(compileRules(yaml)).toEqual(["L003"])
  })

  it("L_T04 a router without routes is an ERROR L005, whether routes is absent or empty (and compiling fails with it)", () => {
    const absent = `type: router\n${MODEL}\nrouter:\n  classifier: {prompt: Classify.}\n  default: Sorry.\n`
    const empty = `type: router\n${MODEL}\nrouter:\n  classifier: {prompt: Classify.}\n  routes: {}\n  default: Sorry.\n`
    for (const yaml of [absent, empty]) {
      expectFinding(yaml, "L005", "error")
      expect(compileRules(yaml)).toEqual(["L005"])
    }
  })

  it("L_T05 a normal config has 0 errors", () => {
    const normal = `agentId: helper\nname: Helper\n${REACT}memory: {enabled: true, size: 20, ttl: 7200}\nguard: {validator: "len(x) > 0", retry: 2}\n`
    const result = lint(normal)
    expect(result.error).toBeUndefined()
    expect(result.counts.error).toBe(0)
    expect(result.findings.filter((f) => f.level === "error")).toEqual([])
    expect(fromConfig(normal)._tag).toBe("Memory")
  })

  it("L_T06 temperature: 2.0 is a WARN L007", () => {
    expectFinding(REACT.replace("temperature: 0.3", "temperature: 2.0"), "L007", "warn")
    expect(findings(REACT).map((f) => f.rule)).not.toContain("L007")
  })
})
