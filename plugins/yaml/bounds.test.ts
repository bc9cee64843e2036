import { Term } from "lambdagent"
import { describe, expect, it } from "vitest"
import { bounds } from "./bounds.ts"
import { fromConfig } from "./compile.ts"

const llm = (name: string) => Term.llm({ system: name, name })
const tool = Term.tool

describe("bounds", () => {
  it("counts one call per llm or tool, and sums a pipeline", () => {
    expect(bounds(llm("a"))).toEqual({ llmCalls: 1, toolCalls: 0 })
    expect(bounds(tool("t"))).toEqual({ llmCalls: 0, toolCalls: 1 })
    expect(bounds(Term.compose([llm("a"), tool("t"), llm("b")]))).toEqual({ llmCalls: 2, toolCalls: 1 })
  })

  it("multiplies loops, nested loops multiply again", () => {
    const inner = Term.loop({ body: Term.compose([llm("a"), tool("t")]), max: 3 })
    expect(bounds(inner)).toEqual({ llmCalls: 3, toolCalls: 3 })
    expect(bounds(Term.loop({ body: inner, max: 4, until: Term.lam("r", Term.app(tool("check"), Term.var("r"))) }))).toEqual({ llmCalls: 12, toolCalls: 16 })
    expect(bounds(Term.loop({ body: llm("a"), max: 0 }))).toEqual({ llmCalls: 0, toolCalls: 0 })
  })

  it("takes a router's most expensive branch plus the classifier", () => {
    const t = Term.route({
      classify: llm("c"),
      routes: [
        ["cheap", Term.lam("x", Term.lit("fixed"))],
        ["dear", Term.compose([llm("a"), llm("b")])]
      ],
      default: tool("fallback")
    })
    expect(bounds(t)).toEqual({ llmCalls: 3, toolCalls: 1 })
  })

  it("adds parallel branches and the merge", () => {
    expect(bounds(Term.par([llm("a"), llm("b"), tool("t")], llm("m")))).toEqual({ llmCalls: 3, toolCalls: 1 })
    expect(bounds(Term.par([llm("a"), llm("b")], "concat"))).toEqual({ llmCalls: 2, toolCalls: 0 })
  })

  it("multiplies a guard's agent and validator by its attempts", () => {
    const validate = Term.lam("x", Term.app(tool("__builtin_is_json"), Term.var("x")))
    expect(bounds(Term.guard({ agent: llm("a"), validate, retry: 2, fallback: "last" }))).toEqual({ llmCalls: 3, toolCalls: 3 })
    expect(bounds(Term.memory({ agent: llm("a"), size: 1, ttl: 0, scope: "session" }))).toEqual({ llmCalls: 1, toolCalls: 0 })
  })

  it("bounds a react loop by maxSteps thoughts and tool calls", () => {
    expect(bounds(Term.react({ think: llm("t"), tools: ["s", "terminate"], maxSteps: 7 }))).toEqual({ llmCalls: 7, toolCalls: 7 })
    expect(bounds(Term.react({ think: Term.compose([llm("a"), llm("b")]), tools: ["s"], maxSteps: 3 }))).toEqual({ llmCalls: 6, toolCalls: 3 })
  })

  it("is unbounded where no finite bound is known", () => {
    const f = Term.lam("p", Term.app(llm("a"), Term.snd(Term.var("p"))))
    // a fold over a list of unknown length calls its function any number of times: only what it calls is unbounded
    expect(bounds(Term.lam("xs", Term.fold(f, Term.lit(""), Term.var("xs"))))).toEqual({ llmCalls: Infinity, toolCalls: 0 })
    expect(bounds(Term.lam("xs", Term.fold(f, Term.lit(""), Term.list([Term.lit(1), Term.lit(2)]))))).toEqual({ llmCalls: 2, toolCalls: 0 })
    expect(bounds(Term.lam("q", Term.eval(Term.var("q"))))).toEqual({ llmCalls: Infinity, toolCalls: Infinity })
    expect(bounds(Term.lam("x", Term.add(Term.var("x"), Term.lit(1))))).toEqual({ llmCalls: 0, toolCalls: 0 })
  })

  it("gives the examples' numbers", () => {
    const of = (file: string) => bounds(fromConfig(`examples/agents/${file}.yml`))
    expect(of("simple")).toEqual({ llmCalls: 1, toolCalls: 0 })
    expect(of("chain")).toEqual({ llmCalls: 5, toolCalls: 0 })
    expect(of("router")).toEqual({ llmCalls: 2, toolCalls: 0 })
    expect(of("parallel")).toEqual({ llmCalls: 3, toolCalls: 0 })
    expect(of("react")).toEqual({ llmCalls: 12, toolCalls: 12 })
    expect(of("guard")).toEqual({ llmCalls: 3, toolCalls: 0 })
    expect(of("memory")).toEqual({ llmCalls: 2, toolCalls: 0 })
  })
})
