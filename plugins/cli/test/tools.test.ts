import { createServer, type Server } from "node:http"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCli } from "./helpers.ts"

// the react example with its MCP server moved to a closed local port: no test reaches outside this machine
const react = (() => {
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-tools-"))
  const file = join(dir, "react.yml")
  writeFileSync(file, readFileSync("examples/agents/react.yml", "utf8").replace("https://mcp.example.com", "http://127.0.0.1:9"))
  return file
})()
const echo = "echo=printf '%s' {}"

interface Entry {
  readonly name: string
  readonly kind: string
  readonly source: string
  readonly server?: string
  readonly connection?: { readonly transport: string; readonly url?: string; readonly command?: string }
  readonly command?: string
  readonly callable: boolean
  readonly reachability: { readonly ok: boolean | null | undefined; readonly detail: string; readonly ms?: number }
}

const listJson = async (args: ReadonlyArray<string>): Promise<ReadonlyArray<Entry>> => {
  const r = await runCli(["tools", ...args, "--format", "json"])
  expect(r.code).toBe(0)
  return (JSON.parse(r.stdout) as { tools: ReadonlyArray<Entry> }).tools
}

describe("lambdagent tools: listing", () => {
  it("lists the react example's tools by kind with their source, and MCP endpoints", async () => {
    const r = await runCli(["tools", react, "--timeout", "1"])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^Tools for Research assistant:/)
    expect(r.stdout).toMatch(/\[MCP\]\s+web_search\s+search-server/)
    expect(r.stdout).toMatch(/\[CLI\]\s+summarizer\s+lambdagent run examples\/agents\/simple\.yml --quiet -/)
    expect(r.stdout).toMatch(/\[Local\]\s+terminate\s+λx\.x \(base case\)\s+✓ reachable/)
    expect(r.stdout).toContain("MCP endpoints:\n  search-server: http://127.0.0.1:9/mcp\n    Status: ")
  })

  it("gives the same facts as JSON: kinds, server and connection, command, reachability", async () => {
    const tools = await listJson([react, "--timeout", "1", "--tool", echo])
    const byName = new Map(tools.map((t) => [t.name, t]))
    expect(tools.map((t) => t.kind).sort()).toEqual(["cli", "local", "mcp", "shell", "terminate"])
    expect(byName.get("web_search")).toMatchObject({
      kind: "mcp",
      server: "search-server",
      connection: { transport: "http", url: "http://127.0.0.1:9" },
      callable: true
    })
    expect(byName.get("summarizer")).toMatchObject({ kind: "cli", command: "lambdagent run examples/agents/simple.yml --quiet -", callable: true })
    expect(byName.get("terminate")).toMatchObject({ kind: "terminate", reachability: { ok: true } })
    expect(byName.get("calculator")).toMatchObject({ kind: "local", callable: false, reachability: { ok: false } })
    expect(byName.get("echo")).toMatchObject({ kind: "shell", command: "printf '%s' {}", reachability: { ok: true, detail: "printf is a shell builtin" } })
    for (const t of tools) expect(typeof t.reachability.detail).toBe("string")
  })

  describe("reachability", () => {
    let live: Server
    let livePort = 0
    let deadPort = 0
    let dir = ""
    beforeAll(async () => {
      live = createServer((_req, res) => {
        res.statusCode = 405
        res.end()
      })
      await new Promise<void>((resolve) => live.listen(0, "127.0.0.1", resolve))
      livePort = (live.address() as AddressInfo).port
      // a port that was just free: nothing listens there
      const probe = createServer()
      await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve))
      deadPort = (probe.address() as AddressInfo).port
      await new Promise<void>((resolve) => probe.close(() => resolve()))
      dir = mkdtempSync(join(tmpdir(), "lambdagent-tools-"))
      writeFileSync(
        join(dir, "probe.yml"),
        [
          "name: Probe",
          "type: react",
          "systemPrompt: Use the tools.",
          "react:",
          "  maxSteps: 3",
          "mcp:",
          "  localTools: [terminate]",
          "mcpServers:",
          "  - name: live",
          "    transport: http",
          `    url: http://127.0.0.1:${livePort}/mcp`,
          "    tools: [live_tool]",
          "  - name: dead",
          "    transport: http",
          `    url: http://127.0.0.1:${deadPort}/mcp`,
          "    tools: [dead_tool]",
          "  - name: local-node",
          "    transport: stdio",
          "    command: node",
          "    tools: [stdio_tool]",
          "  - name: missing",
          "    transport: stdio",
          "    command: no-such-mcp-binary-7f3a",
          "    tools: [missing_tool]",
          ""
        ].join("\n")
      )
    })
    afterAll(async () => {
      await new Promise<void>((resolve) => live.close(() => resolve()))
    })

    it("HTTP servers are reachable when they answer at all; stdio servers and shell tools when their program exists", async () => {
      const tools = await listJson([join(dir, "probe.yml"), "--tool", "gone=no-such-command-7f3a {}", "--tool", echo])
      const ok = Object.fromEntries(tools.map((t) => [t.name, t.reachability.ok]))
      expect(ok).toEqual({ terminate: true, live_tool: true, dead_tool: false, stdio_tool: true, missing_tool: false, gone: false, echo: true })
      expect(tools.find((t) => t.name === "live_tool")!.reachability.detail).toBe("HTTP 405")
      expect(tools.find((t) => t.name === "gone")!.reachability.detail).toBe("no-such-command-7f3a not found on PATH")
      const text = await runCli(["tools", join(dir, "probe.yml")])
      expect(text.stdout).toContain(`  live: http://127.0.0.1:${livePort}/mcp\n    Status: ✓ reachable (HTTP 405, `)
      expect(text.stdout).toContain(`  dead: http://127.0.0.1:${deadPort}/mcp\n    Status: ✗ unreachable (`)
      expect(text.stdout).toContain("  missing: no-such-mcp-binary-7f3a\n    Status: ✗ unreachable (no-such-mcp-binary-7f3a not found on PATH)")
    })
  })
})

describe("lambdagent tools --test", () => {
  it("calls a shell tool through the tool protocol and prints its output", async () => {
    const r = await runCli(["tools", "examples/agents/simple.yml", "--tool", echo, "--test", "echo", "hello world"])
    expect(r).toMatchObject({ code: 0, stdout: "hello world\n" })
    const j = await runCli(["tools", "examples/agents/simple.yml", "--tool", echo, "--test", "echo", "it's", "--format", "json"])
    expect(j.code).toBe(0)
    expect(JSON.parse(j.stdout)).toMatchObject({ tool: "echo", input: "it's", output: "it's" })
  })

  it("reads the input from piped stdin when none is given", async () => {
    const r = await runCli(["tools", "examples/agents/simple.yml", "--tool", echo, "--test", "echo"], { stdin: "from stdin\n" })
    expect(r).toMatchObject({ code: 0, stdout: "from stdin\n" })
  })

  it("answers terminate with its input (the base case λx.x)", async () => {
    const r = await runCli(["tools", react, "--test", "terminate", "done"])
    expect(r).toMatchObject({ code: 0, stdout: "done\n" })
  })

  it("refuses an unknown tool as a usage error (exit 2) naming the known ones; an MCP tool whose server is down answers with an error observation", async () => {
    const unknown = await runCli(["tools", react, "--test", "nope", "x"])
    expect(unknown.code).toBe(2)
    expect(unknown.stdout).toBe("")
    expect(unknown.stderr).toMatch(/^error: UnknownTool: unknown tool "nope"; known: .*summarizer/)
    const mcp = await runCli(["tools", react, "--test", "web_search", "x"])
    expect(mcp.stdout).toContain("[MCP_ERROR: search-server/web_search:")
  })

  it("--discover reports a server it cannot reach, and checks the server name first", async () => {
    const r = await runCli(["tools", react, "--discover", "search-server"])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^error: McpClientError: cannot list the tools of http:\/\/127\.0\.0\.1:9/)
    const wrong = await runCli(["tools", react, "--discover", "elsewhere"])
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain('no MCP server "elsewhere"')
    expect(wrong.stderr).toContain("servers: search-server")
  })

  it("reports a missing config with exit 4", async () => {
    const r = await runCli(["tools", "no/such/agent.yml"])
    expect(r.code).toBe(4)
    expect(r.stderr).toContain("File not found")
  })
})
