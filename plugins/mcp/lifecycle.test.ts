/**
 * Protocol utilities of the lambda server: logging (`logging/setLevel`, `notifications/message`),
 * ping in both directions, and protocol version negotiation (in process and over HTTP).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  EmptyResultSchema,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS
} from "@modelcontextprotocol/sdk/types.js"
import { afterEach, describe, expect, it } from "vitest"
import { createLambdaServer, type LambdaServer, type LambdaServerOptions, memoryRegistryStore, type ServeHandle, serveHttp } from "./index.ts"
import { call, connectHttp, square, textOf } from "./test-support.ts"

type Message = LoggingMessageNotification["params"]

interface InProcess {
  readonly client: Client
  /** The server's side of the connection (an SDK `Server`). */
  readonly session: Server
  /** `notifications/message` received so far. */
  readonly messages: Array<Message>
}

const servers: Array<LambdaServer> = []
const handles: Array<ServeHandle> = []
const clients: Array<Client> = []

const lambdaServer = async (options: LambdaServerOptions = {}) => {
  const server = await createLambdaServer({ log: () => undefined, ...options })
  servers.push(server)
  return server
}

/** An SDK client connected to the server in process. */
const connect = async (server: LambdaServer): Promise<InProcess> => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const session = await server.connect(serverSide)
  const client = new Client({ name: "lifecycle-test", version: "0" })
  const messages: Array<Message> = []
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    messages.push(n.params)
  })
  await client.connect(clientSide)
  clients.push(client)
  return { client, session, messages }
}

/**
 * Wait until the notifications sent to these sessions so far have arrived: a ping's answer comes
 * after them on the same ordered connection.
 */
const settle = (...sessions: ReadonlyArray<InProcess>) => Promise.all(sessions.map((s) => s.client.ping()))

afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()))
  for (const handle of handles.splice(0)) await handle.close()
  await Promise.allSettled(servers.splice(0).map((s) => s.close()))
})

describe("logging", () => {
  it("declares the logging capability and accepts logging/setLevel with an empty result", async () => {
    const a = await connect(await lambdaServer())
    expect(a.client.getServerCapabilities()?.logging).toEqual({})
    expect(await a.client.setLoggingLevel("debug")).toEqual({})
    const error = await a.client.setLoggingLevel("loud" as "debug").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(McpError)
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams)
    expect((error as McpError).message).toContain("Invalid params for logging/setLevel")
  })

  it("tells every session that a tool evolved (info), and only the caller that its call failed (warning, before the result)", async () => {
    const server = await lambdaServer()
    const a = await connect(server)
    const b = await connect(server)
    await call(a.client, "evolve", { name: "square", description: "Squares", code: square })
    await settle(a, b)
    for (const s of [a, b]) {
      expect(s.messages).toEqual([
        {
          level: "info",
          logger: "lambdagent",
          data: { message: "tool square evolved to version 1", tool: "square", version: 1, description: "Squares" }
        }
      ])
    }

    // a successful call logs nothing at the default level
    expect(textOf(await call(a.client, "run", { code: "square", input: 3 }))).toBe("9")
    // a failed evaluation: the warning is there when the result arrives
    const result = await call(a.client, "run", { code: { div: [1, 0] }, input: null })
    expect(result.isError).toBe(true)
    expect(a.messages.at(-1)).toEqual({
      level: "warning",
      logger: "lambdagent",
      data: { message: expect.stringMatching(/^run failed: DivisionByZero: /), tool: "run", kind: "DivisionByZero" }
    })
    const budget = await call(a.client, "run", {
      code: {
        app: {
          func: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } },
          arg: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } }
        }
      },
      input: null,
      fuel: 1000
    })
    expect(budget.isError).toBe(true)
    expect(a.messages.at(-1)).toMatchObject({ level: "warning", data: { tool: "run", kind: "BudgetExceeded" } })
    await settle(b)
    expect(b.messages).toHaveLength(1) // b saw only the evolve
  })

  it("honours each session's level: error hides warnings and info; debug adds every call's time", async () => {
    const server = await lambdaServer()
    const quiet = await connect(server)
    const chatty = await connect(server)
    await quiet.client.setLoggingLevel("error")
    await chatty.client.setLoggingLevel("debug")
    await call(quiet.client, "evolve", { name: "inc", description: "adds one", code: { lam: "x", body: { add: [{ var: "x" }, 1] } } })
    await call(quiet.client, "run", { code: { div: [1, 0] }, input: null })
    await call(chatty.client, "run", { code: "inc", input: 1 })
    await call(chatty.client, "run", { code: { div: [1, 0] }, input: null })
    await settle(quiet, chatty)
    expect(quiet.messages).toEqual([])
    expect(chatty.messages.map((m) => m.level)).toEqual(["info", "debug", "warning"])
    expect(chatty.messages[1]).toMatchObject({ level: "debug", data: { message: expect.stringMatching(/^run answered in [\d.]+ ms$/), tool: "run" } })

    // and back: a level can be changed at any time
    await quiet.client.setLoggingLevel("warning")
    await call(quiet.client, "run", { code: { div: [1, 0] }, input: null })
    expect(quiet.messages.map((m) => m.level)).toEqual(["warning"])
  })

  it("reports a store failure to every session (error), and the server's logLevel sets the default", async () => {
    const store = memoryRegistryStore()
    let failing = false
    const server = await lambdaServer({
      store: {
        ...store,
        description: "flaky store",
        save: (tools) => (failing ? Promise.reject(new Error("disk full")) : store.save(tools)),
        append: (name, version) => (failing ? Promise.reject(new Error("disk full")) : store.append!(name, version))
      },
      logLevel: "error"
    })
    const a = await connect(server)
    const b = await connect(server)
    await call(a.client, "evolve", { name: "one", description: "1", code: 1 }) // info: below the default
    await call(a.client, "run", { code: { div: [1, 0] }, input: null }) // warning: below it too
    failing = true
    const failed = await call(a.client, "evolve", { name: "two", description: "2", code: 2 })
    expect(failed.structuredContent).toMatchObject({ kind: "StoreError" })
    await settle(a, b)
    const expected = {
      level: "error",
      logger: "lambdagent",
      data: { message: "could not save tool two to flaky store: disk full", tool: "two", store: "flaky store" }
    }
    // both hear of the store failure; that a's own call failed is a warning, below the level
    expect(b.messages).toEqual([expected])
    expect(a.messages).toEqual([expected])
    await expect(lambdaServer({ logLevel: "loud" as "info" })).rejects.toThrow(/logLevel must be one of debug, info/)
  })

  it("lets modules log to the caller and hosts log to everyone", async () => {
    const server = await lambdaServer({
      system: false,
      modules: [
        {
          name: "logging-module",
          tools: () => [
            {
              name: "work",
              description: "logs while it works",
              inputSchema: { type: "object" },
              call: (_args, context) => {
                context.log?.({ level: "notice", logger: "worker", data: { message: "halfway" } })
                context.log?.({ level: "debug", logger: "worker", data: "details nobody asked for" })
                return { content: [{ type: "text", text: "done" }] }
              }
            }
          ]
        }
      ]
    })
    const a = await connect(server)
    const b = await connect(server)
    expect(textOf(await call(a.client, "work"))).toBe("done")
    expect(a.messages).toEqual([{ level: "notice", logger: "worker", data: { message: "halfway" } }])
    server.log({ level: "alert", data: { message: "shutting down soon" } })
    await settle(b)
    expect(b.messages).toEqual([{ level: "alert", logger: "lambdagent", data: { message: "shutting down soon" } }])
  })
})

describe("ping", () => {
  it("answers the client's ping, and the server can ping the client", async () => {
    const a = await connect(await lambdaServer())
    expect(await a.client.ping()).toEqual({})
    expect(await a.session.ping()).toEqual({})
  })

  it("works both ways over Streamable HTTP", async () => {
    const server = await lambdaServer()
    // keep the server's side of each session, as serveHttp connects it
    const sessions: Array<Server> = []
    const watched: LambdaServer = {
      ...server,
      connect: async (transport) => {
        const session = await server.connect(transport)
        sessions.push(session)
        return session
      }
    }
    const handle = await serveHttp(watched, { log: () => undefined })
    handles.push(handle)
    const c = await connectHttp(handle.url!)
    clients.push(c.client)
    expect(await c.client.ping()).toEqual({})
    expect(sessions).toHaveLength(1)
    // The server's request travels on the client's event stream (GET), which opens after initialisation.
    let answer: unknown
    for (let attempt = 0; attempt < 20 && answer === undefined; attempt++) {
      answer = await sessions[0]!.request({ method: "ping" }, EmptyResultSchema, { timeout: 500 }).catch(() => undefined)
    }
    expect(answer).toEqual({})
  })
})

describe("protocol version negotiation", () => {
  const initialize = async (url: string, protocolVersion: string) => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "0" } }
      })
    })
    const text = await response.text()
    // the answer is one server-sent event
    const data = text
      .split("\n")
      .find((l) => l.startsWith("data: "))!
      .slice("data: ".length)
    return { status: response.status, result: JSON.parse(data).result as { protocolVersion: string }, session: response.headers.get("mcp-session-id")! }
  }

  it("the SDK in use supports the versions the server promises", () => {
    expect(LATEST_PROTOCOL_VERSION).toBe("2025-11-25")
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual(expect.arrayContaining(["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]))
  })

  it("echoes every supported version over HTTP and answers an unknown one with the latest", async () => {
    const handle = await serveHttp(await lambdaServer(), { log: () => undefined })
    handles.push(handle)
    for (const version of ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]) {
      const { result, status } = await initialize(handle.url!, version)
      expect(status).toBe(200)
      expect(result.protocolVersion, version).toBe(version)
    }
    for (const version of ["2099-01-01", "1.0", ""]) {
      expect((await initialize(handle.url!, version)).result.protocolVersion, version).toBe("2025-11-25")
    }
    // after initialisation, a request naming an unsupported version in its header is refused
    const { session } = await initialize(handle.url!, "2025-06-18")
    const refused = await fetch(handle.url!, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2099-01-01"
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" })
    })
    expect(refused.status).toBe(400)
    expect(await refused.json()).toMatchObject({ error: { message: expect.stringContaining("Unsupported protocol version") } })
  })

  it("gives the SDK client, which asks for the latest version, the latest version", async () => {
    const handle = await serveHttp(await lambdaServer(), { log: () => undefined })
    handles.push(handle)
    const c = await connectHttp(handle.url!)
    clients.push(c.client)
    expect((c.transport as { protocolVersion?: string }).protocolVersion).toBe(LATEST_PROTOCOL_VERSION)
  })
})
