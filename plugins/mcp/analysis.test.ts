import { Errors, Evaluator, Term, Value } from "lambdagent"
import { describe, expect, it } from "vitest"
import {
  analyzeTerm,
  continuationResult,
  errorInfo,
  errorResult,
  helpText,
  HELP_CATEGORIES,
  languageReference,
  policyViolations,
  recursionOf,
  requestViolation,
  STRUCTURED_DEPTH_LIMIT,
  toValue,
  tutorPrompt,
  valueResult
} from "./index.ts"
import { factorialAcc, isEven, map } from "./test-support.ts"

describe("analyzeTerm", () => {
  it("lists the forms in pre-order, once each, with size", () => {
    const a = analyzeTerm(Term.parse(factorialAcc))
    expect(a.forms).toEqual(["lam", "if", "lte", "fst", "snd", "continue", "pair", "sub", "mul"])
    expect(a.size).toBe(Term.size(Term.parse(factorialAcc)))
    expect(a.capabilities).toMatchObject({ continue: true, self: false, eval: false, codeOf: new Set() })
    expect(analyzeTerm(Term.parse([1, [2]])).forms).toEqual(["list"])
  })

  it("finds free variables (respecting shadowing, inside quotes too) and where the first one is", () => {
    const t = Term.parse({ lam: "x", body: { pair: [{ var: "x" }, { app: { func: { lam: "y", body: { var: "y" } }, arg: { var: "z" } } }] } })
    const a = analyzeTerm(t)
    expect(a.freeVariables).toEqual(["z"])
    expect(a.freeVariablePath).toEqual(["body", "pair", 1, "app", "arg"])
    expect(analyzeTerm(Term.parse({ quote: { var: "q" } })).freeVariables).toEqual(["q"])
    expect(analyzeTerm(Term.parse(map)).freeVariables).toEqual([])
  })

  it("reports the tool protocol and agent capabilities", () => {
    expect(analyzeTerm(Term.parse(isEven)).capabilities).toMatchObject({ eval: true, codeOf: new Set(["is_odd"]), self: false })
    expect(analyzeTerm(Term.parse({ code_of: "self" })).capabilities.self).toBe(true)
    const agent = analyzeTerm(Term.parse({ compose: [{ llm: { system: "s" } }, { tool: "search" }, { tool: "search" }] }))
    expect(agent.capabilities).toMatchObject({ llm: true, tools: new Set(["search"]), memory: false, parallel: false })
  })

  it("classifies functions and data statically, leaving the rest to evaluation", () => {
    expect(analyzeTerm(Term.parse({ lam: "x", body: 1 })).isFunction).toBe(true)
    expect(analyzeTerm(Term.parse({ tool: "t" })).isFunction).toBe(true)
    expect(analyzeTerm(Term.parse(42)).isFunction).toBe(false)
    expect(analyzeTerm(Term.parse({ pair: [1, 2] })).isFunction).toBe(false)
    expect(analyzeTerm(Term.parse({ app: { func: { lam: "x", body: { var: "x" } }, arg: 1 } })).isFunction).toBeUndefined()
  })

  it("walks a 100,000-deep term without a stack overflow", () => {
    let t: Term.Term = Term.lit(0)
    for (let i = 0; i < 100_000; i++) t = Term.add(t, Term.var("v"))
    const a = analyzeTerm(t)
    expect(a.size).toBe(200_001)
    expect(a.freeVariables).toEqual(["v"])
  })
})

describe("recursionOf", () => {
  const caps = (json: unknown) => analyzeTerm(Term.parse(json)).capabilities
  it("names self, continue and code_of of itself", () => {
    expect(recursionOf("f", caps({ self: true }), () => [])).toEqual(["self"])
    expect(recursionOf("f", caps(factorialAcc), () => [])).toEqual(["continue"])
    expect(recursionOf("f", caps({ eval: { code_of: "f" } }), () => [])).toEqual(['code_of "f"'])
  })

  it("finds the shortest cycle through other tools, and none where there is none", () => {
    const refs: Record<string, Array<string>> = { b: ["c"], c: ["a", "d"], d: [] }
    expect(recursionOf("a", caps({ eval: { code_of: "b" } }), (n) => refs[n] ?? [])).toEqual(["mutual: a → b → c → a"])
    expect(recursionOf("x", caps({ eval: { code_of: "d" } }), (n) => refs[n] ?? [])).toEqual([])
    expect(recursionOf("x", caps({ eval: { code_of: "c" } }), (n) => refs[n] ?? [])).toEqual([]) // c → a → … never reaches x
  })
})

describe("the capability policy", () => {
  it("lists what a term uses beyond the policy", () => {
    const caps = analyzeTerm(Term.parse({ par: { branches: [{ llm: { system: "s" } }, { tool: "a" }, { tool: "b" }] } })).capabilities
    expect(policyViolations(caps, {})).toHaveLength(4)
    expect(policyViolations(caps, { llm: true, tools: ["a"], par: true })).toEqual(['host tool "b" (not in the allowed tools)'])
    expect(policyViolations(caps, { llm: true, tools: "*", par: true })).toEqual([])
    expect(
      policyViolations(analyzeTerm(Term.parse({ react: { think: { llm: { system: "s" } }, tools: ["terminate", "search"], maxSteps: 3 } })).capabilities, {
        llm: true
      })
    ).toEqual(['host tool "search" (not in the allowed tools)'])
  })

  it("checks oracle requests at run time", () => {
    const step = Evaluator.start(Term.app(Term.tool("rm"), Term.lit(1))).next()
    if (step._tag !== "Suspended") throw new Error("expected a suspension")
    expect(requestViolation(step.request, {})).toBe('host tool "rm" is not allowed')
    expect(requestViolation(step.request, { tools: ["rm"] })).toBeUndefined()
  })
})

describe("tool results", () => {
  it("carries a value as JSON text and structured content, integers exact", () => {
    const big = 2432902008176640000n
    const result = valueResult(Value.fromArray([big, new Value.Pair(1, "a")]), 7)
    expect(result.content).toEqual([{ type: "text", text: '[2432902008176640000,{"pair":[1,"a"]}]' }])
    expect(JSON.stringify(result.structuredContent)).toBe('{"value":[2432902008176640000,{"pair":[1,"a"]}],"steps":7}')
  })

  it("keeps values deeper than the structured limit as text only", () => {
    let v: Value.Value = 0
    for (let i = 0; i < STRUCTURED_DEPTH_LIMIT + 10; i++) v = new Value.Pair(v, 0)
    const result = valueResult(v, 1)
    expect(result.structuredContent).toBeUndefined()
    expect((result.content[0] as { text: string }).text.startsWith('{"pair":[{"pair":')).toBe(true)
  })

  it("describes how to send a continuation back", () => {
    const k = new Value.Continuation("factorial", new Value.Pair(4, 5), 1)
    const viaRun = continuationResult(k, { via: "run", version: 2 })
    expect(viaRun.structuredContent).toEqual({
      type: "continuation",
      tool: "factorial",
      next_input: { pair: [4, 5] },
      step: 1,
      version: 2,
      message: "Recursive step needed. Call run again with:",
      next_call: { tool: "run", arguments: { tool: "factorial", input: { pair: [4, 5] }, step: 1, version: 2 } }
    })
    expect(JSON.parse((viaRun.content[0] as { text: string }).text)).toEqual(viaRun.structuredContent)
    expect((continuationResult(k, { via: "tool" }).structuredContent as { message: string }).message).toBe("Recursive step needed. Call factorial again with:")
    expect(valueResult(k, 3).structuredContent).toMatchObject({ type: "continuation" })
  })

  it("turns errors into structured isError results", () => {
    const budget = new Errors.BudgetExceeded({ budget: "steps", limit: 10, steps: 11, message: "step budget of 10 exhausted" })
    expect(errorInfo(budget)).toEqual({ kind: "BudgetExceeded", message: "step budget of 10 exhausted", steps: 11, budget: "steps", limit: 10 })
    expect(errorInfo(new Error("boom"))).toEqual({ kind: "InternalError", message: "boom" })
    const result = errorResult({ kind: "X", message: "m", path: ["a", 0] })
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toEqual({ kind: "X", message: "m", path: ["a", 0] })
    expect((result.content[0] as { text: string }).text).toBe('{"kind":"X","message":"m","path":["a",0]}')
  })

  it("converts oracle answers to values", () => {
    expect(Value.toJson(toValue([1, "a", [true]]))).toEqual([1, "a", [true]])
    expect(toValue(undefined)).toBeNull()
    expect(toValue({ a: 1 })).toBe('{"a":1}')
    // the core's one rule: a fraction keeps its digits as text rather than being rounded
    expect(toValue(2.6)).toBe("2.6")
  })
})

describe("the language reference", () => {
  // Every example the help states with "→" evaluates to what it says.
  const examples: Array<[category: string, term: string, value: unknown]> = [
    ["lambda", '{"app": {"func": {"lam": "x", "body": {"mul": [{"var": "x"}, {"var": "x"}]}}, "arg": 7}}', 49],
    ["arithmetic", '{"mod": [{"add": [10, 7]}, 5]}', 2],
    ["comparison", '{"eq": [[1, 2], [1, 2]]}', true],
    ["comparison", '{"lt": ["apple", "banana"]}', true],
    ["logic", '{"and": [false, {"div": [1, 0]}]}', false],
    ["lists", '{"fold": [{"lam": "p", "body": {"add": [{"fst": {"var": "p"}}, {"snd": {"var": "p"}}]}}, 0, [1, 2, 3]]}', 6],
    ["pairs", '{"snd": {"pair": [1, "two"]}}', "two"],
    ["strings", '{"concat": ["ab", "cd"]}', "abcd"],
    ["strings", '{"length": "héllo"}', 5]
  ]
  it.each(examples)("%s: %s", (category, term, value) => {
    expect(helpText(category).replace(/\s+/g, " ")).toContain(term)
    expect(Value.toJson(Evaluator.evaluate(Term.parseText(term)))).toEqual(value)
  })

  it("has every category, an overview for anything else, and a tutor prompt built from it", () => {
    for (const c of HELP_CATEGORIES) expect(languageReference()).toContain(helpText(c))
    expect(helpText(42)).toBe(helpText("nope"))
    expect(tutorPrompt()).toContain(languageReference())
    expect(tutorPrompt("  sum a list ")).toMatch(/Your goal: sum a list$/)
  })
})
