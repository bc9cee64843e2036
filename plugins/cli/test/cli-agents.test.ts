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
