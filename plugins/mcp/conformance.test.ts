/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against the built
 * `lambdagent mcp --http`. Every server scenario of the package is either run and required to pass,
 * or excluded below with the reason: most scenarios call fixture tools, resources and prompts
 * (`test_simple_text`, `test://static-text`, …) that only a purpose-built test server has.
 * Offline, in a few seconds.
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { readdir, readFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { resolveTool } from "../../test/tools/index.ts"
import { cliPath, type HttpProcess, root, spawnHttpServer, tempDir } from "./test-support.ts"

/** Scenarios that apply to any server: each must pass. */
const INCLUDED = [
  "server-initialize",
  "ping",
  "logging-set-level",
  "tools-list",
  "resources-list",
  "prompts-list",
  "server-sse-multiple-streams",
  "dns-rebinding-protection"
] as const

/** Scenarios that need what a generic server cannot have, and why. */
const EXCLUDED: Readonly<Record<string, string>> = {
  "completion-complete": "completes an argument of the fixture prompt test_prompt_with_arguments; this server has no completions",
  "tools-call-simple-text": "calls the fixture tool test_simple_text",
  "tools-call-image": "calls the fixture tool test_image_content",
  "tools-call-audio": "calls the fixture tool test_audio_content",
  "tools-call-embedded-resource": "calls the fixture tool test_embedded_resource",
  "tools-call-mixed-content": "calls the fixture tool test_multiple_content_types",
  "tools-call-with-logging": "calls the fixture tool test_tool_with_logging (logging itself is covered by logging-set-level and the lifecycle tests)",
  "tools-call-error": "calls the fixture tool test_error_handling",
  "tools-call-with-progress": "calls the fixture tool test_tool_with_progress",
  "tools-call-sampling": "calls the fixture tool test_sampling; this server never asks the client to sample",
  "tools-call-elicitation": "calls the fixture tool test_elicitation; this server never elicits",
  "elicitation-sep1034-defaults": "calls the fixture tool test_elicitation_sep1034_defaults; this server never elicits",
  "elicitation-sep1330-enums": "calls the fixture tool test_elicitation_sep1330_enums; this server never elicits",
  "json-schema-2020-12": "lists the fixture tool json_schema_2020_12_tool (pending in the suite)",
  "server-sse-polling": "calls the fixture tool test_reconnection, which closes its stream mid-call (pending in the suite)",
  "resources-read-text": "reads the fixture resource test://static-text",
  "resources-read-binary": "reads the fixture resource test://static-binary",
  "resources-templates-read": "reads the fixture template test://template/{id}/data",
  "resources-subscribe": "subscribes to the fixture resource test://watched-resource; this server offers no subscriptions",
  "resources-unsubscribe": "unsubscribes from the fixture resource test://watched-resource; this server offers no subscriptions",
  "prompts-get-simple": "gets the fixture prompt test_simple_prompt",
  "prompts-get-with-args": "gets the fixture prompt test_prompt_with_arguments",
  "prompts-get-embedded-resource": "gets the fixture prompt test_prompt_with_embedded_resource",
  "prompts-get-with-image": "gets the fixture prompt test_prompt_with_image"
}

interface Check {
  readonly id: string
  readonly status: string
  readonly errorMessage?: string
}

const runner = join(dirname(resolveTool("@modelcontextprotocol/conformance/package.json")), "dist", "index.js")

/** Run the conformance CLI; its exit code and output. */
const conformance = (args: ReadonlyArray<string>, cwd: string): Promise<{ code: number | null; output: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [runner, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })

describe("the MCP conformance suite against lambdagent mcp --http", () => {
  let server: HttpProcess
  let dir: Awaited<ReturnType<typeof tempDir>>
  let listed: Array<string>
  const results = new Map<string, ReadonlyArray<Check>>()

  beforeAll(async () => {
    if (!existsSync(cliPath)) throw new Error("dist/cli/main.js is missing: run `npx tsup` first")
    dir = await tempDir()
    server = await spawnHttpServer([cliPath, "mcp", "--http", "0", "--store", ":memory:"])
    const list = await conformance(["list", "--server"], dir.path)
    listed = [...list.output.matchAll(/^ {2}- ([a-z0-9-]+)/gm)].map((m) => m[1]!)
    // every scenario, pending ones included, in one run; results go to a directory of their own
    const out = join(dir.path, "results")
    const run = await conformance(["server", "--url", server.url, "--suite", "all", "-o", out], dir.path)
    for (const entry of await readdir(out)) {
      const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T/.exec(entry)?.[1]
      if (scenario === undefined) continue
      results.set(scenario, JSON.parse(await readFile(join(out, entry, "checks.json"), "utf8")))
    }
    if (results.size === 0) throw new Error(`the conformance runner produced no results:\n${run.output}`)
  }, 60_000)

  afterAll(async () => {
    expect(await server?.stop()).toBe(0)
    await dir?.remove()
  })

  it("every server scenario of the package is either run here or excluded with a reason", () => {
    expect(listed.length).toBeGreaterThan(20)
    const classified = [...INCLUDED, ...Object.keys(EXCLUDED)]
    expect(new Set(classified).size).toBe(classified.length) // nothing both included and excluded
    expect([...listed].sort()).toEqual([...classified].sort())
    expect([...results.keys()].sort()).toEqual([...listed].sort()) // and the run covered them all
  })

  it.each(INCLUDED)("%s passes", (scenario) => {
    const checks = results.get(scenario) ?? []
    expect(checks.length, scenario).toBeGreaterThan(0)
    const failed = checks.filter((c) => c.status !== "SUCCESS" && c.status !== "INFO")
    expect(failed, JSON.stringify(failed)).toEqual([])
    expect(checks.some((c) => c.status === "SUCCESS")).toBe(true)
  })

  it("left nothing in the working directory (results went to the temporary one)", () => {
    expect(existsSync(join(root, "results"))).toBe(false)
  })
})
