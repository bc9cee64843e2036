import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "vitest"
import { WebSocket } from "ws"
import { waitFor } from "../../../test/fixtures/waitFor.ts"
import { refusedUpgrade } from "../../../test/fixtures/webSocketRefusal.ts"
import { cliPath, runCli, startServe } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-commands-"))
const write = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

describe("lambdagent run", () => {
  it("runs a YAML agent offline on the scripted model and says so", async () => {
    const r = await runCli(["run", "examples/agents/simple.yml", "Lambda terms are data."])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("Lambda terms are data.\n")
    expect(r.stderr).toContain("no ANTHROPIC_API_KEY is set; running on the offline scripted model")
    expect(r.stderr).toMatch(/\(1 β-reductions, \d+\.\ds, ~\d+ tokens\)/)
  })

  it("--format json prints exactly {result, trace, stats}; --quiet only the result", async () => {
    const json = await runCli(["run", "examples/agents/chain.yml", "facts", "--format", "json"])
    const parsed = JSON.parse(json.stdout)
    expect(Object.keys(parsed)).toEqual(["result", "trace", "stats"])
    expect(parsed.stats.llmCalls).toBeGreaterThanOrEqual(3)
    const quiet = await runCli(["run", "--quiet", "examples/agents/chain.yml", "-"], { stdin: "from stdin\n" })
    expect(quiet).toMatchObject({ code: 0, stdout: "from stdin\n", stderr: "" })
  })

  it("--format json carries the specified keys (term, duration_ms, stats.total_*) beside the runtime's", async () => {
    const json = await runCli(["run", "examples/agents/chain.yml", "facts", "--format", "json"])
    expect(json.code, json.stderr).toBe(0)
    const parsed = JSON.parse(json.stdout)
    expect(parsed.result).toBe("facts")
    expect(parsed.trace.length).toBeGreaterThanOrEqual(3)
    for (const [i, event] of parsed.trace.entries()) {
      expect(Object.keys(event).slice(0, 5), `event ${i}`).toEqual(["step", "term", "duration_ms", "input", "output"])
      expect(Number.isInteger(event.duration_ms)).toBe(true)
      expect(event.duration_ms).toBe(Math.round(event.durationMs ?? 0))
      expect(event.term).toBe(event.kind === "llm" ? event.name : `${event.kind}:${event.name}`)
    }
    expect(parsed.trace.find((e: { kind: string }) => e.kind === "llm")).toMatchObject({ input: "facts", output: "facts" })
    // an event with no input (a guard's check) says so with null
    expect(parsed.trace.find((e: { kind: string }) => e.kind === "guard")).toMatchObject({ term: "guard:invalid", input: null, output: "facts" })
    expect(parsed.stats).toMatchObject({
      total_steps: parsed.trace.length,
      total_time_ms: Math.round(parsed.stats.durationMs),
      total_tokens: parsed.stats.tokens,
      steps: expect.any(Number),
      llmCalls: expect.any(Number)
    })
    expect(parsed.stats.total_tokens).toBeGreaterThan(0)
    // the output is a trace file too: lambdagent trace reads it, nulls and all
    const shown = await runCli(["trace", write("run-output.json", json.stdout)])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain(`β[0]  ${parsed.trace[0].term}`)
    expect(shown.stdout).toMatch(/guard:invalid +\(0\.0s\) {2}→ "facts"/)
  })

  it("composes through pipes: the quiet output of one run is the input of the next", async () => {
    const first = await runCli(["run", "examples/agents/simple.yml", "--quiet", "piped text"])
    const second = await runCli(["run", "examples/agents/chain.yml", "-", "--quiet"], { stdin: first.stdout })
    expect(second.stdout).toBe("piped text\n")
  })

  it("--tool adds a shell command a ReAct agent can call; --model picks the scripted model", async () => {
    const agent = write(
      "react.yml",
      [
        "type: react",
        "name: shell-user",
        "systemPrompt: Use the tools.",
        "model: {provider: openai, name: gpt-4o-mini}",
        "react: {maxSteps: 3}",
        "mcp:",
        "  localTools: [terminate]"
      ].join("\n")
    )
    const script = JSON.stringify(['{"tool":"shout","args":"hello"}', '{"tool":"terminate","args":"done"}'])
    const r = await runCli(["run", agent, "go", "--tool", "shout=printf '%s' {} | tr a-z A-Z", "--model", `scripted:sequence:${script}`, "--trace"])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("done\n")
    expect(r.stderr).toContain("Tool:shout")
    expect(r.stderr).toContain('"HELLO"')
  })

  it("a ReAct agent calls a tool of a local MCP server (lambdagent's own, over stdio)", async () => {
    const script = JSON.stringify(['{"tool":"run","args":{"code":{"mul":[6,7]},"input":null}}', '{"tool":"terminate","args":"42"}'])
    const r = await runCli(["run", "examples/agents/calculator.yml", "6 times 7?", "--model", `scripted:sequence:${script}`, "--format", "json"])
    const out = JSON.parse(r.stdout)
    expect(out.result).toBe("42")
    expect(out.trace.find((e: { kind: string }) => e.kind === "tool")).toMatchObject({ name: "run", output: "42" })
  })

  it("Ctrl+C cancels the run, exits 130 and writes the partial trace", async () => {
    const agent = write(
      "slow.yml",
      "type: react\nsystemPrompt: Wait.\nmodel: {provider: openai, name: gpt-4o-mini}\nreact: {maxSteps: 2}\nmcp:\n  localTools: [terminate]\n"
    )
    const traceFile = join(dir, "partial.json")
    const toolStarted = join(dir, "tool-started")
    const child = spawn(
      process.execPath,
      [
        cliPath,
        "run",
        agent,
        "go",
        "--tool",
        `wait=touch '${toolStarted}' && sleep 30`,
        "--model",
        'scripted:fixed:{"tool":"wait","args":"x"}',
        "--trace-file",
        traceFile
      ],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    let err = ""
    child.stderr.on("data", (d) => (err += d))
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve))
    await waitFor(() => existsSync(toolStarted), "the tool to start")
    child.kill("SIGINT")
    expect(await closed).toBe(130) // not the 30 s of the tool: a hang fails on the test timeout
    const partial = JSON.parse(readFileSync(traceFile, "utf8"))
    expect(partial.result).toBeNull()
    expect(partial.trace.map((e: { kind: string }) => e.kind)).toContain("llm")
    expect(err).toContain("Interrupted")
  })

  it("reads defaults from the environment: LAMBDAGENT_MODEL, LAMBDAGENT_TRACE_FILE, LAMBDAGENT_MAX_TOKENS", async () => {
    const traceFile = join(dir, "env-trace.json")
    const r = await runCli(["run", "examples/agents/simple.yml", "x", "--quiet"], {
      env: { LAMBDAGENT_MODEL: "scripted:fixed:from the environment", LAMBDAGENT_TRACE_FILE: traceFile, LAMBDAGENT_MAX_TOKENS: "64" }
    })
    expect(r.stdout).toBe("from the environment\n")
    expect(JSON.parse(readFileSync(traceFile, "utf8")).result).toBe("from the environment")
  })

  it("a config with rag: answers from the user's documents, offline, on the default backend", async () => {
    const docs = join(process.cwd(), "examples", "rag", "docs")
    const agent = write(
      "rag.yml",
      [
        "type: simple",
        "systemPrompt: Answer from the context.",
        "model: {provider: openai, name: gpt-4o-mini}",
        "rag:",
        `  source: ${JSON.stringify(docs)}`,
        `  persistDirectory: ${JSON.stringify(join(dir, "rag-index"))}`,
        "  topK: 2"
      ].join("\n")
    )
    const r = await runCli(["run", agent, "How does the evaluator bound recursion?", "--quiet"])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("[Retrieved Context]")
    expect(r.stdout).toContain("[Question]\nHow does the evaluator bound recursion?")
  })

  it("rag index then rag eval prints recall per mode and kind; a missing questions file exits 4", async () => {
    const index = join(dir, "rag-eval-index")
    const built = await runCli(["rag", "index", "examples/rag/docs", "--persist-directory", index])
    expect(built.code).toBe(0)
    const evaluated = await runCli(["rag", "eval", "--questions", "examples/rag/questions.json", "--persist-directory", index, "--format", "json"])
    expect(evaluated.code).toBe(0)
    const summary = JSON.parse(evaluated.stdout) as { rows: Array<{ mode: string; kind: string; recallAt3: number }> }
    expect(summary.rows.map((r) => r.mode)).toContain("hybrid")
    expect(summary.rows.find((r) => r.mode === "hybrid" && r.kind === "paraphrase")!.recallAt3).toBeGreaterThanOrEqual(0.85)
    const bm25 = await runCli(["rag", "eval", "--questions", "examples/rag/questions.json", "--persist-directory", index, "--mode", "bm25"])
    expect(bm25.stdout).toMatch(/^bm25\s+all\s+98\s/m)
    expect(bm25.stdout).not.toContain("hybrid")
    const missing = await runCli(["rag", "eval", "--questions", join(dir, "absent.json"), "--persist-directory", index])
    expect(missing.code).toBe(4)
    expect(missing.stderr).toContain("no such questions file")
    const badMode = await runCli(["rag", "eval", "--mode", "fuzzy", "--persist-directory", index])
    expect(badMode.code).toBe(2)
    expect(badMode.stderr).toContain("--mode expects bm25, vector or hybrid")
  }, 120_000)

  it("refuses a dangerous --tool, with exit code 1", async () => {
    const r = await runCli(["run", "examples/agents/simple.yml", "x", "--tool", "wipe=rm -rf /"])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("dangerous command refused (recursive delete)")
  })

  it("writes a trace file that lambdagent trace reads", async () => {
    const traceFile = join(dir, "trace.json")
    await runCli(["run", "examples/agents/chain.yml", "x", "--trace-file", traceFile, "--quiet"])
    expect(JSON.parse(readFileSync(traceFile, "utf8")).trace.length).toBeGreaterThan(0)
    const shown = await runCli(["trace", traceFile])
    expect(shown.stdout).toMatch(/^β\[0\]/)
    expect(shown.stdout).toContain("Total:")
    const step = await runCli(["trace", traceFile, "--step", "0"])
    expect(step.stdout).toContain("Kind:     llm")
    expect((await runCli(["trace", traceFile, "--step", "99"])).stderr).toContain("Step 99 not found")
    const timeline = await runCli(["trace", traceFile, "--timeline"])
    expect(timeline.stdout).toContain("┤ END")
    const svg = join(dir, "flame.svg")
    await runCli(["trace", traceFile, "--flamegraph", svg])
    expect(readFileSync(svg, "utf8")).toMatch(/^<svg/)
  })

  it("exit codes: 4 file not found, 2 compile error or bad options", async () => {
    expect((await runCli(["run", "missing.yml", "x"])).code).toBe(4)
    const bad = write("bad.yml", "type: simple\nsystemPromt: typo\n")
    const compile = await runCli(["run", bad, "x"])
    expect(compile.code).toBe(2)
    expect(compile.stderr).toContain("systemPrompt")
    const broken = write("broken.yml", "type: [simple\n")
    expect((await runCli(["run", broken, "x"])).code).toBe(2)
    expect((await runCli(["run", "examples/agents/simple.yml", "x", "--temperature", "hot"])).code).toBe(2)
  })
})

describe("a provider that never answers", () => {
  it("the run's --timeout stops it with exit code 1 instead of hanging", async () => {
    const { createServer } = await import("node:http")
    const server = createServer(() => {}) // accepts requests and never answers
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as { port: number }).port
    const agent = write("silent.yml", `type: simple\nsystemPrompt: Hi.\nmodel: {provider: openai, name: m, baseUrl: "http://127.0.0.1:${port}/v1"}\n`)
    const r = await runCli(["run", agent, "hello", "--timeout", "1"], { env: { OPENAI_API_KEY: "test-key" } })
    server.closeAllConnections()
    server.close()
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("BudgetExceeded") // the budget, not the provider's own timeout, ended it
  })

  it("version prints the version", async () => {
    expect((await runCli(["version"])).stdout).toMatch(/^lambdagent 0\.1\.0\nnode v/)
  })
})

describe("compile, lint, lambda", () => {
  it("compile prints the lambda structure; lint a directory exits 0; lambda prints the expression", async () => {
    const compile = await runCli(["compile", "examples/agents/react.yml"])
    expect(compile.code).toBe(0)
    expect(compile.stdout).toContain("Y₁₂(λself. λstate.")
    const lint = await runCli(["lint", "examples/agents", "--format", "json"])
    expect(lint.code).toBe(0)
    expect(JSON.parse(lint.stdout)).toBeTruthy()
    const lambda = await runCli(["lambda", "examples/agents/router.yml"])
    expect(lambda.stdout).toContain("CASE")
  })

  it("lint fails above an LLM-call budget with exit code 3", async () => {
    const r = await runCli(["lint", "examples/agents/react.yml", "--max-llm-calls", "2"])
    expect(r.code).toBe(3)
  })
})

describe("servers", () => {
  it("serve answers POST /run and stops on SIGTERM", async () => {
    const { stop, url } = await startServe(["examples/agents/simple.yml", "--port", "0"])
    const response = await fetch(`${url}/run`, { method: "POST", body: JSON.stringify({ input: "over http" }) })
    expect(response.status).toBe(200)
    expect(((await response.json()) as { result: unknown }).result).toBe("over http")
    expect(await stop()).toBe(0)
  })

  it("serve streams over WebSocket only with --ws", async () => {
    const plain = await startServe(["examples/agents/simple.yml", "--port", "0"])
    try {
      const refused = await refusedUpgrade(plain.url)
      expect(refused.status).toBe(404)
      expect((JSON.parse(refused.body) as { error: { message: string } }).error.message).toContain("lambdagent serve --ws")
    } finally {
      expect(await plain.stop()).toBe(0)
    }
    const withWs = await startServe(["examples/agents/simple.yml", "--port", "0", "--ws"])
    try {
      const ws = new WebSocket(`${withWs.url.replace(/^http/, "ws")}/ws`)
      const result = await new Promise<{ type: string; result?: unknown }>((resolve, reject) => {
        ws.on("error", reject)
        ws.on("open", () => ws.send(JSON.stringify({ input: "over the socket" })))
        ws.on("message", (data: Buffer) => {
          const message = JSON.parse(data.toString("utf8")) as { type: string; result?: unknown }
          if (message.type === "result" || message.type === "error") resolve(message)
        })
      })
      expect(result).toMatchObject({ type: "result", result: "over the socket" })
      ws.close()
    } finally {
      expect(await withWs.stop()).toBe(0)
    }
    const mixed = await runCli(["serve", "examples/agents/simple.yml", "--ws", "--mcp"])
    expect(mixed).toMatchObject({ code: 2, stderr: "error: UsageError: --ws applies to plain serve only (not --mcp, --a2a or --cli)\n" })
  })

  it("serve --mcp offers the agent as one MCP tool, with progress", async () => {
    const client = new Client({ name: "test", version: "1" })
    const transport = new StdioClientTransport({ command: process.execPath, args: [cliPath, "serve", "examples/agents/chain.yml", "--mcp"], stderr: "ignore" })
    await client.connect(transport)
    // Watch the wire: the SDK client runs notification handlers a microtask late, so progress that
    // arrives in the same read as the result never reaches `onprogress`, though it was sent in time.
    const received: Array<JSONRPCMessage> = []
    const deliver = transport.onmessage!
    transport.onmessage = (message) => {
      received.push(message)
      deliver(message)
    }
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(["Report_writer"])
    // The instructions describe the agent, not the tool-evolving server.
    expect(client.getInstructions()).toContain("one agent, Report writer, as the tool Report_writer {input, session?}")
    expect(client.getInstructions()).not.toContain("evolve")
    const result = await client.callTool({ name: "Report_writer", arguments: { input: "mcp input" } }, undefined, { onprogress: () => {} })
    expect((result.content as Array<{ text: string }>)[0]!.text).toBe("mcp input")
    const progress = received
      .filter((m) => "method" in m && m.method === "notifications/progress")
      .map((m) => (m as unknown as { params: { progress: number; message: string } }).params)
    expect(progress.length).toBeGreaterThanOrEqual(3)
    expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1))
    expect(progress[0]!.message).toBe("llm extract")
    const answered = received.findIndex((m) => "id" in m && "result" in m && (m.result as { content?: unknown }).content !== undefined)
    expect(received.findLastIndex((m) => "method" in m && m.method === "notifications/progress")).toBeLessThan(answered)
    await client.close()
  })

  it("mcp serves the tool-evolving calculus", async () => {
    const client = new Client({ name: "test", version: "1" })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [cliPath, "mcp", "--store", ":memory:"], stderr: "ignore" }))
    await client.callTool({ name: "evolve", arguments: { name: "square", description: "x²", code: { lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } } } })
    const result = await client.callTool({ name: "square", arguments: { input: 7 } })
    expect((result.content as Array<{ text: string }>)[0]!.text).toBe("49")
    await client.close()
  })
})
