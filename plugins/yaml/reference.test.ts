import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Term } from "lambdagent"
import { afterAll, describe, expect, it } from "vitest"
import { loadConfig } from "./compile.ts"
import { unifiedDiff } from "./diff.ts"
import { lint } from "./lint.ts"
import { migrateCommand, migrateText } from "./migrate.ts"
import { applyFixes, migrationFields, referenceDefaultPrompt, referenceFields, referenceMergePrompt } from "./reference.ts"
import { parseSource } from "./source.ts"

const fixture = (name: string) => join(import.meta.dirname, "fixtures", "reference", name)
const termJson = (input: Parameters<typeof loadConfig>[0]) => Term.toJsonText(loadConfig(input).term)

const scratch = mkdtempSync(join(tmpdir(), "lambdagent-migrate-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe("configs written for the Python reference", () => {
  it("compile: every field of the reference's schema is accepted, none is a schema error", () => {
    for (const name of ["coder.yml", "triage.yml"]) {
      const result = lint(fixture(name))
      expect(result.error).toBeUndefined()
      expect(result.counts.error).toBe(0)
    }
  })

  it("lint names each field with no effect here (L051), at its line, with why", () => {
    const findings = lint(fixture("coder.yml")).findings.filter((f) => f.rule === "L051")
    expect(findings.map((f) => [f.field, f.level])).toEqual([
      ["role", "warn"],
      ["goal", "warn"],
      ["backstory", "warn"],
      ["react.thinkTimeout", "warn"],
      ["guard.dangerousCommandBlock", "warn"],
      ["guard.highRiskConfirmation", "warn"],
      ["hooks", "warn"],
      ["isolation", "warn"],
      ["runtime.costBudget", "warn"],
      ["a2a.enabled", "warn"],
      ["sandbox.network", "warn"],
      ["sandbox.filesystem", "warn"],
      ["max_iter", "warn"],
      ["allow_delegation", "warn"]
    ])
    const cost = findings.find((f) => f.field === "runtime.costBudget")!
    expect(cost.line).toBe(67)
    expect(cost.message).toBe(
      "a field of the Python reference, no effect here: runs are budgeted in tokens and calls, not money: use runtime.maxTokens or runtime.maxLlmCalls (lambdagent migrate removes it)"
    )
    expect(findings.find((f) => f.field === "sandbox.network")!.message).toMatch(
      /read as true here: .*the reference's "full" is true \(lambdagent migrate writes true\)/
    )
  })

  it("finds the fields in nested agents, chain steps and step guards", () => {
    const fields = lint(fixture("triage.yml"))
      .findings.filter((f) => f.rule === "L051")
      .map((f) => f.field)
    expect(fields).toEqual([
      "router.routes.summary.chain.steps[0].outputType",
      "router.routes.summary.chain.steps[1].inputType",
      "router.routes.summary.chain.steps[1].outputType",
      "router.routes.summary.chain.steps[1].guard.dangerousCommandBlock",
      "router.routes.review.parallel.isolation",
      "router.routes.review.parallel.agents[1].role",
      "router.routes.review.parallel.agents[1].goal"
    ])
  })

  it("a field with an equivalent compiles with the same meaning: sandbox.network full is true, none is false", () => {
    const sandbox = (network: string) =>
      loadConfig({ text: `type: simple\nsystemPrompt: Hi\nsandbox: {policy: strict, network: ${network}}\n` }).runtime.sandbox?.network
    expect(sandbox("full")).toBe(true)
    expect(sandbox("none")).toBe(false)
  })

  it("a memory strategy the reference only names is the local store", () => {
    const agent = loadConfig({ text: "type: simple\nsystemPrompt: Hi\nmemory: {strategy: sliding_window, size: 5}\n" })
    expect(agent.memory.map((m) => [m.strategy, m.size])).toEqual([["local", 5]])
    const finding = lint({ text: "type: simple\nsystemPrompt: Hi\nmodel: {name: m}\nmemory: {strategy: sliding_window}\n" }).findings.find(
      (f) => f.rule === "L051"
    )
    expect(finding?.field).toBe("memory.strategy")
    expect(finding?.message).toContain('read as "local" here')
  })

  it("a guard that only screened commands goes whole: without it, it checks nothing", () => {
    const text = "type: simple\nsystemPrompt: Hi\nmodel: {name: m}\nguard: {retry: 2, fallback: last, dangerousCommandBlock: true}\n"
    expect(loadConfig({ text }).config.guard).toBeUndefined()
    const finding = lint({ text }).findings.find((f) => f.rule === "L051")!
    expect([finding.field, finding.line]).toEqual(["guard", 4])
    expect(finding.message).toContain("without them this guard checks nothing")
    expect(migrateText(text).text).toBe("type: simple\nsystemPrompt: Hi\nmodel: {name: m}\n")
  })

  it("fractional seconds (react.toolTimeout, memory.ttl) are rounded up to the whole seconds the core counts", () => {
    const text = "type: react\nsystemPrompt: Hi\nmodel: {name: m}\nreact: {toolTimeout: 2.5}\nmemory: {enabled: true, ttl: 0.25}\n"
    const agent = loadConfig({ text })
    expect(agent.config.react?.toolTimeout).toBe(3)
    expect(agent.memory.map((m) => m.ttl)).toEqual([1])
    expect(Term.toJsonText(agent.term)).toContain('"toolTimeout":3')
    const findings = lint({ text }).findings.filter((f) => f.rule === "L051")
    expect(findings.map((f) => [f.field, f.message.includes("rounded up")])).toEqual([
      ["react.toolTimeout", true],
      ["memory.ttl", true]
    ])
    expect(migrateText(text).text).toBe("type: react\nsystemPrompt: Hi\nmodel: {name: m}\nreact: {toolTimeout: 3}\nmemory: {enabled: true, ttl: 1}\n")
    // whole seconds are this format already; a negative duration stays the schema's error
    expect(referenceFields({ type: "react", react: { toolTimeout: 30 }, memory: { ttl: 0 } })).toEqual([])
    expect(() => loadConfig({ text: "type: react\nsystemPrompt: Hi\nmodel: {name: m}\nreact: {toolTimeout: -1.5}\n" })).toThrow(/toolTimeout/)
  })

  it("merge: custom without a mergePrompt merges with the documented default prompt", () => {
    const text = "type: parallel\nmodel: {name: m}\nparallel:\n  merge: custom\n  agents:\n    - {systemPrompt: A}\n    - {systemPrompt: B}\n"
    const agent = loadConfig({ text })
    expect(agent.config.parallel?.mergePrompt).toBe(referenceMergePrompt)
    expect(Term.toJsonText(agent.term)).toContain(JSON.stringify(referenceMergePrompt))
    expect(lint({ text }).findings.find((f) => f.rule === "L051")?.field).toBe("parallel.mergePrompt")
    expect(migrateText(text).text).toContain(`mergePrompt: ${JSON.stringify(referenceMergePrompt)}`)
    expect(lint({ text: migrateText(text).text }).findings.filter((f) => f.rule === "L051")).toEqual([])
  })

  it("a block left empty by the removal is gone: a reference sandbox block does not turn the sandbox on", () => {
    const agent = loadConfig({ text: "type: simple\nsystemPrompt: Hi\nsandbox: {filesystem: full}\nguard: {dangerousCommandBlock: true}\n" })
    expect(agent.runtime.sandbox).toBeUndefined()
    expect(agent.config.guard).toBeUndefined()
  })

  it("the fields are read as migrate rewrites them: the original and the migrated file compile to the same term", () => {
    for (const name of ["coder.yml", "triage.yml"]) {
      const text = readFileSync(fixture(name), "utf8")
      const migrated = migrateText(text).text
      expect(termJson({ text: migrated })).toBe(termJson({ text }))
      expect(lint({ text: migrated }).findings.filter((f) => f.rule === "L051")).toEqual([])
    }
  })

  it("the reference's rag and a2a fields: its spellings compile as ours, the others are accepted with L051, typos stay errors", () => {
    const text = [
      "type: simple",
      "systemPrompt: Answer.",
      "model: {provider: openai, name: gpt-4o}",
      "rag:",
      "  source: docs",
      "  top_k: 5 # passages",
      "  min_score: 0.2",
      "  chunk_size: 400",
      "  persist_directory: .index",
      "  collection_name: handbook",
      "  documents: [a, b]",
      "  always_retrieve: true",
      "a2a:",
      "  server: {port: 8001, name: card, provider: acme, documentation_url: 'http://x', input_modes: [text], authentication: {schemes: [bearer]}}",
      ""
    ].join("\n")
    const findings = lint({ text }).findings.filter((f) => f.rule === "L051")
    expect(findings.map((f) => f.field)).toEqual([
      "rag.top_k",
      "rag.min_score",
      "rag.chunk_size",
      "rag.persist_directory",
      "rag.collection_name",
      "rag.documents",
      "rag.always_retrieve",
      "a2a.server.name",
      "a2a.server.provider",
      "a2a.server.documentation_url",
      "a2a.server.input_modes",
      "a2a.server.authentication"
    ])
    expect(findings[0]!.message).toBe(
      "a field of the Python reference, read as topK here: the reference's spelling of rag.topK (lambdagent migrate renames it topK)"
    )
    expect(findings[0]!.line).toBe(6)
    const agent = loadConfig({ text })
    expect(agent.config.rag).toEqual({ source: "docs", topK: 5, minScore: 0.2, chunkSize: 400, persistDirectory: ".index", name: "handbook" })
    expect(agent.runtime.a2aServer).toEqual({ port: 8001 })
    const migrated = migrateText(text).text
    expect(migrated).toContain("  topK: 5 # passages\n  minScore: 0.2\n  chunkSize: 400\n  persistDirectory: .index\n  name: handbook\n")
    expect(migrated).not.toContain("documents")
    expect(termJson({ text: migrated })).toBe(termJson({ text }))
    expect(lint({ text: migrated }).findings.filter((f) => f.rule === "L051")).toEqual([])
    // both spellings: ours wins, the reference's goes
    expect(loadConfig({ text: text.replace("  source: docs", "  source: docs\n  topK: 2") }).config.rag?.topK).toBe(2)
    // a key neither format knows is still refused, with the spelling it probably meant
    expect(lint({ text: "type: simple\nsystemPrompt: Hi\nrag: {topk: 3}\n" }).error?.message).toMatch(/rag\.topk.*topK/s)
    expect(lint({ text: "type: simple\nsystemPrompt: Hi\na2a: {server: {prot: 1}}\n" }).error?.message).toMatch(/a2a\.server\.prot.*port/s)
  })

  it("referenceFields and applyFixes work on plain values, without changing them", () => {
    const doc = { type: "simple", systemPrompt: "Hi", goal: "help", runtime: { costBudget: 1, maxLlmCalls: 3 } }
    const copy = structuredClone(doc)
    expect(
      applyFixes(
        doc,
        referenceFields(doc).map((f) => f.fix)
      )
    ).toEqual({ type: "simple", systemPrompt: "Hi", runtime: { maxLlmCalls: 3 } })
    expect(doc).toEqual(copy)
    expect(referenceFields("not a mapping")).toEqual([])
    expect(referenceFields({ type: "react", react: "oops", guard: [1], chain: { steps: "x" } })).toEqual([])
  })
})

describe("migrate", () => {
  it("keeps comments and untouched text, removes the inert fields, writes the reference's default prompt", () => {
    const text = "# helper\ntype: simple\nagentId: helper # the id\nrole: Assistant\nmodel: {provider: anthropic, name: claude-sonnet-4-20250514}\n"
    const m = migrateText(text)
    expect(m.text).toBe(
      `# helper\ntype: simple\nagentId: helper # the id\nmodel: {provider: anthropic, name: claude-sonnet-4-20250514}\nsystemPrompt: ${referenceDefaultPrompt}\n`
    )
    expect(m.changes.map((c) => [c.path.join("."), c.fix._tag])).toEqual([
      ["role", "remove"],
      ["systemPrompt", "set"]
    ])
    expect(lint({ text }).counts.error).toBe(1)
    expect(lint({ text: m.text }).counts.error).toBe(0)
  })

  it("gives every prompt-less simple or react sub-agent the default prompt", () => {
    const fields = migrationFields({
      type: "router",
      router: { classifier: { prompt: "?" }, routes: { a: { type: "react" }, b: "fixed", c: { type: "chain", chain: { steps: [] } } } }
    })
    expect(fields.map((f) => f.path.join("."))).toEqual(["router.routes.a.systemPrompt"])
  })

  it("changes a field under an anchor where the anchor is, for every alias and merge of it", () => {
    const text =
      "type: parallel\nmodel: {name: m}\nparallel:\n  agents:\n    - &b {systemPrompt: Hi, role: x}\n    - {<<: *b, goal: y}\nguard: &g {retry: 1, validator: 'len(x) > 0', dangerousCommandBlock: true}\nchain: {steps: [{prompt: a, guard: *g}]}\n"
    const m = migrateText(text)
    expect(m.text).toBe(
      "type: parallel\nmodel: {name: m}\nparallel:\n  agents:\n    - &b {systemPrompt: Hi}\n    - {<<: *b}\nguard: &g {retry: 1, validator: 'len(x) > 0'}\nchain: {steps: [{prompt: a, guard: *g}]}\n"
    )
    expect(migrationFields(parseSource(m.text).value)).toEqual([])
    expect(termJson({ text: m.text })).toBe(termJson({ text }))
  })

  it("leaves a file in this format as it is", () => {
    const text = "type: simple\nsystemPrompt: Hi # keep\n"
    expect(migrateText(text)).toEqual({ text, changes: [] })
  })

  it("shows the diff without writing; --write replaces the file", () => {
    const path = join(scratch, "agent.yml")
    const text = "type: simple\nsystemPrompt: Hi\nmodel: {name: gpt-4o}\nruntime:\n  costBudget: 2.5\n"
    writeFileSync(path, text)
    const dry = migrateCommand(path)
    expect(dry.exitCode).toBe(0)
    expect(dry.stdout).toContain(
      `--- ${path}\n+++ ${path} (migrated)\n@@ -1,5 +1,3 @@\n type: simple\n systemPrompt: Hi\n model: {name: gpt-4o}\n-runtime:\n-  costBudget: 2.5\n`
    )
    expect(dry.stdout).toContain("runtime.costBudget: removed (runs are budgeted in tokens and calls")
    expect(dry.stdout).toContain("not written: run again with --write to apply")
    expect(readFileSync(path, "utf8")).toBe(text)
    const wrote = migrateCommand(path, { write: true, format: "json" })
    expect(JSON.parse(wrote.stdout)).toMatchObject({
      file: path,
      written: true,
      changes: [{ field: "runtime.costBudget", action: "removed" }],
      remainingErrors: []
    })
    expect(readFileSync(path, "utf8")).toBe("type: simple\nsystemPrompt: Hi\nmodel: {name: gpt-4o}\n")
    expect(migrateCommand(path).stdout).toBe(`${path}: nothing to migrate\n`)
  })

  it("reports what no rewrite can fix (exit 3), a missing file (exit 4) and a file that is not YAML (exit 2)", () => {
    const path = join(scratch, "router.yml")
    writeFileSync(path, "type: router\nmodel: {name: gpt-4o}\nrouter:\n  classifier: {prompt: '?'}\n  routes: {}\nmax_rounds: 3\n")
    const r = migrateCommand(path)
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toMatch(/^the migrated file still has errors \(see lambdagent lint\):\n {2}.*\[L005\]\n/)
    expect(migrateCommand(join(scratch, "missing.yml")).exitCode).toBe(4)
    const bad = join(scratch, "bad.yml")
    writeFileSync(bad, "type: [\n")
    const broken = migrateCommand(bad)
    expect(broken.exitCode).toBe(2)
    expect(broken.stderr).toMatch(/^error: .*bad\.yml/)
  })
})

describe("unifiedDiff", () => {
  it("is empty for equal texts and gives hunks with context", () => {
    expect(unifiedDiff("a\n", "a\n", { from: "x", to: "y" })).toBe("")
    const before = `${Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join("\n")}\n`
    const after = before.replace("l2\n", "").replace("l18\n", "L18\nextra\n")
    expect(unifiedDiff(before, after, { from: "x", to: "y" })).toBe(
      [
        "--- x",
        "+++ y",
        "@@ -1,5 +1,4 @@",
        " l1",
        "-l2",
        " l3",
        " l4",
        " l5",
        "@@ -15,6 +14,7 @@",
        " l15",
        " l16",
        " l17",
        "-l18",
        "+L18",
        "+extra",
        " l19",
        " l20",
        ""
      ].join("\n")
    )
  })

  it("adds to an empty text", () => {
    expect(unifiedDiff("", "a\n", { from: "x", to: "y" })).toBe("--- x\n+++ y\n@@ -0,0 +1,1 @@\n+a\n")
  })
})
