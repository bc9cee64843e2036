import { describe, expect, it } from "vitest"
import { lint, type LintOptions, ruleIds } from "./lint.ts"
import { formatLintResult, lintReport, LintReportSchema } from "./report.ts"
import { lintRules, ruleById } from "./rules.ts"

const MODEL = "model: {provider: openai, name: gpt-4o-mini, temperature: 0.3}"
const SIMPLE = `type: simple\nsystemPrompt: Summarize.\n${MODEL}\n`
const REACT = `type: react\nsystemPrompt: Use tools.\n${MODEL}\nreact: {maxSteps: 10}\nmcp:\n  localTools: [search, terminate]\n`
const ROUTER = `type: router\n${MODEL}\nrouter:\n  classifier: {prompt: Classify.}\n  routes:\n    code: {systemPrompt: Code.}\n  default: Sorry.\n`
const CHAIN = `type: chain\n${MODEL}\nchain:\n  steps:\n    - {name: a, prompt: A.}\n    - {name: b, prompt: B.}\n`

const ids = (yaml: string, options: LintOptions = {}) => {
  const result = lint(yaml, options)
  if (result.error !== undefined) throw result.error
  return result.findings.map((f) => f.rule)
}
const finding = (yaml: string, rule: string, options: LintOptions = {}) => lint(yaml, options).findings.find((f) => f.rule === rule)

/** rule, a file where it fires, a file where it does not. */
const table: ReadonlyArray<readonly [string, string, string]> = [
  ["L001", `type: simple\n${MODEL}\n`, SIMPLE],
  ["L002", "type: simple\nsystemPrompt: Hi\n", SIMPLE],
  ["L003", REACT.replace("maxSteps: 10", "maxSteps: 0"), REACT],
  ["L004", REACT.replace("search, terminate", "search"), REACT],
  ["L005", `type: router\n${MODEL}\nrouter:\n  classifier: {prompt: Classify.}\n  routes: {}\n  default: Sorry.\n`, ROUTER],
  ["L006", `type: chain\n${MODEL}\nchain: {steps: []}\n`, CHAIN],
  ["L007", SIMPLE.replace("temperature: 0.3", "temperature: 1.8"), SIMPLE.replace("temperature: 0.3", "temperature: 1.5")],
  ["L008", `${SIMPLE}memory: {size: 5}\n`, `${SIMPLE}memory: {size: 5, ttl: 60}\n`],
  ["L009", `${SIMPLE}memory: {size: 0, ttl: 60}\n`, `${SIMPLE}memory: {size: 5, ttl: 60}\n`],
  ["L010", REACT.replace("maxSteps: 10", "maxSteps: 60"), REACT.replace("maxSteps: 10", "maxSteps: 50")],
  ["L011", REACT.replace("search, terminate", "terminate"), REACT],
  ["L012", `${SIMPLE}guard: {validator: "len(x) > 0", retry: 6}\n`, `${SIMPLE}guard: {validator: "len(x) > 0", retry: 5}\n`],
  ["L013", ROUTER.replace("  default: Sorry.\n", ""), ROUTER],
  ["L014", SIMPLE.replace("temperature: 0.3", "temperature: 0"), SIMPLE],
  ["L015", `${SIMPLE}memory: {ttl: 60}\n`, `${SIMPLE}memory: {enabled: false}\n`],
  ["L016", `${SIMPLE}rag: {source: docs}\n`, `${SIMPLE}rag: {enabled: false}\n`],
  ["L017", REACT.replace("react: {maxSteps: 10}\n", ""), REACT],
  ["L018", REACT.replace("maxSteps: 10", "maxSteps: 150"), `${REACT.replace("maxSteps: 10", "maxSteps: 150")}runtime: {maxLlmCalls: 150, maxToolCalls: 150}\n`],
  ["L023", ROUTER.replace("default: Sorry.", "default: ''"), ROUTER],
  ["L024", CHAIN.replace("name: b", "name: a"), CHAIN],
  ["L025", `${SIMPLE}guard: {validator: "len(x) > 0"}\n`, `${SIMPLE}guard: {validator: "len(x) > 0", retry: 1}\n`],
  ["L026", REACT.replace("localTools: [search, terminate]", "onlineTool: {srv: [search]}\n  localTools: [terminate]"), REACT],
  ["L027", `type: chain\n${MODEL}\nchain:\n  steps:\n    - tool: fetch\n`, `type: chain\n${MODEL}\nmcp: {localTools: [fetch]}\nchain:\n  steps:\n    - tool: fetch\n`],
  ["L028", ROUTER.replace("classifier: {prompt: Classify.}", "classifier: {prompt: Classify., categories: [code, math]}"), ROUTER.replace("classifier: {prompt: Classify.}", "classifier: {prompt: Classify., categories: [code]}")],
  ["L029", `${SIMPLE}guard: {validator: "1 > 2", retry: 1}\n`, `${SIMPLE}guard: {validator: "len(x) > 2", retry: 1}\n`],
  ["L030", `${CHAIN}systemPrompt: Ignored.\n`, CHAIN],
  ["L033", REACT.replace("localTools: [search, terminate]", "onlineTool: {srv: [search]}\n  localTools: [terminate]"), `${REACT.replace("localTools: [search, terminate]", "onlineTool: {srv: [search]}\n  localTools: [terminate]")}app:\n  mcp:\n    custom:\n      nodes:\n        srv: {url: "https://mcp.example.com"}\n`],
  ["L034", `${REACT}mcpServers:\n  - {name: s, transport: stdio, command: srv, tools: [search]}\ncli:\n  agents:\n    search: {command: grep}\n`, REACT],
  ["L035", `${SIMPLE}memory: {strategy: custom, ttl: 60}\n`, `${SIMPLE}memory: {strategy: custom, customStore: crm, ttl: 60}\n`],
  ["L036", `${SIMPLE}sharedMemory: {strategy: custom}\n`, `${SIMPLE}sharedMemory: {strategy: custom, customStore: team}\n`],
  ["L037", `${SIMPLE}sharedMemory: {strategy: local}\n`, `${SIMPLE}sharedMemory: {enabled: false}\n`],
  ["L038", `${SIMPLE}sharedMemory: {inject: false}\n`, `${SIMPLE}sharedMemory: {inject: false, publish: true}\n`]
]

describe("every rule fires when it should and not otherwise", () => {
  it.each(table)("%s", (rule, firing, clean) => {
    expect(ids(firing)).toContain(rule)
    expect(ids(clean)).not.toContain(rule)
    const f = finding(firing, rule)!
    expect(f.level).toBe(ruleById(rule)!.level)
    expect(f.lambda).toBe(ruleById(rule)!.lambda)
    expect(f.line).toBeGreaterThan(0)
  })

  it("covers every rule of the catalogue", () => {
    const tested = new Set([...table.map(([r]) => r), "L031", "L032"])
    expect(lintRules.filter((r) => !tested.has(r.id)).map((r) => r.id)).toEqual([])
    expect(ruleIds).toHaveLength(lintRules.length)
  })

  it("L031 fires above the budget given to lint", () => {
    expect(ids(REACT, { maxLlmCalls: 5 })).toContain("L031")
    expect(ids(REACT, { maxLlmCalls: 10 })).not.toContain("L031")
    expect(finding(REACT, "L031", { maxToolCalls: 3 })?.message).toBe("up to 10 tool calls, above --max-tool-calls 3")
  })

  it("L032 always reports the worst case", () => {
    expect(finding(SIMPLE, "L032")?.message).toBe("worst case per input: 1 LLM call, 0 tool calls")
    expect(finding(REACT, "L032")?.message).toBe("worst case per input: 10 LLM calls, 10 tool calls")
  })
})

describe("rule details", () => {
  it("L001 and the other blocking problems are error findings, not exceptions", () => {
    const result = lint("type: router\nrouter:\n  classifier: {prompt: ''}\n  routes: {}\n")
    expect(result.error).toBeUndefined()
    expect(result.findings.filter((f) => f.level === "error").map((f) => f.rule)).toEqual(["L002", "L001", "L005"])
  })

  it("L002 is reported once, at the outermost agent without a model", () => {
    const yaml = "type: router\nrouter:\n  classifier: {prompt: p}\n  routes:\n    a: {systemPrompt: A}\n    b: {systemPrompt: B, model: {name: m}}\n  default: x\n"
    expect(lint(yaml).findings.filter((f) => f.rule === "L002").map((f) => f.field)).toEqual(["type"])
    const inherited = "type: router\nmodel: {name: m}\nrouter:\n  classifier: {prompt: p}\n  routes:\n    a: {systemPrompt: A}\n  default: x\n"
    expect(ids(inherited)).not.toContain("L002")
    expect(ids("type: simple\nsystemPrompt: Hi\n", { overrides: { model: "gpt-4o" } })).not.toContain("L002")
  })

  it("L007 and L014 check every model block, with positions", () => {
    const yaml = `type: chain\n${MODEL}\nchain:\n  steps:\n    - prompt: a\n      model: {temperature: 1.9}\n    - prompt: b\n      model: {temperature: 0}\n`
    expect(lint(yaml).findings.filter((f) => f.rule === "L007" || f.rule === "L014").map((f) => [f.rule, f.field, f.line])).toEqual([
      ["L007", "chain.steps[0].model.temperature", 6],
      ["L014", "chain.steps[1].model.temperature", 8]
    ])
  })

  it("shared memory: L037 sums it up, L038 sees react agents' tools, L030 flags fields of another strategy, L034 a tool name clash", () => {
    expect(finding(`${SIMPLE}sharedMemory: {strategy: sqlite, appendOnly: true}\n`, "L037")?.message).toBe(
      "shared memory enabled: strategy=sqlite (.lambdagent/shared-memory.db), namespace=shared, appendOnly=true, size=1000, shown to agents=true, answers recorded=false"
    )
    // a react agent gets the tools even when nothing is shown to it
    expect(ids(`${REACT}sharedMemory: {inject: false}\n`)).not.toContain("L038")
    const disabled = REACT.replace("localTools: [search, terminate]", "localTools: [search, terminate]\n  policy: {mode: disable}")
    expect(ids(`${disabled}sharedMemory: {inject: false}\n`)).toContain("L038")
    // a router shows nothing itself, but its simple routes do
    expect(ids(`${ROUTER}sharedMemory: {}\n`)).not.toContain("L038")
    const misplaced = lint(`${SIMPLE}sharedMemory:\n  strategy: redis\n  path: team.db\n  customStore: crm\n`).findings.filter((f) => f.rule === "L030")
    expect(misplaced.map((f) => [f.field, f.line])).toEqual([["sharedMemory.path", 6], ["sharedMemory.customStore", 7]])
    expect(finding(`${SIMPLE}sharedMemory: {enabled: false, appendOnly: true}\n`, "L030")?.message).toBe("sharedMemory is disabled (enabled: false): its other fields have no effect")
    const clash = `${REACT}sharedMemory: {}\ncli:\n  agents:\n    shared_read: {command: cat}\n`
    expect(finding(clash, "L034")?.message).toBe("tool \"shared_read\" is declared by cli.agents and by sharedMemory; a tool name must have one source")
  })

  it("L027 checks local tools against the runtime's tools when given", () => {
    expect(ids(REACT, { knownTools: ["search"] })).not.toContain("L027")
    expect(finding(REACT, "L027", { knownTools: ["calculator"] })?.message).toBe("tool \"search\" is not one the runtime provides (calculator)")
    expect(finding(REACT, "L027", { knownTools: ["calculator"] })?.field).toBe("mcp.localTools[0]")
  })

  it("L028 reports categories without a route and routes outside the categories", () => {
    const yaml = ROUTER.replace("classifier: {prompt: Classify.}", "classifier: {prompt: Classify., categories: [math]}")
    expect(lint(yaml).findings.filter((f) => f.rule === "L028").map((f) => [f.field, f.message])).toEqual([
      ["router.classifier.categories[0]", "category \"math\" has no route: inputs labelled math go to the default"],
      ["router.routes.code", "route \"code\" is not among classifier.categories: the classifier is never asked to answer it"]
    ])
  })

  it("L029 finds unreachable branches", () => {
    const messages = (yaml: string) => lint(yaml).findings.filter((f) => f.rule === "L029").map((f) => f.message)
    expect(messages(`${SIMPLE}guard: {validator: "True", retry: 1}\n`)).toEqual([
      "the validator does not depend on x and is always true: the guard never fails and its fallback is unreachable"
    ])
    expect(messages(ROUTER.replace("    code: {systemPrompt: Code.}\n", "    code: {systemPrompt: Code.}\n    Code: {systemPrompt: Other.}\n"))[0]).toMatch(/differ only in letter case/)
    expect(messages(ROUTER.replace("    code: {systemPrompt: Code.}\n", "    '': {systemPrompt: Anything.}\n    code: {systemPrompt: Code.}\n"))[0]).toMatch(/matches every answer: the routes after it are reachable only by an exact answer and the default is unreachable/)
    expect(messages(ROUTER.replace("    code:", "    ' code':"))[0]).toMatch(/surrounding spaces/)
    expect(messages(REACT.replace("mcp:\n", "mcp:\n  policy: {mode: disable}\n"))).toEqual(["mcp.policy.mode is disable: search is never offered to the agent"])
  })

  it("L030 finds fields with no effect", () => {
    const fields = (yaml: string) => lint(yaml).findings.filter((f) => f.rule === "L030").map((f) => f.field)
    expect(fields(`${SIMPLE}react: {maxSteps: 3}\nmcp: {localTools: [a]}\n`)).toEqual(["react", "mcp"])
    expect(fields(REACT.replace("react: {maxSteps: 10}", "react: {maxSteps: 10, earlyStop: done}"))).toEqual(["react.earlyStop"])
    expect(fields("type: simple\nsystemPrompt: x\nmodel: {name: m, contextWindow: 8000, maxHistoryTokens: 100}\n")).toEqual(["model.contextWindow"])
    expect(fields("type: simple\nsystemPrompt: x\nmodel: {name: m, maxHistoryTokens: 100, conversation: false}\n")).toEqual(["model.maxHistoryTokens"])
    expect(fields(`type: parallel\n${MODEL}\nparallel:\n  agents: [{systemPrompt: a}]\n  mergePrompt: unused\n`)).toEqual(["parallel.mergePrompt"])
    expect(fields(`${SIMPLE}rag: {source: docs, agentic: true}\n`)).toEqual(["rag.agentic"])
    expect(fields(`${SIMPLE}memory: {enabled: false, size: 4}\n`)).toEqual(["memory"])
    expect(fields(`${REACT}react: {thinkPrompt: Think.}\n`.replace("react: {maxSteps: 10}\n", ""))).toEqual(["systemPrompt"])
  })

  it("L034 names both sources", () => {
    const yaml = `${REACT.replace("localTools: [search, terminate]", "onlineTool: {a: [search], b: [search]}\n  localTools: [terminate]")}`
    expect(finding(yaml, "L034")?.message).toBe("tool \"search\" is declared by MCP server \"a\" and by MCP server \"b\"; a tool name must have one source")
  })
})

describe("options and output", () => {
  const noisy = `${REACT.replace("maxSteps: 10", "maxSteps: 60").replace("search, terminate", "search")}memory: {size: 2}\n`

  it("orders findings errors first, then by position", () => {
    expect(ids(noisy)).toEqual(["L004", "L010", "L008", "L032", "L015"])
  })

  it("filters by level, rules and ignore", () => {
    expect(ids(noisy, { level: "error" })).toEqual(["L004"])
    expect(ids(noisy, { level: "warn" })).toEqual(["L004", "L010", "L008"])
    expect(ids(noisy, { rules: ["L008", "l015"] })).toEqual(["L008", "L015"])
    expect(ids(noisy, { ignore: ["L004", "L032"] })).toEqual(["L010", "L008", "L015"])
    expect(lint(noisy, { level: "error" }).counts).toEqual({ error: 1, warn: 0, info: 0 })
  })

  it("prints the text format of the specification", () => {
    const text = formatLintResult(lint({ text: noisy, file: "agent.yml" }))
    const lines = text.split("\n")
    expect(lines[0]).toBe("lambdagent lint: agent.yml")
    expect(lines[1]).toBe("=".repeat(60))
    expect(lines[2]).toBe("  ✗ [ERROR] L004 mcp.localTools (6:15): react agent without a terminate tool: it stops only when a thought names no tool or after maxSteps")
    expect(lines[3]).toBe(`    Lambda: ${ruleById("L004")!.lambda}`)
    expect(lines[4]).toMatch(/^ {2}⚠ \[WARN\] {2}L010 react\.maxSteps \(4:19\): /)
    expect(lines).toContain("  ℹ [INFO]  summary: Agent 'agent' Lambda structure:")
    expect(lines[lines.length - 2]).toBe("─".repeat(60))
    expect(lines[lines.length - 1]).toBe("  1 error(s), 2 warning(s), 2 info(s)")
  })

  it("reports files that cannot be linted instead of throwing", () => {
    const result = lint({ text: "type: simple\nsystemPromt: x\n", file: "typo.yml" })
    expect(result.error?._tag).toBe("SchemaError")
    expect(result.findings).toEqual([])
    expect(formatLintResult(result)).toMatch(/✗ \[ERROR\] typo\.yml:2:1: systemPromt: unknown key/)
    expect(lint("missing/file.yml").error?._tag).toBe("ConfigError")
  })

  it("produces JSON that matches the report schema", () => {
    const report = lintReport([lint({ text: noisy, file: "a.yml" }), lint({ text: "type: simple\nsystemPromt: x\n", file: "b.yml" }), lint("examples/agents/react.yml")])
    expect(LintReportSchema.safeParse(JSON.parse(JSON.stringify(report))).success).toBe(true)
    expect(report.counts).toEqual({ files: 3, failed: 1, error: 1, warn: 2, info: 4 })
    expect(report.exitCode).toBe(2)
    expect(report.files[0]!.findings[0]).toEqual({
      rule: "L004",
      level: "error",
      field: "mcp.localTools",
      path: ["mcp", "localTools"],
      line: 6,
      column: 15,
      message: "react agent without a terminate tool: it stops only when a thought names no tool or after maxSteps",
      lambda: ruleById("L004")!.lambda
    })
    expect(report.files[1]!.error).toMatchObject({ tag: "SchemaError", line: 2, column: 1, issues: [{ field: "systemPromt", suggestion: "systemPrompt" }] })
    expect(report.files[2]!.bounds).toEqual({ llmCalls: 12, toolCalls: 12 })
  })

  it("reports unbounded worst cases as null", () => {
    const report = lintReport([{ findings: [], counts: { error: 0, warn: 0, info: 0 }, bounds: { llmCalls: Infinity, toolCalls: 2 } }])
    expect(report.files[0]!.bounds).toEqual({ llmCalls: null, toolCalls: 2 })
  })
})
