import { readFileSync, statSync } from "node:fs"
import { builtinModules } from "node:module"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { runCli } from "./helpers.ts"

const leanProgram = fileURLToPath(new URL("../../../dist/cli/yaml-main.cjs", import.meta.url))

describe("the lambdagent launcher", () => {
  it("checks configs with a self-contained program that loads nothing but Node built-ins", () => {
    const source = readFileSync(leanProgram, "utf8")
    const required = [...source.matchAll(/require\(["']([^"']+)["']\)/g)].map((m) => m[1]!)
    expect(required.length).toBeGreaterThan(0)
    const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))
    expect(required.filter((name) => !builtins.has(name))).toEqual([])
    expect(source).not.toMatch(/\bimport\(/)
  })

  it("keeps the lean program small: a size budget that catches a dependency pulled in whole", () => {
    // ~605 KB today (the multi-agent forms and their YAML blocks added ~30 KB). A named
    // `import { z } from "zod"` anywhere on the YAML path brings in all of zod (its locales, every
    // schema kind), over 300 KB more; so would the agent runtime.
    expect(statSync(leanProgram).size).toBeLessThan(700_000)
  })

  it("gives the lean commands the same frame as the full CLI: version, help, usage errors", async () => {
    const help = await runCli(["lint", "--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("Usage: lambdagent lint [options] <target>")
    const usage = await runCli(["lint", "--level", "loud", "examples/agents/simple.yml"])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toBe('error: UsageError: --level expects error, warn or info, got "loud"\n')
    const unknown = await runCli(["compile", "--nope", "examples/agents/simple.yml"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("unknown option '--nope'")
    const full = await runCli(["--help"])
    for (const command of ["run", "lint", "compile", "lambda", "serve", "mcp"]) expect(full.stdout).toContain(`  ${command} `)
  })

  it("reports a missing file with exit code 4 and one line, from either program", async () => {
    const lean = await runCli(["lint", "no-such-agent.yml", "--format", "json"])
    expect(lean.code).toBe(4)
    const full = await runCli(["run", "no-such-agent.yml", "hi"])
    expect(full.code).toBe(4)
    expect(full.stderr.split("\n").filter((l) => l !== "")).toHaveLength(1)
  })
})
