import { describe, expect, it } from "vitest"
import { Errors, Evaluator, type Oracle, Term, Value } from "lambdagent"

const T = Term
const json = (j: unknown) => Term.parse(j)
const run = (code: unknown, input: unknown, options: Evaluator.RunOptions = {}) => Value.toJson(Evaluator.run(json(code), input, options).value)
const evalJson = (j: unknown, options: Evaluator.EvaluateOptions = {}) => Value.toJson(Evaluator.evaluate(json(j), options))
const failure = (f: () => unknown): Errors.LambdaError => {
  try {
    f()
  } catch (e) {
    if (Errors.isLambdaError(e)) return e
    throw e
  }
  throw new Error("expected a failure")
}

const square = { lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } }
const factorialAcc = {
  lam: "n_acc",
  body: {
    if: {
      cond: { lte: [{ fst: { var: "n_acc" } }, 1] },
      then: { snd: { var: "n_acc" } },
      else: {
        continue: {
          input: {
            pair: [{ sub: [{ fst: { var: "n_acc" } }, 1] }, { mul: [{ fst: { var: "n_acc" } }, { snd: { var: "n_acc" } }] }]
          }
        }
      }
    }
  }
}
const map = {
  lam: "f",
  body: {
    lam: "list",
    body: {
      fold: [
        {
          lam: "acc_item",
          body: {
            cons: {
              head: { app: { func: { var: "f" }, arg: { snd: { var: "acc_item" } } } },
              tail: { fst: { var: "acc_item" } }
            }
          }
        },
        { nil: true },
        { var: "list" }
      ]
    }
  }
}
const isEven = {
  lam: "n",
  body: {
    if: {
      cond: { eq: [{ var: "n" }, 0] },
      then: true,
      else: { app: { func: { eval: { code_of: "is_odd" } }, arg: { sub: [{ var: "n" }, 1] } } }
    }
  }
}
const isOdd = {
  lam: "n",
  body: {
    if: {
      cond: { eq: [{ var: "n" }, 0] },
      then: false,
      else: { app: { func: { eval: { code_of: "is_even" } }, arg: { sub: [{ var: "n" }, 1] } } }
    }
  }
}
const fib = T.lam(
  "n",
  T.if(T.lt(T.var("n"), T.lit(2)), T.var("n"), T.add(T.app(T.self, T.sub(T.var("n"), T.lit(1))), T.app(T.self, T.sub(T.var("n"), T.lit(2)))))
)
const sumFold = T.lam("xs", T.fold(T.lam("p", T.add(T.fst(T.var("p")), T.snd(T.var("p")))), T.lit(0), T.var("xs")))

describe("pure forms", () => {
  it("arithmetic is 64-bit integer arithmetic with floor division", () => {
    expect(evalJson({ add: [40, 2] })).toBe(42)
    expect(evalJson({ sub: [1, 5] })).toBe(-4)
    expect(evalJson({ mul: [6, 7] })).toBe(42)
    expect(evalJson({ div: [-7, 2] })).toBe(-4)
    expect(evalJson({ mod: [-7, 2] })).toBe(1)
    expect(evalJson({ mod: [7, -2] })).toBe(-1)
    expect(evalJson({ div: [7, -2] })).toBe(-4)
    expect(evalJson({ mod: [-9223372036854775808n, -1] })).toBe(0)
  })

  it("integers beyond 2^53 stay exact; leaving 64 bits is an Overflow error", () => {
    expect(evalJson({ add: [9007199254740991, 2] })).toBe(9007199254740993n)
    expect(evalJson({ sub: [{ add: [9007199254740991, 2] }, 2] })).toBe(9007199254740991)
    expect(evalJson({ mul: [3037000499, 3037000499] })).toBe(9223372030926249001n)
    const overflow = failure(() => evalJson({ add: [9223372036854775807n, 1] }))
    expect(overflow._tag).toBe("EvalError")
    expect((overflow as Errors.EvalError).kind).toBe("Overflow")
    expect((failure(() => evalJson({ div: [-9223372036854775808n, -1] })) as Errors.EvalError).kind).toBe("Overflow")
    expect((failure(() => evalJson({ mul: [9223372036854775807n, 2] })) as Errors.EvalError).kind).toBe("Overflow")
    // integers beyond 2^53 given as JavaScript numbers keep their (exact) double value, as bigints
    // biome-ignore lint/correctness/noPrecisionLoss: the int64 minimum, exact as a double
    expect((failure(() => evalJson({ div: [-9223372036854775808, -1] })) as Errors.EvalError).kind).toBe("Overflow")
    expect(evalJson({ add: [2 ** 60, 0] })).toBe(2n ** 60n)
  })

  it("division and modulo by zero are errors, with the path of the node", () => {
    const e = failure(() => evalJson({ app: { func: { lam: "x", body: { div: [{ var: "x" }, 0] } }, arg: 1 } }))
    expect(e).toMatchObject({ _tag: "EvalError", kind: "DivisionByZero", path: ["app", "func", "body"] })
    expect(failure(() => evalJson({ mod: [1, 0] }))).toMatchObject({ kind: "DivisionByZero" })
  })

  it("comparisons, equality of any first-order values, and short-circuit logic", () => {
    expect(evalJson({ lt: [1, 2] })).toBe(true)
    expect(evalJson({ gte: [2, 2] })).toBe(true)
    expect(evalJson({ gt: ["b", "a"] })).toBe(true)
    expect(
      evalJson({
        eq: [
          [1, [2]],
          [1, [2]]
        ]
      })
    ).toBe(true)
    expect(evalJson({ eq: [{ pair: [1, "a"] }, { pair: [1, "b"] }] })).toBe(false)
    expect(evalJson({ eq: ["x", 1] })).toBe(false)
    expect(evalJson({ and: [false, { div: [1, 0] }] })).toBe(false)
    expect(evalJson({ or: [true, { div: [1, 0] }] })).toBe(true)
    expect(evalJson({ not: false })).toBe(true)
    expect(failure(() => evalJson({ and: [1, true] }))).toMatchObject({ kind: "TypeError" })
    expect(failure(() => evalJson({ and: [true, 1] }))).toMatchObject({ kind: "TypeError" })
    expect(failure(() => evalJson({ lt: [1, "a"] }))).toMatchObject({ kind: "TypeError" })
  })

  it("if evaluates only the branch it takes and needs a boolean", () => {
    expect(evalJson({ if: { cond: true, then: 1, else: { div: [1, 0] } } })).toBe(1)
    expect(failure(() => evalJson({ if: { cond: 1, then: 1, else: 2 } }))).toMatchObject({ kind: "TypeError", path: [] })
  })

  it("lists: nil, cons, array literals, head, tail, isEmpty, length, concat", () => {
    expect(evalJson({ cons: { head: 1, tail: { nil: true } } })).toEqual([1])
    expect(evalJson([1, { add: [1, 1] }, 3])).toEqual([1, 2, 3])
    expect(evalJson({ head: [7, 8] })).toBe(7)
    expect(evalJson({ tail: [7, 8] })).toEqual([8])
    expect(evalJson({ isEmpty: { nil: true } })).toBe(true)
    expect(evalJson({ length: [1, 2, 3] })).toBe(3)
    expect(evalJson({ length: "héllo😀" })).toBe(6)
    expect(evalJson({ concat: ["ab", "cd"] })).toBe("abcd")
    expect(evalJson({ concat: [[1], [2]] })).toEqual([1, 2])
    expect(failure(() => evalJson({ head: [] }))).toMatchObject({ kind: "EmptyList" })
    expect(failure(() => evalJson({ tail: { nil: true } }))).toMatchObject({ kind: "EmptyList" })
    expect(failure(() => evalJson({ head: 5 }))).toMatchObject({ kind: "TypeError" })
    expect(failure(() => evalJson({ cons: { head: 1, tail: 2 } }))).toMatchObject({ kind: "TypeError" })
  })

  it("string primitives: contains, startsWith, endsWith, trim, lower, upper, isJson", () => {
    expect(evalJson({ contains: ["an error here", "error"] })).toBe(true)
    expect(evalJson({ contains: [[1, [2]], [2]] })).toBe(true)
    expect(evalJson({ startsWith: ['{"a":1}', "{"] })).toBe(true)
    expect(evalJson({ endsWith: ["done.", "!"] })).toBe(false)
    expect(evalJson({ trim: "  x " })).toBe("x")
    expect(evalJson({ lower: "ÀB" })).toBe("àb")
    expect(evalJson({ upper: "ab" })).toBe("AB")
    expect(evalJson({ isJson: '{"ok":true}' })).toBe(true)
    expect(evalJson({ isJson: "{oops" })).toBe(false)
    expect(failure(() => evalJson({ trim: 1 }))).toMatchObject({ kind: "TypeError", message: "trim expects a string, got integer" })
    expect(failure(() => evalJson({ startsWith: [1, "a"] }))).toMatchObject({ kind: "TypeError" })
  })

  it("toText renders any value as text and typeName names its type", () => {
    expect(evalJson({ toText: "as is" })).toBe("as is")
    expect(evalJson({ toText: 42 })).toBe("42")
    expect(evalJson({ toText: [1, "a", true, null] })).toBe('[1,"a",true,null]')
    expect(evalJson({ typeName: "s" })).toBe("string")
    expect(evalJson({ typeName: 1 })).toBe("integer")
    expect(evalJson({ typeName: false })).toBe("boolean")
    expect(evalJson({ typeName: null })).toBe("null")
    expect(evalJson({ typeName: [[1]] })).toBe("list")
    expect(evalJson({ typeName: { pair: [1, 2] } })).toBe("pair")
    expect(evalJson({ typeName: { lam: "y", body: { var: "y" } } })).toBe("function")
  })

  it("toInt and toFloat read numbers out of text by Python's int() and float() rules", () => {
    expect(evalJson({ toInt: "12" })).toBe(12)
    expect(evalJson({ toInt: " 12\n" })).toBe(12)
    expect(evalJson({ toInt: "-0_7" })).toBe(-7)
    expect(evalJson({ toInt: "+1_000" })).toBe(1000)
    expect(evalJson({ toInt: 5 })).toBe(5)
    expect(evalJson({ toInt: true })).toBe(1)
    expect(Evaluator.evaluate(Term.toInt(Term.lit("9223372036854775807")))).toBe(2n ** 63n - 1n)
    for (const bad of ["1.5", "abc", "", " ", "1__0", "_1", "1e3", "0x10", "١٢"]) {
      expect(failure(() => evalJson({ toInt: bad }))).toMatchObject({ kind: "ValueError" })
    }
    expect(failure(() => evalJson({ toInt: "9223372036854775808" }))).toMatchObject({ kind: "Overflow" })
    expect(failure(() => evalJson({ toInt: [1] }))).toMatchObject({ kind: "TypeError", message: "toInt expects a string, an integer or a boolean, got list" })
    expect(evalJson({ toFloat: "1e3" })).toBe("1000.0")
    expect(evalJson({ toFloat: " 0.5\t" })).toBe("0.5")
    expect(evalJson({ toFloat: ".5" })).toBe("0.5")
    expect(evalJson({ toFloat: "1_0.2_5" })).toBe("10.25")
    expect(evalJson({ toFloat: "-NaN" })).toBe("nan")
    expect(evalJson({ toFloat: "Infinity" })).toBe("inf")
    expect(evalJson({ toFloat: "-inf" })).toBe("-inf")
    expect(evalJson({ toFloat: "1e16" })).toBe("1e+16")
    expect(evalJson({ toFloat: "123456789012345.6" })).toBe("123456789012345.6")
    expect(evalJson({ toFloat: "0.00001" })).toBe("1e-05")
    expect(evalJson({ toFloat: "0.0001" })).toBe("0.0001")
    expect(evalJson({ toFloat: "-0" })).toBe("-0.0")
    expect(evalJson({ toFloat: "1e400" })).toBe("inf")
    expect(evalJson({ toFloat: 3 })).toBe("3.0")
    expect(evalJson({ toFloat: false })).toBe("0.0")
    for (const bad of ["abc", "", "1.5.2", "e3", "1e", "in f", "0x1p3", "1_"]) {
      expect(failure(() => evalJson({ toFloat: bad }))).toMatchObject({ kind: "ValueError" })
    }
  })

  it("compareNumbers orders integers and numeric text exactly, NaN unordered", () => {
    expect(evalJson({ compareNumbers: ["0.25", "0.5"] })).toBe(-1)
    expect(evalJson({ compareNumbers: ["0.5", " 0.50 "] })).toBe(0)
    expect(evalJson({ compareNumbers: [1, "0.999"] })).toBe(1)
    expect(evalJson({ compareNumbers: ["1e3", 1000] })).toBe(0)
    expect(evalJson({ compareNumbers: [true, "1.0"] })).toBe(0)
    expect(evalJson({ compareNumbers: [3, 2] })).toBe(1)
    expect(evalJson({ compareNumbers: ["nan", "nan"] })).toBe(null)
    expect(evalJson({ compareNumbers: [1, "nan"] })).toBe(null)
    expect(evalJson({ compareNumbers: ["-inf", -(2 ** 53)] })).toBe(-1)
    // 2^63 - 1 is not a double: the nearest one, 2^63, is larger, and Python says so too
    expect(Evaluator.evaluate(Term.compareNumbers(Term.lit(2n ** 63n - 1n), Term.lit("9223372036854775807.0")))).toBe(-1)
    expect(Evaluator.evaluate(Term.compareNumbers(Term.lit("9.3e18"), Term.lit(2n ** 63n - 1n)))).toBe(1)
    // the text is read as a double first: -2^63 - 0.5 rounds to -2^63 (Python: -2**63 == float("-9223372036854775808.5"))
    expect(Evaluator.evaluate(Term.compareNumbers(Term.lit(-(2n ** 63n)), Term.lit("-9223372036854775808.5")))).toBe(0)
    expect(Evaluator.evaluate(Term.compareNumbers(Term.lit(2n ** 62n + 1n), Term.lit("4611686018427387904.0")))).toBe(1)
    expect(failure(() => evalJson({ compareNumbers: ["abc", 1] }))).toMatchObject({ kind: "ValueError" })
    expect(failure(() => evalJson({ compareNumbers: [[1], 1] }))).toMatchObject({ kind: "TypeError" })
  })

  it("a guard whose validator raises judges the output invalid and falls back", () => {
    const agent = Term.lam("v", Term.var("v"))
    const raising = Term.lam("x", Term.gt(Term.toInt(Term.var("x")), Term.lit(5)))
    const run = (input: string, fallback: Term.Fallback) =>
      Evaluator.evaluate(Term.app(Term.guard({ agent, validate: raising, retry: 1, fallback }), Term.lit(input)), { trace: "agent" })
    expect(run(" 7 ", "error")).toBe(" 7 ")
    const detailed = Evaluator.evaluateDetailed(Term.app(Term.guard({ agent, validate: raising, retry: 0, fallback: "empty" }), Term.lit("abc")), {
      trace: "agent"
    })
    expect(detailed.trace.filter((e) => e.kind === "guard")).toEqual([
      expect.objectContaining({ name: "invalid", output: "abc", error: 'the validator raised ValueError: toInt: "abc" is not an integer' })
    ])
    expect(run("abc", "empty")).toBe("")
    expect(run("abc", "last")).toBe("abc")
    const failed = failure(() => run("abc", "error"))
    expect(failed).toMatchObject({ kind: "ValidationError" })
    expect(failed.message).toContain('the validator raised ValueError: toInt: "abc" is not an integer')
    // the run's own errors outside the validator still stop it
    expect(
      failure(() =>
        Evaluator.evaluate(
          Term.app(Term.guard({ agent: Term.lam("v", Term.length(Term.var("v"))), validate: raising, retry: 0, fallback: "empty" }), Term.lit(3))
        )
      )
    ).toMatchObject({ kind: "TypeError" })
  })

  it("a guard never catches an exhausted budget in its validator", () => {
    const loop = Term.app(Term.lam("f", Term.app(Term.var("f"), Term.var("f"))), Term.lam("f", Term.app(Term.var("f"), Term.var("f"))))
    const spinning = Term.lam("x", loop)
    const guarded = Term.app(Term.guard({ agent: Term.lam("v", Term.var("v")), validate: spinning, retry: 0, fallback: "empty" }), Term.lit("a"))
    expect(failure(() => Evaluator.evaluate(guarded, { budget: { steps: 500 } }))).toMatchObject({ _tag: "BudgetExceeded", budget: "steps" })
  })

  it("pairs", () => {
    expect(evalJson({ fst: { pair: [1, 2] } })).toBe(1)
    expect(evalJson({ snd: { pair: [1, 2] } })).toBe(2)
    expect(evalJson({ pair: [1, [true, null]] })).toEqual({ pair: [1, [true, null]] })
    expect(failure(() => evalJson({ fst: [1, 2] }))).toMatchObject({ kind: "TypeError" })
  })

  it("fold is a left fold over (accumulator, item) pairs", () => {
    const reverse = { fold: [{ lam: "p", body: { cons: { head: { snd: { var: "p" } }, tail: { fst: { var: "p" } } } } }, { nil: true }, [1, 2, 3]] }
    expect(evalJson(reverse)).toEqual([3, 2, 1])
    const subtract = { fold: [{ lam: "p", body: { sub: [{ fst: { var: "p" } }, { snd: { var: "p" } }] } }, 10, [1, 2, 3]] }
    expect(evalJson(subtract)).toBe(4)
    expect(failure(() => evalJson({ fold: [1, 0, 5] }))).toMatchObject({ kind: "TypeError", message: expect.stringContaining("third argument") })
    expect(failure(() => evalJson({ fold: [1, 0, [1]] }))).toMatchObject({ kind: "TypeError", message: expect.stringContaining("first argument") })
    expect(failure(() => evalJson({ fold: [1, 0, []] }))).toMatchObject({ kind: "TypeError" })
  })

  it("closures capture their environment lexically", () => {
    const adder = { app: { func: { lam: "x", body: { lam: "y", body: { add: [{ var: "x" }, { var: "y" }] } } }, arg: 10 } }
    expect(evalJson({ app: { func: adder, arg: 5 } })).toBe(15)
    const shadow = { app: { func: { lam: "x", body: { app: { func: { lam: "x", body: { var: "x" } }, arg: 2 } } }, arg: 1 } }
    expect(evalJson(shadow)).toBe(2)
    expect(failure(() => evalJson({ var: "nope" }))).toMatchObject({ kind: "Unbound", path: [] })
    expect(failure(() => evalJson({ app: { func: 1, arg: 2 } }))).toMatchObject({ kind: "TypeError" })
  })

  it("quote returns code as data; eval runs it in the current lexical scope", () => {
    expect(evalJson({ quote: { add: [1, 2] } })).toEqual({ quote: { add: [1, 2] } })
    expect(evalJson({ eval: { quote: { add: [1, 2] } } })).toBe(3)
    expect(evalJson({ app: { func: { lam: "x", body: { eval: { quote: { mul: [{ var: "x" }, 2] } } } }, arg: 21 } })).toBe(42)
    expect(failure(() => evalJson({ eval: 5 }))).toMatchObject({ kind: "TypeError" })
  })

  it("functions encode as closures, and results can be fed back as input", () => {
    expect(evalJson({ lam: "x", body: { var: "x" } })).toEqual({ closure: { lam: "x", body: { var: "x" } } })
    const result = run({ lam: "p", body: { pair: [{ snd: { var: "p" } }, { fst: { var: "p" } }] } }, { pair: [1, [2, 3]] })
    expect(result).toEqual({ pair: [[2, 3], 1] })
    expect(run({ lam: "p", body: { var: "p" } }, result)).toEqual(result)
  })
})

describe("tools: self, code_of, eval, continue", () => {
  it("runs a named tool (square)", () => {
    expect(Value.toJson(Evaluator.runTool("square", 7, { tools: { square: json(square) } }).value)).toBe(49)
    expect(Value.toJson(Evaluator.runTool("square", "7", { tools: { square: json(square) } }).value)).toBe(49)
  })

  it("self-recursion: factorial and fib(25) under the default budget", () => {
    const factorial = json({
      lam: "n",
      body: {
        if: { cond: { lte: [{ var: "n" }, 1] }, then: 1, else: { mul: [{ var: "n" }, { app: { func: { self: true }, arg: { sub: [{ var: "n" }, 1] } } }] } }
      }
    })
    expect(Evaluator.runTool("f", 20, { tools: { f: factorial } }).value).toBe(2432902008176640000n)
    expect(Evaluator.runTool("fib", 25, { tools: { fib } }).value).toBe(75025)
  })

  it("continue returns a structured continuation whose step counts up across round trips", () => {
    const tools = { factorial: json(factorialAcc) }
    let input: unknown = { pair: [5, 1] }
    let step = 0
    const seen: Array<number> = []
    for (;;) {
      const { value } = Evaluator.runTool("factorial", input, { tools, step })
      if (!(value instanceof Value.Continuation)) {
        expect(value).toBe(120)
        break
      }
      const encoded = Value.toJson(value) as { type: string; tool: string; next_input: unknown; step: number }
      expect(encoded.type).toBe("continuation")
      expect(encoded.tool).toBe("factorial")
      seen.push(encoded.step)
      input = encoded.next_input
      step = encoded.step
    }
    expect(seen).toEqual([1, 2, 3, 4])
  })

  it("continue and self outside a tool are runtime errors", () => {
    expect(failure(() => run({ lam: "x", body: { continue: { input: 1 } } }, 1))).toMatchObject({ kind: "RuntimeError" })
    expect(failure(() => run({ lam: "x", body: { self: true } }, 1))).toMatchObject({ kind: "RuntimeError" })
    expect(failure(() => evalJson({ code_of: "self" }))).toMatchObject({ kind: "RuntimeError" })
    expect(failure(() => evalJson({ code_of: "nope" }))).toMatchObject({ kind: "RuntimeError" })
  })

  it("system context cannot be forged by binding variables", () => {
    const forged = { app: { func: { lam: "__tool_name", body: { continue: { input: 1 } } }, arg: "x" } }
    expect(failure(() => evalJson(forged))).toMatchObject({ kind: "RuntimeError" })
  })

  it("map via fold (reversed, as a left fold gives)", () => {
    const tools = { map: json(map) }
    const doubled = { app: { func: { app: { func: { eval: { code_of: "map" } }, arg: { lam: "x", body: { mul: [{ var: "x" }, 2] } } } }, arg: [1, 2, 3] } }
    expect(evalJson(doubled, { tools })).toEqual([6, 4, 2])
  })

  it("mutual recursion via eval + code_of, bounded by the eval depth", () => {
    const tools = { is_even: json(isEven), is_odd: json(isOdd) }
    expect(Evaluator.runTool("is_even", 10, { tools }).value).toBe(true)
    expect(Evaluator.runTool("is_even", 7, { tools }).value).toBe(false)
    expect(Evaluator.runTool("is_even", 100, { tools }).value).toBe(true)
    expect(failure(() => Evaluator.runTool("is_even", 101, { tools }))).toMatchObject({ _tag: "BudgetExceeded", budget: "evalDepth" })
  })

  it("code_of returns a tool's source; code_of self the running tool's lambda", () => {
    const tools = { square: json(square) }
    expect(evalJson({ code_of: "square" }, { tools })).toEqual({ quote: square })
    const quine = json({ lam: "x", body: { code_of: "self" } })
    expect(Value.toJson(Evaluator.run(quine, 0, { tool: "q" }).value)).toEqual({ quote: Term.encode(quine) })
  })

  it("a non-function tool returns its value and ignores the input", () => {
    expect(run(42, "ignored")).toBe(42)
  })
})

describe("input normalisation", () => {
  it("follows the documented rules", () => {
    expect(Evaluator.normalizeInput("42")).toBe(42)
    expect(Evaluator.normalizeInput('"42"')).toBe(42)
    expect(Evaluator.normalizeInput('[1,"2"]')).toEqual([1, 2])
    expect(Evaluator.normalizeInput("007")).toBe(7)
    expect(Evaluator.normalizeInput("0x1F")).toBe(31)
    expect(Evaluator.normalizeInput("0o17")).toBe(15)
    expect(Evaluator.normalizeInput("TRUE")).toBe(true)
    expect(Evaluator.normalizeInput("null")).toBe(null)
    expect(Evaluator.normalizeInput(2.5)).toBe(2)
    expect(Evaluator.normalizeInput(3.5)).toBe(4)
    expect(Evaluator.normalizeInput("hello")).toBe("hello")
    expect(Evaluator.normalizeInput({ pair: ["1", "null"] })).toEqual({ pair: [1, null] })
    expect(Evaluator.normalizeInput({ var: "42" })).toEqual({ var: "42" })
    expect(Evaluator.normalizeInput("9223372036854775807")).toBe(9223372036854775807n)
  })

  it("string inputs can carry code", () => {
    expect(run({ lam: "x", body: { var: "x" } }, '{"add":[1,2]}')).toBe(3)
    expect(run({ lam: "x", body: { var: "x" } }, "plain text")).toBe("plain text")
  })

  it("rejects over-size input text with a size error", () => {
    const e = failure(() => Evaluator.readInput("x".repeat(2000), { inputBytes: 1000 }))
    expect(e).toMatchObject({ _tag: "EvalError", kind: "InputTooLarge" })
    expect(Evaluator.readInput("[1,2]")).toEqual([1, 2])
  })
})

describe("limits", () => {
  it("non-tail recursion 100,000 deep works", () => {
    const sumTo = T.lam("n", T.if(T.eq(T.var("n"), T.lit(0)), T.lit(0), T.add(T.var("n"), T.app(T.self, T.sub(T.var("n"), T.lit(1))))))
    expect(Evaluator.runTool("s", 100_000, { tools: { s: sumTo } }).value).toBe(5000050000)
  })

  it("a 1,000,000-element list input works", () => {
    const big = Array.from({ length: 1_000_000 }, (_, i) => i)
    expect(Evaluator.run(sumFold, big).value).toBe(499999500000)
    expect(Evaluator.run(sumFold, JSON.stringify(big)).value).toBe(499999500000)
  })

  it("omega and self-loops end in a budget error (a step budget, not a timer)", () => {
    const omega = T.lam("x", T.app(T.var("x"), T.var("x")))
    for (const f of [
      () => Evaluator.evaluate(T.app(omega, omega)),
      () => Evaluator.runTool("loop", 1, { tools: { loop: T.lam("x", T.app(T.self, T.var("x"))) } }),
      () => Evaluator.runTool("grow", 1, { tools: { grow: T.lam("x", T.add(T.lit(1), T.app(T.self, T.var("x")))) } })
    ]) {
      const e = failure(f)
      expect(e._tag).toBe("BudgetExceeded")
      expect((e as Errors.BudgetExceeded).steps).toBeGreaterThan(0)
    }
  })

  it("budget errors carry the steps used", () => {
    const e = failure(() =>
      Evaluator.evaluate(T.app(T.lam("x", T.app(T.var("x"), T.var("x"))), T.lam("x", T.app(T.var("x"), T.var("x")))), { budget: { steps: 1000 } })
    )
    expect(e).toMatchObject({ _tag: "BudgetExceeded", budget: "steps", limit: 1000 })
    expect((e as Errors.BudgetExceeded).steps).toBeGreaterThan(1000)
    expect((e as Errors.BudgetExceeded).steps).toBeLessThan(1010)
    const d = failure(() => Evaluator.runTool("g", 1, { tools: { g: T.lam("x", T.add(T.lit(1), T.app(T.self, T.var("x")))) }, budget: { depth: 500 } }))
    expect(d).toMatchObject({ budget: "depth", limit: 500 })
  })

  it("the wall-time budget stops long computations", () => {
    const e = failure(() =>
      Evaluator.evaluate(T.app(T.lam("x", T.app(T.var("x"), T.var("x"))), T.lam("x", T.app(T.var("x"), T.var("x")))), { budget: { steps: 1e12, timeMs: 50 } })
    )
    expect(e).toMatchObject({ budget: "time" })
  })

  it("a term nested 1,000,000 deep ends in a result or a clear error", () => {
    const depth = 1_000_000
    const term = Term.parseText('{"add":[1,'.repeat(depth) + "0" + "]}".repeat(depth))
    expect(Evaluator.evaluate(term, { budget: { depth: 2_000_000 } })).toBe(depth)
    expect(failure(() => Evaluator.evaluate(term, { budget: { depth: 500_000 } }))).toMatchObject({ _tag: "BudgetExceeded", budget: "depth" })
  }, 180_000)

  it("deep nesting never overflows the JavaScript stack in encoding and analyses", () => {
    const depth = 200_000
    const text = "[".repeat(depth) + "]".repeat(depth)
    const term = Term.parseText(text)
    expect(Term.toJsonText(term)).toBe(text)
    expect(Term.size(term)).toBe(depth)
    expect(Term.freeVariables(term).size).toBe(0)
    expect(Value.toJsonText(Evaluator.evaluate(term))).toBe(text)
  }, 120_000)

  it("10 MB strings work", () => {
    const big = "ab".repeat(5 * 1024 * 1024)
    expect(Evaluator.run(T.lam("s", T.length(T.concat(T.var("s"), T.var("s")))), big).value).toBe(4 * 5 * 1024 * 1024)
  })

  it("is deterministic: same term and input give the same result and trace", () => {
    const a = Evaluator.runTool("fib", 12, { tools: { fib }, trace: "beta" })
    const b = Evaluator.runTool("fib", 12, { tools: { fib }, trace: "beta" })
    expect(a.value).toBe(b.value)
    expect(a.steps).toBe(b.steps)
    expect(a.trace).toEqual(b.trace)
    expect(a.trace.length).toBeGreaterThan(100)
    expect(a.trace[0]).toMatchObject({ kind: "beta", name: "n" })
  })
})

describe("trace levels", () => {
  it("off records nothing; beta records every β-reduction", () => {
    const t = T.app(T.lam("x", T.app(T.lam("y", T.var("y")), T.var("x"))), T.lit(1))
    expect(Evaluator.evaluateDetailed(t).trace).toEqual([])
    const beta = Evaluator.evaluateDetailed(t, { trace: "beta" }).trace
    expect(beta.map((e) => e.name)).toEqual(["x", "y"])
    expect(beta[0]!.input).toBe("1")
  })
})

describe("oracles", () => {
  it("the machine stops at a node it cannot reduce and resumes with the answer", () => {
    const term = T.add(T.app(T.tool("double"), T.lit(20)), T.app(T.tool("double"), T.lit(1)))
    const exec = Evaluator.start(term)
    const requests: Array<unknown> = []
    let step = exec.next()
    while (step._tag === "Suspended") {
      const request = step.request
      if (request.kind !== "tool") throw new Error("unexpected request")
      requests.push(request.name)
      step = exec.resume((request.input as number) * 2)
    }
    expect(step.value).toBe(42)
    expect(requests).toEqual(["double", "double"])
  })

  it("a request is a value: a ReAct thinking request kept by its reader keeps the conversation it was made with", () => {
    const react = T.react({ think: T.llm({ system: "Use tools." }), tools: ["add"], maxSteps: 3 })
    const exec = Evaluator.start(T.app(react, T.lit("start")))
    const kept: Array<Oracle.LlmRequest> = []
    let step = exec.next()
    while (step._tag === "Suspended") {
      const request = step.request
      if (request.kind === "llm") kept.push(request)
      step = exec.resume(request.kind === "llm" ? '{"tool":"add","args":{"a":1,"b":2}}' : 3)
    }
    expect(kept.map((request) => request.transcript?.length)).toEqual([1, 3, 5])
    expect(kept[1]!.transcript).toEqual([
      { role: "user", content: "start" },
      { role: "assistant", content: '{"tool":"add","args":{"a":1,"b":2}}' },
      { role: "user", content: "Observation: 3" }
    ])
  })

  it("pure evaluation of a term that needs an oracle is a clear error", () => {
    expect(failure(() => Evaluator.evaluate(T.app(T.tool("search"), T.lit("q"))))).toMatchObject({
      kind: "OracleError",
      message: expect.stringContaining('tool "search"')
    })
  })
})
