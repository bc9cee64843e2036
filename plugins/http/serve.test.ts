import * as http from "node:http"
import { createRuntime, Scripted, Term } from "lambdagent"
import { WebSocket } from "ws"
import { describe, expect, it } from "vitest"
import { waitFor } from "../../test/fixtures/waitFor.ts"
import { connect, expectAlive, expectWaitServing, forget, get, hangMs, health, post, start, waitForEvent, waitTool } from "./test/helpers.ts"

const echoAgent = Term.llm({ system: "Repeat the input.", conversation: false })
const echo = { agent: echoAgent, runtimeOptions: { model: Scripted.echo() } } as const

interface RunJson {
  result: unknown
  trace: Array<{ kind: string }>
  stats: { llmCalls: number; steps: number }
}
interface ErrorJson {
  error: { kind: string; message: string; [k: string]: unknown }
}

describe("POST /run", () => {
  it("answers with the result, the trace and the stats", async () => {
    const server = await start(echo)
    const res = await post(server, "/run", { input: "hello" })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8")
    const body = (await res.json()) as RunJson
    expect(body.result).toBe("hello")
    expect(body.trace.map((e) => e.kind)).toEqual(["llm"])
    expect(body.stats.llmCalls).toBe(1)
  })

  it("passes any JSON input, keeps big integers exact, and honours the trace level", async () => {
    const server = await start({ agent: Term.lam("x", Term.var("x")) })
    const res = await post(server, "/run", '{"input": [1, "two", 9223372036854775807], "trace": "off"}', { raw: true })
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).toContain("9223372036854775807")
    const body = JSON.parse(text) as RunJson
    // biome-ignore lint/correctness/noPrecisionLoss: the literal is the int64 maximum the server echoes as a JSON number
    expect(body.result).toEqual([1, "two", 9223372036854775807])
    expect(body.trace).toEqual([])
    const beta = (await (await post(server, "/run", { input: 1, trace: "beta" })).json()) as RunJson
    expect(beta.trace.some((e) => e.kind === "beta")).toBe(true)
  })

  it("keeps memory per session across requests", async () => {
    const agent = Term.memory({ agent: echoAgent, size: 10, ttl: 0, scope: "session" })
    const server = await start({ agent, runtimeOptions: { model: Scripted.echo() } })
    const run = async (input: string, session: string) => ((await (await post(server, "/run", { input, session })).json()) as RunJson).result
    expect(await run("my name is Ada", "alice")).toBe("my name is Ada")
    const second = await run("what is my name?", "alice")
    expect(second).toContain("[Memory Context]")
    expect(second).toContain("user: my name is Ada")
    expect(second).toContain("[Current Input]\nwhat is my name?")
    // another session starts empty
    expect(await run("hi", "bob")).toBe("hi")
  })

  it("runs concurrent requests concurrently", async () => {
    // every run blocks in its tool until released: all ten in the tool at once means they run together
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] } })
    const responses = Promise.all(Array.from({ length: 10 }, (_, i) => post(server, "/run", { input: `n${i}` })))
    await waitFor(() => wait.state.calls === 10, "the tool called 10 times")
    wait.release()
    const answered = await responses
    const bodies = (await Promise.all(answered.map((r) => r.json()))) as Array<RunJson>
    expect(answered.map((r) => r.status)).toEqual(Array(10).fill(200))
    expect(bodies.map((b) => b.result)).toEqual(Array.from({ length: 10 }, (_, i) => `released n${i}`))
  })

  it("calls an agent function for every run", async () => {
    let calls = 0
    const server = await start({ agent: () => (calls++, echoAgent), runtimeOptions: { model: Scripted.echo() } })
    await post(server, "/run", { input: "a" })
    await post(server, "/run", { input: "b" })
    expect(calls).toBe(2)
  })

  it("uses a given runtime and leaves it open on close", async () => {
    const runtime = createRuntime({ model: Scripted.fixed("from the given runtime") })
    const server = await start({ agent: echoAgent, runtime })
    expect(((await (await post(server, "/run", { input: "x" })).json()) as RunJson).result).toBe("from the given runtime")
    forget(server)
    await server.close()
    expect((await runtime.run(echoAgent, "still open")).value).toBe("from the given runtime")
    await runtime.close()
  })
})

describe("refused requests", () => {
  it("answers malformed JSON with 400 InvalidJson", async () => {
    const server = await start(echo)
    for (const text of ["{input: 1}", "", '{"input": 1', "\u00ff"]) {
      const res = await post(server, "/run", text, { raw: true })
      expect(res.status).toBe(400)
      const body = (await res.json()) as ErrorJson
      expect(body.error.kind).toBe("InvalidJson")
      expect(body.error.message).not.toContain("    at ")
    }
    await expectAlive(server)
  })

  it("answers a wrong shape with 400 InvalidRequest", async () => {
    const server = await start(echo)
    const cases: Array<[unknown, string]> = [
      [[1, 2], "found an array"],
      ["hello", "found a string"],
      [{}, '"input" is required'],
      [{ input: "x", session: 3 }, '"session" must be a string'],
      [{ input: "x", session: "" }, "1 to 256"],
      [{ input: "x", trace: "verbose" }, '"trace" must be one of'],
      [{ input: "x", imput: "y" }, 'unknown field "imput"']
    ]
    for (const [body, message] of cases) {
      const res = await post(server, "/run", body)
      expect(res.status).toBe(400)
      const json = (await res.json()) as ErrorJson
      expect(json.error.kind).toBe("InvalidRequest")
      expect(json.error.message).toContain(message)
    }
    await expectAlive(server)
  })

  it("answers an over-size body with 413, whether declared or streamed", async () => {
    const server = await start({ ...echo, maxBodyBytes: 1_000 })
    const declared = await post(server, "/run", { input: "x".repeat(2_000) })
    expect(declared.status).toBe(413)
    expect(((await declared.json()) as ErrorJson).error).toMatchObject({ kind: "PayloadTooLarge", limit: 1_000 })
    // a chunked body has no Content-Length: the limit is enforced while reading
    const chunks = [`{"input": "`, "y".repeat(800), "y".repeat(800), `"}`]
    const streamed = await fetch(`${server.url}/run`, {
      method: "POST",
      body: new ReadableStream({
        pull(controller) {
          const chunk = chunks.shift()
          if (chunk === undefined) controller.close()
          else controller.enqueue(new TextEncoder().encode(chunk))
        }
      }),
      duplex: "half",
      signal: AbortSignal.timeout(hangMs)
    } as RequestInit)
    expect(streamed.status).toBe(413)
    // just under the limit passes
    expect((await post(server, "/run", { input: "z".repeat(900) })).status).toBe(200)
    await expectAlive(server)
  })

  it("answers unknown routes with 404 and wrong methods with 405", async () => {
    const server = await start(echo)
    const missing = await get(server, "/nope")
    expect(missing.status).toBe(404)
    expect(((await missing.json()) as ErrorJson).error.kind).toBe("NotFound")
    const wrong = await get(server, "/run")
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get("allow")).toBe("POST")
    const plainWs = await get(server, "/ws")
    expect(plainWs.status).toBe(426)
    await expectAlive(server)
  })

  it("requires the bearer token when one is set", async () => {
    const server = await start({ ...echo, token: "s3cret-token" })
    const missing = await post(server, "/run", { input: "x" })
    expect(missing.status).toBe(401)
    expect(missing.headers.get("www-authenticate")).toContain("Bearer")
    expect(((await missing.json()) as ErrorJson).error.kind).toBe("Unauthorized")
    for (const authorization of ["Bearer wrong", "Bearer s3cret-token-and-more", "Basic s3cret-token", "s3cret-token", "Bearer "]) {
      const res = await post(server, "/run", { input: "x" }, { headers: { authorization } })
      expect(res.status).toBe(401)
    }
    expect((await get(server, "/")).status).toBe(401)
    // the health check stays open for load balancers
    expect((await get(server, "/health")).status).toBe(200)
    await expectAlive(server, { authorization: "Bearer s3cret-token" })
    const info = await get(server, "/", { authorization: "bearer s3cret-token" })
    expect(info.status).toBe(200)
  })

  it("answers only its own host names and origins (DNS rebinding), WebSocket upgrades included", async () => {
    const server = await start({ ...echo, allowedHosts: ["agents.internal"], allowedOrigins: ["http://localhost:5173"] })
    const raw = (path: string, headers: Record<string, string>, method = "POST") =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request({ host: "127.0.0.1", port: server.port, path, method, headers }, (res) => {
          let body = ""
          res
            .setEncoding("utf8")
            .on("data", (d: string) => (body += d))
            .on("end", () => resolve({ status: res.statusCode!, body }))
        })
        req.on("error", reject)
        req.end(method === "POST" ? JSON.stringify({ input: "x" }) : undefined)
      })
    const rebound = await raw("/run", { host: `evil.example:${server.port}` })
    expect(rebound.status).toBe(403)
    const refusal = JSON.parse(rebound.body) as ErrorJson
    expect(refusal.error.kind).toBe("Forbidden")
    expect(refusal.error.message).toContain("DNS rebinding")
    expect((await raw("/run", { host: `localhost:${server.port}`, origin: "http://evil.example" })).status).toBe(403)
    expect((await raw("/", { host: `127.0.0.1:${server.port}`, origin: "null" }, "GET")).status).toBe(403)
    for (const headers of [
      { host: `localhost:${server.port}` },
      { host: `[::1]:${server.port}` },
      { host: "agents.internal" },
      { host: `127.0.0.1:${server.port}`, origin: "http://localhost:5173" },
      { host: `localhost:${server.port}`, origin: `http://localhost:${server.port}` }
    ]) {
      const res = await raw("/run", headers)
      expect(res.status, JSON.stringify(headers)).toBe(200)
    }
    // a load balancer's health check names the machine's address
    expect((await raw("/health", { host: `10.1.2.3:${server.port}` }, "GET")).status).toBe(200)
    // browsers do not apply CORS to WebSockets: the Origin check is what keeps a page out
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/ws`, { origin: "http://evil.example" })
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode!))
      ws.on("open", () => resolve(101))
      ws.on("error", () => {})
    })
    expect(status).toBe(403)
    const ok = await connect(server, { origin: "http://localhost:5173" })
    ok.ws.close()
    await expectAlive(server)
  })

  it("refuses a host policy that names no host or origin", async () => {
    await expect(start({ ...echo, allowedOrigins: ["localhost"] })).rejects.toThrow(/allowed origin "localhost" is not an origin/)
    await expect(start({ ...echo, allowedHosts: ["http://x/"] })).rejects.toThrow(/allowed host "http:\/\/x\/" is not a host/)
  })

  it("refuses runs beyond maxConcurrent with 503 Overloaded", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] }, maxConcurrent: 1 })
    const first = post(server, "/run", { input: "one" })
    await waitForEvent(wait.started, "first run started")
    const second = await post(server, "/run", { input: "two" })
    expect(second.status).toBe(503)
    expect(second.headers.get("retry-after")).toBe("1")
    expect(((await second.json()) as ErrorJson).error.kind).toBe("Overloaded")
    wait.release()
    const done = await first
    expect(((await done.json()) as RunJson).result).toBe("released one")
    await expectWaitServing(server, wait)
  })
})

describe("failed runs", () => {
  it("answers evaluation errors and exhausted budgets with 422", async () => {
    const server = await start({ agent: Term.lam("x", Term.div(Term.var("x"), Term.lit(0))) })
    const res = await post(server, "/run", { input: 1 })
    expect(res.status).toBe(422)
    const body = (await res.json()) as ErrorJson
    expect(body.error.kind).toBe("DivisionByZero")
    expect(body.error.message).toBe("division by zero")

    const budgeted = await start({ agent: echoAgent, runtimeOptions: { model: Scripted.echo(), budgets: { llmCalls: 0 } } })
    const over = await post(budgeted, "/run", { input: "x" })
    expect(over.status).toBe(422)
    expect(((await over.json()) as ErrorJson).error).toMatchObject({ kind: "BudgetExceeded", budget: "llmCalls" })
    await waitFor(async () => (await health(budgeted)).inFlight === 0, "no run in flight")
    expect((await post(server, "/run", { input: "not a number" })).status).toBe(422)
  })

  it("answers a failed model provider with 502", async () => {
    const server = await start({ agent: echoAgent, runtimeOptions: { model: Scripted.make(["only once"]) } })
    expect((await post(server, "/run", { input: "a" })).status).toBe(200)
    const res = await post(server, "/run", { input: "b" })
    expect(res.status).toBe(502)
    expect(((await res.json()) as ErrorJson).error).toMatchObject({ kind: "ProviderError", reason: "Unavailable" })
  })

  it("answers a bug with 500 Internal, without details, and reports it", async () => {
    const reported: Array<unknown> = []
    let fail = true
    const server = await start({
      agent: () => {
        if (fail) throw new Error("secret detail of a bug")
        return echoAgent
      },
      runtimeOptions: { model: Scripted.echo() },
      lambda: "λx. LLM(x)",
      onError: (e) => reported.push(e)
    })
    const res = await post(server, "/run", { input: "x" })
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(JSON.parse(text)).toEqual({ error: { kind: "Internal", message: "internal server error" } })
    expect(text).not.toContain("secret")
    expect(reported).toHaveLength(1)
    fail = false
    await expectAlive(server)
  })

  it("cancels a run that exceeds the timeout and answers 504", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] }, timeoutMs: 150 })
    // the tool never answers by itself: the 504 is the timeout's
    const res = await post(server, "/run", { input: "slow" })
    expect(res.status).toBe(504)
    expect(((await res.json()) as ErrorJson).error.kind).toBe("Timeout")
    await waitForEvent(wait.cancelled, "tool cancelled")
    expect(wait.state.cancellations).toBe(1)
    expect((await health(server)).inFlight).toBe(0)
    await expectWaitServing(server, wait)
  })

  it("cancels the run of a client that goes away", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] } })
    const controller = new AbortController()
    const request = post(server, "/run", { input: "abandoned" }, { signal: controller.signal })
    await waitForEvent(wait.started, "run started")
    expect((await health(server)).inFlight).toBe(1)
    controller.abort()
    await expect(request).rejects.toThrow()
    await waitForEvent(wait.cancelled, "tool cancelled")
    expect(wait.state.cancellations).toBe(1)
    await waitFor(async () => (await health(server)).inFlight === 0, "no run in flight")
    await expectWaitServing(server, wait)
  })
})

describe("GET /health and GET /", () => {
  it("reports status, uptime and runs in flight", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] } })
    const idle = await health(server)
    expect(idle.status).toBe("ok")
    expect(idle.uptime).toBeGreaterThanOrEqual(0)
    expect(idle.inFlight).toBe(0)
    const running = post(server, "/run", { input: "x" })
    await waitForEvent(wait.started, "run started")
    expect((await health(server)).inFlight).toBe(1)
    expect(server.inFlight).toBe(1)
    wait.release()
    expect((await running).status).toBe(200)
    expect((await health(server)).inFlight).toBe(0)
  })

  it("describes the agent: its name and lambda expression", async () => {
    const server = await start({ ...echo, name: "echoer" })
    const info = (await (await get(server, "/")).json()) as { name: string; lambda: string; endpoints: Array<string> }
    expect(info.name).toBe("echoer")
    expect(info.lambda).toBe(Term.pretty(echoAgent))
    expect(info.endpoints).toContain("POST /run")
    const given = await start({ ...echo, lambda: "λx. x" })
    expect(((await (await get(given, "/")).json()) as { lambda: string }).lambda).toBe("λx. x")
  })
})

describe("shutdown", () => {
  it("lets a run in flight finish, then stops", async () => {
    // the run blocks in its tool until released after the close began
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] } })
    forget(server)
    const inFlight = post(server, "/run", { input: "finish me" })
    await wait.started
    const closed = server.close()
    wait.release()
    const res = await inFlight
    expect(res.status).toBe(200)
    expect(((await res.json()) as RunJson).result).toBe("released finish me")
    await waitForEvent(closed, "close")
    // nothing listens any more
    await expect(get(server, "/health")).rejects.toThrow()
  })

  it("cancels runs still in flight when the grace period ends, answering 503", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] }, graceMs: 100 })
    forget(server)
    const inFlight = post(server, "/run", { input: "never finishes" })
    await waitForEvent(wait.started, "run started")
    const closing = server.close()
    const res = await inFlight
    expect(res.status).toBe(503)
    expect(((await res.json()) as ErrorJson).error.kind).toBe("ShuttingDown")
    await waitForEvent(closing, "close")
    expect(wait.state.cancellations).toBe(1)
  })

  it("close is idempotent and a second call can cut the grace period short", async () => {
    const wait = waitTool()
    const server = await start({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] }, graceMs: 60_000 })
    forget(server)
    const inFlight = post(server, "/run", { input: "x" })
    await waitForEvent(wait.started, "run started")
    const first = server.close()
    const second = server.close({ graceMs: 0 })
    expect(second).toBe(first)
    await waitForEvent(first, "close")
    expect((await inFlight).status).toBe(503)
  })

  it("refuses to start on a port in use, with a clear message", async () => {
    const server = await start(echo)
    await expect(start({ ...echo, port: server.port })).rejects.toThrow(/already in use/)
    await expectAlive(server)
  })

  it("checks its options", async () => {
    await expect(start({ ...echo, port: -1 })).rejects.toThrow(/port/)
    await expect(start({ ...echo, maxBodyBytes: 0 })).rejects.toThrow(/maxBodyBytes/)
    await expect(start({ ...echo, token: "" })).rejects.toThrow(/token/)
    await expect(start({ agent: "nope" as never })).rejects.toThrow(/agent/)
    const runtime = createRuntime()
    await expect(start({ agent: echoAgent, runtime, runtimeOptions: {} })).rejects.toThrow(/either/)
    await runtime.close()
  })
})
