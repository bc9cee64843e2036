/**
 * Input nested thousands of levels deep is a value or a clear error, never silent corruption or
 * a crash: through `lambdagent serve`, `lambdagent mcp` and `lambdagent eval --input`.
 */
import { writeFileSync } from "node:fs"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { RawServer } from "../../mcp/test-support.ts"
import { cliPath, runCli, startServe } from "./helpers.ts"

const nested = (depth: number, open: string, leaf: string, close: string): string => `${open.repeat(depth)}${leaf}${close.repeat(depth)}`
const arrays = nested(5000, "[", "1", "]")
const objects = nested(5000, '{"a":', "1", "}")
/** A long integer makes the parser keep integers exact; that path must take any depth too. */
const exactArrays = nested(5000, "[", "1234567890123456789", "]")
const identity = JSON.stringify({ lam: "x", body: { var: "x" } })

const stops: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop()
})

describe("lambdagent serve", () => {
  it("answers 5,000 nested arrays and 5,000 nested objects with their value, and stays up", async () => {
    // the offline model echoes its input: the answer is the input's JSON text
    const served = await startServe(["examples/agents/simple.yml", "--port", "0"])
    stops.push(served.stop)
    const run = async (input: string) => {
      const response = await fetch(`${served.url}/run`, { method: "POST", body: `{"input":${input}}`, signal: AbortSignal.timeout(20_000) })
      return { status: response.status, body: (await response.json()) as { result?: unknown; error?: unknown } }
    }
    expect(await run(objects)).toMatchObject({ status: 200, body: { result: objects } })
    expect(await run(arrays)).toMatchObject({ status: 200, body: { result: arrays } })
    expect(await run(exactArrays)).toMatchObject({ status: 200, body: { result: exactArrays } })
    expect((await fetch(`${served.url}/health`)).status).toBe(200)
  })
})

describe("lambdagent mcp", () => {
  it("runs on 5,000 nested arrays, refuses 5,000 nested objects as a term, and keeps serving", async () => {
    const server = new RawServer([], [cliPath, "mcp", "--store", ":memory:"])
    stops.push(async () => server.kill())
    await server.initialize()
    const run = async (id: number, input: string) => {
      server.send(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"run","arguments":{"code":${identity},"input":${input}}}}`)
      return (await server.response(id)).result
    }
    const listResult = await run(1, arrays)
    expect(listResult.isError).toBeUndefined()
    expect(listResult.content[0].text).toBe(arrays)
    // an MCP input is a term, and {"a": …} is none: a parse error naming the input
    const objectResult = await run(2, objects)
    expect(objectResult).toMatchObject({ isError: true, structuredContent: { kind: "TermParseError", argument: "input" } })
    // JSON text in a string is parsed, exact integers and all
    const textResult = await run(3, JSON.stringify(exactArrays))
    expect(textResult.isError).toBeUndefined()
    expect(textResult.content[0].text).toBe(exactArrays)
    server.send({ jsonrpc: "2.0", id: 4, method: "ping" })
    expect(await server.response(4)).toEqual({ jsonrpc: "2.0", id: 4, result: {} })
  })
})

describe("lambdagent eval --input", () => {
  it("applies a term to 5,000 nested arrays, exact integers included, and names a deep object as no term", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lambdagent-deep-"))
    const file = (name: string, text: string) => {
      const path = join(dir, name)
      writeFileSync(path, text)
      return path
    }
    expect(await runCli(["eval", identity, "--input", file("arrays.json", arrays)])).toMatchObject({ code: 0, stdout: `${arrays}\n` })
    expect(await runCli(["eval", identity, "--input", file("exact.json", exactArrays)])).toMatchObject({ code: 0, stdout: `${exactArrays}\n` })
    const objectRun = await runCli(["eval", identity, "--input", file("objects.json", objects), "--format", "json"])
    expect(objectRun.code).not.toBe(0)
    expect(JSON.parse(objectRun.stderr)).toMatchObject({ error: { kind: "TermParseError" } })
  })
})
