import { readdirSync, readFileSync } from "node:fs"
import fc from "fast-check"
import { Term } from "lambdagent"
import { describe, expect, it } from "vitest"
import { parse, stringify } from "yaml"
import { compileConfig, fromConfig, loadConfig } from "./compile.ts"
import { describe as describeAgent, toLambdaExpr } from "./describe.ts"
import { isYamlError, SemanticError, type YamlError } from "./errors.ts"
import { lint, ruleIds } from "./lint.ts"
import { ruleById } from "./rules.ts"
import { compileValidator } from "./validators.ts"
import { evaluateValidator } from "./builtins.ts"

/** Values shaped like agent files: known keys with arbitrary (often wrong) values. */
const keys = [
  "type",
  "systemPrompt",
  "model",
  "react",
  "chain",
  "router",
  "parallel",
  "mcp",
  "memory",
  "guard",
  "rag",
  "runtime",
  "name",
  "steps",
  "routes",
  "agents",
  "classifier",
  "prompt",
  "temperature",
  "maxSteps",
  "validator",
  "localTools",
  "onlineTool",
  "merge",
  "default"
]
const scalar = fc.oneof(
  fc.constantFrom("simple", "react", "chain", "router", "parallel", "custom", "terminate", "len(x) > 1", ""),
  fc.integer({ min: -3, max: 200 }),
  fc.boolean(),
  fc.constant(null),
  fc.double({ noNaN: true })
)
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
    const text = fc
      .array(
        fc.constantFrom(
          "type: react\n",
          "systemPrompt: x\n",
          "model: {name: m}\n",
          "react:\n",
          "  maxSteps: 0\n",
          "mcp: {localTools: [a]}\n",
          "- x\n",
          ": :\n",
          "  routes: {}\n",
          "router:\n",
          "\t\n",
          "guard: {validator: 'len(x'}\n",
          "[\n"
        ),
        { maxLength: 8 }
      )
      .map((l) => l.join(""))
    fc.assert(
      fc.property(text, (yaml) => {
        const result = lint(yaml)
        expect(result.error === undefined || isYamlError(result.error)).toBe(true)
      }),
      { numRuns: 1000 }
    )
  })

  it("validator compilation only ever fails with a SchemaError, and compiled validators return booleans", () => {
    const token = fc.constantFrom(
      "x",
      "len(x)",
      "'a'",
      "1",
      "0",
      "and",
      "or",
      "not",
      "in",
      "==",
      "<",
      "(",
      ")",
      "x.strip()",
      "x.startswith('a')",
      "is_json(x)",
      "+",
      "-",
      "[",
      "]",
      ",",
      "None",
      "True",
      "if",
      "else"
    )
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
    const yaml =
      "type: router\nrouter:\n  classifier: {prompt: p}\n  routes:\n    b: {systemPrompt: B}\n    a: {type: react, systemPrompt: A, mcp: {localTools: [t, terminate]}}\n  default: d\n"
    const runs = new Set(Array.from({ length: 20 }, () => Term.toJsonText(fromConfig(yaml))))
    expect(runs.size).toBe(1)
  })
})

// ---------------------------------------------------------------------------------------------
// Mutations of the example files
// ---------------------------------------------------------------------------------------------

const exampleFiles = readdirSync("examples/agents")
  .filter((f) => f.endsWith(".yml"))
  .sort()
const exampleTexts = exampleFiles.map((f) => readFileSync(`examples/agents/${f}`, "utf8"))
const exampleValues = exampleTexts.map((t) => parse(t) as unknown)

type Path = ReadonlyArray<string | number>

/** Every path to a value inside `v` (the root included), parents before children. */
const pathsOf = (v: unknown, prefix: Path = []): Array<Path> => {
  const out: Array<Path> = [prefix]
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...pathsOf(x, [...prefix, i])))
  else if (typeof v === "object" && v !== null) for (const [k, x] of Object.entries(v)) out.push(...pathsOf(x, [...prefix, k]))
  return out
}
const getAt = (v: unknown, path: Path): unknown => path.reduce<unknown>((x, k) => (x as Record<string | number, unknown>)[k], v)
const parentOf = (root: unknown, path: Path) => getAt(root, path.slice(0, -1)) as Record<string | number, unknown> | Array<unknown>

/** Text that trips parsers and printers: controls, BOM, surrogates, RTL marks, YAML syntax. */
const nasty = fc.constantFrom(
  "\t",
  "\u0000",
  "\uFEFF",
  "\uD800",
  "\uDFFF",
  "\u202E",
  "\u200B",
  "🙂",
  "é",
  "ℵ",
  "\r\n",
  "\r",
  "\u2028",
  "\u0085",
  ": ",
  "- ",
  "? ",
  "&a ",
  "*a",
  "*missing",
  "!!python/object ",
  "!!binary ",
  "!custom ",
  "<<: *a",
  "\n---\n",
  "\n...\n",
  "{",
  "}",
  "[",
  "]",
  "'",
  '"',
  "|",
  ">-",
  "#",
  "%YAML 1.1\n",
  "@",
  "`",
  ",",
  "\\",
  "\n  ",
  "\n\t"
)
const oddScalar = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary", maxLength: 20 }),
  nasty,
  fc.constantFrom("simple", "react", "chain", "router", "parallel", "custom", "terminate", "", " ", "len(x", "len(x) > 1", "yes", "1e3", "0x10", "~", "null"),
  fc.integer({ min: -5, max: 300 }),
  fc.constantFrom(0, -1, 2 ** 53, Number.MAX_SAFE_INTEGER + 2, 0.5, 1.5, 2.0000001, -0, NaN, Infinity, -Infinity),
  fc.double(),
  fc.boolean(),
  fc.constant(null)
)
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: oddScalar },
  { weight: 1, arbitrary: fc.constantFrom([], {}, [null], [[]], { "": "" }, { type: "simple" }, ["terminate"]) },
  { weight: 1, arbitrary: fc.array(oddScalar, { maxLength: 3 }) },
  {
    weight: 1,
    arbitrary: fc.dictionary(fc.constantFrom("type", "systemPrompt", "prompt", "name", "routes", "steps", "agents", "validator", "x"), oddScalar, {
      maxKeys: 3
    })
  }
)

/** One edit of a parsed file; `at` and `from` pick paths modulo their count. */
type ValueEdit =
  | { readonly kind: "delete"; readonly at: number }
  | { readonly kind: "retype"; readonly at: number; readonly value: unknown }
  | { readonly kind: "rename"; readonly at: number; readonly name: string }
  | { readonly kind: "duplicate"; readonly at: number; readonly name: string }
  | { readonly kind: "graft"; readonly at: number; readonly example: number; readonly from: number }
  | { readonly kind: "nest"; readonly at: number; readonly depth: number; readonly asList: boolean }
  | { readonly kind: "huge"; readonly at: number; readonly size: number }

/** A key to rename or duplicate to: a known one, a misspelt or hostile one, or any short string. */
const keyName = fc.oneof(
  fc.constantFrom(...keys, "tool", "mergePrompt", "groupchat", "systemPromt", "__proto__", "constructor", "toString", ""),
  fc.string({ maxLength: 8 })
)
const valueEdit: fc.Arbitrary<ValueEdit> = fc.oneof(
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("retype" as const), at: fc.nat(), value: oddValue }),
  fc.record({ kind: fc.constant("rename" as const), at: fc.nat(), name: keyName }),
  fc.record({ kind: fc.constant("duplicate" as const), at: fc.nat(), name: keyName }),
  fc.record({ kind: fc.constant("graft" as const), at: fc.nat(), example: fc.nat(), from: fc.nat() }),
  fc.record({
    kind: fc.constant("nest" as const),
    at: fc.nat(),
    depth: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 190, max: 260 })),
    asList: fc.boolean()
  }),
  fc.record({ kind: fc.constant("huge" as const), at: fc.nat(), size: fc.constantFrom(10_000, 100_000) })
)

const applyValueEdit = (root: unknown, edit: ValueEdit): unknown => {
  const paths = pathsOf(root)
  const path = paths[edit.at % paths.length]!
  const replace = (value: unknown): unknown => {
    if (path.length === 0) return value
    ;(parentOf(root, path) as Record<string | number, unknown>)[path[path.length - 1]!] = value
    return root
  }
  switch (edit.kind) {
    case "delete": {
      if (path.length === 0) return {}
      const parent = parentOf(root, path)
      if (Array.isArray(parent)) parent.splice(path[path.length - 1] as number, 1)
      else delete parent[path[path.length - 1]!]
      return root
    }
    case "retype":
      return replace(edit.value)
    case "rename":
    case "duplicate": {
      const parent = path.length === 0 ? undefined : parentOf(root, path)
      if (parent === undefined || Array.isArray(parent)) return root
      const key = path[path.length - 1] as string
      const value = parent[key]
      if (edit.kind === "rename") delete parent[key]
      // A key written as data (not as an assignment), so that __proto__ stays an own key.
      Object.defineProperty(parent, edit.name, {
        value: edit.kind === "duplicate" ? structuredClone(value) : value,
        enumerable: true,
        writable: true,
        configurable: true
      })
      return root
    }
    case "graft": {
      const donor = exampleValues[edit.example % exampleValues.length]
      const donorPaths = pathsOf(donor)
      return replace(structuredClone(getAt(donor, donorPaths[edit.from % donorPaths.length]!)))
    }
    case "nest": {
      let v = getAt(root, path)
      for (let i = 0; i < edit.depth; i++) v = edit.asList ? [v] : { routes: v }
      return replace(v)
    }
    case "huge":
      return replace("λ".repeat(edit.size))
  }
}

/** One edit of a file's text. */
type TextEdit =
  | { readonly kind: "truncate"; readonly at: number }
  | { readonly kind: "insert"; readonly at: number; readonly text: string }
  | { readonly kind: "deleteLine" | "duplicateLine"; readonly line: number }
  | { readonly kind: "swapLines"; readonly line: number; readonly other: number }
  | { readonly kind: "indent"; readonly line: number; readonly by: number; readonly tab: boolean }

const textEdit: fc.Arbitrary<TextEdit> = fc.oneof(
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant("insert" as const),
    at: fc.nat(),
    text: fc.oneof(nasty, fc.string({ unit: "binary", maxLength: 6 }), fc.string({ maxLength: 12 }))
  }),
  fc.record({ kind: fc.constantFrom("deleteLine" as const, "duplicateLine" as const), line: fc.nat() }),
  fc.record({ kind: fc.constant("swapLines" as const), line: fc.nat(), other: fc.nat() }),
  fc.record({ kind: fc.constant("indent" as const), line: fc.nat(), by: fc.integer({ min: -4, max: 6 }), tab: fc.boolean() })
)

const applyTextEdit = (text: string, edit: TextEdit): string => {
  if (edit.kind === "truncate") return text.slice(0, edit.at % (text.length + 1))
  if (edit.kind === "insert") {
    const at = edit.at % (text.length + 1)
    return text.slice(0, at) + edit.text + text.slice(at)
  }
  const lines = text.split("\n")
  const i = edit.line % lines.length
  switch (edit.kind) {
    case "deleteLine":
      lines.splice(i, 1)
      break
    case "duplicateLine":
      lines.splice(i, 0, lines[i]!)
      break
    case "swapLines": {
      const j = edit.other % lines.length
      ;[lines[i], lines[j]] = [lines[j]!, lines[i]!]
      break
    }
    case "indent":
      lines[i] =
        edit.by >= 0 ? (edit.tab ? "\t" : " ".repeat(edit.by)) + lines[i] : lines[i]!.slice(Math.min(-edit.by, lines[i]!.length - lines[i]!.trimStart().length))
      break
  }
  return lines.join("\n")
}

/** The position an error names, when it names one, lies inside the text. */
const expectPositionsInside = (e: YamlError, text: string) => {
  const lines = text.split(/\r\n|\r|\n/).length
  const positions = [{ line: e.line, column: e.column }, ...("issues" in e ? e.issues : [])]
  for (const p of positions) {
    if (p.line === undefined) continue
    expect(p.line).toBeGreaterThanOrEqual(1)
    expect(p.line).toBeLessThanOrEqual(lines + 1)
    expect(p.column).toBeGreaterThanOrEqual(1)
  }
}

/**
 * What a mutated file may do: compile to a term that survives JSON, or fail with one of the
 * plugin's errors (positions inside the text); lint never throws, agrees with the compiler about
 * the problems that block compiling, and reports each finding at its rule's level; describing a
 * compiled agent never throws.
 */
const checkText = (text: string) => {
  let compiled: ReturnType<typeof loadConfig> | undefined
  let failure: YamlError | undefined
  try {
    compiled = loadConfig({ text, file: "fuzz.yml" })
  } catch (e) {
    if (!isYamlError(e)) throw e
    failure = e
    expect(e.message.length).toBeGreaterThan(0)
    expectPositionsInside(e, text)
  }
  const result = lint({ text, file: "fuzz.yml" })
  for (const f of result.findings) {
    expect(ruleIds).toContain(f.rule)
    expect(f.level).toBe(ruleById(f.rule)!.level)
  }
  if (compiled !== undefined) {
    expect(Term.parse(Term.encode(compiled.term))).toEqual(compiled.term)
    expect(result.error).toBeUndefined()
    expect(result.findings.filter((f) => ruleById(f.rule)!.blocksCompile).map((f) => f.rule)).toEqual([])
    expect(describeAgent(compiled).length).toBeGreaterThan(0)
    expect(JSON.parse(toLambdaExpr(compiled, { format: "json" })).term).toEqual(Term.encode(compiled.term))
  } else if (failure instanceof SemanticError) {
    expect(result.error).toBeUndefined()
    const errors = new Set(result.findings.filter((f) => f.level === "error").map((f) => f.rule))
    for (const issue of failure.issues) {
      expect(ruleById(issue.rule!)?.blocksCompile).toBe(true)
      expect(errors).toContain(issue.rule)
    }
  } else {
    expect(result.error?._tag).toBe(failure!._tag)
    expect(result.findings).toEqual([])
  }
}

describe("robustness on mutated example files", () => {
  it("every example passes the checks unmutated", () => {
    for (const text of exampleTexts) checkText(text)
  })

  it("deleting, retyping, renaming, duplicating and grafting keys, deep nesting and huge strings give a term or a plugin error", () => {
    fc.assert(
      fc.property(fc.nat(), fc.array(valueEdit, { minLength: 1, maxLength: 4 }), (example, edits) => {
        const value = edits.reduce(applyValueEdit, structuredClone(exampleValues[example % exampleValues.length]))
        // The parsed value, straight to the compiler…
        try {
          const { term } = compileConfig(value)
          expect(Term.parse(Term.encode(term))).toEqual(term)
        } catch (e) {
          if (!isYamlError(e)) throw e
        }
        // …and written back as YAML, through the whole pipeline.
        let text: string
        try {
          text = stringify(value)
        } catch {
          return
        }
        checkText(text)
      }),
      { numRuns: 400 }
    )
  })

  it("truncating, inserting tabs, unicode and YAML syntax, and moving lines give a term or a plugin error", () => {
    fc.assert(
      fc.property(fc.nat(), fc.array(textEdit, { minLength: 1, maxLength: 5 }), (example, edits) => {
        checkText(edits.reduce(applyTextEdit, exampleTexts[example % exampleTexts.length]!))
      }),
      { numRuns: 600 }
    )
  })
})
