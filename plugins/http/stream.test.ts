import { Scripted, Term } from "lambdagent"
import { describe, expect, it } from "vitest"
import { waitFor } from "../../test/fixtures/waitFor.ts"
import { expectAlive, expectWaitServing, forget, health, post, readSse, start, waitForEvent, waitTool } from "./test/helpers.ts"

const echoAgent = Term.llm({ system: "Repeat the input.", conversation: false })

describe("server-sent events", () => {
  it("streams tokens and trace events, ending with the result", async () => {
    const server = await start({ agent: echoAgent, runtimeOptions: { model: Scripted.echo() } })
    for (const [path, headers] of [
      ["/stream", {}],
      ["/run", { accept: "text/event-stream" }]
    ] as const) {
      const res = await post(server, path, { input: "the quick brown fox" }, { headers })
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8")
      const events = await readSse(res)
      expect(events.map((e) => e.event)).toEqual(["token", "token", "token", "token", "trace", "result"])
      const tokens = events.filter((e) => e.event === "token").map((e) => e.data as { name: string; text: string })
      expect(tokens.map((t) => t.text).join("")).toBe("the quick brown fox")
      expect(tokens.every((t) => t.name === "llm")).toBe(true)
      expect(events[4]!.data).toMatchObject({ kind: "llm", output: "the quick brown fox" })
      const result = events[5]!.data as { result: unknown; trace: Array<unknown>; stats: { llmCalls: number } }
      expect(result.result).toBe("the quick brown fox")
      expect(result.trace).toHaveLength(1)
      expect(result.stats.llmCalls).toBe(1)
    }
  })

  it("streams memory and LLM steps of a composite agent in order", async () => {
    const agent = Term.memory({ agent: echoAgent, size: 5, ttl: 0, scope: "session" })
    const server = await start({ agent, runtimeOptions: { model: Scripted.echo() } })
    const events = await readSse(await post(server, "/stream", { input: "hi", session: "s" }))
    const kinds = events.map((e) => (e.event === "trace" ? `trace:${(e.data as { kind: string; name: string }).name}` : e.event))
    expect(kinds).toEqual(["trace:read", "token", "trace:llm", "trace:write", "result"])
  })

  it("ends with an error event when the run fails", async () => {
    const server = await start({ agent: Term.lam("x", Term.div(Term.var("x"), Term.lit(0))) })
    const res = await post(server, "/stream", { input: 7 })
    expect(res.status).toBe(200)
    const events = await readSse(res)
    expect(events).toHaveLength(1)
    expect(events[0]).toEqual({
      event: "error",
      data: { error: { kind: "DivisionByZero", message: "division by zero", steps: expect.any(Number), path: ["body"], status: 422 } }
    })
  })

  it("refuses a bad request with a JSON error before streaming", async () => {
    const server = await start({ agent: echoAgent, runtimeOptions: { model: Scripted.echo() } })
    const res = await post(server, "/stream", "{oops", { raw: true })
    expect(res.status).toBe(400)
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8")
    expect(((await res.json()) as { error: { kind: string } }).error.kind).toBe("InvalidJson")
    await expectAlive(server)
  })

  it("ends with a Timeout error event when the run takes too long", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] }, timeoutMs: 150 })
    const events = await readSse(await post(server, "/stream", { input: "slow" }))
    expect(events.at(-1)).toMatchObject({ event: "error", data: { error: { kind: "Timeout", status: 504 } } })
    expect(wait.state.cancellations).toBe(1)
    await waitFor(async () => (await health(server)).inFlight === 0, "no run in flight")
    await expectWaitServing(server, wait, "/stream")
  })

  it("cancels the run when the client disconnects mid-stream", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] } })
    const controller = new AbortController()
    const res = await post(server, "/stream", { input: "x" }, { signal: controller.signal })
    expect(res.status).toBe(200)
    await waitForEvent(wait.started, "run started")
    controller.abort()
    await waitForEvent(wait.cancelled, "tool cancelled")
    await waitFor(async () => (await health(server)).inFlight === 0, "no run in flight")
    await expectWaitServing(server, wait, "/stream")
  })

  it("completes the stream with an error event when shutdown cancels the run", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] }, graceMs: 50 })
    forget(server)
    const res = await post(server, "/stream", { input: "x" })
    await waitForEvent(wait.started, "run started")
    const closed = server.close()
    const text = await res.text()
    // a whole frame, not a torn one
    expect(text.endsWith("\n\n")).toBe(true)
    expect(text).toContain('event: error\ndata: {"error":{"kind":"ShuttingDown"')
    await waitForEvent(closed, "close")
  })
})
