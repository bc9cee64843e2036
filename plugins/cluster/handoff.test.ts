import { Term, Tools } from "lambdagent"
import { type ClusterClient, connect, handoff } from "lambdagent/cluster"
import { type Server, serve } from "lambdagent/http"
import { afterAll, afterEach, describe, expect, test } from "vitest"
import { dropTables, freshPrefix, testPgUrl } from "./test-support.ts"

const shout = Tools.define({ name: "shout", description: "Upper-case text.", run: (s: string) => s.toUpperCase() })

const open: Array<{ close: () => Promise<void> }> = []
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close()
})
afterAll(() => dropTables())

/** A server whose runs go to a one-process cluster of its own. */
const serveOnCluster = async (agent: Term.Json, options: Parameters<typeof handoff>[1] = {}): Promise<{ server: Server; cluster: ClusterClient }> => {
  const cluster = await connect({ pg: testPgUrl, prefix: freshPrefix(), tools: [shout] })
  open.push(cluster)
  const server = await serve({ agent: Term.parse(agent), handoff: handoff(cluster, { pollMs: 20, ...options }) })
  open.push(server)
  return { server, cluster }
}

const post = async (server: Server, path: string, body: unknown) => {
  const res = await fetch(`${server.url}${path}`, { method: "POST", body: JSON.stringify(body) })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

describe("serve with its runs handed to the cluster", () => {
  test("POST /run answers with the run's result, trace and counters, and the run is on the cluster", async () => {
    const { server, cluster } = await serveOnCluster({ compose: [{ llm: { system: "Repeat." } }, { tool: "shout" }] })
    const { status, body } = await post(server, "/run", { input: "hello cluster" })
    expect(status).toBe(200)
    expect(body.result).toBe("HELLO CLUSTER")
    expect(body.stats).toMatchObject({ llmCalls: 1, toolCalls: 1 })
    expect(body.trace.map((e: { kind: string }) => e.kind)).toContain("tool")
    const [run] = await cluster.list()
    expect(run).toMatchObject({ state: "done", outcome: { result: "HELLO CLUSTER" } })
  })

  test("a run that asks answers 202; POST /runs/:id/resume answers it on the cluster", async () => {
    const { server, cluster } = await serveOnCluster({ compose: [{ ask: "Which city?" }, { tool: "shout" }] })
    const paused = await post(server, "/run", { input: "trip" })
    expect(paused.status).toBe(202)
    expect(paused.body).toMatchObject({ status: "paused", question: "Which city?" })
    expect(paused.body.resume).toBe(`/runs/${encodeURIComponent(paused.body.runId)}/resume`)
    expect((await cluster.status(paused.body.runId)).state).toBe("waiting")
    const done = await post(server, paused.body.resume, { answer: "rome" })
    expect(done).toMatchObject({ status: 200, body: { result: "ROME" } })
    // answered and ended: a second answer finds no question
    expect((await post(server, paused.body.resume, { answer: "paris" })).status).toBe(409)
    expect(await post(server, "/runs/no-such-run/resume", { answer: "x" })).toMatchObject({ status: 404, body: { error: { kind: "NotFound" } } })
  })

  test("a run that fails answers 422 with its error's kind, as in the server's own process", async () => {
    const { server } = await serveOnCluster({ tool: "shout" }, { budget: { toolCalls: 0 } })
    const { status, body } = await post(server, "/run", { input: "x" })
    expect(status).toBe(422)
    expect(body.error.kind).toBe("BudgetExceeded")
  })

  test("POST /stream sends the result as its one event", async () => {
    const { server } = await serveOnCluster({ tool: "shout" })
    const res = await fetch(`${server.url}/stream`, { method: "POST", body: JSON.stringify({ input: "streamed" }) })
    const text = await res.text()
    expect(text).toMatch(/^event: result\ndata: /)
    expect(JSON.parse(text.split("\n")[1]!.slice("data: ".length)).result).toBe("STREAMED")
  })

  test("a request cut short by the server's time limit answers 504 and cancels its run", async () => {
    const hang = Tools.define({ name: "hang", description: "Never answers.", run: () => new Promise<string>(() => {}) })
    const cluster = await connect({ pg: testPgUrl, prefix: freshPrefix(), tools: [hang] })
    open.push(cluster)
    const server = await serve({ agent: Term.tool("hang"), handoff: handoff(cluster, { pollMs: 20 }), timeoutMs: 300 })
    open.push(server)
    const { status, body } = await post(server, "/run", { input: "x" })
    expect(status).toBe(504)
    expect(body.error.kind).toBe("Timeout")
    const [run] = await cluster.list()
    expect((await cluster.result(run!.id, { wait: true })).state).toBe("cancelled")
  })

  test("WebSocket is refused for handed-off runs", async () => {
    const cluster = await connect({ pg: testPgUrl, prefix: freshPrefix(), role: "client" })
    open.push(cluster)
    await expect(serve({ agent: Term.tool("shout"), handoff: handoff(cluster), webSocket: true })).rejects.toThrow(/WebSocket/)
  })
})
