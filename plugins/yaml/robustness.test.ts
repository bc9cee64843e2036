import fc from "fast-check"
import { Term } from "lambdagent"
import { describe, expect, it } from "vitest"
import { compileConfig, fromConfig } from "./compile.ts"
import { isYamlError } from "./errors.ts"
import { lint } from "./lint.ts"
import { compileValidator } from "./validators.ts"
import { evaluateValidator } from "./builtins.ts"

/** Values shaped like agent files: known keys with arbitrary (often wrong) values. */
const keys = ["type", "systemPrompt", "model", "react", "chain", "router", "parallel", "mcp", "memory", "guard", "rag", "runtime", "name", "steps", "routes", "agents", "classifier", "prompt", "temperature", "maxSteps", "validator", "localTools", "onlineTool", "merge", "default"]
const scalar = fc.oneof(fc.constantFrom("simple", "react", "chain", "router", "parallel", "custom", "terminate", "len(x) > 1", ""), fc.integer({ min: -3, max: 200 }), fc.boolean(), fc.constant(null), fc.double({ noNaN: true }))
const agentish = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...keys), tie("value"), { maxKeys: 5 })
  )
})).value

describe("robustness", () => {
  it("compiling any value either gives a well-formed term or throws one of the plugin's errors", () => {
    fc.assert(
      fc.property(agentish, (value) => {
        try {
          const { term } = compileConfig(value)
          expect(Term.parse(Term.encode(term))).toEqual(term)
        } catch (e) {
          if (!isYamlError(e)) throw e
        }
      }),
      { numRuns: 2000 }
    )
  })

  it("linting any YAML-ish text never throws", () => {
    const text = fc.array(fc.constantFrom("type: react\n", "systemPrompt: x\n", "model: {name: m}\n", "react:\n", "  maxSteps: 0\n", "mcp: {localTools: [a]}\n", "- x\n", ": :\n", "  routes: {}\n", "router:\n", "\t\n", "guard: {validator: 'len(x'}\n", "[\n"), { maxLength: 8 }).map((l) => l.join(""))
    fc.assert(
      fc.property(text, (yaml) => {
        const result = lint(yaml)
        expect(result.error === undefined || isYamlError(result.error)).toBe(true)
      }),
      { numRuns: 1000 }
    )
  })

  it("validator compilation only ever fails with a SchemaError, and compiled validators return booleans", () => {
    const token = fc.constantFrom("x", "len(x)", "'a'", "1", "0", "and", "or", "not", "in", "==", "<", "(", ")", "x.strip()", "x.startswith('a')", "is_json(x)", "+", "-", "[", "]", ",", "None", "True", "if", "else")
    fc.assert(
      fc.property(fc.array(token, { minLength: 1, maxLength: 9 }), fc.string({ maxLength: 6 }), (tokens, output) => {
        let validator: Term.Term
        try {
          validator = compileValidator(tokens.join(" "))
        } catch (e) {
          expect((e as { _tag?: string })._tag).toBe("SchemaError")
          return
        }
        try {
          expect(typeof evaluateValidator(validator, output)).toBe("boolean")
        } catch (e) {
          // Only run-time type errors of the term language (e.g. x > 1 on a string) may remain.
          expect((e as { _tag?: string })._tag).toBe("EvalError")
        }
      }),
      { numRuns: 2000 }
    )
  })

  it("gives the same bytes for the same text, whatever the run", () => {
    const yaml = "type: router\nrouter:\n  classifier: {prompt: p}\n  routes:\n    b: {systemPrompt: B}\n    a: {type: react, systemPrompt: A, mcp: {localTools: [t, terminate]}}\n  default: d\n"
    const runs = new Set(Array.from({ length: 20 }, () => Term.toJsonText(fromConfig(yaml))))
    expect(runs.size).toBe(1)
  })
})
