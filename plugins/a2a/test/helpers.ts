/**
 * Shared pieces of the A2A plugin's tests: our servers (closed after each test), the SDK's own
 * client and reference server (its express handlers), plain HTTP servers that misbehave on
 * purpose, and raw JSON-RPC requests that cannot hang.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { AgentCard as AgentCardCodec } from "@a2a-js/sdk"
import type { AgentCard } from "@a2a-js/sdk"
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client"
import { type AgentExecutor, DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server"
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express"
import express from "express"
import { afterEach } from "vitest"
import { agentCard, type CardSpec } from "../card.ts"
import { serve, type ServeOptions, type Server } from "../server.ts"

const cleanups: Array<() => Promise<void>> = []

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((close) => close()))
})

/** Our server on a free port, closed after the test. */
export const start = async (options: ServeOptions): Promise<Server> => {
  const server = await serve({ port: 0, onError: () => {}, ...options })
  cleanups.push(() => server.close({ graceMs: 0 }))
  return server
}

const listening = async (server: http.Server): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A plain HTTP server answering every request with `handler`, on a free port; its base URL. */
export const rawServer = (handler: http.RequestListener): Promise<string> => listening(http.createServer(handler))

/** A port nothing listens on (it was free a moment ago). */
export const closedPort = async (): Promise<number> => {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/**
 * The SDK's reference server: its `DefaultRequestHandler` with an in-memory task store and the
 * given executor, behind its own express handlers (the agent card with the v0.3 layer, JSON-RPC
 * for 1.0 and 0.3). Resolves with its base URL; `methods` collects the JSON-RPC methods it got.
 */
export const referenceServer = async (
  executor: AgentExecutor,
  spec: Omit<CardSpec, "url"> & { readonly streaming?: boolean; readonly methods?: Array<string> }
): Promise<string> => {
  const app = express()
  const server = http.createServer(app)
  const base = await listening(server)
  const card: AgentCard = {
    ...agentCard({ ...spec, url: `${base}/` }),
    capabilities: { streaming: spec.streaming ?? true, pushNotifications: false, extensions: [], extendedAgentCard: false }
  }
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor)
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler, legacyCompat: { enabled: true } }))
  app.post("/", express.json(), (req, _res, next) => {
    spec.methods?.push(String((req.body as { method?: unknown } | undefined)?.method))
    next()
  })
  app.use("/", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }))
  return base
}

/**
 * The SDK's own client for our server, from the card the server publishes. `version: "0.3"` keeps
 * only the card's 0.3 interface, so the SDK's v0.3 transport speaks `message/send` & co.
 */
export const sdkClient = async (server: Server, options: { readonly version?: "1.0" | "0.3"; readonly card?: unknown } = {}): Promise<Client> => {
  const json = options.card ?? (await (await fetch(server.cardUrl, { headers: { "A2A-Version": "1.0" } })).json())
  const card = AgentCardCodec.fromJSON(json)
  const wanted = options.version ?? "1.0"
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })]
    })
  )
  return factory.createFromAgentCard({ ...card, supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === wanted) })
}

/** POST a JSON-RPC request (or raw text) to our server's endpoint, with a 5 s limit. */
export const rpc = (url: string, body: unknown, init: { readonly headers?: Record<string, string>; readonly raw?: boolean } = {}): Promise<Response> =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: init.raw === true ? (body as string) : JSON.stringify(body),
    signal: AbortSignal.timeout(5_000)
  })

/** A request with any headers (fetch cannot set `Host`); its status and body. */
export const raw = (url: string, headers: Record<string, string>, method = "POST", body = "{}"): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const target = new URL(url)
    const req = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method, headers: { "content-type": "application/json", ...headers } },
      (res) => {
        let text = ""
        res
          .setEncoding("utf8")
          .on("data", (d: string) => (text += d))
          .on("end", () => resolve({ status: res.statusCode!, body: text }))
      }
    )
    req.on("error", reject)
    req.end(method === "POST" ? body : undefined)
  })

/** The `data:` payloads of a whole event stream. */
export const sseData = async (res: Response): Promise<Array<unknown>> =>
  (await res.text()).split("\n\n").flatMap((block) => {
    const data = block
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => l.slice(6))
    return data.length > 0 ? [JSON.parse(data.join("\n"))] : []
  })
