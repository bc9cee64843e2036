/**
 * Every registered form against the contract of `src/forms/Form.ts` (docs/contributing.md,
 * "Adding a form"): a new form without samples here fails the first test.
 */
import { Analysis, Term } from "lambdagent"
import { describe, expect, it } from "vitest"
import { forms } from "../src/forms/index.ts"
import { compile } from "../src/internal/compile.ts"

const x = Term.var("x")
const think = Term.llm({ system: "Think." })

const samples: { readonly [K in Term.Tag]: ReadonlyArray<Term.Of<K>> } = {
  Lit: [Term.lit(1), Term.lit("s"), Term.lit(true), Term.lit(null), Term.lit(2n ** 62n)] as Array<Term.Of<"Lit">>,
  List: [Term.list([Term.lit(1), Term.lit(2)]), Term.list([x, Term.add(x, Term.lit(1))]), Term.list([])] as Array<Term.Of<"List">>,
  Var: [x] as Array<Term.Of<"Var">>,
  Lam: [Term.lam("x", Term.mul(x, x))] as Array<Term.Of<"Lam">>,
  App: [Term.app(Term.lam("x", x), Term.lit(1))] as Array<Term.Of<"App">>,
  Binary: [Term.add(Term.lit(1), x), Term.and(Term.lit(true), Term.lit(false)), Term.endsWith(x, Term.lit(".")), Term.get(x, Term.lit("city"))] as Array<
    Term.Of<"Binary">
  >,
  Unary: [Term.not(Term.lit(true)), Term.fst(x), Term.isJson(x)] as Array<Term.Of<"Unary">>,
  If: [Term.if(Term.lit(true), Term.lit(1), x)] as Array<Term.Of<"If">>,
  Nil: [Term.nil] as Array<Term.Of<"Nil">>,
  Cons: [Term.cons(Term.lit(1), Term.nil)] as Array<Term.Of<"Cons">>,
  Pair: [Term.pair(Term.lit(1), x)] as Array<Term.Of<"Pair">>,
  Fold: [Term.fold(Term.lam("p", Term.fst(Term.var("p"))), Term.lit(0), Term.list([Term.lit(1)]))] as Array<Term.Of<"Fold">>,
  Quote: [Term.quote(Term.add(x, Term.lit(1)))] as Array<Term.Of<"Quote">>,
  Eval: [Term.eval(Term.quote(Term.lit(1)))] as Array<Term.Of<"Eval">>,
  CodeOf: [Term.codeOf("square"), Term.codeOf("self")] as Array<Term.Of<"CodeOf">>,
  Self: [Term.self] as Array<Term.Of<"Self">>,
  Continue: [Term.continue(Term.sub(x, Term.lit(1)))] as Array<Term.Of<"Continue">>,
  Llm: [
    think,
    Term.llm({ system: "s", name: "n", model: { provider: "openai", name: "m", temperature: 0 }, conversation: false, maxHistoryTokens: 10 }),
    Term.llm({
      system: "Extract.",
      output: { schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }, name: "place", strict: true, retries: 1 }
    }),
    Term.llm({ system: "Compute.", tools: ["add", "search"], toolRounds: 2, maxToolCalls: 3 })
  ] as Array<Term.Of<"Llm">>,
  Tool: [Term.tool("search"), Term.tool("terminate")] as Array<Term.Of<"Tool">>,
  Compose: [Term.compose([think, Term.tool("t")])] as Array<Term.Of<"Compose">>,
  Loop: [Term.loop({ body: think, max: 3 }), Term.loop({ body: think, max: 2, until: Term.lam("r", Term.lit(true)), failOnExhaustion: true })] as Array<
    Term.Of<"Loop">
  >,
  Route: [
    Term.route({
      classify: think,
      routes: [
        ["a", think],
        ["b", Term.tool("t")]
      ]
    }),
    Term.route({ classify: think, routes: [["only", think]], default: Term.tool("t") })
  ] as Array<Term.Of<"Route">>,
  Par: [Term.par([think, think]), Term.par([think], "concat"), Term.par([think, think], Term.lam("xs", Term.var("xs")))] as Array<Term.Of<"Par">>,
  Guard: [
    Term.guard({ agent: think, validate: Term.lam("v", Term.lit(true)), retry: 2, fallback: "last" }),
    Term.guard({ agent: think, validate: Term.lam("v", Term.lit(true)), retry: 0, fallback: { value: Term.lit("n/a") } })
  ] as Array<Term.Of<"Guard">>,
  Memory: [Term.memory({ agent: think, size: 5, ttl: 60, scope: "user" })] as Array<Term.Of<"Memory">>,
  React: [
    Term.react({ think, tools: ["search", "terminate"], maxSteps: 4, toolTimeout: 5, observe: false }),
    Term.react({ think, tools: ["search", "call_helper", "terminate"], maxSteps: 2, agents: [["call_helper", Term.llm({ system: "Help." })]] }),
    Term.react({
      think,
      tools: ["search", "call_helper", "terminate"],
      maxSteps: 3,
      agents: [["call_helper", Term.llm({ system: "Help." })]],
      earlyStop: Term.lam("o", Term.contains(Term.var("o"), Term.lit("FOUND")))
    })
  ] as Array<Term.Of<"React">>,
  GroupChat: [
    Term.groupChat({
      agents: [
        ["a", think],
        ["b", Term.tool("t")]
      ],
      maxRounds: 3,
      scheduler: "round_robin",
      keywords: ["DONE"]
    }),
    Term.groupChat({ agents: [["a", think]], maxRounds: 1, scheduler: { random: 7 }, keywords: [], summary: think, maxHistoryTokens: 100 }),
    Term.groupChat({
      agents: [
        ["a", think],
        ["b", think]
      ],
      maxRounds: 2,
      scheduler: { llm: Term.llm({ system: "Pick." }) },
      keywords: ["CONSENSUS"],
      until: Term.lam("m", Term.contains(Term.var("m"), Term.lit("ok"))),
      summary: Term.tool("sum")
    })
  ] as Array<Term.Of<"GroupChat">>,
  Handoff: [
    Term.handoff({
      select: think,
      registry: [
        ["a", think],
        ["b", Term.tool("t")]
      ],
      maxDepth: 2
    }),
    Term.handoff({ select: think, registry: [["only", think]], fallback: Term.tool("t"), maxDepth: 0 })
  ] as Array<Term.Of<"Handoff">>,
  Ask: [Term.ask("Approve?"), Term.ask("")] as Array<Term.Of<"Ask">>,
  Channels: [
    Term.channels(
      [
        { name: "c", capacity: 0 },
        { name: "d", capacity: 3 }
      ],
      Term.par([Term.compose([think, Term.send("c")]), Term.receive("c")])
    )
  ] as Array<Term.Of<"Channels">>,
  Send: [Term.send("c")] as Array<Term.Of<"Send">>,
  Receive: [Term.receive("c")] as Array<Term.Of<"Receive">>
}

/** The JSON at `path` below `json`. */
const at = (json: unknown, path: ReadonlyArray<string | number>): unknown =>
  path.reduce<unknown>((j, key) => (j as Record<string | number, unknown>)[key], json)

describe("the form registry", () => {
  it("has samples of every form, and each entry is the form of its own tag", () => {
    expect(Object.keys(samples).sort()).toEqual(Object.keys(forms).sort())
    for (const [tag, form] of Object.entries(forms)) expect(form.tag).toBe(tag)
  })

  const cases = Object.entries(samples).flatMap(([tag, terms]) => terms.map((t, i) => [`${tag} #${i + 1}`, t] as const))

  it.each(cases)("%s keeps the contract of a form", (_, t) => {
    const term = t as Term.Term
    const form = forms[term._tag]
    // syntax: parse and encode are inverses, through JSON text too
    expect(Term.parse(Term.encode(term))).toEqual(term)
    expect(Term.parseText(Term.toJsonText(term))).toEqual(term)
    // children, withChildren and segments agree
    const kids = Term.children(term)
    expect(Term.withChildren(term, kids)).toEqual(term)
    const segments = (form as { segments: (t: Term.Term) => ReadonlyArray<ReadonlyArray<string | number>> }).segments(term)
    expect(segments.length).toBeGreaterThanOrEqual(kids.length)
    const json = Term.encode(term)
    kids.forEach((kid, i) => {
      expect(at(json, segments[i]!)).toEqual(Term.encode(kid))
      // pathTo finds a node by identity: the first of equal children shared by reference
      if (kids.indexOf(kid) === i) expect(Term.pathTo(term, kid)).toEqual(segments[i])
    })
    // printing, analyses, compilation
    expect(Term.pretty(term).length).toBeGreaterThan(0)
    expect(Term.pretty(term, "formal").length).toBeGreaterThan(0)
    const bounds = Analysis.worstCase(term)
    expect(bounds.requests.llmCalls).toBeGreaterThanOrEqual(bounds.logical.llmCalls)
    expect(bounds.wire.llmCalls).toBeGreaterThanOrEqual(bounds.requests.llmCalls)
    expect(Analysis.summarize(term).size).toBe(Term.size(term))
    expect(compile(term, undefined).term).toBe(term)
  })
})

describe("route", () => {
  it("keeps the first route of each label, in the order a JSON object of the labels has", () => {
    const labels = ["b", "10", "a", "2", "b", "01", "4294967295", "4294967294", "-1", "0"]
    const term = Term.route({ classify: Term.lit("x"), routes: labels.map((l, i) => [l, Term.lit(i)] as const) }) as Term.Of<"Route">
    expect(term.routes.map(([l]) => l)).toEqual(Object.keys(Object.fromEntries(labels.map((l) => [l, 0]))))
    expect(term.routes.find(([l]) => l === "b")![1]).toEqual(Term.lit(0))
  })
})
