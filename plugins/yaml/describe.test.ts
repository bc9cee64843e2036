import { Evaluator, Term, Value } from "lambdagent"
import { describe as group, expect, it } from "vitest"
import { compileConfig, fromConfig, loadConfig } from "./compile.ts"
import { describe, description, desugar, toLambdaExpr } from "./describe.ts"
import { runAgent } from "./test-helpers.ts"

group("describe", () => {
  it("prints the structure, the constructs, the worst case and the base case of a react agent", () => {
    expect(describe("examples/agents/react.yml").split("\n")).toEqual([
      "Research assistant =",
      "  Y₁₂(λself. λstate.",
      '    let t = Research assistant.think:LLM_{openai/gpt-4o-mini, θ=0.2}("You answer questions by searching the web and comp…")(state) in',
      "    CASE t [(web_search, Tool_MCP(search-server/web_search)), (calculator, Tool(calculator)), (summarizer, Tool_CLI(summarizer)), (terminate, λx. x)]",
      "    >> IF is_terminate THEN t ELSE self(state ⊕ obs)",
      "  )",
      "",
      "Constructs used: Llm, Tool(×4), React",
      "Worst case: 12 LLM calls, 12 tool calls per input",
      "β-reduction bound: react loop of at most 12 steps",
      "Base case: terminate = λx.x",
      "Tools: web_search (mcp search-server), calculator (local), terminate (terminate), summarizer (cli)"
    ])
  })

  it("prints the runtime.engine a file chooses, and nothing when it chooses none", () => {
    for (const engine of ["recursive", "cek", "adaptive"]) {
      const agent = compileConfig({ type: "simple", systemPrompt: "Hi", runtime: { engine } })
      expect(description(agent).engine).toBe(engine)
      expect(describe(agent).split("\n").at(-1)).toBe(
        `Engine: ${engine} (recorded; every engine runs on the one explicit-stack machine, with the same results and no JS stack limit)`
      )
    }
    expect(describe(compileConfig({ type: "simple", systemPrompt: "Hi" }))).not.toContain("Engine:")
  })

  it("shows memory with its store and a router's cases", () => {
    const memory = describe("examples/agents/memory.yml")
    expect(memory).toContain("    Γ ∪ sqlite{size=20, ttl=7200, scope=user}")
    expect(memory).toContain("Memory: memory → sqlite store, size=20, ttl=7200s, scope=user")
    const router = describe("examples/agents/router.yml").split("\n")
    expect(router[1]).toMatch(/^ {2}CASE \(Help desk\.classifier:LLM_/)
    expect(router).toContain('    ("greeting", λx. "Hello! Ask me about code or maths."),')
    expect(router[5]).toMatch(/^ {4}\(_, assistant:LLM_/)
  })

  it("shows the shared memory: shown before each branch, each answer recorded", () => {
    const team = describe("examples/agents/team.yml").split("\n")
    expect(team.slice(1, 5)).toEqual([
      "  PAIR(",
      "    Tool_Σ(shared_memory_context)",
      '    >> researcher:LLM_{openai/gpt-4o-mini, θ=0.3}("List the strongest evidence for the proposal. Buil…")',
      '    >> λy. Σ ∪ {"researcher" ↦ y}; y,'
    ])
    expect(team).toContain('  >> λy. Σ ∪ {"Review team" ↦ y}; y')
    expect(team).toContain("Shared memory: sqlite store .lambdagent/team-memory.db, namespace=review-team, append-only, size=1000")
    expect(description("examples/agents/team.yml").sharedMemory).toMatchObject({
      strategy: "sqlite",
      publish: true,
      initial: { goal: "A short, balanced review of the proposal." }
    })
  })

  it("reports the facts as data", () => {
    const d = description("examples/agents/chain.yml")
    expect(d.constructs).toEqual({ Llm: 3, Compose: 1, Guard: 1, Lam: 1 })
    expect(d.bounds).toEqual({ llmCalls: 5, toolCalls: 0 })
    expect(d.maxSteps).toEqual([])
    expect(d.baseCase).toBe(false)
    expect(description("examples/agents/react.yml").maxSteps).toEqual([12])
  })
})

group("toLambdaExpr", () => {
  const simple = "type: simple\nname: S\nsystemPrompt: Summarize.\nmodel: {provider: openai, name: gpt-4o, temperature: 0}\n"

  it("writes human and formal notation with Term.pretty", () => {
    expect(toLambdaExpr(simple)).toBe('S = S:LLM_{openai/gpt-4o, θ=0}("Summarize.")')
    expect(toLambdaExpr(simple, { format: "formal" })).toBe('S = (λx. LLM_{openai/gpt-4o, θ=0}("Summarize.")(x))')
    const term = fromConfig("examples/agents/chain.yml")
    expect(toLambdaExpr("examples/agents/chain.yml")).toBe(`Report writer = ${Term.pretty(term)}`)
  })

  it("writes JSON whose term parses back to the compiled term", () => {
    const out = JSON.parse(toLambdaExpr("examples/agents/react.yml", { format: "json" }))
    expect(out.name).toBe("Research assistant")
    expect(out.type).toBe("react")
    expect(Term.parse(out.term)).toEqual(fromConfig("examples/agents/react.yml"))
    expect(out.tools).toEqual([
      { name: "web_search", kind: "mcp", lambda: 'λx. MCP("search-server", "web_search", x)' },
      { name: "calculator", kind: "local", lambda: 'λx. Tool("calculator", x)' },
      { name: "terminate", kind: "terminate", lambda: "λx. x" },
      { name: "summarizer", kind: "cli", lambda: 'λx. exec("lambdagent run examples/agents/simple.yml --quiet -", x)' }
    ])
  })

  it("desugars on request", () => {
    const plain = toLambdaExpr("examples/agents/chain.yml")
    const sugarFree = toLambdaExpr("examples/agents/chain.yml", { desugar: true })
    expect(plain).toContain(">>")
    expect(sugarFree).not.toContain(">>")
    expect(sugarFree).not.toContain("Guard(")
  })
})

group("desugar", () => {
  const inc = Term.lam("n", Term.add(Term.var("n"), Term.lit(1)))
  const double = Term.lam("n", Term.mul(Term.var("n"), Term.lit(2)))
  const both = (t: Term.Term, input: Term.Term) => [Evaluator.evaluate(Term.app(t, input)), Evaluator.evaluate(Term.app(desugar(t), input))]

  it("turns compose into nested applications", () => {
    const t = Term.compose([inc, double, inc])
    expect(desugar(t)._tag).toBe("Lam")
    const [a, b] = both(t, Term.lit(5))
    expect(b).toBe(a)
    expect(a).toBe(13)
  })

  it("turns loops into a fixed point over a counter, with the same results", () => {
    for (const max of [0, 1, 4]) {
      const [a, b] = both(Term.loop({ body: double, max }), Term.lit(3))
      expect(b).toBe(a)
    }
    const until = Term.lam("v", Term.gt(Term.var("v"), Term.lit(20)))
    const [a, b] = both(Term.loop({ body: double, max: 10, until }), Term.lit(3))
    expect([a, b]).toEqual([24, 24])
    const strict = Term.loop({ body: double, max: 2, failOnExhaustion: true })
    expect(desugar(strict)).toEqual(strict)
  })

  it("turns guards with a non-error fallback into retries, with the same results", () => {
    const valid = Term.lam("v", Term.gt(Term.var("v"), Term.lit(100)))
    for (const fallback of ["empty", "last", { value: Term.lit(-1) }] as const) {
      const t = Term.guard({ agent: double, validate: valid, retry: 2, fallback })
      for (const input of [7, 70]) {
        const [a, b] = both(t, Term.lit(input))
        expect(Value.toJson(b)).toEqual(Value.toJson(a))
      }
    }
    const erroring = Term.guard({ agent: double, validate: valid, retry: 0, fallback: "error" })
    expect(desugar(erroring)).toEqual(erroring)
  })

  it("keeps the oracles and gives a compiled agent the same behaviour", () => {
    const agent = loadConfig("examples/agents/chain.yml")
    const answers = (name: string, index: number) =>
      name === "analyze" && index === 1 ? "too short" : `${name} output that is long enough to pass the length check`
    const original = runAgent(agent.term, "text", { llm: ({ name, index }) => answers(name, index) })
    const desugared = runAgent(desugar(agent.term), "text", { llm: ({ name, index }) => answers(name, index) })
    expect(desugared.value).toBe(original.value)
    expect(desugared.calls.llm.map((c) => c.name)).toEqual(original.calls.llm.map((c) => c.name))
    const route = fromConfig("examples/agents/router.yml")
    expect(desugar(route)._tag).toBe("Route")
  })

  it("picks fresh names that do not capture the term's variables", () => {
    const t = Term.compose([Term.lam("_x1", Term.var("_x1")), inc])
    expect(Evaluator.evaluate(Term.app(desugar(t), Term.lit(1)))).toBe(2)
  })
})
