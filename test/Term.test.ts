import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Errors, Term } from "lambdagent"
import { reversedKeys } from "./fixtures/reversedKeys.ts"

const name = fc.constantFrom("x", "y", "f", "acc", "n")
const literal: fc.Arbitrary<Term.Term> = fc.oneof(
  fc.integer().map(Term.lit),
  fc
    .bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
    .filter((n) => n > 2n ** 53n || n < -(2n ** 53n))
    .map(Term.lit),
  fc.string().map(Term.lit),
  fc.boolean().map(Term.lit),
  fc.constant(Term.lit(null))
)

const { term } = fc.letrec<{ term: Term.Term }>((tie) => {
  const t = () => tie("term")
  const fn = fc.oneof(
    t(),
    fc.record({ system: fc.string() }).map((o) => Term.llm(o))
  )
  return {
    term: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      literal,
      name.map((n) => Term.var(n)),
      fc.constant(Term.nil),
      fc.constant(Term.self),
      name.map(Term.codeOf),
      name.map(Term.tool),
      fc.record({ system: fc.string(), name: name, conversation: fc.boolean() }).map((o) => Term.llm(o)),
      fc.tuple(name, t()).map(([p, b]) => Term.lam(p, b)),
      fc.tuple(t(), t()).map(([f, a]) => Term.app(f, a)),
      fc
        .tuple(
          fc.constantFrom<Term.BinaryOp>(
            "add",
            "sub",
            "mul",
            "div",
            "mod",
            "eq",
            "lt",
            "gt",
            "lte",
            "gte",
            "and",
            "or",
            "concat",
            "contains",
            "startsWith",
            "endsWith",
            "compareNumbers"
          ),
          t(),
          t()
        )
        .map(([op, a, b]) => Term.binary(op, a, b)),
      fc
        .tuple(
          fc.constantFrom<Term.UnaryOp>(
            "not",
            "head",
            "tail",
            "isEmpty",
            "length",
            "fst",
            "snd",
            "trim",
            "trimStart",
            "trimEnd",
            "lower",
            "upper",
            "isJson",
            "toText",
            "typeName",
            "toInt",
            "toFloat"
          ),
          t()
        )
        .map(([op, a]) => Term.unary(op, a)),
      fc.tuple(t(), t(), t()).map(([c, a, b]) => Term.if(c, a, b)),
      fc.tuple(t(), t()).map(([h, tl]) => Term.cons(h, tl)),
      fc.array(t(), { maxLength: 3 }).map(Term.list),
      fc.tuple(t(), t()).map(([a, b]) => Term.pair(a, b)),
      fc.tuple(t(), t(), t()).map(([f, i, l]) => Term.fold(f, i, l)),
      t().map(Term.quote),
      t().map(Term.eval),
      t().map(Term.continue),
      fc.array(fn, { minLength: 1, maxLength: 3 }).map(Term.compose),
      fc
        .tuple(t(), fc.nat(20), fc.option(t(), { nil: undefined }))
        .map(([body, max, until]) => Term.loop({ body, max, ...(until !== undefined ? { until } : {}) })),
      fc
        .tuple(t(), fc.uniqueArray(fc.tuple(fc.string({ minLength: 1 }), t()), { selector: ([l]) => l, maxLength: 3 }), fc.option(t(), { nil: undefined }))
        .filter(([, routes]) => routes.every(([l]) => l !== "__proto__"))
        .map(([classify, routes, d]) => Term.route({ classify, routes, ...(d !== undefined ? { default: d } : {}) })),
      fc
        .tuple(
          fc.array(t(), { minLength: 1, maxLength: 3 }),
          fc.oneof(
            fc.constantFrom<Term.Merge>("tuple", "concat"),
            fc.tuple(name, t()).map(([p, b]) => Term.lam(p, b))
          )
        )
        .map(([bs, merge]) => Term.par(bs, merge)),
      fc
        .tuple(
          t(),
          t(),
          fc.nat(5),
          fc.oneof(
            fc.constantFrom<Term.Fallback>("error", "empty", "last"),
            t().map((v) => ({ value: v }))
          )
        )
        .map(([agent, validate, retry, fallback]) => Term.guard({ agent, validate, retry, fallback })),
      fc
        .tuple(t(), fc.nat(50), fc.nat(3600), fc.constantFrom("session" as const, "user" as const, "global" as const))
        .map(([agent, size, ttl, scope]) => Term.memory({ agent, size, ttl, scope })),
      fc.tuple(t(), fc.array(name, { maxLength: 3 }), fc.integer({ min: 1, max: 30 })).map(([think, tools, maxSteps]) => Term.react({ think, tools, maxSteps }))
    )
  }
})

const parseError = (json: unknown): Errors.TermParseError => {
  try {
    Term.parse(json)
  } catch (e) {
    if (e instanceof Errors.TermParseError) return e
    throw e
  }
  throw new Error("expected a parse error")
}

describe("Term", () => {
  it("parse ∘ encode is the identity (property)", () => {
    fc.assert(
      fc.property(term, (t) => {
        expect(Term.parse(Term.encode(t))).toEqual(t)
        expect(Term.parseText(Term.toJsonText(t))).toEqual(t)
      }),
      { numRuns: 500 }
    )
  })

  it("encodes to canonical JSON with the reference's key names", () => {
    const json = {
      app: {
        func: { lam: "x", body: { if: { cond: { eq: [{ var: "x" }, 0] }, then: { nil: true }, else: { cons: { head: 1, tail: [2] } } } } },
        arg: { fold: [{ lam: "p", body: { fst: { var: "p" } } }, 0, [1, 2]] }
      }
    }
    expect(Term.encode(Term.parse(json))).toEqual(json)
    expect(Term.encode(Term.parse({ self: true }))).toEqual({ self: true })
    expect(Term.encode(Term.parse({ nil: null }))).toEqual({ nil: true })
    expect(Term.encode(Term.parse({ continue: { input: 1 } }))).toEqual({ continue: { input: 1 } })
    expect(Term.encode(Term.parse({ code_of: "t" }))).toEqual({ code_of: "t" })
  })

  it("builders build the same terms as the JSON", () => {
    expect(Term.lam("x", Term.mul(Term.var("x"), Term.var("x")))).toEqual(Term.parse({ lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } }))
    expect(Term.app(Term.tool("search"), Term.lit("q"))).toEqual(Term.parse({ app: { func: { tool: "search" }, arg: "q" } }))
  })

  it.each([
    [{}, "$", "one form key"],
    [{ zeta: 1 }, "$", 'unknown form "zeta"'],
    [{ var: 1 }, "$.var", "variable name"],
    [{ lam: "x" }, "$", '"body"'],
    [{ lam: 3, body: 1 }, "$.lam", "parameter name"],
    [{ app: { func: 1 } }, "$.app", '"func", "arg"'],
    [{ app: { func: { var: 2 }, arg: 1 } }, "$.app.func.var", "variable name"],
    [{ add: [1, 2, 3] }, "$.add", "array of 2 terms"],
    [{ if: { cond: true, then: 1 } }, "$.if", '"cond", "then", "else"'],
    [{ pair: [1] }, "$.pair", "array of 2"],
    [{ fold: [1, 2] }, "$.fold", "[function, initial, list]"],
    [{ code_of: 5 }, "$.code_of", "tool name"],
    [{ continue: 5 }, "$.continue", '"input"'],
    [1.5, "$", "integer"],
    [[1, [2, { var: null }]], "$[1][1].var", "variable name"],
    [{ var: "x", junk: 1 }, "$", 'unexpected key "junk"'],
    [{ llm: { system: 1 } }, "$.llm.system", "a string"],
    [{ llm: { system: "s", model: { temperature: -1 } } }, "$.llm.model.temperature", "non-negative"],
    [{ loop: { body: 1 } }, "$.loop", '"max"'],
    [{ route: { classify: 1, routes: [] } }, "$.route.routes", "label → agent"],
    [{ par: { branches: [] } }, "$.par.branches", "non-empty"],
    [{ guard: { agent: 1, validate: 1, fallback: "maybe" } }, "$.guard.fallback", '"error"'],
    [{ memory: { agent: 1, scope: "planet" } }, "$.memory.scope", '"session"'],
    [{ react: { think: 1, tools: [1], maxSteps: 3 } }, "$.react.tools", "tool names"],
    [{ compose: [] }, "$.compose", "non-empty"]
  ])("rejects %j at %s", (json, path, expected) => {
    const e = parseError(json)
    expect(e.message.startsWith(`${path}:`)).toBe(true)
    expect(e.message).toContain(expected)
    expect(Term.formatPath(e.path)).toBe(path)
  })

  it("rejects malformed JSON text and integers beyond 64 bits", () => {
    expect(() => Term.parseText('{"add":[1,')).toThrow(Errors.TermParseError)
    expect(parseError(2n ** 64n).message).toContain("64 bits")
    expect(Term.parseText("9223372036854775807")).toEqual(Term.lit(9223372036854775807n))
  })

  it("pretty-prints in lambda notation", () => {
    const square = Term.lam("x", Term.mul(Term.var("x"), Term.var("x")))
    expect(Term.pretty(square)).toBe("λx. x * x")
    expect(Term.pretty(square, "formal")).toBe("(λx. (mul x x))")
    expect(Term.pretty(Term.app(square, Term.lit(3)))).toBe("(λx. x * x) 3")
    expect(Term.pretty(Term.loop({ body: Term.tool("step"), max: 20 }))).toBe("Y₂₀(Tool(step))")
    const router = Term.route({ classify: Term.tool("c"), routes: [["code", Term.tool("coder")]], default: Term.tool("chat") })
    expect(Term.pretty(router)).toBe('CASE (Tool(c)) [("code", Tool(coder)), (_, Tool(chat))]')
    expect(Term.pretty(Term.par([Term.tool("a"), Term.tool("b")]))).toBe("PAIR(Tool(a), Tool(b))")
    expect(Term.pretty(Term.compose([Term.tool("a"), Term.tool("b")]))).toBe("Tool(a) >> Tool(b)")
  })

  it("analyses: size, free variables, paths", () => {
    const t = Term.lam("x", Term.add(Term.var("x"), Term.var("y")))
    expect(Term.size(t)).toBe(4)
    expect([...Term.freeVariables(t)]).toEqual(["y"])
    const inner = Term.var("z")
    expect(Term.pathTo(Term.app(Term.lit(1), Term.list([Term.lit(2), inner])), inner)).toEqual(["app", "arg", 1])
  })
})

describe("reading a term from JSON text", () => {
  /** What reading gives: the term, or the parse error's message and path. */
  const outcome = (read: () => Term.Term): unknown => {
    try {
      return { term: read() }
    } catch (e) {
      if (e instanceof Errors.TermParseError) return { error: e.message, path: e.path }
      throw e
    }
  }
  /** Reading the text straight must give what reading its JSON and then the term gives. */
  const agrees = (text: string): void => {
    expect(outcome(() => Term.parseText(text))).toEqual(outcome(() => Term.parse(Term.parseJsonText(text))))
  }

  const formKey = fc.constantFrom(
    "add",
    "not",
    "app",
    "if",
    "lam",
    "var",
    "tool",
    "code_of",
    "pair",
    "fold",
    "cons",
    "quote",
    "eval",
    "continue",
    "compose",
    "self",
    "nil",
    "body"
  )
  const fieldKey = fc.constantFrom("func", "arg", "cond", "then", "else", "head", "tail", "input", "body", "x")
  /** JSON that is often a term and often almost one: forms with wrong, missing or extra parts. */
  const { termish } = fc.letrec<{ termish: unknown }>((tie) => ({
    termish: fc.oneof(
      { depthSize: "small" },
      term.map(Term.encode),
      fc.jsonValue({ maxDepth: 1 }),
      fc
        .tuple(formKey, fc.oneof(tie("termish"), fc.array(tie("termish"), { maxLength: 4 }), fc.dictionary(fieldKey, tie("termish"), { maxKeys: 4 })))
        .map(([k, v]) => ({ [k]: v })),
      fc.tuple(fc.oneof(fc.string(), fc.integer()), tie("termish"), fc.boolean()).map(([p, body, extra]) => ({ lam: p, body, ...(extra ? { x: 1 } : {}) }))
    )
  }))

  it("gives the term, or the error, that reading its JSON gives (property)", () => {
    fc.assert(
      fc.property(termish, fc.boolean(), (json, reverse) => agrees(Term.stringify(reverse ? reversedKeys(json) : json))),
      { numRuns: 2000 }
    )
  })

  it("reports text cut short or not JSON as reading its JSON does (property)", () => {
    fc.assert(
      fc.property(term, fc.double({ min: 0, max: 1, noNaN: true }), (t, at) => {
        const text = Term.toJsonText(t)
        agrees(text.slice(0, Math.floor(at * text.length)))
        agrees(`${text} x`)
      }),
      { numRuns: 500 }
    )
  })

  it("reads duplicate keys, whitespace, escapes, -0 and 64-bit integers as JSON.parse does", () => {
    for (const text of [
      '{"add":[1,2],"add":[3,4]}',
      '{"app":{"func":{"var":"f"},"func":{"var":"g"},"arg":1}}',
      '{"app":{"arg":1,"func":{"var":"f"}}}',
      '{"body":{"var":"x"},"lam":"x"}',
      ' {\n\t"if" : { "else" : -0 , "then" : [ ] , "cond" : true } } \r\n',
      '{"var":"\\u0078\\n\\""}',
      "[9223372036854775807,-9223372036854775808,9223372036854775808,1.0,1e2,1.5]",
      '{"not":{"var":"x"},"lam":"y"}',
      '{"lam":"x","body":1,"body":2}',
      '{"__proto__":1}',
      ""
    ])
      agrees(text)
  })

  it("reads a term nested a million levels deep", () => {
    const n = 1_000_000
    let t = Term.parseText(`${'{"add":['.repeat(n)}1${",1]}".repeat(n)}`)
    let depth = 0
    let rightsAreOne = true
    while (t._tag === "Binary") {
      rightsAreOne &&= t.op === "add" && t.right._tag === "Lit" && t.right.value === 1
      t = t.left
      depth++
    }
    expect({ depth, rightsAreOne }).toEqual({ depth: n, rightsAreOne: true })
    expect(t).toEqual(Term.lit(1))
  })

  it("reads other forms inside the ones it reads as they come, as their JSON", () => {
    const text = '{"app":{"func":{"compose":[{"llm":{"system":"s"}},{"tool":"t"}]},"arg":{"quote":{"self":true}}}}'
    expect(Term.parseText(text)).toEqual(Term.parse(JSON.parse(text)))
  })
})

describe("parse errors deep in a term", () => {
  it("name the two ends of a long path in the message, and the whole path in the error", () => {
    const n = 100_000
    const error = parseError(JSON.parse(`${'{"not":'.repeat(n)}{"var":1}${"}".repeat(n)}`))
    expect(error.path.length).toBe(n + 1)
    expect(error.message).toBe(`$${".not".repeat(16)}…(${n + 1 - 32} more)…${".not".repeat(15)}.var: expected a variable name (string), found number`)
  })
})
