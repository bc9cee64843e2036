import { mkdtempSync, readdirSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Term } from "lambdagent"
import { describe, expect, it } from "vitest"
import { agentFiles, compileCommand, lambdaCommand, lintCommand } from "./commands.ts"
import { fromConfig } from "./compile.ts"
import { LintReportSchema } from "./report.ts"

const dirWith = (files: Record<string, string>): string => {
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-yaml-"))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return dir
}

const GOOD = "type: simple\nname: Good\nsystemPrompt: Hi.\nmodel: {provider: openai, name: gpt-4o-mini}\n"
const LINT_ERROR =
  "type: react\nname: Loop\nsystemPrompt: Think.\nmodel: {provider: openai, name: gpt-4o-mini}\nreact: {maxSteps: 5}\nmcp: {localTools: [search]}\n"
const TYPO = "type: simple\nsystemPromt: Hi.\n"

describe("agentFiles", () => {
  it("lists a directory's .yml and .yaml files in name order, or the file itself", () => {
    const dir = dirWith({ "b.yaml": GOOD, "a.yml": GOOD, "notes.txt": "x" })
    expect(agentFiles(dir)).toEqual([join(dir, "a.yml"), join(dir, "b.yaml")])
    expect(agentFiles("examples/agents/simple.yml")).toEqual(["examples/agents/simple.yml"])
    expect(agentFiles("no/such/dir")).toBeUndefined()
  })
})

describe("compileCommand", () => {
  it("prints the structure and exits 0", () => {
    const r = compileCommand("examples/agents/simple.yml")
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toBe("")
    expect(r.stdout.split("\n").slice(0, 2)).toEqual([
      "Summarizer =",
      '  Summarizer:LLM_{anthropic/claude-sonnet-4-20250514, θ=0.3}("Summarize the text you are given in three sentence…")'
    ])
  })

  it("prints JSON with the term, bounds and tools", () => {
    const r = compileCommand("examples/agents/react.yml", { format: "json" })
    const out = JSON.parse(r.stdout)
    expect(out.version).toBe(1)
    expect(out.exitCode).toBe(0)
    const file = out.files[0]
    expect(Term.parse(file.term)).toEqual(fromConfig("examples/agents/react.yml"))
    expect(file.bounds).toEqual({ llmCalls: 12, toolCalls: 12 })
    expect(file.tools.map((t: { name: string }) => t.name)).toEqual(["web_search", "calculator", "terminate", "summarizer"])
    expect(file.tools[0].connection).toEqual({ transport: "http", url: "https://mcp.example.com", endpoint: "/mcp", timeout: 20 })
    expect(file.budget).toEqual({ llmCalls: 20, toolCalls: 40 })
  })

  it("exits 2 with the positioned error for an invalid file", () => {
    const dir = dirWith({ "typo.yml": TYPO })
    const r = compileCommand(join(dir, "typo.yml"))
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe(
      `error: ${join(dir, "typo.yml")}: not a valid agent file:\n  ${join(dir, "typo.yml")}:2:1: systemPromt: unknown key "systemPromt" (did you mean "systemPrompt"?)\n`
    )
    const json = JSON.parse(compileCommand(join(dir, "typo.yml"), { format: "json" }).stdout)
    expect(json.files[0].error).toMatchObject({ tag: "SchemaError", line: 2, column: 1 })
  })

  it("exits 3 with --validate when lint finds errors, and appends the lint text", () => {
    const dir = dirWith({ "loop.yml": LINT_ERROR })
    expect(compileCommand(join(dir, "loop.yml")).exitCode).toBe(0)
    const r = compileCommand(join(dir, "loop.yml"), { validate: true })
    expect(r.exitCode).toBe(3)
    expect(r.stdout).toContain("--- Lint ---")
    expect(r.stdout).toContain("✗ [ERROR] L004")
    const json = JSON.parse(compileCommand(join(dir, "loop.yml"), { validate: true, format: "json" }).stdout)
    expect(json.files[0].lint.counts.error).toBe(1)
  })

  it("compiles every file of a directory and exits 4 for a missing path", () => {
    const dir = dirWith({ "a.yml": GOOD, "b.yml": TYPO })
    const r = compileCommand(dir)
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toMatch(/^Good =/)
    expect(r.stderr).toMatch(/b\.yml:2:1: systemPromt/)
    expect(compileCommand("no/such.yml")).toEqual({ stdout: "", stderr: "error: no/such.yml: file not found\n", exitCode: 4 })
    expect(compileCommand(dirWith({})).exitCode).toBe(4)
  })

  it("applies overrides", () => {
    const out = JSON.parse(compileCommand("examples/agents/simple.yml", { format: "json", overrides: { model: "openai:gpt-5", temperature: 0 } }).stdout)
    expect(out.files[0].term.llm.model).toMatchObject({ provider: "openai", name: "gpt-5", temperature: 0 })
  })
})

describe("lintCommand", () => {
  it("exits 0 for the examples and prints one block per file", () => {
    const r = lintCommand("examples/agents")
    expect(r.exitCode).toBe(0)
    const count = readdirSync("examples/agents").filter((f) => /\.ya?ml$/.test(f)).length
    expect(r.stdout.match(/^lambdagent lint: /gm)).toHaveLength(count)
    expect(r.stdout).toMatch(new RegExp(`${count} file\\(s\\): 0 error\\(s\\), 0 warning\\(s\\), \\d+ info\\(s\\)\\n$`))
  })

  it("exits 3 on error findings, 2 on invalid files, 4 on a missing path", () => {
    const dir = dirWith({ "loop.yml": LINT_ERROR, "typo.yml": TYPO })
    expect(lintCommand(join(dir, "loop.yml")).exitCode).toBe(3)
    expect(lintCommand(join(dir, "typo.yml")).exitCode).toBe(2)
    expect(lintCommand(dir).exitCode).toBe(2)
    expect(lintCommand(join(dir, "missing.yml")).exitCode).toBe(4)
  })

  it("prints a JSON report that matches its schema", () => {
    const dir = dirWith({ "loop.yml": LINT_ERROR, "typo.yml": TYPO })
    const r = lintCommand(dir, { format: "json" })
    const report = LintReportSchema.parse(JSON.parse(r.stdout))
    expect(report.exitCode).toBe(2)
    expect(report.files.map((f) => [f.agent, f.error?.tag ?? null, f.counts.error])).toEqual([
      ["Loop", null, 1],
      [null, "SchemaError", 0]
    ])
  })

  it("honours --level, --rules, --ignore and --max-llm-calls", () => {
    const dir = dirWith({ "loop.yml": LINT_ERROR })
    const file = join(dir, "loop.yml")
    const rules = (options: Parameters<typeof lintCommand>[1]) =>
      LintReportSchema.parse(JSON.parse(lintCommand(file, { ...options, format: "json" }).stdout)).files[0]!.findings.map((f) => f.rule)
    expect(rules({ level: "error" })).toEqual(["L004"])
    expect(rules({ rules: ["L032"] })).toEqual(["L032"])
    expect(rules({ ignore: ["L004"] })).not.toContain("L004")
    expect(lintCommand(file, { ignore: ["L004"] }).exitCode).toBe(0)
    expect(rules({ maxLlmCalls: 2, level: "error" })).toEqual(["L031", "L004"])
    expect(lintCommand(file, { rules: ["X1"] })).toEqual({ stdout: "", stderr: "error: unknown rule id X1 (rules are L001…L052)\n", exitCode: 2 })
  })
})

describe("lambdaCommand", () => {
  it("prints the lambda expression in each format", () => {
    expect(lambdaCommand("examples/agents/simple.yml").stdout).toBe(
      'Summarizer = Summarizer:LLM_{anthropic/claude-sonnet-4-20250514, θ=0.3}("Summarize the text you are given in three sentence…")\n'
    )
    expect(lambdaCommand("examples/agents/simple.yml", { format: "formal" }).stdout).toMatch(/^Summarizer = \(λx\. LLM_/)
    const json = JSON.parse(lambdaCommand("examples/agents/parallel.yml", { format: "json" }).stdout)
    expect(Term.parse(json.term)).toEqual(fromConfig("examples/agents/parallel.yml"))
    expect(lambdaCommand("examples/agents/chain.yml", { desugar: true }).stdout).not.toContain(">>")
  })

  it("exits 2 on an invalid file and 4 on a missing one", () => {
    const dir = dirWith({ "typo.yml": TYPO })
    const r = lambdaCommand(join(dir, "typo.yml"))
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/typo\.yml:2:1: systemPromt/)
    expect(JSON.parse(lambdaCommand(join(dir, "typo.yml"), { format: "json" }).stdout).error.tag).toBe("SchemaError")
    expect(lambdaCommand("examples/agents").exitCode).toBe(4)
    expect(lambdaCommand("nope.yml").exitCode).toBe(4)
  })
})
