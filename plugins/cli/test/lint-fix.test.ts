import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-lint-fix-"))
const config = "type: react\nsystemPrompt: Search.\nmodel: {name: gpt-4o-mini, temperature: 9}\nmcp:\n  localTools: [web_search]\n"

describe("lambdagent lint --fix (seed §15)", () => {
  it("--fix --dry-run prints the diff on stdout and the fixes on stderr, and writes nothing", async () => {
    const file = join(dir, "dry.yml")
    writeFileSync(file, config)
    const r = await runCli(["lint", file, "--fix", "--dry-run"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("-model: {name: gpt-4o-mini, temperature: 9}\n+model: { name: gpt-4o-mini, temperature: 2 }\n")
    expect(r.stdout).toContain("+react:\n+  maxSteps: 10\n")
    expect(r.stderr).toContain("lint --fix: 3 fixes would be made (--dry-run: nothing written)")
    expect(r.stderr).toContain(`${file}: L004 mcp.localTools: added terminate, the loop's base case`)
    expect(readFileSync(file, "utf8")).toBe(config)
  })

  it("--fix writes the file, after which lint finds no error", async () => {
    const file = join(dir, "fix.yml")
    writeFileSync(file, config)
    const r = await runCli(["lint", file, "--fix"])
    expect(r.code, r.stderr).toBe(0)
    expect(readFileSync(file, "utf8")).toContain("localTools: [ web_search, terminate ]")
    const again = await runCli(["lint", file, "--fix", "--format", "json"])
    expect(JSON.parse(again.stdout).fixed[0].fixes).toEqual([])
  })

  it("refuses --dry-run without --fix", async () => {
    const r = await runCli(["lint", join(dir, "dry.yml"), "--dry-run"])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("--dry-run goes with --fix")
  })
})
