/**
 * Agents talking to agents across processes: `lambdagent serve examples/a2a/server.yml` is an A2A
 * server, and `examples/a2a/client.yml` (its URL pointed at that server) calls it through
 * `a2a.clients`, driven by the built CLI. Scripted models make both sides deterministic.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cliPath, runCli } from "./helpers.ts"

const PLAN = "Day 1: Colosseum. Day 2: Vatican. Day 3: Trastevere."
/** The concierge's think step: call the planner, then finish. */
const CONCIERGE = `scripted:sequence:${JSON.stringify([JSON.stringify({ tool: "planner", args: "3 days in Rome" }), JSON.stringify({ tool: "terminate", args: "Here is your plan." })])}`

interface Served {
  readonly child: ChildProcessWithoutNullStreams
  /** The JSON-RPC endpoint from the readiness line. */
  readonly url: string
  /** Everything the server printed on stdout so far. */
  readonly output: () => string
  /** Resolves when a line matching `pattern` has been printed. */
  readonly printed: (pattern: RegExp) => Promise<void>
  readonly stop: () => Promise<number | null>
}

/** Start `lambdagent serve …`; resolves once it prints its readiness line. */
const serve = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Served> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, "serve", ...args], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...env } })
    let stdout = ""
    let stderr = ""
    const waiters: Array<{ pattern: RegExp; done: () => void }> = []
    const exited = new Promise<number | null>((done) => child.once("close", done))
    child.stderr.on("data", (d) => (stderr += d))
    child.stdout.on("data", (d) => {
      stdout += d
      for (const w of waiters.splice(0)) {
        if (w.pattern.test(stdout)) w.done()
        else waiters.push(w)
      }
      const ready = /A2A agent listening on (http:\/\/\S+)/.exec(stdout)
      if (ready !== null) {
        resolve({
          child,
          url: ready[1]!,
          output: () => stdout,
          printed: (pattern) => new Promise<void>((done) => (pattern.test(stdout) ? done() : waiters.push({ pattern, done }))),
          stop: () => {
            child.kill("SIGTERM")
            return exited
          }
        })
      }
    })
    void exited.then((code) => reject(new Error(`serve exited with ${code} before it was ready: ${stdout}${stderr}`)))
  })

/** examples/a2a/client.yml with its planner at `url` (and `edit` applied), in a fresh directory. */
const clientConfig = (url: string, edit: (yaml: string) => string = (yaml) => yaml): string => {
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-a2a-"))
  const file = join(dir, "client.yml")
  writeFileSync(file, edit(readFileSync("examples/a2a/client.yml", "utf8").replace("http://127.0.0.1:8000", url.replace(/\/$/, ""))))
  return file
}

interface RunJson {
  readonly result: unknown
  readonly trace: ReadonlyArray<{ readonly kind: string; readonly name: string; readonly output?: string }>
}

describe("an agent calls an A2A server in another process", () => {
  let server: Served
  let client: string

  beforeAll(async () => {
    server = await serve(["examples/a2a/server.yml", "--port", "0", "--model", `scripted:fixed:${PLAN}`])
    client = clientConfig(server.url)
  })

  afterAll(async () => {
    if (server.child.exitCode === null) await server.stop()
  })

  it("runs the concierge, whose planner tool is the remote agent", async () => {
    const r = await runCli(["run", client, "Plan 3 days in Rome", "--format", "json", "--model", CONCIERGE])
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout) as RunJson
    expect(out.result).toBe("Here is your plan.")
    expect(out.trace.find((e) => e.kind === "tool" && e.name === "planner")?.output).toBe(PLAN)
    await server.printed(/POST \/ SendStreamingMessage 200/)
  })

  it("prints the remote task's progress with --trace", async () => {
    const r = await runCli(["run", client, "Plan 3 days in Rome", "--trace", "--model", CONCIERGE])
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe("Here is your plan.")
    expect(r.stderr).toContain(`[a2a planner] working: llm trip-planner → ${PLAN}`)
    expect(r.stderr).toContain("[a2a planner] completed")
  })

  it("lists the planner as reachable, with the skills of its card", async () => {
    const json = await runCli(["tools", client, "--format", "json"])
    expect(json.code).toBe(0)
    const planner = (JSON.parse(json.stdout) as { tools: Array<Record<string, any>> }).tools.find((t) => t.name === "planner")!
    expect(planner).toMatchObject({
      kind: "a2a",
      callable: true,
      reachability: { ok: true, card: { name: "trip-planner", endpoint: server.url, skills: [{ id: "plan-a-trip", name: "Plan a trip" }] } }
    })
    const text = await runCli(["tools", client])
    expect(text.stdout).toMatch(/\[A2A\]\s+planner\s+http:\/\/127\.0\.0\.1:\d+\s+✓ reachable \(agent card "trip-planner", \d+ms\)/)
    expect(text.stdout).toContain(
      `A2A agents:\n  planner: trip-planner (Plans short trips, day by day.), endpoint ${server.url}\n    skill Plan a trip: A day-by-day plan for a trip of a few days.`
    )
  })

  it("calls the planner by hand with tools --test", async () => {
    const r = await runCli(["tools", client, "--test", "planner", "2 days in Paris"])
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe(PLAN)
  })

  it("stops on SIGTERM", async () => {
    expect(await server.stop()).toBe(0)
    expect(server.output()).toMatch(/lambdagent serve: SIGTERM; shutting down\n(.*\n)*lambdagent serve: stopped\n$/)
  })
})

describe("serve --a2a", () => {
  it("publishes any agent, with a bearer token the client sends from its headers", async () => {
    const server = await serve(["examples/agents/simple.yml", "--a2a", "--port", "0", "--model", "scripted:echo"], { LAMBDAGENT_TOKEN: "s3cret" })
    try {
      const card = (await (await fetch(new URL(".well-known/agent-card.json", server.url), { headers: { "A2A-Version": "1.0" } })).json()) as {
        name: string
        securitySchemes: unknown
      }
      expect(card.securitySchemes).toEqual({ bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: "Bearer" }) } })
      const withToken = clientConfig(server.url, (yaml) =>
        yaml.replace("      retryOnFail: 1\n", "      retryOnFail: 1\n      headers:\n        Authorization: Bearer ${PLANNER_TOKEN}\n")
      )
      const allowed = await runCli(["tools", withToken, "--test", "planner", "hello over A2A"], { env: { PLANNER_TOKEN: "s3cret" } })
      expect(allowed.stdout.trim()).toBe("hello over A2A")
      const refused = await runCli(["tools", withToken, "--test", "planner", "x"], { env: { PLANNER_TOKEN: "guess" } })
      expect(refused.stdout.trim()).toMatch(/^\[A2A_ERROR: planner: the endpoint http:\/\/127\.0\.0\.1:\d+\/ answered HTTP 401: Unauthorized: /)
    } finally {
      await server.stop()
    }
  })

  it("a dead planner is an observation, not a failed run", async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", () => resolve()))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const r = await runCli(["run", clientConfig(`http://127.0.0.1:${port}`), "Plan a trip", "--format", "json", "--model", CONCIERGE])
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout) as RunJson
    expect(out.trace.find((e) => e.kind === "tool")?.output).toBe(
      `[A2A_ERROR: planner: cannot fetch the agent card http://127.0.0.1:${port}/.well-known/agent-card.json: ECONNREFUSED]`
    )
    const listed = await runCli(["tools", clientConfig(`http://127.0.0.1:${port}`), "--format", "json"])
    expect((JSON.parse(listed.stdout) as { tools: Array<Record<string, any>> }).tools.find((t) => t.name === "planner")).toMatchObject({
      reachability: { ok: false }
    })
  })

  it("refuses --a2a with --mcp or --http (usage errors, exit 2)", async () => {
    const both = await runCli(["serve", "examples/agents/simple.yml", "--a2a", "--mcp"])
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("choose one of --mcp, --a2a and --cli")
    const http = await runCli(["serve", "examples/agents/simple.yml", "--a2a", "--http", "8000"])
    expect(http.code).toBe(2)
    expect(http.stderr).toContain("--http applies to --mcp only")
  })
})
