import type { Message, StreamResponse, Task } from "@a2a-js/sdk"
import { Role, TaskState } from "@a2a-js/sdk"
import type { Client } from "@a2a-js/sdk/client"
import type { AgentExecutor } from "@a2a-js/sdk/server"
import { createRuntime, Scripted, Term } from "lambdagent"
import { describe, expect, it } from "vitest"
import { sessionOf } from "./executor.ts"
import { artifactRoleKey, artifactsText, dataPart, message, partsText, textPart } from "./parts.ts"
import type { Server } from "./server.ts"
import { raw, referenceServer, rpc, sdkClient, sseData, start } from "./test/helpers.ts"

const echoAgent = Term.llm({ system: "Repeat the input.", conversation: false })
const echo = { agent: echoAgent, runtimeOptions: { model: Scripted.echo() }, name: "echo" } as const
/** An agent whose model answers after a minute: its runs are in flight until cancelled. */
const slow = { agent: echoAgent, runtimeOptions: { model: Scripted.echo({ latencyMs: 60_000 }) }, name: "slow" } as const

const send = (text: string, ids: { taskId?: string; contextId?: string } = {}) => ({
  tenant: "",
  message: message("user", [textPart(text)], ids),
  configuration: undefined,
  metadata: undefined
})

const asTask = (result: Message | Task): Task => {
  if ("messageId" in result) throw new Error(`expected a task, got the message ${partsText(result.parts)}`)
  return result
}

const collect = async (events: AsyncIterable<StreamResponse>, onEach: (e: StreamResponse) => void | Promise<void> = () => {}) => {
  const out: Array<StreamResponse> = []
  for await (const event of events) {
    out.push(event)
    await onEach(event)
  }
  return out
}

const errorOf = async (res: Response) => ((await res.json()) as { error: { code: number; message: string } }).error

/** The server answers a fresh message, so whatever happened before did not break it. */
const expectServing = async (server: Server, headers: Record<string, string> = {}) => {
  const res = await rpc(
    server.url,
    {
      jsonrpc: "2.0",
      id: 99,
      method: "message/send",
      params: { message: { kind: "message", messageId: "m-ok", role: "user", parts: [{ kind: "text", text: "still here" }] } }
    },
    { headers }
  )
  expect(res.status).toBe(200)
  const body = (await res.json()) as { result: { status: { state: string }; artifacts: Array<{ parts: Array<{ text: string }> }> } }
  expect(body.result.status.state).toBe("completed")
  expect(body.result.artifacts[0]!.parts[0]!.text).toBe("still here")
}

describe("the agent card", () => {
  it("is the 1.0 card for A2A-Version 1.0 and the 0.3 card otherwise, with the endpoint, skills and modes", async () => {
    const server = await start({ ...echo, description: "Repeats things.", skills: [{ name: "Repeat", tags: ["echo"], examples: ["hello"] }] })
    const v1 = (await (await fetch(server.cardUrl, { headers: { "A2A-Version": "1.0" } })).json()) as Record<string, any>
    expect(v1).toMatchObject({
      name: "echo",
      description: "Repeats things.",
      supportedInterfaces: [
        { url: server.url, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
        { url: server.url, protocolBinding: "JSONRPC", protocolVersion: "0.3" }
      ],
      capabilities: { streaming: true, pushNotifications: false },
      defaultInputModes: ["text/plain", "application/json"],
      defaultOutputModes: ["text/plain", "application/json"],
      skills: [{ id: "repeat", name: "Repeat", tags: ["echo"], examples: ["hello"] }]
    })
    const res = await fetch(server.cardUrl)
    expect(res.headers.get("vary")).toBe("A2A-Version")
    const v03 = (await res.json()) as Record<string, any>
    expect(v03).toMatchObject({ name: "echo", url: server.url, preferredTransport: "JSONRPC", protocolVersion: "0.3" })
  })

  it("in its 0.3 shape is what the SDK's own card handler makes of the 1.0 card", async () => {
    const spec = { name: "echo", description: "Repeats things.", skills: [{ name: "Repeat", examples: ["hello"] }] }
    const ours = await start({ ...echo, ...spec, token: "s3cret" })
    const executor: AgentExecutor = { execute: async () => {}, cancelTask: async () => {} }
    const reference = await referenceServer(executor, { ...spec, bearer: true })
    const theirs = await (await fetch(`${reference}/.well-known/agent-card.json`)).text()
    const mine = await (await fetch(ours.cardUrl)).text()
    expect(JSON.parse(mine)).toEqual(JSON.parse(theirs.replaceAll(`${reference}/`, ours.url)))
  })

  it("has one skill, the agent itself, by default, and announces the bearer token", async () => {
    const server = await start({ ...echo, token: "s3cret" })
    const card = (await (await fetch(server.cardUrl, { headers: { "A2A-Version": "1.0" } })).json()) as Record<string, any>
    expect(card.skills).toEqual([{ id: "echo", name: "echo", description: "The lambdagent agent echo." }])
    expect(card.securitySchemes).toEqual({ bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: "Bearer" }) } })
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: {} } }])
  })
})

describe("the SDK's client, A2A 1.0", () => {
  it("sends a message and gets the task, completed, with the result as an artifact; tasks/get finds it", async () => {
    const server = await start(echo)
    const client = await sdkClient(server)
    const task = asTask(await client.sendMessage(send("hello there")))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(task.artifacts).toHaveLength(1)
    expect(task.artifacts[0]!.metadata?.[artifactRoleKey]).toBe("result")
    expect(artifactsText(task.artifacts)).toBe("hello there")
    const again = await client.getTask({ tenant: "", id: task.id })
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(again.history.map((m) => [m.role, partsText(m.parts)])).toEqual([[Role.ROLE_USER, "hello there"]])
  })

  it("streams the run: the task, its steps as status updates, its tokens, the result, then completed", async () => {
    const server = await start(echo)
    const client = await sdkClient(server)
    const events = await collect(client.sendMessageStream(send("one two three")))
    const cases = events.map((e) => e.payload?.$case)
    expect(cases[0]).toBe("task")
    expect(cases.at(-1)).toBe("statusUpdate")
    const last = events.at(-1)!.payload!
    expect(last.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const steps = events.flatMap((e) =>
      e.payload?.$case === "statusUpdate" && e.payload.value.status?.state === TaskState.TASK_STATE_WORKING ? [e.payload.value.status.message!] : []
    )
    expect(steps.map((m) => partsText(m.parts.slice(0, 1)))).toEqual(["llm llm → one two three"])
    expect(steps[0]!.parts[1]!.content).toMatchObject({ $case: "data", value: { kind: "llm", output: "one two three" } })
    const artifacts = events.flatMap((e) => (e.payload?.$case === "artifactUpdate" ? [e.payload.value] : []))
    const tokens = artifacts.filter((a) => a.artifact?.metadata?.[artifactRoleKey] === "tokens")
    expect(tokens.map((a) => partsText(a.artifact!.parts)).join("")).toBe("one two three")
    expect(tokens.map((a) => a.append)).toEqual([false, ...tokens.slice(1).map(() => true)])
    expect(artifacts.at(-1)!.artifact!.artifactId).toBe("result")
    const id = (events[0]!.payload!.value as Task).id
    const stored = await client.getTask({ tenant: "", id })
    expect(artifactsText(stored.artifacts)).toBe("one two three")
  })

  it("keeps memory and conversation per context id", async () => {
    const agent = Term.memory({ agent: echoAgent, size: 10, ttl: 0, scope: "session" })
    const server = await start({ agent, runtimeOptions: { model: Scripted.echo() } })
    const client = await sdkClient(server)
    const first = asTask(await client.sendMessage(send("my name is Ada")))
    const second = asTask(await client.sendMessage(send("what is my name?", { contextId: first.contextId })))
    expect(second.contextId).toBe(first.contextId)
    expect(artifactsText(second.artifacts)).toContain("my name is Ada")
    const stranger = asTask(await client.sendMessage(send("what is my name?")))
    expect(stranger.contextId).not.toBe(first.contextId)
    expect(artifactsText(stranger.artifacts)).not.toContain("Ada")
    // a client's context id is no session of the host's own: "default" stays the host's
    const runtime = createRuntime({ model: Scripted.echo() })
    const shared = await start({ agent, runtime })
    await runtime.run(agent, "host secret", { session: "default" })
    const probe = asTask(await (await sdkClient(shared)).sendMessage(send("what do you remember?", { contextId: "default" })))
    expect(artifactsText(probe.artifacts)).not.toContain("host secret")
    expect((await runtime.memory(sessionOf("default")).list()).length).toBe(1)
    await runtime.close()
  })

  it("cancels a run in flight: the task ends canceled and the server goes on", async () => {
    const server = await start(slow)
    const client = await sdkClient(server)
    let canceled: Task | undefined
    const events = await collect(client.sendMessageStream(send("take your time")), async (e) => {
      if (e.payload?.$case === "task") canceled = await client.cancelTask({ tenant: "", id: e.payload.value.id, metadata: undefined })
    })
    expect(canceled?.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    const last = events.at(-1)!.payload!
    expect(last.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    expect(server.inFlight).toBe(0)
    expect((await client.getTask({ tenant: "", id: canceled!.id })).status?.state).toBe(TaskState.TASK_STATE_CANCELED)
  })

  it("reads a data part as JSON input and answers a non-text value as text and data", async () => {
    const server = await start({ agent: Term.lam("x", Term.var("x")) })
    const client = await sdkClient(server)
    const task = asTask(await client.sendMessage({ ...send(""), message: message("user", [dataPart([1, "two", [3]])]) }))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(task.artifacts[0]!.parts.map((p) => p.content)).toEqual([
      { $case: "text", value: JSON.stringify([1, "two", [3]]) },
      { $case: "data", value: [1, "two", [3]] }
    ])
    expect(artifactsText(task.artifacts)).toBe(JSON.stringify([1, "two", [3]]))
  })

  it("rejects a message with a file part, fails a run that fails and one that takes too long", async () => {
    const server = await start({ agent: Term.div(Term.lit(1), Term.lit(0)) })
    const client = await sdkClient(server)
    const withFile = {
      ...send(""),
      message: message("user", [{ content: { $case: "url", value: "https://example.com/a.pdf" }, metadata: undefined, filename: "a.pdf", mediaType: "" }])
    }
    const rejected = asTask(await client.sendMessage(withFile))
    expect(rejected.status?.state).toBe(TaskState.TASK_STATE_REJECTED)
    expect(partsText(rejected.status?.message?.parts ?? [])).toContain("file part")
    const failed = asTask(await client.sendMessage(send("x")))
    expect(failed.status?.state).toBe(TaskState.TASK_STATE_FAILED)
    expect(partsText(failed.status?.message?.parts ?? [])).toMatch(/^DivisionByZero: /)

    const late = await start({ ...slow, timeoutMs: 50 })
    const timedOut = asTask(await (await sdkClient(late)).sendMessage(send("x")))
    expect(timedOut.status?.state).toBe(TaskState.TASK_STATE_FAILED)
    expect(partsText(timedOut.status?.message?.parts ?? [])).toBe("Timeout: the run took longer than 50 ms")
  })

  it("lists tasks by context, and lets a client follow a task in flight again", async () => {
    const server = await start({ ...echo, runtimeOptions: { model: Scripted.echo({ latencyMs: 50 }) } })
    const client = await sdkClient(server)
    const first = asTask(await client.sendMessage(send("a")))
    await client.sendMessage(send("b", { contextId: first.contextId }))
    await client.sendMessage(send("c"))
    const listed = await client.listTasks({
      tenant: "",
      contextId: first.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: undefined
    })
    expect(listed.tasks.map((t) => partsText(t.history[0]!.parts))).toEqual(["b", "a"])
    const returned = asTask(
      await client.sendMessage({ ...send("later"), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true } })
    )
    expect(returned.status?.state).toBe(TaskState.TASK_STATE_WORKING)
    const events = await collect(client.resubscribeTask({ tenant: "", id: returned.id }))
    const last = events.at(-1)!.payload!
    expect(last.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(artifactsText((await client.getTask({ tenant: "", id: returned.id })).artifacts)).toBe("later")
  })

  it("refuses a message for a task in flight, leaving the task alone, and one continuing a finished task", async () => {
    const server = await start(slow)
    const client = await sdkClient(server)
    const running = asTask(
      await client.sendMessage({ ...send("x"), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true } })
    )
    await expect(client.sendMessage(send("more input", { taskId: running.id, contextId: running.contextId }))).rejects.toThrow(
      `task ${running.id} is still running; send a new message without a taskId, or cancel the task`
    )
    expect(
      await errorOf(
        await rpc(server.url, {
          jsonrpc: "2.0",
          id: 1,
          method: "message/send",
          params: { message: { kind: "message", messageId: "m", role: "user", taskId: running.id, parts: [{ kind: "text", text: "more" }] } }
        })
      )
    ).toMatchObject({ code: -32004 })
    expect(server.inFlight).toBe(1)
    const canceled = await client.cancelTask({ tenant: "", id: running.id, metadata: undefined })
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    expect(server.inFlight).toBe(0)
    await expect(client.sendMessage(send("again", { taskId: running.id }))).rejects.toThrow(/terminal state/)
  })

  it("asks for input when inputRequired says so, and runs the answer in the same session", async () => {
    // the model sees the conversation: the answer's run knows what was asked first
    const model = Scripted.respond((req) => {
      const said = req.messages.filter((m) => m.role === "user").map((m) => m.content)
      return said.length === 1 ? "Which city?" : `A plan for ${said.join(" → ")}`
    })
    const server = await start({
      agent: Term.llm({ system: "Plan trips." }),
      runtimeOptions: { model },
      inputRequired: (out) => (String(out.value).endsWith("?") ? String(out.value) : undefined)
    })
    const client = await sdkClient(server)
    const asked = asTask(await client.sendMessage(send("plan a trip")))
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    expect(partsText(asked.status!.message!.parts)).toBe("Which city?")
    const done = asTask(await client.sendMessage(send("Rome", { taskId: asked.id, contextId: asked.contextId })))
    expect(done.id).toBe(asked.id)
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(artifactsText(done.artifacts)).toBe("A plan for plan a trip → Rome")
    expect(done.history.map((m) => partsText(m.parts))).toEqual(["plan a trip", "Which city?", "Rome"])
  })

  it("keeps at most maxTasks tasks, dropping the oldest finished one", async () => {
    const server = await start({ ...echo, maxTasks: 2 })
    const client = await sdkClient(server)
    const ids = []
    for (const text of ["a", "b", "c"]) ids.push(asTask(await client.sendMessage(send(text))).id)
    expect(server.tasks).toBe(2)
    await expect(client.getTask({ tenant: "", id: ids[0]! })).rejects.toThrow(/Task not found/)
    expect(artifactsText((await client.getTask({ tenant: "", id: ids[2]! })).artifacts)).toBe("c")
  })

  it("cancels the runs still in flight when it shuts down", async () => {
    const server = await start(slow)
    const client = await sdkClient(server)
    const events = await collect(client.sendMessageStream(send("x")), (e) => {
      if (e.payload?.$case === "task") void server.close({ graceMs: 0 })
    })
    const last = events.at(-1)!.payload!
    expect(last.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    expect(last.$case === "statusUpdate" && partsText(last.value.status!.message!.parts)).toBe("ShuttingDown: the server is shutting down")
  })
})

describe("the SDK's client, A2A 0.3 (message/send, message/stream, tasks/get, tasks/cancel)", () => {
  const legacy = async (server: Server): Promise<Client> => sdkClient(server, { version: "0.3" })

  it("sends, streams and gets tasks over the 0.3 methods", async () => {
    const server = await start(echo)
    const client = await legacy(server)
    expect(client.protocolVersion).toBe("0.3")
    const task = asTask(await client.sendMessage(send("hello")))
    expect(artifactsText(task.artifacts)).toBe("hello")
    expect((await client.getTask({ tenant: "", id: task.id })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const events = await collect(client.sendMessageStream(send("streamed")))
    const last = events.at(-1)!.payload!
    expect(last.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
  })

  it("cancels over tasks/cancel", async () => {
    const server = await start(slow)
    const client = await legacy(server)
    let canceled: Task | undefined
    await collect(client.sendMessageStream(send("x")), async (e) => {
      if (e.payload?.$case === "task") canceled = await client.cancelTask({ tenant: "", id: e.payload.value.id, metadata: undefined })
    })
    expect(canceled?.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
  })

  it("answers the 0.3 wire format to a request without A2A-Version", async () => {
    const server = await start(echo)
    const res = await rpc(server.url, {
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: { message: { kind: "message", messageId: "m1", role: "user", parts: [{ kind: "text", text: "raw" }] } }
    })
    const body = (await res.json()) as { id: number; result: Record<string, any> }
    expect(body.id).toBe(1)
    expect(body.result).toMatchObject({
      kind: "task",
      status: { state: "completed" },
      artifacts: [{ artifactId: "result", parts: [{ kind: "text", text: "raw" }] }]
    })
    const stream = await rpc(server.url, {
      jsonrpc: "2.0",
      id: 2,
      method: "message/stream",
      params: { message: { kind: "message", messageId: "m2", role: "user", parts: [{ kind: "text", text: "s" }] } }
    })
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const frames = (await sseData(stream)) as Array<{ id: number; result: { kind: string; final?: boolean; status?: { state: string } } }>
    expect(frames.every((f) => f.id === 2)).toBe(true)
    expect(frames[0]!.result.kind).toBe("task")
    expect(frames.at(-1)!.result).toMatchObject({ kind: "status-update", final: true, status: { state: "completed" } })
  })
})

describe("bad input gets a clear protocol error, and the server keeps serving", () => {
  it("malformed JSON, something that is not JSON-RPC, a batch, an unknown method, JSON nested too deep", async () => {
    const server = await start(echo)
    let res = await rpc(server.url, "{not json", { raw: true })
    expect(res.status).toBe(400)
    expect(await errorOf(res)).toMatchObject({ code: -32700, message: expect.stringMatching(/^Parse error: /) })
    await expectServing(server)
    expect((await errorOf(await rpc(server.url, { hello: "world" }))).code).toBe(-32600)
    await expectServing(server)
    res = await rpc(server.url, [{ jsonrpc: "2.0", id: 1, method: "message/send" }])
    expect(res.status).toBe(400)
    expect(await errorOf(res)).toMatchObject({ code: -32600, message: expect.stringContaining("batch") })
    expect((await errorOf(await rpc(server.url, { jsonrpc: "2.0", id: 1, method: "tasks/explode", params: {} }))).code).toBe(-32601)
    const deep = `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":${"[".repeat(50_000)}${"]".repeat(50_000)}}]}}}`
    res = await rpc(server.url, deep, { raw: true })
    expect(res.status).toBe(400)
    expect(await errorOf(res)).toMatchObject({ code: -32600, message: "Invalid Request: the JSON is nested deeper than 200 levels" })
    expect((await errorOf(await rpc(server.url, { jsonrpc: "2.0", id: 1, method: "Explode", params: {} }, { headers: { "A2A-Version": "1.0" } }))).code).toBe(
      -32601
    )
    await expectServing(server)
  })

  it("an unknown task id, and a cancel of a finished task", async () => {
    const server = await start(echo)
    expect(await errorOf(await rpc(server.url, { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "no-such-task" } }))).toMatchObject({
      code: -32001,
      message: "Task not found: no-such-task"
    })
    const client = await sdkClient(server)
    await expect(client.getTask({ tenant: "", id: "no-such-task" })).rejects.toThrow(/Task not found: no-such-task/)
    const done = asTask(await client.sendMessage(send("x")))
    expect(await errorOf(await rpc(server.url, { jsonrpc: "2.0", id: 2, method: "tasks/cancel", params: { id: done.id } }))).toMatchObject({ code: -32002 })
    await expect(client.cancelTask({ tenant: "", id: done.id, metadata: undefined })).rejects.toThrow(/not cancelable/)
    await expectServing(server)
  })

  it("a 10 MB message, the wrong content type, an unknown protocol version", async () => {
    const server = await start(echo)
    const huge = {
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: { message: { kind: "message", messageId: "m", role: "user", parts: [{ kind: "text", text: "x".repeat(10 * 1024 * 1024) }] } }
    }
    const res = await rpc(server.url, huge)
    expect(res.status).toBe(413)
    expect(await errorOf(res)).toMatchObject({ code: -32600, message: "Invalid Request: the body is larger than 1048576 bytes" })
    await expectServing(server)
    const text = await rpc(server.url, "hello", { raw: true, headers: { "content-type": "text/plain" } })
    expect(text.status).toBe(415)
    expect((await errorOf(text)).code).toBe(-32005)
    expect(
      (await errorOf(await rpc(server.url, { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }, { headers: { "A2A-Version": "9.9" } }))).code
    ).toBe(-32009)
    await expectServing(server)
  })

  it("a request addressed to another host or from a foreign page, GET on the endpoint, an unknown path", async () => {
    const server = await start({ ...echo, allowedHosts: ["agents.internal"] })
    const rebound = await raw(server.url, { host: `evil.example:${server.port}` })
    expect(rebound.status).toBe(403)
    expect(JSON.parse(rebound.body).error).toMatchObject({ code: -32000, message: expect.stringContaining("DNS rebinding") })
    expect((await raw(server.cardUrl, { host: `evil.example:${server.port}` }, "GET")).status).toBe(403)
    expect((await raw(server.url, { host: `localhost:${server.port}`, origin: "http://evil.example" })).status).toBe(403)
    expect((await raw(server.cardUrl, { host: "agents.internal" }, "GET")).status).toBe(200)
    expect((await fetch(server.url)).status).toBe(405)
    expect((await fetch(`${server.url}nope`)).status).toBe(404)
    await expectServing(server)
  })

  it("a missing or wrong bearer token (the card stays public)", async () => {
    const server = await start({ ...echo, token: "s3cret" })
    let res = await rpc(server.url, { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "x" } })
    expect(res.status).toBe(401)
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/)
    expect(await errorOf(res)).toMatchObject({ code: -32000, message: expect.stringMatching(/^Unauthorized: /) })
    res = await rpc(server.url, { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "x" } }, { headers: { authorization: "Bearer guess" } })
    expect(res.status).toBe(401)
    expect((await fetch(server.cardUrl)).status).toBe(200)
    await expectServing(server, { authorization: "Bearer s3cret" })
  })

  it("a client that goes away in the middle of a stream", async () => {
    const server = await start({ ...echo, runtimeOptions: { model: Scripted.echo({ latencyMs: 20 }) } })
    const controller = new AbortController()
    const res = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "message/stream",
        params: { message: { kind: "message", messageId: "m", role: "user", parts: [{ kind: "text", text: "bye" }] } }
      }),
      signal: controller.signal
    })
    const reader = res.body!.getReader()
    await reader.read()
    controller.abort()
    await expectServing(server)
  })
})
