import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { runCli } from "./helpers.ts"

const fixture = fileURLToPath(new URL("../../yaml/fixtures/reference/coder.yml", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "lambdagent-reference-cli-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("a config written for the Python reference, through the command line", () => {
  it("compiles as it is; lint warns about each inert field (L051) and exits 0", async () => {
    const compiled = await runCli(["compile", fixture])
    expect(compiled.code).toBe(0)
    expect(compiled.stdout).toContain("coder =")
    const linted = await runCli(["lint", fixture, "--rules", "L051", "--format", "json"])
    expect(linted.code).toBe(0)
    const fields = JSON.parse(linted.stdout).files[0].findings.map((f: { field: string }) => f.field)
    expect(fields).toContain("runtime.costBudget")
    expect(fields).toHaveLength(14)
  })

  it("run says on stderr that fields written for the reference are dropped, and where to look; --quiet does not", async () => {
    const ran = await runCli(["run", fixture, "hello", "--model", "scripted:echo", "--sandbox", "off"])
    expect(ran.code).toBe(0)
    expect(ran.stderr).toContain(
      `[14 fields written for the Python reference, dropped or read as their equivalents here: lambdagent lint ${fixture} says why, lambdagent migrate ${fixture} rewrites the file]`
    )
    const quiet = await runCli(["run", fixture, "hello", "--model", "scripted:echo", "--sandbox", "off", "--quiet"])
    expect(quiet.code).toBe(0)
    expect(quiet.stderr).toBe("")
  })

  it("migrate shows the diff and writes nothing; --write rewrites the file, which then lints clean of L051", async () => {
    const path = join(dir, "coder.yml")
    copyFileSync(fixture, path)
    const original = readFileSync(path, "utf8")
    const dry = await runCli(["migrate", path])
    expect(dry.code).toBe(0)
    expect(dry.stdout).toContain("-  costBudget: 2.5\n")
    expect(dry.stdout).toContain("+  network: true\n")
    expect(dry.stdout).toContain("14 changes:")
    expect(readFileSync(path, "utf8")).toBe(original)
    const both = await runCli(["migrate", path, "--write", "--dry-run"])
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("--write and --dry-run exclude each other")
    const wrote = await runCli(["migrate", path, "--write"])
    expect(wrote.code).toBe(0)
    expect(wrote.stdout).toContain(`wrote ${path}`)
    expect(readFileSync(path, "utf8")).not.toContain("costBudget")
    expect(readFileSync(path, "utf8")).toContain("# A react agent in the Python reference's spelling")
    const linted = await runCli(["lint", path, "--rules", "L051"])
    expect(linted.code).toBe(0)
    expect(linted.stdout).toContain("0 error(s), 0 warning(s)")
  })

  it("a validator that reads a number out of the answer: a raising attempt is invalid, retried, and the trace says why", async () => {
    const path = join(dir, "rate.yml")
    writeFileSync(
      path,
      [
        "type: simple",
        "systemPrompt: Rate it from 1 to 10; answer with the number.",
        "guard:",
        "  validator: int(x) > 5",
        "  retry: 2",
        "  fallback: n/a",
        "rag:",
        "  enabled: false",
        "  top_k: 5",
        ""
      ].join("\n")
    )
    const linted = await runCli(["lint", path, "--rules", "L051,L052", "--format", "json"])
    expect(linted.code).toBe(0)
    const findings = JSON.parse(linted.stdout).files[0].findings as ReadonlyArray<{ rule: string; field: string }>
    expect(findings.map((f) => [f.rule, f.field])).toEqual([
      ["L052", "guard.fallback"],
      ["L051", "rag.top_k"]
    ])
    const ran = await runCli(["run", path, "go", "--model", 'scripted:sequence:["many","3"," 8"]', "--format", "json", "--quiet"])
    expect(ran.code).toBe(0)
    const out = JSON.parse(ran.stdout) as { result: string; trace: ReadonlyArray<{ kind: string; name: string; error?: string }> }
    expect(out.result).toBe(" 8")
    expect(out.trace.filter((e) => e.kind === "guard").map((e) => [e.name, e.error])).toEqual([
      ["invalid", 'the validator raised ValueError: toInt: "many" is not an integer'],
      ["invalid", undefined],
      ["valid", undefined]
    ])
    const fellBack = await runCli(["run", path, "go", "--model", "scripted:fixed:many", "--quiet"])
    expect(fellBack.code).toBe(0)
    expect(fellBack.stdout.trim()).toBe("n/a")
  })

  it("trace reads the reference's trace file: steps, time line and flame graph", async () => {
    const path = join(dir, "old-trace.json")
    writeFileSync(
      path,
      JSON.stringify([
        { step: 1, term: "classifier", term_id: "a1", duration_ms: 300, input: "fix it", output: "code", model: "gpt-4o-mini", tokens: 12 },
        { step: 2, term: "coder", term_id: "b2", duration_ms: 900, input: "fix it", output: "done", model: "gpt-4o", tokens: 80 }
      ])
    )
    const listed = await runCli(["trace", path])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain('β[1]  coder          (0.9s)  "fix it" → "done"')
    expect(listed.stdout).toContain("Total: 2 β-reductions, 1.2s, ~92 tokens")
    const timeline = await runCli(["trace", path, "--timeline"])
    expect(timeline.stdout).toContain("coder (900ms) β[1]")
    const svg = join(dir, "flame.svg")
    const flame = await runCli(["trace", path, "--flamegraph", svg])
    expect(flame.code).toBe(0)
    expect(readFileSync(svg, "utf8")).toContain("<title>β[1] coder 900.0ms</title>")
  })
})
