import { spawn } from "node:child_process"
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { builtinModules } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { servesPureTools } from "../leanMcp.ts"
import { runCli } from "./helpers.ts"

const leanProgram = fileURLToPath(new URL("../../../dist/cli/yaml-main.cjs", import.meta.url))
const leanMcpProgram = fileURLToPath(new URL("../../../dist/cli/mcp-main.cjs", import.meta.url))

/** Run a copy of the lean MCP program alone in an empty directory (no package can be found from it); its first answer. */
const initializeAlone = async (): Promise<unknown> => {
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-lean-mcp-"))
  try {
    const copy = join(dir, "mcp-main.cjs")
    copyFileSync(leanMcpProgram, copy)
    const child = spawn(process.execPath, ["-e", `require(${JSON.stringify(copy)}).main(["node", "lambdagent", "mcp", "--store", ":memory:"])`], {
      cwd: dir,
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } }
    }
    child.stdin.end(`${JSON.stringify(initialize)}\n`)
    const code = await new Promise((resolve) => child.on("close", resolve))
    expect({ code, stderr: stderr.replace(/^\[lambdagent mcp\] serving stdio.*\n/m, "") }).toEqual({ code: 0, stderr: "" })
    return JSON.parse(stdout.split("\n")[0]!)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

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
    // ~715 KB today: the YAML plugin ~150 KB, zod's mini build ~147 KB, yaml ~115 KB, effect ~96 KB,
    // the machine, its compiled tier and the forms ~120 KB. A named `import { z } from "zod"`
    // anywhere on the YAML path brings in all of zod (its locales, every schema kind), over 300 KB
    // more; so would the agent runtime.
    expect(statSync(leanProgram).size).toBeLessThan(800_000)
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

  it("serves pure MCP tools with a self-contained program that answers with no package installed beside it", async () => {
    const answer = (await initializeAlone()) as { id: number; result: { serverInfo: { name: string } } }
    expect(answer.id).toBe(1)
    expect(answer.result.serverInfo.name).toBe("lambdagent")
    // nothing loaded later either, but for a Node built-in
    const imported = [...readFileSync(leanMcpProgram, "utf8").matchAll(/\bimport\(\s*["'`]([^"'`]+)/g)].map((m) => m[1]!)
    expect(imported.filter((name) => !builtinModules.includes(name.replace(/^node:/, "")))).toEqual([])
    // ~700 KB today: the MCP SDK's server, zod, ajv, the evaluator and the forms. The agent runtime
    // and its providers would add over 1 MB.
    expect(statSync(leanMcpProgram).size).toBeLessThan(900_000)
  })

  it("starts the lean MCP program only for servers of pure tools in memory or a file", () => {
    const pure = (...args: Array<string>) => servesPureTools(["node", "lambdagent", ...args], {})
    expect(pure("mcp")).toBe(true)
    expect(pure("mcp", "--store", ":memory:", "--http", "0", "--token", "t", "--fuel", "100")).toBe(true)
    expect(pure("mcp", "--store=./tools.json")).toBe(true)
    expect(pure("mcp", "--help")).toBe(true)
    // the agent runtime, store plugins and other plugins are the full program's
    for (const args of [
      ["--allow", "llm", "--model", "scripted:echo"],
      ["--allow=tool:*", "--tool", "up=tr a-z A-Z"],
      ["--config", "server.yml"],
      ["--otel", "http://127.0.0.1:4318"],
      ["--model=scripted:echo"],
      ["--store", "redis://127.0.0.1:6379"],
      ["--store=sqlite:tools.db"],
      ["--plugin", "./plugin.mjs"]
    ]) {
      expect(pure("mcp", ...args)).toBe(false)
    }
    expect(servesPureTools(["node", "lambdagent", "mcp"], { LAMBDAGENT_PLUGINS: "./plugin.mjs" })).toBe(false)
    expect(pure("run", "agent.yml")).toBe(false)
    expect(pure("--plugin", "./p.mjs", "mcp")).toBe(false)
  })
})
