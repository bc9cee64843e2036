import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "vitest"
import { startOtlpReceiver } from "../../../test/fixtures/otlpReceiver.ts"
import { waitFor } from "../../../test/fixtures/waitFor.ts"
import { cliPath, runCli } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-mcp-caps-"))
const shout = { lam: "x", body: { app: { func: { tool: "echo" }, arg: { var: "x" } } } }
const ask = { lam: "x", body: { app: { func: { llm: { system: "Repeat." } }, arg: { var: "x" } } } }

/** Start `lambdagent mcp` with these flags, evolve `code` as `t`, run it on `input`, close. */
const evolveAndRun = async (flags: ReadonlyArray<string>, code: unknown, input: unknown) => {
  const client = new Client({ name: "test", version: "1" })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [cliPath, "mcp", "--store", ":memory:", ...flags], stderr: "ignore" }))
  try {
    const evolved = (await client.callTool({ name: "evolve", arguments: { name: "t", description: "", code } })) as CallToolResult
    const ran = evolved.isError === true ? undefined : ((await client.callTool({ name: "run", arguments: { tool: "t", input } })) as CallToolResult)
    return { evolved: evolved.structuredContent as Record<string, unknown>, text: (ran?.content[0] as { text: string } | undefined)?.text }
  } finally {
    await client.close()
  }
}

describe("lambdagent mcp: capabilities of evolved tools", () => {
  it("refuses tools and LLM calls by default", async () => {
    expect((await evolveAndRun([], shout, "hi")).evolved).toMatchObject({ kind: "CapabilityDenied" })
    expect((await evolveAndRun([], ask, "hi")).evolved).toMatchObject({ kind: "CapabilityDenied" })
  })

  it("--allow tool:NAME with --tool, and --allow llm with --model, let them run", async () => {
    const flags = ["--allow", "tool:echo", "--tool", "echo=echo {}", "--allow", "llm", "--model", "scripted:echo"]
    expect((await evolveAndRun(flags, shout, "hi")).text).toBe('"hi"')
    expect((await evolveAndRun(flags, ask, "hello")).text).toBe('"hello"')
    // granting one tool does not grant the model
    expect((await evolveAndRun(["--allow", "tool:echo", "--tool", "echo=echo {}"], ask, "x")).evolved).toMatchObject({ kind: "CapabilityDenied" })
  })

  it("--otel exports the spans of evolved tools' LLM calls; without a grant it is a usage error", async () => {
    const receiver = await startOtlpReceiver()
    try {
      const flags = ["--allow", "llm", "--model", "scripted:echo", "--otel", receiver.url]
      expect((await evolveAndRun(flags, ask, "traced")).text).toBe('"traced"')
      // the server flushes its spans when the client closes it
      await waitFor(() => receiver.spans.some((s) => s.name === "chat scripted"), "the LLM call's span")
      const chat = receiver.spans.find((s) => s.name === "chat scripted")!
      expect(chat.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.system": "scripted" })
      expect(receiver.spans.find((s) => s.spanId === chat.parentSpanId)?.name).toBe("lambdagent.run")
    } finally {
      await receiver.close()
    }
    const r = await runCli(["mcp", "--store", ":memory:", "--otel", "http://127.0.0.1:4318"], { stdin: "" })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("--otel exports the spans of evolved tools' LLM and tool calls: add --allow llm or --allow tool:NAME")
  })

  it("--config FILE grants the same from a file", async () => {
    const config = join(dir, "server.yml")
    writeFileSync(config, 'allow: ["tool:*"]\ntools: ["echo=echo {}"]\n')
    expect((await evolveAndRun(["--config", config], shout, "from config")).text).toBe('"from config"')
  })

  it("refuses grants it cannot honour as usage errors (exit 2)", async () => {
    const cases: Array<[Array<string>, string]> = [
      [["--allow", "memory"], "granted from code only"],
      [["--allow", "bogus"], "expected llm, par, tool:NAME or tool:*"],
      [["--allow", "llm"], "--allow llm needs --model"],
      [["--allow", "tool:grep"], "no --tool grep=CMD defines it"],
      [["--tool", "echo=echo {}"], "add --allow llm or --allow tool:NAME"]
    ]
    for (const [flags, message] of cases) {
      const r = await runCli(["mcp", "--store", ":memory:", ...flags], { stdin: "" })
      expect(r.code, flags.join(" ")).toBe(2)
      expect(r.stderr).toContain(message)
    }
    const bad = join(dir, "bad.yml")
    writeFileSync(bad, "allow: [llm]\nmodels: x\n")
    const r = await runCli(["mcp", "--config", bad], { stdin: "" })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('unknown key "models"')
  })
})
