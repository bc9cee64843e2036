import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCli } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-http-tools-"))

/** A tool server speaking seed §6.1's plain protocol: POST {tool, input} → {output}; it records what it was sent. */
const requests: Array<{ url: string; authorization: string | undefined; body: unknown }> = []
let server: Server
let base = ""

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      const parsed = JSON.parse(body) as { tool: string; input: string }
      requests.push({ url: req.url ?? "", authorization: req.headers.authorization, body: parsed })
      if (req.url !== "/tools") {
        res.writeHead(404).end("no")
        return
      }
      if (parsed.tool === "raw") {
        res.writeHead(200, { "content-type": "text/plain" }).end("plain text answer")
        return
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ output: `${parsed.tool}(${parsed.input})` }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const agent = (file: string, protocol: string, endpoint = "/tools") => {
  const path = join(dir, file)
  writeFileSync(
    path,
    `type: react
systemPrompt: Use the tools.
react: {maxSteps: 4}
mcp:
  onlineTool:
    calc: [square, raw]
  localTools: [terminate]
app:
  mcp:
    custom:
      nodes:
        calc: {url: "${base}", endpoint: ${endpoint}, protocol: ${protocol}, headers: {Authorization: "Bearer \${CALC_TOKEN}"}}
`
  )
  return path
}

const script = JSON.stringify(['{"tool":"square","args":"7"}', '{"tool":"raw","args":"x"}', '{"tool":"terminate","args":"done"}'])

const toolOutputs = async (config: string) => {
  const r = await runCli(["run", config, "go", "--model", `scripted:sequence:${script}`, "--format", "json"], { env: { CALC_TOKEN: "s3cret" } })
  expect(r.code, r.stderr).toBe(0)
  const out = JSON.parse(r.stdout) as { trace: Array<{ kind: string; name: string; output?: string }> }
  return out.trace.filter((e) => e.kind === "tool").map((e) => [e.name, e.output])
}

describe("the plain HTTP tool protocol for app.mcp.custom.nodes (seed §6.1)", () => {
  it("protocol: http posts {tool, input} and answers output; a body that is not JSON is the answer as is", async () => {
    requests.length = 0
    expect(await toolOutputs(agent("http.yml", "http"))).toEqual([
      ["square", "square(7)"],
      ["raw", "plain text answer"]
    ])
    expect(requests[0]).toEqual({ url: "/tools", authorization: "Bearer s3cret", body: { tool: "square", input: "7" } })
  })

  it("protocol: auto falls back to the plain protocol when the server does not speak MCP", async () => {
    expect(await toolOutputs(agent("auto.yml", "auto"))).toEqual([
      ["square", "square(7)"],
      ["raw", "plain text answer"]
    ])
  })

  it("an HTTP error answers [MCP_ERROR: status] as the observation", async () => {
    expect(await toolOutputs(agent("missing.yml", "http", "/nowhere"))).toEqual([
      ["square", "[MCP_ERROR: 404]"],
      ["raw", "[MCP_ERROR: 404]"]
    ])
  })
})
