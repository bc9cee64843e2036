import { Scripted, Term } from "lambdagent"
import { describe, expect, it } from "vitest"
import { WebSocket } from "ws"
import { waitFor } from "../../test/fixtures/waitFor.ts"
import { refusedUpgrade } from "../../test/fixtures/webSocketRefusal.ts"
import { connect, expectAlive, forget, health, start, waitForEvent, waitTool } from "./test/helpers.ts"

const echoAgent = Term.llm({ system: "Repeat the input.", conversation: false })
const echo = { agent: echoAgent, runtimeOptions: { model: Scripted.echo() } } as const

describe("WebSocket /ws", () => {
  it("streams a run's tokens and trace, then its result", async () => {
    const server = await start(echo)
    const client = await connect(server)
    client.send({ input: "over the socket", id: "a" })
    const result = await client.next((m) => m.type === "result")
    expect(result).toMatchObject({ type: "result", id: "a", result: "over the socket", stats: { llmCalls: 1 } })
    const forRun = client.messages.filter((m) => m.id === "a")
    expect(forRun.map((m) => m.type)).toEqual(["token", "token", "token", "trace", "result"])
    expect(
      forRun
        .filter((m) => m.type === "token")
        .map((m) => m.text)
        .join("")
    ).toBe("over the socket")
    client.ws.close()
  })

  it("runs several runs on one connection concurrently, numbering those without an id", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] } })
    const client = await connect(server)
    client.send({ input: "first" })
    client.send({ input: "second" })
    client.send({ input: "third", id: "mine" })
    // all three are blocked in the tool at the same time
    await waitFor(() => wait.state.calls === 3, "the tool called 3 times")
    expect(server.inFlight).toBe(3)
    wait.release()
    const results = await Promise.all([1, 2, "mine"].map((id) => client.next((m) => m.type === "result" && m.id === id)))
    expect(results.map((m) => m.result)).toEqual(["released first", "released second", "released third"])
    // an id is free again once its run is over
    client.send({ input: "fourth", id: 1 })
    await waitFor(() => wait.state.calls === 4, "the tool called 4 times")
    wait.release()
    expect((await client.next((m) => m.type === "result" && m.result === "released fourth")).id).toBe(1)
    client.send({ input: "fifth", id: "dup" })
    client.send({ input: "sixth", id: "dup" })
    expect((await client.next((m) => m.type === "error" && m.id === "dup")).error).toMatchObject({ kind: "DuplicateId" })
    await waitFor(() => wait.state.calls === 5, "the tool called 5 times")
    wait.release()
    expect((await client.next((m) => m.type === "result" && m.id === "dup")).result).toBe("released fifth")
    client.ws.close()
  })

  it("keeps session memory across runs on a connection", async () => {
    const agent = Term.memory({ agent: echoAgent, size: 5, ttl: 0, scope: "session" })
    const server = await start({ agent, runtimeOptions: { model: Scripted.echo() } })
    const client = await connect(server)
    client.send({ input: "remember 42", session: "s1", id: 1 })
    await client.next((m) => m.type === "result" && m.id === 1)
    client.send({ input: "what did I say?", session: "s1", id: 2 })
    const second = await client.next((m) => m.type === "result" && m.id === 2)
    expect(second.result).toContain("user: remember 42")
    client.ws.close()
  })

  it("cancels the runs of a socket that closes", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] } })
    const client = await connect(server)
    client.send({ input: "x", id: 1 })
    await waitForEvent(wait.started, "run started")
    expect((await health(server)).inFlight).toBe(1)
    client.ws.close()
    await waitForEvent(wait.cancelled, "tool cancelled")
    expect(wait.state.cancellations).toBe(1)
    await waitFor(async () => (await health(server)).inFlight === 0, "no run in flight")
    // still serving WebSocket clients
    wait.reset()
    const again = await connect(server)
    again.send({ input: "y", id: 2 })
    await waitForEvent(wait.started, "next run started")
    wait.release()
    expect((await again.next((m) => m.type === "result")).result).toBe("released y")
    again.ws.close()
  })

  it("cancels one run on request and keeps the connection", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] } })
    const client = await connect(server)
    client.send({ input: "x", id: "job" })
    await waitForEvent(wait.started, "run started")
    client.send({ cancel: "job" })
    const error = await client.next((m) => m.type === "error" && m.id === "job")
    expect(error.error).toMatchObject({ kind: "Cancelled" })
    expect(wait.state.cancellations).toBe(1)
    client.send({ cancel: "nothing" })
    expect((await client.next((m) => m.type === "error" && m.id === "nothing")).error).toMatchObject({ kind: "UnknownRun" })
    expect(client.ws.readyState).toBe(WebSocket.OPEN)
    client.ws.close()
  })

  it("answers bad messages with error messages and keeps the connection open", async () => {
    const server = await start({ ...echo, maxBodyBytes: 10_000 })
    const client = await connect(server)
    client.send("{not json")
    expect((await client.next((m) => m.type === "error")).error).toMatchObject({ kind: "InvalidJson", status: 400 })
    client.send({ id: 5, session: "x" })
    expect((await client.next((m) => m.type === "error" && m.id === 5)).error).toMatchObject({ kind: "InvalidRequest" })
    client.send({ input: "ok", id: 6 })
    expect((await client.next((m) => m.type === "result" && m.id === 6)).result).toBe("ok")
    // a message over the size limit closes the connection (1009), as the protocol prescribes
    client.send({ input: "x".repeat(20_000) })
    expect((await waitForEvent(client.closed, "close")).code).toBe(1009)
    await expectAlive(server)
  })

  it("reports failed runs as error messages with a status", async () => {
    const server = await start({ agent: Term.lam("x", Term.div(Term.var("x"), Term.lit(0))) })
    const client = await connect(server)
    client.send({ input: 3, id: "div" })
    expect((await client.next((m) => m.type === "error")).error).toMatchObject({ kind: "DivisionByZero", status: 422 })
    client.ws.close()
  })

  it("times runs out like HTTP runs", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] }, timeoutMs: 100 })
    const client = await connect(server)
    client.send({ input: "slow", id: 1 })
    expect((await client.next((m) => m.type === "error")).error).toMatchObject({ kind: "Timeout", status: 504 })
    expect(wait.state.cancellations).toBe(1)
    client.ws.close()
  })

  it("requires the bearer token when one is set", async () => {
    const server = await start({ ...echo, token: "tok" })
    await expect(connect(server)).rejects.toThrow(/401/)
    await expect(connect(server, { authorization: "Bearer nope" })).rejects.toThrow(/401/)
    const client = await connect(server, { authorization: "Bearer tok" })
    client.send({ input: "authorised" })
    expect((await client.next((m) => m.type === "result")).result).toBe("authorised")
    client.ws.close()
  })

  it("refuses upgrades elsewhere than /ws", async () => {
    const server = await start(echo)
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/elsewhere`)
    ws.on("error", () => {})
    const status = await waitForEvent(
      new Promise<number>((resolve) =>
        ws.once("unexpected-response", (req, res) => {
          resolve(res.statusCode ?? 0)
          req.destroy()
        })
      ),
      "refusal"
    )
    expect(status).toBe(404)
    await expectAlive(server)
  })

  it("with webSocket: false refuses the upgrade at /ws with 404 and a message, and GET / lists no /ws", async () => {
    const server = await start({ ...echo, webSocket: false })
    const refusal = await waitForEvent(refusedUpgrade(server.url), "refusal")
    expect(refusal.status).toBe(404)
    expect(JSON.parse(refusal.body)).toMatchObject({ error: { kind: "NotFound", message: expect.stringContaining("does not serve WebSocket") } })
    const plain = await fetch(`${server.url}/ws`)
    expect(plain.status).toBe(404)
    const described = (await (await fetch(`${server.url}/`)).json()) as { endpoints: Array<string> }
    expect(described.endpoints).not.toContain("GET /ws")
    expect(described.endpoints).toContain("POST /stream")
    await expectAlive(server)
  })

  it("at shutdown lets runs finish, then closes sockets with 1001", async () => {
    // the run blocks in its tool until released after the close began
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] } })
    forget(server)
    const client = await connect(server)
    client.send({ input: "last words", id: 1 })
    await wait.started
    const closing = server.close()
    wait.release()
    expect((await client.next((m) => m.type === "result")).result).toBe("released last words")
    expect((await waitForEvent(client.closed, "socket closed")).code).toBe(1001)
    await waitForEvent(closing, "close")
  })

  it("at the end of the grace period cancels runs with a ShuttingDown error", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] }, graceMs: 50 })
    forget(server)
    const client = await connect(server)
    client.send({ input: "x", id: 1 })
    await waitForEvent(wait.started, "run started")
    const closing = server.close()
    expect((await client.next((m) => m.type === "error")).error).toMatchObject({ kind: "ShuttingDown", status: 503 })
    expect((await waitForEvent(client.closed, "socket closed")).code).toBe(1001)
    await waitForEvent(closing, "close")
    expect(wait.state.cancellations).toBe(1)
  })
})
