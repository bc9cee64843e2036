import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-cli-agents-"))
const write = (name: string, text: string) => {
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}

const programs = `cli:
  agents:
    upper: {command: "tr a-z A-Z"}
    reverse: {command: "rev"}
  pipelines:
    shout_backwards:
      steps: [upper, "cli:reverse"]
    both:
      steps: [upper, reverse]
      parallel: true
`

describe("programs of cli.agents and cli.pipelines, run by the CLI (seed §17.3, C14)", () => {
  it("runs a pipeline as a chain step: steps [a, b] is a >> b", async () => {
    const agent = write("pipeline.yml", `type: chain\nchain:\n  steps:\n    - tool: shout_backwards\n${programs}`)
    const r = await runCli(["run", agent, "hello", "--quiet"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe("OLLEH\n")
  })

  it("runs a parallel pipeline's steps on the same input and joins their answers", async () => {
    const agent = write("parallel.yml", `type: chain\nchain:\n  steps:\n    - tool: both\n${programs}`)
    const r = await runCli(["run", agent, "abc", "--quiet"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe("ABC\n\ncba\n")
  })

  it("lets a react agent call a program named cli:NAME in its localTools, and a pipeline", async () => {
    const agent = write("react.yml", `type: react\nsystemPrompt: Shout.\nreact: {maxSteps: 4}\nmcp:\n  localTools: ["cli:upper", terminate]\n${programs}`)
    const script = JSON.stringify(['{"tool":"upper","args":"quiet"}', '{"tool":"shout_backwards","args":{"task":"abc"}}', '{"tool":"terminate","args":"done"}'])
    const r = await runCli(["run", agent, "go", "--model", `scripted:sequence:${script}`, "--format", "json"])
    expect(r.code, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout) as { result: string; trace: Array<{ kind: string; name: string; output?: string }> }
    expect(out.result).toBe("done")
    expect(out.trace.filter((e) => e.kind === "tool").map((e) => [e.name, e.output])).toEqual(
      expect.arrayContaining([
        ["upper", "QUIET"],
        ["reverse", "CBA"]
      ])
    )
  })
})

describe("compile --dry-run (seed §15: every tool reachable)", () => {
  const react = (tools: string) => `type: react\nsystemPrompt: Help.\nreact: {maxSteps: 3}\nmcp:\n  localTools: [terminate]\n${tools}`

  it("finds every program on PATH and says so, exit 0", async () => {
    const agent = write("reachable.yml", react(`cli:\n  agents:\n    upper: {command: "tr a-z A-Z"}\n`))
    const r = await runCli(["compile", agent, "--dry-run"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(`Dry run of ${agent}: every tool reachable`)
    expect(r.stdout).toMatch(/✓ reachable {2}upper \(cli\): /)
    expect(r.stdout).toContain("Tool_CLI(upper)")
  })

  it("reports a missing program and an MCP server that does not answer, exit 1; --format json carries them", async () => {
    const agent = write(
      "unreachable.yml",
      react(
        `  onlineTool:\n    search: [web_search]\napp:\n  mcp:\n    custom:\n      nodes:\n        search: {url: "http://127.0.0.1:9", endpoint: /mcp}\ncli:\n  agents:\n    ghost: {command: "no-such-program-for-lambdagent --x"}\n`
      )
    )
    const r = await runCli(["compile", agent, "--dry-run", "--timeout", "5"])
    expect(r.code, r.stderr).toBe(1)
    expect(r.stdout).toContain("some tools unreachable")
    expect(r.stdout).toMatch(/✗ unreachable {2}ghost \(cli\): /)
    expect(r.stdout).toMatch(/✗ unreachable {2}web_search \(mcp\): /)
    const json = await runCli(["compile", agent, "--dry-run", "--format", "json"])
    expect(json.code).toBe(1)
    const report = JSON.parse(json.stdout) as {
      exitCode: number
      files: Array<{ dryRun: { ok: boolean; tools: Array<{ name: string; reachability: { ok: boolean } }> } }>
    }
    expect(report.exitCode).toBe(1)
    expect(report.files[0]!.dryRun.ok).toBe(false)
    expect(report.files[0]!.dryRun.tools.find((t) => t.name === "ghost")?.reachability.ok).toBe(false)
  })

  it("keeps compile's own exit code for a config that does not compile, and refuses --timeout without --dry-run", async () => {
    const bad = write("bad.yml", "type: simple\n")
    expect((await runCli(["compile", bad, "--dry-run"])).code).toBe(2)
    const r = await runCli(["compile", bad, "--timeout", "3"])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("--timeout goes with --dry-run")
  })
})
