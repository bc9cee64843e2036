/**
 * `lambdagent mcp --http` and `lambdagent serve --mcp --http` from the built binary: bearer tokens
 * (`--token`, `$LAMBDAGENT_TOKEN`), allowed hosts and origins, and the usage errors of these options.
 */
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import { waitFor } from "../../test/fixtures/waitFor.ts"
import { call, cliPath, type HttpProcess, root, spawnHttpServer, textOf } from "./test-support.ts"

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "raw", version: "0" } }
})

/** POST an initialize with these headers; the status and body. */
const post = (url: string, headers: Record<string, string>): Promise<{ status: number; body: string; challenge: string | undefined }> =>
  new Promise((resolve, reject) => {
    const { hostname, pathname, port } = new URL(url)
    const req = httpRequest(
      {
        host: hostname,
        port,
        path: pathname,
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }
      },
      (res) => {
        let body = ""
        res.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, challenge: res.headers["www-authenticate"] }))
      }
    )
    req.on("error", reject)
    req.end(initialize)
  })

const connect = async (url: string, token?: string) => {
  const client = new Client({ name: "cli-test", version: "0" })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } })
  )
  return client
}

const servers: Array<HttpProcess> = []
const start = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const server = await spawnHttpServer([cliPath, ...args], env)
  servers.push(server)
  return server
}

beforeAll(() => {
  if (!existsSync(cliPath)) throw new Error("dist/cli/main.js is missing: run `npx tsup` first")
})

afterEach(async () => {
  for (const server of servers.splice(0)) expect(await server.stop()).toBe(0)
})

describe("lambdagent mcp --http", () => {
  it("--token requires the bearer token on every request; the right one serves", async () => {
    const server = await start(["mcp", "--http", "0", "--store", ":memory:", "--token", "s3cret"])
    const host = new URL(server.url).host
    const missing = await post(server.url, { host })
    expect(missing.status).toBe(401)
    expect(missing.challenge).toBe('Bearer realm="lambdagent"')
    expect(JSON.parse(missing.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000, message: expect.stringContaining("Unauthorized") } })
    expect((await post(server.url, { host, authorization: "Bearer nope" })).status).toBe(401)
    await expect(connect(server.url)).rejects.toThrow()
    const client = await connect(server.url, "s3cret")
    expect(textOf(await call(client, "run", { code: { add: [40, 2] }, input: null }))).toBe("42")
    await client.close()
  })

  it("reads the token from $LAMBDAGENT_TOKEN, the same variable as serve", async () => {
    const server = await start(["mcp", "--http", "0", "--store", ":memory:"], { LAMBDAGENT_TOKEN: "from-env" })
    expect((await post(server.url, { host: new URL(server.url).host })).status).toBe(401)
    const client = await connect(server.url, "from-env")
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("evolve")
    await client.close()
  })

  it("--allow-host and --allow-origin extend the DNS-rebinding allow-list", async () => {
    const server = await start(["mcp", "--http", "0", "--store", ":memory:", "--allow-host", "mcp.example.internal", "--allow-origin", "http://localhost:6274"])
    const port = new URL(server.url).port
    expect((await post(server.url, { host: "evil.example" })).status).toBe(403)
    expect((await post(server.url, { host: `mcp.example.internal:${port}` })).status).toBe(200)
    expect((await post(server.url, { host: `localhost:${port}`, origin: "http://localhost:6274" })).status).toBe(200)
    const refused = await post(server.url, { host: `localhost:${port}`, origin: "http://localhost:6275" })
    expect(refused.status).toBe(403)
    expect(JSON.parse(refused.body).error.message).toContain('Origin "http://localhost:6275" is not allowed')
  })

  it("warns when listening on every interface without a token", async () => {
    const server = await start(["mcp", "--http", "0", "--host", "0.0.0.0", "--store", ":memory:"])
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/) // a URL whose Host the server accepts
    await waitFor(() => server.stderr().includes("--allow-host"), "the warning on stderr")
    expect(server.stderr()).toContain("warning: listening on 0.0.0.0 without a token")
    expect(server.stderr()).toContain("add the names clients use with --allow-host")
    const client = await connect(server.url)
    expect((await client.listTools()).tools.length).toBe(4)
    await client.close()
  })
})

describe("lambdagent serve --mcp --http", () => {
  it("takes --token and --allow-host like lambdagent mcp", async () => {
    const server = await start(["serve", "examples/agents/chain.yml", "--mcp", "--http", "0", "--token", "agent-token", "--allow-host", "agents.internal"])
    const port = new URL(server.url).port
    expect((await post(server.url, { host: `127.0.0.1:${port}` })).status).toBe(401)
    expect((await post(server.url, { host: "evil.example", authorization: "Bearer agent-token" })).status).toBe(403)
    expect((await post(server.url, { host: `agents.internal:${port}`, authorization: "Bearer agent-token" })).status).toBe(200)
    const client = await connect(server.url, "agent-token")
    const result = await client.callTool({ name: "Report_writer", arguments: { input: "over MCP HTTP" } })
    expect((result.content as Array<{ text: string }>)[0]!.text).toBe("over MCP HTTP")
    await client.close()
  })
})

describe("usage errors", () => {
  const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [cliPath, ...args], { cwd: root, encoding: "utf8", input: "", env: { ...process.env, ...env }, timeout: 30_000 })

  it("refuses the HTTP options without HTTP, and an empty token, with one line and exit code 2", () => {
    for (const [args, message] of [
      [["mcp", "--store", ":memory:", "--token", "x"], "--token applies to Streamable HTTP only: add --http PORT"],
      [["mcp", "--store", ":memory:", "--allow-host", "a.example"], "--allow-host applies to Streamable HTTP only"],
      [["mcp", "--http", "0", "--store", ":memory:", "--token", ""], '--token expects a non-empty token, got ""'],
      [["mcp", "--http", "0", "--store", ":memory:", "--allow-origin", "localhost"], 'error: UsageError: allowed origin "localhost" is not an origin'],
      [["serve", "examples/agents/chain.yml", "--mcp", "--token", "x"], "--token applies to Streamable HTTP only: add --mcp --http PORT"],
      [["serve", "examples/agents/chain.yml", "--http", "0"], "--http applies to --mcp only"],
      [["serve", "examples/agents/chain.yml", "--port", "0", "--allow-origin", "localhost"], 'error: UsageError: allowed origin "localhost" is not an origin']
    ] as const) {
      const r = cli(args)
      expect(r.status, args.join(" ")).toBe(2)
      expect(r.stderr, args.join(" ")).toContain(message)
      expect(r.stderr).not.toMatch(/\n\s+at /) // no stack trace
    }
  })

  it("ignores $LAMBDAGENT_TOKEN over stdio (it is for HTTP)", () => {
    const r = cli(["mcp", "--store", ":memory:"], { LAMBDAGENT_TOKEN: "x" })
    expect(r.status).toBe(0)
    expect(r.stderr).toContain("serving stdio")
  })
})
