import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { lintCommand } from "./commands.ts"
import { fixConfig } from "./fix.ts"
import { lint } from "./lint.ts"
import { unifiedDiff } from "./diff.ts"

const broken = `# the research agent
type: react
systemPrompt: Research.   # keep this comment
model:
  name: gpt-4o-mini
  temperature: 3.5
mcp:
  localTools: [web_search]
router: {}
`

describe("fixConfig", () => {
  it("adds terminate, writes out maxSteps and clamps a number out of range, keeping comments", () => {
    const { text, fixes } = fixConfig(broken.replace("router: {}\n", ""))
    expect(fixes.map((f) => `${f.rule} ${f.field}`)).toEqual(["schema model.temperature", "L004 mcp.localTools", "L017 react.maxSteps"])
    expect(text).toContain("# the research agent")
    expect(text).toContain("systemPrompt: Research. # keep this comment")
    expect(text).toContain("temperature: 2\n")
    expect(text).toContain("localTools: [ web_search, terminate ]")
    expect(text).toContain("react:\n  maxSteps: 10\n")
    expect(lint({ text }).findings.filter((f) => f.level === "error")).toEqual([])
    // fixing again finds nothing
    expect(fixConfig(text)).toEqual({ text, fixes: [] })
  })

  it("fixes nested react agents and maxSteps: 0, and creates the mcp block where there is none", () => {
    const yaml = `type: router
model: {name: m}
router:
  classifier: {prompt: Which?}
  routes:
    work:
      type: react
      systemPrompt: Work.
      react: {maxSteps: 0}
  default: "no"
`
    const { text, fixes } = fixConfig(yaml)
    expect(fixes.map((f) => `${f.rule} ${f.field}`)).toEqual(["L003 router.routes.work.react.maxSteps", "L004 router.routes.work.mcp.localTools"])
    expect(text).toContain("react: { maxSteps: 1 }")
    expect(text).toContain("      mcp:\n        localTools:\n          - terminate\n")
  })

  it("leaves text that is not YAML, or has nothing to fix, as it is", () => {
    expect(fixConfig("a: [\n")).toEqual({ text: "a: [\n", fixes: [] })
    const ok = "type: simple\nsystemPrompt: Hi.\nmodel: {name: m}\n"
    expect(fixConfig(ok)).toEqual({ text: ok, fixes: [] })
  })
})

describe("unifiedDiff", () => {
  it("shows hunks with three lines of context and correct line numbers", () => {
    const before = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"].join("\n") + "\n"
    const after = before.replace("2\n", "two\n").replace("11\n", "11\neleven\n")
    expect(unifiedDiff(before, after, { from: "f", to: "f (fixed)" })).toBe(
      ["--- f", "+++ f (fixed)", "@@ -1,5 +1,5 @@", " 1", "-2", "+two", " 3", " 4", " 5", "@@ -9,4 +9,5 @@", " 9", " 10", " 11", "+eleven", " 12", ""].join(
        "\n"
      )
    )
    expect(unifiedDiff(before, before, { from: "f", to: "f (fixed)" })).toBe("")
  })
})

describe("lint --fix", () => {
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-fix-"))

  it("--dry-run shows the diff and lints the repaired text, writing nothing", () => {
    const file = join(dir, "dry.yml")
    writeFileSync(file, broken.replace("router: {}\n", ""))
    const r = lintCommand(file, { fix: true, dryRun: true })
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain(`--- ${file}\n+++ ${file} (fixed)\n`)
    expect(r.stdout).toContain("-  temperature: 3.5\n+  temperature: 2\n")
    expect(r.stderr).toContain("lint --fix: 3 fixes would be made (--dry-run: nothing written)")
    expect(readFileSync(file, "utf8")).toBe(broken.replace("router: {}\n", ""))
  })

  it("writes the repaired file, and reports what it could not fix with lint's exit code", () => {
    const file = join(dir, "fix.yml")
    writeFileSync(file, broken.replace("systemPrompt: Research.   # keep this comment\n", ""))
    const r = lintCommand(file, { fix: true, format: "json" })
    const report = JSON.parse(r.stdout) as {
      dryRun: boolean
      fixed: Array<{ fixes: Array<{ rule: string }>; diff: string }>
      files: Array<{ findings: Array<{ rule: string }> }>
    }
    expect(report.dryRun).toBe(false)
    expect(report.fixed[0]!.fixes.map((f) => f.rule)).toEqual(["schema", "L004", "L017"])
    // the unknown field router is not mechanically fixable: the repaired file still fails
    expect(r.exitCode).toBe(2)
    expect(readFileSync(file, "utf8")).toContain("temperature: 2")
  })
})
