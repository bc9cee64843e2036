import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Term } from "lambdagent"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { childrenOf, type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../../../test/fixtures/otlpReceiver.ts"
import { waitFor } from "../../../test/fixtures/waitFor.ts"
import { cliPath, runCli, startServe } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-otel-"))
const write = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

/** A ReAct agent that calls a shell tool, then a `par` of two LLM agents on its answer. */
const agentFile = write(
  "agent.json",
  Term.stringify(
    Term.encode(
      Term.compose([
        Term.react({ think: Term.llm({ system: "Use the calculator.", name: "thinker" }), tools: ["calc", "terminate"], maxSteps: 3 }),
        Term.par([Term.llm({ system: "Explain.", name: "explainer" }), Term.llm({ system: "Check.", name: "checker" })])
      ])
    )
  )
)

/** The scripted model's answers, in order: the tool call, the final answer, then one per branch. */
const script = `scripted:sequence:${JSON.stringify(['{"tool":"calc","args":"2+3"}', '{"tool":"terminate","args":"5"}', "branch answer", "branch answer"])}`

let receiver: OtlpReceiver
beforeEach(async () => {
  receiver = await startOtlpReceiver()
})
afterEach(async () => {
  await receiver.close()
})

const roots = (spans: ReadonlyArray<ReceivedSpan>) => spans.filter((s) => s.parentSpanId === undefined)

describe("lambdagent run --otel", () => {
  it("exports the run's span tree before the process exits", async () => {
    const r = await runCli(["run", agentFile, "2+3?", "--model", script, "--tool", "calc=echo 5", "--otel", receiver.url, "--quiet"])
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('{"pair":["branch answer","branch answer"]}\n')
    // every span arrived before the process ended: nothing is awaited here
    const spans = [...receiver.spans]
    const [run, ...others] = roots(spans)
    expect(others).toEqual([])
    expect(run!.name).toBe("lambdagent.run")
    expect(run!.resource["service.name"]).toBe("lambdagent")
    expect(run!.resource["service.version"]).toMatch(/^\d+\.\d+\.\d+/)
    expect(run!.attributes).toMatchObject({ "lambdagent.term": "compose", "lambdagent.llm_calls": 4, "lambdagent.tool_calls": 1 })
    expect(run!.attributes["lambdagent.steps"]).toBeGreaterThan(0)
    const children = childrenOf(spans, run!)
    expect(children.map((s) => s.name)).toEqual(["chat scripted", "chat scripted", "execute_tool calc", "lambdagent.par"])
    const tool = children.find((s) => s.name === "execute_tool calc")!
    expect(tool.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "calc", "lambdagent.tool.kind": "shell" })
    const thinking = children.filter((s) => s.name === "chat scripted")
    for (const chat of thinking) {
      expect(chat.kind).toBe(3)
      expect(chat.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.system": "scripted", "lambdagent.llm.name": "thinker" })
      expect(chat.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0)
      expect(chat.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"])
    }
    const par = children.find((s) => s.name === "lambdagent.par")!
    const branches = childrenOf(spans, par)
    expect(branches.map((b) => b.attributes["lambdagent.par.branch"]).sort()).toEqual([0, 1])
    expect(branches.map((b) => childrenOf(spans, b).map((s) => s.attributes["lambdagent.llm.name"])).sort()).toEqual([["checker"], ["explainer"]])
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1)
  })

  it("a failed run exits 1 and its span, marked as an error, is exported too", async () => {
    const r = await runCli(["run", agentFile, "2+3?", "--model", 'scripted:sequence:["only one answer"]', "--tool", "calc=echo 5", "--otel", receiver.url])
    expect(r.code).toBe(1)
    const [run] = roots(receiver.spans)
    expect(run!.name).toBe("lambdagent.run")
    expect(run!.status.code).toBe(2)
    expect(run!.status.message).toContain("exhausted")
  })

  it("Ctrl+C exits 130 after exporting the interrupted run's spans", async () => {
    const started = join(dir, "tool-started")
    const child = spawn(
      process.execPath,
      [
        cliPath,
        "run",
        agentFile,
        "go",
        "--model",
        'scripted:fixed:{"tool":"calc","args":"x"}',
        "--tool",
        `calc=touch '${started}' && sleep 30`,
        "--otel",
        receiver.url
      ],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve))
    await waitFor(() => existsSync(started), "the tool to start")
    child.kill("SIGINT")
    expect(await closed).toBe(130)
    const [run] = roots(receiver.spans)
    expect(run!.name).toBe("lambdagent.run")
    expect(run!.attributes["effect.fiber.interrupted"]).toBe(true)
    const tool = childrenOf(receiver.spans, run!).find((s) => s.name === "execute_tool calc")
    expect(tool!.attributes["effect.fiber.interrupted"]).toBe(true)
  })

  it("an unreachable collector leaves the run alone: exit 0, the answer, one warning line", async () => {
    const url = receiver.url
    await receiver.close()
    const r = await runCli(["run", agentFile, "2+3?", "--model", script, "--tool", "calc=echo 5", "--otel", url, "--quiet"])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('{"pair":["branch answer","branch answer"]}\n')
    const lines = r.stderr.split("\n").filter((l) => l !== "")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^\[otel: spans could not be sent to http:\/\/127\.0\.0\.1:\d+\/v1\/traces \(.+\); runs go on without them\]$/)
    receiver = await startOtlpReceiver()
  })

  it("reads OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME and OTEL_EXPORTER_OTLP_HEADERS without the flag", async () => {
    const r = await runCli(["run", agentFile, "2+3?", "--model", script, "--tool", "calc=echo 5", "--quiet"], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/`, OTEL_SERVICE_NAME: "support-bot", OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=acme" }
    })
    expect(r.code).toBe(0)
    const [run] = roots(receiver.spans)
    expect(run!.resource["service.name"]).toBe("support-bot")
    expect(receiver.headers["x-tenant"]).toBe("acme")
  })

  it("an agent file's runtime.otel turns it on; --otel wins over it", async () => {
    const file = write(
      "traced.yml",
      `type: simple\nsystemPrompt: Repeat.\nruntime:\n  otel: {url: "${receiver.url}", serviceName: from-the-file, headers: {x-team: agents}}\n`
    )
    const r = await runCli(["run", file, "hello", "--model", "scripted:echo", "--quiet"])
    expect([r.code, r.stdout]).toEqual([0, "hello\n"])
    const [run] = roots(receiver.spans)
    expect(run!.resource["service.name"]).toBe("from-the-file")
    expect(receiver.headers["x-team"]).toBe("agents")
    const other = await startOtlpReceiver()
    try {
      const flagged = await runCli(["run", file, "again", "--model", "scripted:echo", "--quiet", "--otel", other.url])
      expect(flagged.code).toBe(0)
      expect(roots(other.spans).map((s) => s.resource["service.name"])).toEqual(["from-the-file"])
      expect(roots(receiver.spans)).toHaveLength(1)
    } finally {
      await other.close()
    }
  })

  it("a runtime.otel URL that is not http(s) is a schema error (exit 2)", async () => {
    const file = write("bad-otel.yml", "type: simple\nsystemPrompt: Repeat.\nruntime:\n  otel: {url: ftp://collector}\n")
    const r = await runCli(["run", file, "x", "--model", "scripted:echo"])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("runtime.otel.url")
  })

  it("a bad --otel URL is a usage error (exit 2), before anything runs", async () => {
    const r = await runCli(["run", agentFile, "x", "--otel", "localhost:4318"])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("--otel: the OTLP endpoint must be an http(s) URL")
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })
})

describe("lambdagent serve --otel", () => {
  it("exports one trace per request's run, and the last spans when it shuts down", async () => {
    const { stop, url } = await startServe(["examples/agents/simple.yml", "--port", "0", "--otel", receiver.url])
    for (const input of ["first", "second"]) {
      const response = await fetch(`${url}/run`, { method: "POST", body: JSON.stringify({ input, session: "s1" }) })
      expect(response.status).toBe(200)
    }
    expect(await stop()).toBe(0)
    const runs = roots(receiver.spans)
    expect(runs.map((s) => s.name)).toEqual(["lambdagent.run", "lambdagent.run"])
    expect(new Set(runs.map((s) => s.traceId)).size).toBe(2)
    expect(runs.map((s) => s.attributes["lambdagent.session"])).toEqual(["s1", "s1"])
    for (const run of runs) expect(childrenOf(receiver.spans, run).map((s) => s.attributes["gen_ai.operation.name"])).toEqual(["chat"])
  })
})
