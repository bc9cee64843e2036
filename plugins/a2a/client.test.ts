import type { Task } from "@a2a-js/sdk"
import { TaskState } from "@a2a-js/sdk"
import { AgentEvent, type AgentExecutor, type RequestContext } from "@a2a-js/sdk/server"
import * as Effect from "effect/Effect"
import { createRuntime, Scripted, Term, Tools } from "lambdagent"
import { compileConfig } from "lambdagent/yaml"
import { describe, expect, it } from "vitest"
import { type A2AClientConfig, type A2AProgress, a2aTool, type A2AToolOptions } from "./client.ts"
import { legacyAgentCardJson } from "./card.ts"
import { inputOf, message, textPart } from "./parts.ts"
import { closedPort, rawServer, referenceServer, start } from "./test/helpers.ts"

const call = (config: A2AClientConfig, input: unknown, options: A2AToolOptions = {}): Promise<unknown> =>
  Effect.runPromise(Tools.call(a2aTool(config, { backoffMs: 1, ...options }), input))

const textOf = (request: RequestContext): string => {
  const given = inputOf(request.userMessage)
  return "input" in given ? String(given.input) : given.refused
}

const working = (request: RequestContext, state = TaskState.TASK_STATE_WORKING, note?: string): Task => ({
  id: request.taskId,
  contextId: request.contextId,
  status: { state, message: note === undefined ? undefined : message("agent", [textPart(note)], request), timestamp: new Date().toISOString() },
  artifacts: [],
  history: [],
  metadata: undefined
})

const finish = (request: RequestContext, bus: Parameters<AgentExecutor["execute"]>[1], state: TaskState, note?: string) =>
  bus.publish(
    AgentEvent.statusUpdate({
      taskId: request.taskId,
      contextId: request.contextId,
      status: { state, message: note === undefined ? undefined : message("agent", [textPart(note)], request), timestamp: new Date().toISOString() },
      metadata: undefined
    })
  )

/** Publish the artifact `answer` holding `text`, then `completed`. */
const answer = (request: RequestContext, bus: Parameters<AgentExecutor["execute"]>[1], text: string) => {
  bus.publish(
    AgentEvent.artifactUpdate({
      taskId: request.taskId,
      contextId: request.contextId,
      artifact: { artifactId: "answer", name: "answer", description: "", parts: [textPart(text)], metadata: undefined, extensions: [] },
      append: false,
      lastChunk: true,
      metadata: undefined
    })
  )
  finish(request, bus, TaskState.TASK_STATE_COMPLETED)
}

/** Answers `echo: <text>` as an artifact, after a status update saying it is thinking. */
const echoExecutor: AgentExecutor = {
  execute: async (request, bus) => {
    bus.publish(AgentEvent.task(working(request)))
    finish(request, bus, TaskState.TASK_STATE_WORKING, "thinking")
    answer(request, bus, `echo: ${textOf(request)}`)
    bus.finished()
  },
  cancelTask: async () => {}
}

describe("a2aTool against the SDK's reference server", () => {
  it("sends the input, follows the stream, answers the artifacts' text and reports the progress", async () => {
    const methods: Array<string> = []
    const url = await referenceServer(echoExecutor, { name: "echo", methods })
    const progress: Array<A2AProgress> = []
    expect(await call({ name: "echo", url }, "hello", { onProgress: (p) => progress.push(p) })).toBe("echo: hello")
    expect(progress.map((p) => [p.kind, p.state, p.text])).toEqual([
      ["status", "working", "thinking"],
      ["artifact", undefined, "echo: hello"],
      ["status", "completed", ""]
    ])
    expect(methods).toEqual(["SendStreamingMessage"])
  })

  it("speaks A2A 0.3 to a server whose card is a 0.3 card, and works without streaming", async () => {
    const methods: Array<string> = []
    const endpoint = await referenceServer(echoExecutor, { name: "echo", streaming: false, methods })
    const card = await rawServer((_req, res) => {
      res.setHeader("content-type", "application/json")
      const { supportedInterfaces: _v1, ...v03 } = legacyAgentCardJson({ name: "echo", url: `${endpoint}/` })
      res.end(JSON.stringify({ ...v03, capabilities: { streaming: false } }))
    })
    expect(await call({ name: "echo", url: card }, "over 0.3")).toBe("echo: over 0.3")
    expect(await call({ name: "echo", url: endpoint }, "blocking")).toBe("echo: blocking")
    expect(methods).toEqual(["message/send", "SendMessage"])
  })

  it("answers a message reply with its text, and JSON input as a data part", async () => {
    const reply: AgentExecutor = {
      execute: async (request, bus) => {
        const given = inputOf(request.userMessage)
        bus.publish(
          AgentEvent.message(message("agent", [textPart(`got ${JSON.stringify("input" in given ? given.input : null)}`)], { contextId: request.contextId }))
        )
        bus.finished()
      },
      cancelTask: async () => {}
    }
    const url = await referenceServer(reply, { name: "reply" })
    expect(await call({ name: "reply", url }, { city: "Rome", days: 3 })).toBe(`got {"city":"Rome","days":3}`)
  })

  it("answers a task that needs input with its question and ids, and continues it with a reply", async () => {
    const asking: AgentExecutor = {
      execute: async (request, bus) => {
        if (request.task === undefined) {
          bus.publish(AgentEvent.task(working(request, TaskState.TASK_STATE_INPUT_REQUIRED, "Which city?")))
        } else {
          bus.publish(AgentEvent.task(working(request)))
          answer(request, bus, `a plan for ${textOf(request)}`)
        }
        bus.finished()
      },
      cancelTask: async () => {}
    }
    const url = await referenceServer(asking, { name: "planner" })
    const tool = a2aTool({ name: "planner", url })
    const question = String(await Effect.runPromise(Tools.call(tool, "plan a trip")))
    const ids = /call planner with (\{.*\})\)\]$/.exec(question)
    expect(question).toMatch(/^\[A2A_INPUT_REQUIRED: planner: Which city\? \(to answer, call planner with /)
    const { taskId, contextId } = JSON.parse(ids![1]!) as { taskId: string; contextId: string }
    expect(await Effect.runPromise(Tools.call(tool, { text: "Rome", taskId, contextId }))).toBe("a plan for Rome")
  })

  it("answers a failed remote task as an A2A_ERROR", async () => {
    const failing: AgentExecutor = {
      execute: async (request, bus) => {
        bus.publish(AgentEvent.task(working(request)))
        finish(request, bus, TaskState.TASK_STATE_FAILED, "out of fuel")
        bus.finished()
      },
      cancelTask: async () => {}
    }
    const url = await referenceServer(failing, { name: "failing" })
    expect(await call({ name: "failing", url }, "x")).toMatch(/^\[A2A_ERROR: failing: the remote task [\w-]+ ended failed: out of fuel\]$/)
  })

  it("times out, cancels the remote task, and says A2A_TIMEOUT", async () => {
    let cancelled!: (taskId: string) => void
    const cancelledTask = new Promise<string>((resolve) => (cancelled = resolve))
    const stuck: AgentExecutor = {
      execute: async (request, bus) => {
        bus.publish(AgentEvent.task(working(request)))
        await cancelledTask
        finish(request, bus, TaskState.TASK_STATE_CANCELED)
        bus.finished()
      },
      cancelTask: async (taskId) => cancelled(taskId)
    }
    const methods: Array<string> = []
    const url = await referenceServer(stuck, { name: "stuck", methods })
    expect(await call({ name: "stuck", url, timeout: 0.3 }, "x")).toBe("[A2A_TIMEOUT: stuck: no answer in 0.3s]")
    expect(await cancelledTask).toMatch(/^[\w-]+$/)
    expect(methods).toEqual(["SendStreamingMessage", "CancelTask"])
  })
})

describe("a2aTool: faults are typed observations", () => {
  it("a dead server", async () => {
    const port = await closedPort()
    expect(await call({ name: "gone", url: `http://127.0.0.1:${port}` }, "x")).toBe(
      `[A2A_ERROR: gone: cannot fetch the agent card http://127.0.0.1:${port}/.well-known/agent-card.json: ECONNREFUSED]`
    )
  })

  it("HTTP 4xx is not retried; HTTP 5xx is, with backoff, until the server answers", async () => {
    let asked = 0
    const missing = await rawServer((_req, res) => {
      asked++
      res.writeHead(404).end("no card here")
    })
    expect(await call({ name: "missing", url: missing, retryOnFail: 2 }, "x")).toBe(
      `[A2A_ERROR: missing: the agent card ${missing}/.well-known/agent-card.json answered HTTP 404]`
    )
    expect(asked).toBe(1)

    const endpoint = await referenceServer(echoExecutor, { name: "echo" })
    let tries = 0
    const flaky = await rawServer(async (req, res) => {
      tries++
      if (tries <= 2) return void res.writeHead(503).end("busy")
      const card = await fetch(`${endpoint}${req.url}`, { headers: { "A2A-Version": "1.0" } })
      res.writeHead(200, { "content-type": "application/json" }).end(await card.text())
    })
    expect(await call({ name: "flaky", url: flaky, retryOnFail: 2 }, "x")).toBe("echo: x")
    expect(tries).toBe(3)
    tries = -10
    expect(await call({ name: "flaky", url: flaky, retryOnFail: 1 }, "x")).toBe(
      `[A2A_ERROR: flaky: the agent card ${flaky}/.well-known/agent-card.json answered HTTP 503]`
    )
    expect(tries).toBe(-8)
  })

  it("a card that is not JSON, not an agent card, or offers no transport this client speaks", async () => {
    const serving = (body: string) => rawServer((_req, res) => void res.writeHead(200, { "content-type": "application/json" }).end(body))
    const html = await serving("<html>hello</html>")
    expect(await call({ name: "html", url: html }, "x")).toBe(
      `[A2A_ERROR: html: the agent card at ${html}/.well-known/agent-card.json is not JSON ("<html>hello</html>")]`
    )
    const nameless = await serving(JSON.stringify({ description: "who am I" }))
    expect(await call({ name: "nameless", url: nameless }, "x")).toMatch(/^\[A2A_ERROR: nameless: the agent card at .* is not an agent card: name: /)
    const grpc = await serving(
      JSON.stringify({ name: "g", supportedInterfaces: [{ url: "http://127.0.0.1:1/", protocolBinding: "GRPC", protocolVersion: "1.0" }] })
    )
    expect(await call({ name: "grpc", url: grpc }, "x")).toMatch(/offers only GRPC; this client speaks JSONRPC and HTTP\+JSON\]$/)
    const endpointless = await serving(JSON.stringify({ name: "e", skills: [] }))
    expect(await call({ name: "e", url: endpointless }, "x")).toMatch(/names no endpoint/)
  })

  it("a card that lies about its endpoint: nothing listens there, an HTTP error, or something that is not A2A", async () => {
    const port = await closedPort()
    const lying = (endpoint: string) =>
      rawServer(
        (_req, res) => void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(legacyAgentCardJson({ name: "liar", url: endpoint })))
      )
    const toNowhere = await lying(`http://127.0.0.1:${port}/`)
    expect(await call({ name: "liar", url: toNowhere }, "x")).toBe(
      `[A2A_ERROR: liar: the endpoint http://127.0.0.1:${port}/ (named by the agent card) cannot be reached: ECONNREFUSED]`
    )
    const broken = await rawServer((_req, res) => void res.writeHead(500).end("oops"))
    expect(await call({ name: "liar", url: await lying(`${broken}/`) }, "x")).toMatch(
      new RegExp(`^\\[A2A_ERROR: liar: the endpoint ${broken}/ answered HTTP 500`)
    )
    const web = await rawServer((_req, res) => void res.writeHead(200, { "content-type": "text/html" }).end("<html>a web page</html>"))
    expect(await call({ name: "liar", url: await lying(`${web}/`) }, "x")).toMatch(
      new RegExp(`^\\[A2A_ERROR: liar: the endpoint ${web}/ did not answer as an A2A agent: `)
    )
  })

  it("a JSON-RPC error from the agent", async () => {
    const server = await start({ agent: Term.llm({ system: "Repeat." }), runtimeOptions: { model: Scripted.echo() } })
    expect(await call({ name: "echo", url: server.url }, { text: "continue it", taskId: "no-such-task" })).toBe(
      "[A2A_ERROR: echo: the agent refused the request: Task not found: no-such-task]"
    )
  })

  it("sends its headers with ${VAR} expanded, and says so when a variable is not set", async () => {
    const server = await start({ agent: Term.llm({ system: "Repeat." }), runtimeOptions: { model: Scripted.echo() }, token: "s3cret" })
    const config = { name: "private", url: server.url, headers: { Authorization: "Bearer ${A2A_TEST_TOKEN}" } }
    expect(await call(config, "let me in", { env: { A2A_TEST_TOKEN: "s3cret" } })).toBe("let me in")
    expect(await call(config, "x", { env: { A2A_TEST_TOKEN: "guess" } })).toMatch(/^\[A2A_ERROR: private: the endpoint .* answered HTTP 401: Unauthorized: /)
    expect(await call(config, "x", { env: {} })).toBe("[A2A_ERROR: private: the header Authorization uses ${A2A_TEST_TOKEN}, which is not set]")
  })
})

describe("a2aTool against a lambdagent server", () => {
  it("answers a question of the remote agent, and continues its task with the reply", async () => {
    const model = Scripted.respond((req) => (req.messages.filter((m) => m.role === "user").length === 1 ? "Which city?" : "Day 1: Colosseum"))
    const remote = await start({
      agent: Term.llm({ system: "Plan." }),
      runtimeOptions: { model },
      inputRequired: (out) => (String(out.value).endsWith("?") ? String(out.value) : undefined)
    })
    const tool = a2aTool({ name: "planner", url: remote.url })
    const question = String(await Effect.runPromise(Tools.call(tool, "plan a trip")))
    expect(question).toMatch(
      /^\[A2A_INPUT_REQUIRED: planner: Which city\? \(to answer, call planner with \{"text":"…","taskId":"[\w-]+","contextId":"[\w-]+"\}\)\]$/
    )
    const { contextId, taskId } = JSON.parse(/with (\{.*\})\)\]$/.exec(question)![1]!) as { taskId: string; contextId: string }
    expect(await Effect.runPromise(Tools.call(tool, { text: "Rome", taskId, contextId }))).toBe("Day 1: Colosseum")
  })
})

describe("a2a.clients in YAML", () => {
  it("are tools of a react agent and tool steps of a router's route", async () => {
    const remote = await start({ agent: Term.llm({ system: "Plan." }), runtimeOptions: { model: Scripted.fixed("Day 1: Colosseum") }, name: "planner" })
    const config = compileConfig({
      type: "router",
      router: {
        classifier: { prompt: "travel or other?" },
        routes: { travel: { type: "chain", chain: { steps: [{ tool: "planner" }] } } },
        default: "I only plan trips."
      },
      a2a: { clients: [{ name: "planner", url: remote.url, timeout: 5 }] }
    })
    const ref = config.tools.find((t) => t.name === "planner")!
    expect(ref).toMatchObject({ kind: "a2a", a2a: { url: remote.url, timeout: 5 } })
    const runtime = createRuntime({ model: Scripted.sequence(["travel", "other"]), tools: [a2aTool({ name: ref.name, ...ref.a2a! })] })
    try {
      expect((await runtime.run(config.term, "3 days in Rome")).value).toBe("Day 1: Colosseum")
      expect((await runtime.run(config.term, "fix my car")).value).toBe("I only plan trips.")
    } finally {
      await runtime.close()
    }
  })

  it("are delegates of a hand-off registry", async () => {
    const remote = await start({ agent: Term.llm({ system: "Plan." }), runtimeOptions: { model: Scripted.fixed("Day 1: Colosseum") }, name: "planner" })
    const config = compileConfig({
      type: "handoff",
      handoff: {
        selector: { prompt: "Which desk takes the message?" },
        registry: {
          travel: { type: "chain", chain: { steps: [{ tool: "planner" }] } },
          general: { systemPrompt: "General desk." }
        }
      },
      a2a: { clients: [{ name: "planner", url: remote.url, timeout: 5 }] }
    })
    const ref = config.tools.find((t) => t.name === "planner")!
    // the selector names the travel desk, whose one step is the remote agent
    const runtime = createRuntime({ model: Scripted.sequence(["travel"]), tools: [a2aTool({ name: ref.name, ...ref.a2a! })] })
    try {
      const result = await runtime.run(config.term, "3 days in Rome")
      expect(result.value).toBe("Day 1: Colosseum")
      expect(result.trace.some((e) => e.kind === "tool" && e.name === "planner")).toBe(true)
    } finally {
      await runtime.close()
    }
  })
})
