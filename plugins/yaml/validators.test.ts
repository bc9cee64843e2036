import { Errors, Evaluator, Term, Value } from "lambdagent"
import { describe, expect, it } from "vitest"
import { builtinImplementations, builtinTools, evaluateValidator, evaluateWithBuiltins, isBuiltinTool, runBuiltin } from "./builtins.ts"
import { SchemaError } from "./errors.ts"
import { builtinToolNames, compileValidator, compileValidatorExpr, parseValidator, ValidatorSyntaxError } from "./validators.ts"

const usesTools = (t: Term.Term): boolean => {
  const stack = [t]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node._tag === "Tool") return true
    stack.push(...Term.children(node))
  }
  return false
}

describe("validators that compile to pure terms", () => {
  // expression, output, expected truth — evaluated by the core evaluator alone
  const cases: ReadonlyArray<readonly [string, string, boolean]> = [
    ["len(x) > 100", "short", false],
    ["len(x) > 3", "long enough", true],
    ["len(x) >= 5 and len(x) <= 10", "12345", true],
    ["0 < len(x) <= 3", "abcd", false],
    ["0 < len(x) <= 3", "abc", true],
    ["x == 'yes'", "yes", true],
    ["x != 'yes'", "yes", false],
    ["x in ['a', 'b']", "b", true],
    ["x not in ['a', 'b']", "b", false],
    ["x in []", "a", false],
    ["x", "", false],
    ["x", "anything", true],
    ["not x", "", true],
    ["bool(len(x))", "", false],
    ["len(x) % 2 == 0", "four", true],
    ["len(x) // 2 == 2", "fives", true],
    ["len(x) * 2 - 1 == 9", "fives", true],
    ["-len(x) < -3", "four", true],
    ["abs(3 - len(x)) == 2", "a", true],
    ["min(len(x), 10) == 4 and max(len(x), 10) == 10", "four", true],
    ["'pre' + x == 'prefix'", "fix", true],
    ["(len(x) if x else 99) == 99", "", true],
    ["(x or 'default') == 'default'", "", true],
    ["(x and 'set') == 'set'", "y", true],
    ["x is not None", "y", true],
    ["x == 'a\\nb' and 'tab\\there' == 'tab' + '\\t' + 'here'", "a\nb", true],
    ["x == 'it''s'", "its", true],
    ["len(x) < 9223372036854775807", "x", true],
    ["True and not False", "", true],
    ["x > 'm'", "z", true],
    // the Python reference's builtins str, int, float, isinstance and comprehensions
    ["len(str(x)) > 3", "hello", true],
    ["str(True) == 'True' and str(None) == 'None' and str(12) == '12' and str(x) == x", "s", true],
    ["int(True) + int(3) == 4 and float(2) == 2 and float(True) == 1.0", "", true],
    // numbers read out of the output, by Python's int() and float()
    ["int(x) > 5", "7", true],
    ["int(x) > 5", " 12\n", true],
    ["int(x) > 5", "-3", false],
    ["int(x.strip()) == 1000", " 1_000 ", true],
    ["int(x) == 9223372036854775807", "9223372036854775807", true],
    ["float(x) <= 0.5", "0.25", true],
    ["float(x) <= 0.5", "0.75", false],
    ["float(x) <= 0.5", "5e-1", true],
    ["float(x) < 0.5", "0.5", false],
    ["float(x) >= -1.5e2", "-150", true],
    ["len(x) > 1.5 and len(x) == 2.0", "ab", true],
    ["float(x) == 1000", "1e3", true],
    ["0.1 < float(x) < 1", "0.3", true],
    ["float(x) != float(x)", "nan", true],
    ["float(x) > 0.5 or float(x) <= 0.5", "nan", false],
    ["float(x) > 1e308", "inf", true],
    ["str(float(x)) == '1000.0'", "1e3", true],
    ["isinstance(float(x), float) and not isinstance(float(x), str)", "2", true],
    ["bool(float(x))", "0.0", false],
    ["bool(float(x))", "nan", true],
    ["isinstance(x, str) and not isinstance(x, (int, list))", "hi", true],
    ["isinstance(1, int) and isinstance(True, int) and not isinstance(1, float)", "", true],
    ["all(w not in x for w in ['error', 'sorry'])", "all good", true],
    ["all(w not in x for w in ['error', 'sorry'])", "an error", false],
    ["any(w in x.lower() for w in ('yes', 'ok'))", "OK then", true],
    ["[len(w) for w in ['a', 'bb', 'ccc'] if len(w) > 1] == [2, 3]", "", true],
    ["sum(1 for w in ['a', 'b', 'c'] if w in x if w != 'c') == 2", "abc", true],
    ["[x for x in [1, 2]] == [1, 2] and x == 'outer'", "outer", true]
  ]

  it.each(cases)("%s on %j is %s", (expression, output, expected) => {
    const validator = compileValidator(expression)
    expect(usesTools(validator)).toBe(false)
    expect(Evaluator.evaluate(Term.app(validator, Term.lit(output)))).toBe(expected)
  })

  // Tuples (lists here) and sum/all/any, as the Python reference's validators write them.
  const listCases: ReadonlyArray<readonly [string, ReadonlyArray<string | number>, boolean]> = [
    ["all(x)", ["a", "b"], true],
    ["all(x)", ["a", ""], false],
    ["all(x)", [], true],
    ["any(x)", ["", "b"], true],
    ["any(x)", ["", 0], false],
    ["any([])", [], false],
    ["sum(x) == 6", [1, 2, 3], true],
    ["sum(x) > 0", [], false],
    ["sum((1, 2, 3)) == 6", [], true],
    ["'b' in x and x != ()", ["a", "b"], true],
    ["len(x) == len((1,)) + 1", ["a", "b"], true],
    ["isinstance(x, (list, tuple)) and not isinstance(x, str)", ["a"], true],
    ["len(str(x)) == len('[1,2]')", [1, 2], true],
    ["all(len(r) > 1 for r in x)", ["ab", "cd"], true],
    ["all(len(r) > 1 for r in x)", ["ab", "c"], false],
    ["[r for r in x if r] == ['a']", ["", "a"], true]
  ]
  it.each(listCases)("%s on %j is %s", (expression, output, expected) => {
    const validator = compileValidator(expression)
    expect(Evaluator.evaluate(Term.app(validator, Term.list(output.map((v) => Term.lit(v)))))).toBe(expected)
  })

  it.each([
    ["x in ('yes', 'no')", "no", true],
    ["x in ('yes', 'no',)", "maybe", false],
    ["x not in ()", "a", true],
    ["(len(x), 'a') == [1, 'a']", "z", true]
  ] as const)("%s on %j is %s (a tuple is a list)", (expression, output, expected) => {
    expect(Evaluator.evaluate(Term.app(compileValidator(expression), Term.lit(output)))).toBe(expected)
  })

  it("compile to λx. …", () => {
    const v = compileValidator("len(x) > 100")
    expect(v).toEqual(Term.lam("x", Term.gt(Term.length(Term.var("x")), Term.lit(100))))
  })
})

describe("validators that need the string builtins", () => {
  const cases: ReadonlyArray<readonly [string, string, boolean]> = [
    ["'error' not in x", "all good", true],
    ["'error' not in x", "an error occurred", false],
    ["'err' in x.lower()", "ERROR", true],
    ["x.startswith('{')", '{"a": 1}', true],
    ["x.startswith('{')", " {", false],
    ["x.strip().startswith('{')", '  {"a": 1}', true],
    ["x.endswith('.')", "Done.", true],
    ["x.strip()", "   ", false],
    ["x.strip() == 'ok'", "\n ok \t", true],
    ["x.lstrip() == 'ok '", "  ok ", true],
    ["x.rstrip() == '  ok'", "  ok  ", true],
    ["x.lower() == 'yes'", "YeS", true],
    ["x.upper() == 'NO'", "no", true],
    ["is_json(x)", '{"a": [1, 2]}', true],
    ["is_json(x)", "{a: 1}", false],
    ["is_json(x)", "", false],
    ["is_json(x) and x.startswith('[')", "[1, 2]", true],
    ["len(x) > 100 or 'summary' in x", "a summary", true]
  ]

  it.each(cases)("%s on %j is %s", (expression, output, expected) => {
    expect(evaluateValidator(compileValidator(expression), output)).toBe(expected)
  })

  it("compile to pure terms that the evaluator runs without any tool", () => {
    const v = compileValidator("'error' not in x and x.strip().lower().startswith('{') and is_json(x)")
    expect(Term.capabilities(v).tools.size).toBe(0)
    expect(Evaluator.evaluate(Term.app(v, Term.lit(' {"ok": true} ')))).toBe(true)
    expect(Evaluator.evaluate(Term.app(v, Term.lit('{"error": 1}')))).toBe(false)
    expect(() => Evaluator.evaluate(Term.app(compileValidator("x.startswith('a')"), Term.lit(1)))).toThrow(Errors.EvalError)
  })

  it("ship every builtin as a tool definition", () => {
    expect(builtinTools.map((t) => t.name).sort()).toEqual(Object.keys(builtinImplementations).sort())
    for (const name of Object.values(builtinToolNames)) expect(isBuiltinTool(name)).toBe(true)
    expect(builtinTools.find((t) => t.name === "__builtin_contains")?.input?.safeParse(["a", "b"]).success).toBe(true)
    expect(isBuiltinTool("search")).toBe(false)
  })

  it("implement membership in lists and JSON parsing", () => {
    expect(runBuiltin("__builtin_contains", Value.fromArray([Value.fromArray([1, 2]), 2]))).toBe(true)
    expect(runBuiltin("__builtin_parse_json", '```json\n{"b": 1,  "a": [true]}\n```')).toBe('{"b":1,"a":[true]}')
    expect(() => runBuiltin("__builtin_parse_json", "no json here")).toThrow(/not JSON/)
    expect(runBuiltin("__builtin_parse_number", "2.5")).toBe(2)
    expect(runBuiltin("__builtin_parse_number", "-7")).toBe(-7)
    expect(() => runBuiltin("__builtin_parse_number", "seven")).toThrow(/not a number/)
    expect(runBuiltin("__builtin_parse_boolean", "No.")).toBe(false)
    expect(() => runBuiltin("__builtin_parse_boolean", "maybe")).toThrow(/yes\/no/)
  })

  it("reject a validator that does not return a boolean", () => {
    expect(() => evaluateValidator(Term.lam("x", Term.lit(1)), "a")).toThrow(/not a boolean/)
    expect(() => evaluateWithBuiltins(Term.lam("x", Term.app(Term.tool("search"), Term.var("x"))), "a")).toThrow(/only a runtime/)
  })
})

describe("rejected expressions", () => {
  const rejected: ReadonlyArray<readonly [string, RegExp, number]> = [
    ["__import__('os').system('rm -rf /')", /__import__ is not allowed/, 0],
    ["eval('1')", /eval is not allowed/, 0],
    ["open('/etc/passwd')", /open is not allowed/, 0],
    ["x.__class__", /attribute access \(\.__class__\) is not allowed/, 2],
    ["x.__class__()", /unknown method \.__class__\(\)/, 2],
    ["x.foo()", /unknown method \.foo\(\)/, 2],
    ["x[0] == 'a'", /indexing and slicing/, 1],
    ["lambda y: y", /lambda is not supported/, 0],
    ["len(x) / 2 > 1", /true division/, 7],
    ["2 ** 3 > 1", /power/, 2],
    ["y > 1", /unknown name y: the output is x/, 0],
    ["len(x) > 'a'", /cannot order an integer against a string/, 0],
    ["x.startswith(1)", /needs a string/, 13],
    ["len(1)", /len\(\) needs a string or a list/, 4],
    ["len(x, x)", /len\(\) takes 1 argument/, 0],
    ["x == 'unterminated", /unterminated string/, 5],
    ["x = 'a'", /= is assignment/, 2],
    ["", /expected an expression/, 0],
    ["len(x) >", /expected a value, found the end/, 8],
    ["len(x) > 1 2", /expected an operator or the end/, 11],
    ["f'{x}'", /string prefixes/, 0],
    ["x == true", /write True/, 5],
    ["(1, 2", /expected "," or "\)"/, 5],
    ["sum(x, 1)", /sum\(\) takes 1 argument, got 2/, 0],
    ["all('ab')", /all\(\) needs a list, not a string/, 4],
    ["[c for c in 'abc']", /iterating over the characters of a string is not supported/, 12],
    ["[a for a, b in x]", /unpacking several variables/, 8],
    ["[a for a in [1] for b in [2]]", /several for clauses/, 16],
    ["[a(1) for a in [1]]", /a is a comprehension variable, not a function/, 1],
    ["a for a in [1]", /unknown name a: the output is x/, 0],
    ["x > 0.5", /comparing the output with a float: the output is text, write float\(x\)/, 0],
    ["float(x) + 1 > 2", /\+ on floats is not supported/, 0],
    ["float(x) == 'a'", /== between a float and a string is always False/, 0],
    ["int(float(x)) > 1", /int\(\) needs an integer or a boolean or a string, not a float/, 4],
    ["len(x) > 1.5.2", /expected a method name after "."/, 13],
    ["float(x) > 1_.5", /malformed number/, 11],
    ["isinstance(x, len)", /unknown name len/, 14],
    ["isinstance(x, 'str')", /isinstance\(\) takes a type or a tuple of types/, 14],
    ["str == x", /str is a type: use it as isinstance/, 0],
    ["while x", /loops are not supported/, 0],
    ["max(x)", /max\(\) takes at least 2 arguments/, 0],
    ["x.strip('a')", /\.strip\(\) takes 0 arguments/, 0],
    ["1 == 'a'", /always False/, 0],
    ["x + x == 'aa'", /ambiguous/, 0],
    ["99999999999999999999 > len(x)", /does not fit in a 64-bit integer/, 0],
    ["x $ 1", /unexpected character "\$"/, 2]
  ]

  it.each(rejected)("%s", (expression, message, offset) => {
    try {
      parseAndCompile(expression)
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(ValidatorSyntaxError)
      expect((e as ValidatorSyntaxError).message).toMatch(message)
      expect((e as ValidatorSyntaxError).offset).toBe(offset)
    }
  })

  it("limits length and nesting", () => {
    expect(() => parseValidator("x" + " and x".repeat(3000))).toThrow(/longer than 10000|nests deeper/)
    expect(() => parseValidator("(".repeat(300) + "x" + ")".repeat(300))).toThrow(/nests deeper than 200/)
    expect(() => parseValidator(Array(250).fill("len(x) > 0").join(" and "))).toThrow(/nests deeper than 200/)
  })

  it("turn into a SchemaError with a caret under the problem", () => {
    try {
      compileValidator("len(x) > 0 and y")
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(SchemaError)
      const err = e as SchemaError
      expect([err.line, err.column]).toEqual([1, 16])
      expect(err.message).toBe("1:16: (root): invalid validator at character 16: unknown name y: the output is x\n    len(x) > 0 and y\n                   ^")
    }
  })
})

/** Parse and compile without the SchemaError wrapper, so the syntax error's offset shows. */
const parseAndCompile = (expression: string) => compileValidatorExpr(parseValidator(expression))
