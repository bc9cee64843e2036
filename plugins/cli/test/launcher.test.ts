import { spawn, spawnSync } from "node:child_process"
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { servesPureTools } from "../leanMcp.ts"
import { cliPath, runCli } from "./helpers.ts"

const leanProgram = fileURLToPath(new URL("../../../dist/cli/yaml-main.cjs", import.meta.url))
const leanMcpProgram = fileURLToPath(new URL("../../../dist/cli/mcp-main.cjs", import.meta.url))
const reactAgent = fileURLToPath(new URL("../../../examples/agents/react.yml", import.meta.url))

/** `lambdagent lint react.yml` with HOME, the temporary directory and the compile cache's variables as given, nothing else of theirs inherited. */
const lintWith = (env: Record<string, string>) => {
  const { NODE_COMPILE_CACHE, NODE_DISABLE_COMPILE_CACHE, XDG_CACHE_HOME, ...inherited } = process.env
  const r = spawnSync(process.execPath, [cliPath, "lint", reactAgent], { encoding: "utf8", env: { ...inherited, ...env } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** Whether a compile cache directory holds bytecode (Node keeps it in one subdirectory per Node.js version). */
const holdsCache = (dir: string): boolean => existsSync(dir) && readdirSync(dir).some((entry) => readdirSync(join(dir, entry)).length > 0)

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

  describe("compile cache", () => {
    const scratch = () => mkdtempSync(join(tmpdir(), "lambdagent-compile-cache-test-"))
    const uid = process.getuid?.() ?? "user"

    it("keeps bytecode in the user's cache directory, and runs the same with a cache as without", () => {
      const home = scratch()
      const tmp = scratch()
      try {
        const first = lintWith({ HOME: home, TMPDIR: tmp })
        expect(first.code).toBe(0)
        expect(holdsCache(join(home, ".cache", "lambdagent", "compile-cache"))).toBe(true)
        expect(readdirSync(tmp)).toEqual([])
        expect(lintWith({ HOME: home, TMPDIR: tmp })).toEqual(first)
        const xdg = join(home, "xdg")
        expect(lintWith({ HOME: home, TMPDIR: tmp, XDG_CACHE_HOME: xdg })).toEqual(first)
        expect(holdsCache(join(xdg, "lambdagent", "compile-cache"))).toBe(true)
      } finally {
        rmSync(home, { recursive: true, force: true })
        rmSync(tmp, { recursive: true, force: true })
      }
    })

    it("follows NODE_COMPILE_CACHE and NODE_DISABLE_COMPILE_CACHE, and runs without a cache it cannot open", () => {
      const home = scratch()
      const tmp = scratch()
      try {
        const chosen = join(home, "chosen")
        const plain = lintWith({ HOME: home, TMPDIR: tmp, NODE_COMPILE_CACHE: chosen })
        expect(plain.code).toBe(0)
        expect(holdsCache(chosen)).toBe(true)
        expect(lintWith({ HOME: home, TMPDIR: tmp, NODE_DISABLE_COMPILE_CACHE: "1" })).toEqual(plain)
        expect(readdirSync(home)).toEqual(["chosen"])
        expect(readdirSync(tmp)).toEqual([])
        // a file where the directory should be: the command runs, and says nothing about it
        const file = join(home, "file")
        writeFileSync(file, "")
        expect(lintWith({ HOME: home, TMPDIR: tmp, NODE_COMPILE_CACHE: join(file, "cache") })).toEqual(plain)
      } finally {
        rmSync(home, { recursive: true, force: true })
        rmSync(tmp, { recursive: true, force: true })
      }
    })

    it("falls back to a directory of the user's own under the temporary directory, never one others can write", () => {
      const home = scratch()
      const tmp = scratch()
      try {
        // a home where no cache directory can be made
        const fileHome = join(home, "file")
        writeFileSync(fileHome, "")
        const fallback = join(tmp, `lambdagent-compile-cache-${uid}`)
        const plain = lintWith({ HOME: fileHome, TMPDIR: tmp })
        expect(plain.code).toBe(0)
        expect(holdsCache(fallback)).toBe(true)
        if (process.platform !== "win32") expect(statSync(fallback).mode & 0o777).toBe(0o700)
        rmSync(fallback, { recursive: true, force: true })
        if (process.platform === "win32") return
        mkdirSync(fallback)
        chmodSync(fallback, 0o777)
        expect(lintWith({ HOME: fileHome, TMPDIR: tmp })).toEqual(plain)
        expect(readdirSync(fallback)).toEqual([])
      } finally {
        rmSync(home, { recursive: true, force: true })
        rmSync(tmp, { recursive: true, force: true })
      }
    })
  })

  it("answers version, -v and --version itself, as the programs would", async () => {
    const fromProgram = (arg: string) => {
      const r = spawnSync(process.execPath, ["-e", `require(${JSON.stringify(leanProgram)}).main(["node", "lambdagent", ${JSON.stringify(arg)}])`], {
        encoding: "utf8"
      })
      return { code: r.status, stdout: r.stdout, stderr: r.stderr }
    }
    expect((await runCli(["version"])).stdout).toBe(`lambdagent 0.1.0\nnode ${process.version}\n`)
    for (const arg of ["version", "-v", "--version"]) expect(await runCli([arg])).toEqual(fromProgram(arg))
    expect((await runCli(["-v"])).stdout).toBe("0.1.0\n")
    expect(JSON.parse((await runCli(["version", "--format", "json"])).stdout)).toEqual({ lambdagent: "0.1.0", node: process.version })
  })

  describe("program code cache", () => {
    /** The cache files of the lean programs under a compile cache directory (Node keeps one subdirectory per version). */
    const programCaches = (dir: string): Array<string> =>
      readdirSync(dir).flatMap((version) => {
        const programs = join(dir, version, "lambdagent-programs")
        return existsSync(programs) ? readdirSync(programs).map((name) => join(programs, name)) : []
      })

    it("keeps the lint program's bytecode after its run, uses it the next time, and makes it again when it is refused", () => {
      const home = mkdtempSync(join(tmpdir(), "lambdagent-program-cache-test-"))
      try {
        const cache = join(home, "cache")
        const first = lintWith({ HOME: home, NODE_COMPILE_CACHE: cache })
        expect(first.code).toBe(0)
        const [file, ...others] = programCaches(cache)
        expect(others).toEqual([])
        expect(file).toMatch(/yaml-main-lint-[0-9a-f]{8}\.bin$/)
        const made = statSync(file!)
        expect(lintWith({ HOME: home, NODE_COMPILE_CACHE: cache })).toEqual(first)
        expect(statSync(file!).mtimeMs).toBe(made.mtimeMs) // read, not written again
        writeFileSync(file!, "not a code cache")
        expect(lintWith({ HOME: home, NODE_COMPILE_CACHE: cache })).toEqual(first)
        expect(statSync(file!).size).toBeGreaterThan(1000) // refused, then made again
        expect(programCaches(cache)).toEqual([file])
      } finally {
        rmSync(home, { recursive: true, force: true })
      }
    })
  })
})
