import { request as httpRequest } from "node:http"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import { Tools } from "lambdagent"
import { bearerCheck } from "lambdagent/http"
import { afterEach, describe, expect, it } from "vitest"
import { createLambdaServer, httpStartupWarnings, mcpTools, type ServeHandle, serveHttp, type HttpServeOptions } from "./index.ts"
import { waitFor } from "../../test/fixtures/waitFor.ts"
import { call, type Connected, connectHttp, textOf } from "./test-support.ts"

interface RawResponse {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

/** A request with any headers (fetch may not set `Host`). */
const raw = (port: number, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method: options.method ?? "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...options.headers }
      },
      (res) => {
        let body = ""
        res.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      }
    )
    req.on("error", reject)
    req.end(options.body)
  })

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "raw", version: "0" } }
})

/** The JSON-RPC error of a refused request. */
const errorOf = (response: RawResponse) => JSON.parse(response.body) as { jsonrpc: string; id: unknown; error: { code: number; message: string } }

const handles: Array<ServeHandle> = []
const clients: Array<Connected> = []
const start = async (options: HttpServeOptions = {}) => {
  const handle = await serveHttp(await createLambdaServer(), { ...options, log: () => undefined })
  handles.push(handle)
  return { handle, port: handle.port! }
}

afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()))
  for (const handle of handles.splice(0)) {
    await handle.close()
    await handle.server.close()
  }
})

describe("DNS-rebinding protection of the Streamable HTTP transport", () => {
  it("accepts the loopback names with the bound port, and refuses other Host headers with 403 and a JSON-RPC error", async () => {
    const { port } = await start()
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`]) {
      const response = await raw(port, { headers: { host }, body: initialize })
      expect(response.status, host).toBe(200)
      expect(response.headers["mcp-session-id"], host).toBeTruthy()
    }
    for (const host of ["evil.example", `evil.example:${port}`, `localhost:${port + 1}`, "localhost", "127.0.0.1"]) {
      const response = await raw(port, { headers: { host }, body: initialize })
      expect(response.status, host).toBe(403)
      expect(response.headers["content-type"]).toBe("application/json")
      const body = errorOf(response)
      expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000 } })
      expect(body.error.message).toContain(`Host ${JSON.stringify(host)} is not allowed`)
      expect(body.error.message).toContain(`localhost:${port}`)
    }
  })

  it("checks the Origin header when there is one", async () => {
    const { port } = await start()
    const host = `127.0.0.1:${port}`
    for (const origin of [`http://localhost:${port}`, `https://127.0.0.1:${port}`, `http://[::1]:${port}`]) {
      expect((await raw(port, { headers: { host, origin }, body: initialize })).status, origin).toBe(200)
    }
    for (const origin of ["http://evil.example", `http://evil.example:${port}`, "http://localhost:6274", "null", "file://", "not a url"]) {
      const response = await raw(port, { headers: { host, origin }, body: initialize })
      expect(response.status, origin).toBe(403)
      expect(errorOf(response).error.message).toContain(`Origin ${JSON.stringify(origin)} is not allowed`)
    }
    // every method is checked, not only POST
    expect((await raw(port, { method: "GET", headers: { host: "evil.example" } })).status).toBe(403)
    expect((await raw(port, { method: "DELETE", headers: { host, origin: "http://evil.example" } })).status).toBe(403)
  })

  it("accepts the hosts and origins added to the allow-list", async () => {
    const { port } = await start({ allowedHosts: ["mcp.example.internal", "fixed.example:8443", "fd00::1"], allowedOrigins: ["http://localhost:6274"] })
    for (const host of ["mcp.example.internal", `mcp.example.internal:${port}`, "fixed.example:8443", "[fd00::1]:9000", `localhost:${port}`]) {
      expect((await raw(port, { headers: { host }, body: initialize })).status, host).toBe(200)
    }
    expect((await raw(port, { headers: { host: "fixed.example:8444" }, body: initialize })).status).toBe(403)
    const host = `localhost:${port}`
    for (const origin of ["http://localhost:6274", "https://mcp.example.internal", "http://fixed.example:8443"]) {
      expect((await raw(port, { headers: { host, origin }, body: initialize })).status, origin).toBe(200)
    }
    expect((await raw(port, { headers: { host, origin: "http://localhost:6275" }, body: initialize })).status).toBe(403)
  })

  it('turns a check off with "*", and refuses malformed allow-list entries before listening', async () => {
    const { port } = await start({ allowedHosts: ["*"], allowedOrigins: ["*"] })
    expect((await raw(port, { headers: { host: "anything.example", origin: "http://elsewhere.example" }, body: initialize })).status).toBe(200)
    const server = await createLambdaServer()
    await expect(serveHttp(server, { allowedHosts: ["http://x/"] })).rejects.toThrow(/allowed host "http:\/\/x\/" is not a host name/)
    await expect(serveHttp(server, { allowedOrigins: ["localhost"] })).rejects.toThrow(/allowed origin "localhost" is not an origin/)
    await server.close()
  })

  it("warns at start-up about reachable addresses without a token or without allowed names", () => {
    expect(httpStartupWarnings("127.0.0.1", {})).toEqual([])
    expect(httpStartupWarnings("localhost", {})).toEqual([])
    expect(httpStartupWarnings("192.168.1.5", { authorize: () => undefined })).toEqual([])
    const open = httpStartupWarnings("0.0.0.0", {})
    expect(open).toHaveLength(2)
    expect(open[0]).toContain("without a token")
    expect(open[1]).toContain("--allow-host")
    expect(httpStartupWarnings("0.0.0.0", { allowedHosts: ["mcp.example"], authorize: () => undefined })).toEqual([])
  })
})

describe("bearer tokens on the Streamable HTTP transport", () => {
  it("answers 401 with a WWW-Authenticate challenge when the token is missing or wrong, and serves the right one", async () => {
    const { handle, port } = await start({ authorize: bearerCheck("s3cret") })
    const host = `127.0.0.1:${port}`
    const missing = await raw(port, { headers: { host }, body: initialize })
    expect(missing.status).toBe(401)
    expect(missing.headers["www-authenticate"]).toBe('Bearer realm="lambdagent"')
    expect(errorOf(missing)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000, message: expect.stringContaining("Authorization: Bearer") } })

    for (const authorization of ["Bearer wrong", "Bearer s3cret2", "Basic czNjcmV0", "Bearer", "s3cret"]) {
      const response = await raw(port, { headers: { host, authorization }, body: initialize })
      expect(response.status, authorization).toBe(401)
      expect(String(response.headers["www-authenticate"])).toMatch(/^Bearer realm="lambdagent"/)
    }
    expect((await raw(port, { headers: { host, authorization: "Bearer wrong" }, body: initialize })).headers["www-authenticate"]).toContain("invalid_token")

    // a rebinding attempt is refused as such, before the token is looked at
    expect((await raw(port, { headers: { host: "evil.example", authorization: "Bearer s3cret" }, body: initialize })).status).toBe(403)

    const ok = await raw(port, { headers: { host, authorization: "Bearer s3cret" }, body: initialize })
    expect(ok.status).toBe(200)

    // the SDK client with the header, and the agent-side client with `headers`
    const transport = new StreamableHTTPClientTransport(new URL(handle.url!), { requestInit: { headers: { authorization: "Bearer s3cret" } } })
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js")
    const client = new Client({ name: "token-test", version: "0" })
    await client.connect(transport)
    expect(textOf(await call(client, "run", { code: { add: [40, 2] }, input: null }))).toBe("42")
    await client.close()

    const tools = await mcpTools({ remote: { url: handle.url!, headers: { authorization: "Bearer s3cret" }, tools: ["run"] } })
    try {
      expect(await Effect.runPromise(Tools.call(tools[0]!, { code: { mul: [6, 7] }, input: null }))).toBe("42")
    } finally {
      await tools.close()
    }
    await expect(mcpTools({ remote: { url: handle.url!, connectTimeout: 5 } })).rejects.toThrow(/401|Unauthorized/)
  })

  it("uses the status and headers of the authorize error, and 401 for a plain one", async () => {
    const { port } = await start({
      authorize: (header) => {
        if (header === "Bearer rate-limited") throw Object.assign(new Error("too many attempts"), { status: 429, headers: { "retry-after": "30" } })
        if (header !== "Bearer ok") throw new Error("")
      }
    })
    const host = `127.0.0.1:${port}`
    const limited = await raw(port, { headers: { host, authorization: "Bearer rate-limited" }, body: initialize })
    expect(limited.status).toBe(429)
    expect(limited.headers["retry-after"]).toBe("30")
    expect(errorOf(limited).error.message).toBe("Unauthorized: too many attempts")
    const plain = await raw(port, { headers: { host }, body: initialize })
    expect(plain.status).toBe(401)
    expect(plain.headers["www-authenticate"]).toBe("Bearer")
    expect(errorOf(plain).error.message).toBe("Unauthorized: the request is not authorized")
    expect((await raw(port, { headers: { host, authorization: "Bearer ok" }, body: initialize })).status).toBe(200)
  })
})

describe("idle sessions of the Streamable HTTP transport", () => {
  it("closes a session idle for longer than sessionIdleMs; a busy one stays open", async () => {
    const { handle } = await start({ sessionIdleMs: 1000 })
    const idle = await connectHttp(handle.url!)
    const busy = await connectHttp(handle.url!)
    clients.push(idle, busy)
    const idleId = (idle.transport as StreamableHTTPClientTransport).sessionId!
    expect(handle.server.sessionCount).toBe(2)

    // keep one session busy, a ping every 250 ms, until the sweep (every second: sessions idle > 1 s) closes the other
    await waitFor(
      async () => {
        await busy.client.ping()
        return handle.server.sessionCount < 2
      },
      "the idle session to be swept",
      { everyMs: 250 }
    )
    expect(handle.server.sessionCount).toBe(1)
    expect(textOf(await call(busy.client, "run", { code: { add: [1, 1] }, input: null }))).toBe("2")

    const port = handle.port!
    const expired = await raw(port, {
      headers: { host: `127.0.0.1:${port}`, "mcp-session-id": idleId, "mcp-protocol-version": LATEST_PROTOCOL_VERSION },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })
    })
    expect(expired.status).toBe(404)
    expect(errorOf(expired).error).toMatchObject({ code: -32001, message: expect.stringContaining("expired") })
    await expect(idle.client.listTools()).rejects.toThrow()
  })
})
