/**
 * The built `lambdagent serve` streams a native tool call piece by piece: `tool-call` events on
 * SSE (`POST /stream`) and `{"type": "tool-call"}` messages on the WebSocket, for a ReAct agent
 * whose model (a local server speaking OpenAI's wire protocol) streams its call's arguments.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { WebSocket } from "ws"
import type { TestServer } from "../../../test/providers/servers/harness.ts"
import { startOpenAIServer, textFrames, toolCallFrames } from "../../../test/providers/servers/openai.ts"
import { type Served, startServe } from "./helpers.ts"

let model: TestServer
let served: Served
beforeAll(async () => {
  model = await startOpenAIServer()
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-serve-calls-"))
  const config = join(dir, "agent.yml")
  writeFileSync(
    config,
    `type: react
systemPrompt: Compute with calc.
model: {provider: openai, name: gpt-test, baseUrl: "${model.url}/v1"}
react: {maxSteps: 3, toolCalling: native}
mcp: {localTools: [calc, terminate]}
`
  )
  served = await startServe([config, "--port", "0", "--ws", "--tool", "calc=echo 5"], { OPENAI_API_KEY: "sk-test-serve" })
})
afterAll(async () => {
  await served.stop()
  await model.close()
})
beforeEach(() => {
  model.reset()
  // the call's arguments arrive in three pieces; then the answer
  model.enqueue(
    { kind: "sse", frames: toolCallFrames({ id: "call_calc", name: "calc", arguments: "" }, ['{"inp', 'ut":"2', '+3"}']) },
    { kind: "sse", frames: textFrames(["It is ", "5."]) }
  )
})

/** The events of an SSE body: `event:` name and parsed `data:`. */
const sseEvents = (body: string) =>
  body
    .split("\n\n")
    .filter((block) => block.startsWith("event: "))
    .map((block) => {
      const [head, data] = block.split("\n")
      return { event: head!.slice("event: ".length), data: JSON.parse(data!.slice("data: ".length)) }
    })

const expectedPieces = [
  { name: "agent.think", index: 0, callId: "call_calc", tool: "calc", arguments: "" },
  { name: "agent.think", index: 0, arguments: '{"inp' },
  { name: "agent.think", index: 0, arguments: 'ut":"2' },
  { name: "agent.think", index: 0, arguments: '+3"}' }
]

describe("lambdagent serve streams native tool calls", () => {
  it("as tool-call events over SSE, before the call's trace event and the result", async () => {
    const response = await fetch(`${served.url}/stream`, { method: "POST", body: JSON.stringify({ input: "2+3?" }) })
    expect(response.status).toBe(200)
    const events = sseEvents(await response.text())
    const pieces = events.filter((e) => e.event === "tool-call").map((e) => e.data)
    expect(pieces).toEqual(expectedPieces)
    const order = events.map((e) => (e.event === "trace" ? `trace:${e.data.kind}` : e.event))
    expect(order.indexOf("tool-call")).toBeLessThan(order.indexOf("trace:tool"))
    expect(events.at(-1)).toMatchObject({ event: "result", data: { result: "It is 5." } })
    expect(events.filter((e) => e.event === "token").map((e) => e.data.text)).toEqual(["It is ", "5."])
  })

  it("as tool-call messages over the WebSocket, with the run's id", async () => {
    const ws = new WebSocket(`${served.url.replace(/^http/, "ws")}/ws`)
    const messages: Array<Record<string, unknown>> = []
    const finished = new Promise<void>((resolve, reject) => {
      ws.on("message", (data) => {
        const message = JSON.parse(String(data)) as Record<string, unknown>
        messages.push(message)
        if (message.type === "result" || message.type === "error") resolve()
      })
      ws.on("error", reject)
    })
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve())
      ws.once("error", reject)
    })
    ws.send(JSON.stringify({ input: "2+3?", id: "r1" }))
    await finished
    ws.close()
    expect(messages.filter((m) => m.type === "tool-call")).toEqual(expectedPieces.map((p) => ({ type: "tool-call", id: "r1", ...p })))
    expect(messages.at(-1)).toMatchObject({ type: "result", id: "r1", result: "It is 5." })
  })
})
