/**
 * The stdio transport's write path, in process: answers keep their order and their notifications'
 * places, the answers of one turn share one write, large answers arrive whole, a client that reads
 * slowly holds back the reading of its requests (memory stays bounded), and a client that goes
 * away ends the session without an error.
 */
import { PassThrough, Writable } from "node:stream"
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js"
import { afterEach, describe, expect, it } from "vitest"
import { waitFor } from "../../test/fixtures/waitFor.ts"
import { defineTool, type ServerModule } from "./module.ts"
import { createLambdaServer, type LambdaServer } from "./server.ts"
import { type ServeHandle, serveStdio } from "./transports.ts"
import * as z from "zod"

/** The client's side of standard output: every write kept, and reading that can be held back. */
class Reader extends Writable {
  readonly writes: Array<number> = []
  private readonly received: Array<Record<string, any>> = []
  private partial = ""
  private held: Array<() => void> = []
  private waiters: Array<() => void> = []
  holding = false

  constructor(highWaterMark?: number) {
    super(highWaterMark !== undefined ? { highWaterMark } : {})
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.writes.push(chunk.length)
    const lines = (this.partial + chunk.toString("utf8")).split("\n")
    this.partial = lines.pop()!
    for (const text of lines) this.received.push(JSON.parse(text) as Record<string, any>)
    for (const wake of this.waiters.splice(0)) wake()
    if (this.holding) this.held.push(() => callback())
    else callback()
  }

  /** Resolves with the messages received, once there are `count` of them. */
  async until(count: number): Promise<Array<Record<string, any>>> {
    while (this.received.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve))
    return this.received
  }

  get heldWrites(): number {
    return this.held.length
  }

  release(): void {
    this.holding = false
    for (const done of this.held.splice(0)) done()
  }
}

const line = (message: object) => `${JSON.stringify(message)}\n`
const initialize = (id = 0) =>
  line({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "t", version: "0" } }
  }) + line({ jsonrpc: "2.0", method: "notifications/initialized" })
const callTool = (id: number, name: string, args: object, meta?: object) =>
  line({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, ...(meta !== undefined ? { _meta: meta } : {}) } })
const run = (id: number, code: unknown, input: unknown = null) => callTool(id, "run", { code, input })

const identity = { lam: "x", body: { var: "x" } }

const handles: Array<ServeHandle> = []
afterEach(async () => {
  await Promise.all(handles.splice(0).map((h) => h.close()))
})

/**
 * Serve in process; `reachedSdk` lists the ids of the requests that went through the SDK's
 * request machinery (the direct path of tools/call bypasses it).
 */
const serve = async (reader: Reader, modules: ReadonlyArray<ServerModule> = []) => {
  const stdin = new PassThrough()
  const server = await createLambdaServer({ modules, log: () => undefined })
  const reachedSdk: Array<unknown> = []
  const watched: LambdaServer = {
    ...server,
    connect: async (transport) => {
      const session = await server.connect(transport)
      const onmessage = transport.onmessage!
      transport.onmessage = (message, extra) => {
        if ("method" in message && "id" in message) reachedSdk.push(message.id)
        onmessage(message, extra)
      }
      return session
    }
  }
  const handle = await serveStdio(watched, { stdin, stdout: reader, redirectConsole: false })
  handles.push(handle)
  return { stdin, handle, reachedSdk }
}

/** Serve, and wait for the answer to `initialize`. */
const initialized = async (reader: Reader, modules: ReadonlyArray<ServerModule> = []) => {
  const served = await serve(reader, modules)
  served.stdin.write(initialize())
  await reader.until(1)
  return served
}

/** `evolve`'s arguments for a tool that doubles its input. */
const double = { name: "double", description: "Doubles a number.", code: { lam: "n", body: { mul: [{ var: "n" }, 2] } } }

/** Text of a tools/call answer's single text item. */
const textOf = (message: Record<string, any>): string => message.result.content[0].text

/** A tool that counts its calls and answers each with 10 kB of text starting with its `n`. */
const countedTool = () => {
  const counter = {
    calls: 0,
    tool: defineTool({
      name: "counted",
      description: "Counts its calls and answers with 10 kB of text.",
      input: z.object({ n: z.number() }),
      run: (args) => {
        counter.calls++
        return { content: [{ type: "text" as const, text: `${args.n} `.padEnd(10_000, "x") }] }
      }
    })
  }
  return counter
}

describe("stdio answers", () => {
  it("answer pipelined requests in order, with those of one turn in one write", async () => {
    const reader = new Reader()
    const { stdin } = await initialized(reader)
    const count = 200
    let batch = ""
    for (let id = 1; id <= count; id++) batch += id % 10 === 0 ? run(id, { lam: "x", body: { mul: [{ var: "x" }, 2] } }, id) : run(id, { add: [id, 1] })
    const writesBefore = reader.writes.length
    stdin.write(batch)
    const messages = (await reader.until(count + 1)).slice(1)
    expect(messages.map((m) => m.id)).toEqual(Array.from({ length: count }, (_, i) => i + 1))
    for (const message of messages) {
      expect(textOf(message)).toBe(String(message.id % 10 === 0 ? message.id * 2 : message.id + 1))
    }
    // 200 answers, far fewer system calls: the answers ready together went out together
    expect(reader.writes.length - writesBefore).toBeLessThan(count / 4)
  })

  it("keep notifications before the answer they belong to: list_changed before evolve's, progress before the call's", async () => {
    const steps = defineTool({
      name: "steps",
      description: "Reports three steps of progress, then answers.",
      input: z.object({}),
      run: async (_args, call) => {
        for (let step = 1; step <= 3; step++) await call.progress?.(step, `step ${step}`)
        return { content: [{ type: "text", text: "done" }] }
      }
    })
    const reader = new Reader()
    const { stdin } = await initialized(reader, [{ name: "steps", tools: () => [steps] }])
    stdin.write(
      callTool(1, "evolve", double) + callTool(2, "double", { input: 21 }) + callTool(3, "steps", {}, { progressToken: "p" }) + run(4, { add: [1, 1] })
    )
    // the lists changed and the log of the evolved tool, four answers, three progress notifications
    const messages = (await reader.until(1 + 3 + 4 + 3)).slice(1)
    const at = (predicate: (m: Record<string, any>) => boolean) => messages.findIndex(predicate)
    const answer = (id: number) => at((m) => m.id === id && m.method === undefined)
    expect([1, 2, 3, 4].map(answer)).toEqual([...[1, 2, 3, 4].map(answer)].sort((a, b) => a - b))
    expect(at((m) => m.method === "notifications/tools/list_changed")).toBeLessThan(answer(1))
    expect(textOf(messages[answer(2)]!)).toBe("42")
    const progress = messages.flatMap((m, index) => (m.method === "notifications/progress" ? [{ index, params: m.params }] : []))
    expect(progress.map((p) => p.params)).toEqual([1, 2, 3].map((step) => ({ progressToken: "p", progress: step, message: `step ${step}` })))
    expect(progress.every((p) => p.index < answer(3))).toBe(true)
  })

  it("deliver large answers whole and in order through a small output buffer", async () => {
    const reader = new Reader(1024)
    const { stdin } = await initialized(reader)
    const big = (id: number) => `${id}:`.padEnd(1_000_000, String.fromCharCode(97 + (id % 26)))
    let batch = ""
    for (let id = 1; id <= 8; id++) batch += id % 2 === 1 ? run(id, identity, big(id)) : run(id, { add: [id, 0] })
    stdin.write(batch)
    const messages = (await reader.until(9)).slice(1)
    expect(messages.map((m) => m.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    for (const message of messages) {
      expect(textOf(message)).toBe(message.id % 2 === 1 ? JSON.stringify(big(message.id)) : String(message.id))
    }
  })

  it("stop reading requests while the client does not read its answers, then answer every one in order", async () => {
    const counted = countedTool()
    const reader = new Reader()
    const { stdin } = await initialized(reader, [{ name: "counted", tools: () => [counted.tool] }])
    reader.holding = true
    const count = 5_000 // 50 MB of answers if every request were read
    // one request a write, as a client writing each request when it is ready
    for (let id = 1; id <= count; id++) stdin.write(callTool(id, "counted", { n: id }))
    // The output backs up, the server stops taking requests, and standard input stops flowing.
    await waitFor(() => reader.heldWrites > 0 && stdin.readableFlowing === false, "standard input to be paused")
    expect(counted.calls).toBeLessThan(count / 10)
    expect(stdin.readableLength).toBeGreaterThan(0)
    reader.release()
    const messages = (await reader.until(count + 1)).slice(1)
    expect(counted.calls).toBe(count)
    expect(messages.map((m) => m.id)).toEqual(Array.from({ length: count }, (_, i) => i + 1))
    expect(messages.every((m) => textOf(m).startsWith(`${m.id} `) && textOf(m).length === 10_000)).toBe(true)
  })

  it("hand every answer already computed to the output when the session closes while the client is not reading", async () => {
    const counted = countedTool()
    const reader = new Reader()
    const { stdin, handle } = await initialized(reader, [{ name: "counted", tools: () => [counted.tool] }])
    reader.holding = true
    for (let id = 1; id <= 1_000; id++) stdin.write(callTool(id, "counted", { n: id }))
    await waitFor(() => reader.heldWrites > 0 && stdin.readableFlowing === false, "standard input to be paused")
    const answered = counted.calls
    await handle.close()
    expect(reader.listenerCount("drain")).toBe(0) // the server let go of the output
    reader.release()
    const messages = (await reader.until(answered + 1)).slice(1)
    expect(messages.map((m) => m.id)).toEqual(Array.from({ length: answered }, (_, i) => i + 1))
  })

  it("end the session without an error when the client goes away (EPIPE)", async () => {
    const reader = new Reader()
    const { stdin, handle } = await initialized(reader)
    const broken = Object.assign(new Error("write EPIPE"), { code: "EPIPE" })
    reader.destroy(broken)
    stdin.write(run(1, { add: [1, 2] }) + run(2, { add: [3, 4] }))
    await handle.closed
    expect(reader.destroyed).toBe(true)
  })
})

describe("the direct path of tools/call", () => {
  const omega = { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } }
  /** `run`'s arguments for a term that never ends within its fuel. */
  const runaway = { code: { app: { func: omega, arg: omega } }, input: null, fuel: 100_000_000 }
  /** Every kind of answer the server's own tools give: values, errors, evolving, continuations, lists, help, another module's tool, an unknown tool. */
  const calls: ReadonlyArray<readonly [string, object]> = [
    ["run", { code: { add: [1, 2] }, input: null }],
    ["run", { code: { add: [1, "a"] }, input: null }],
    ["run", { code: { add: [1, 2] }, input: null, fuel: -1 }],
    ["run", {}],
    ["run", { code: "no such tool", input: 1 }],
    ["evolve", double],
    ["double", { input: 21 }],
    ["run", { code: "double", input: 4 }],
    [
      "evolve",
      {
        name: "countdown",
        description: "Counts down.",
        code: { lam: "n", body: { if: { cond: { lte: [{ var: "n" }, 0] }, then: { var: "n" }, else: { continue: { input: { sub: [{ var: "n" }, 1] } } } } } }
      }
    ],
    ["countdown", { input: 2 }],
    ["run", { code: { lam: "s", body: { str_concat: ["é", { var: "s" }] } }, input: '\u2028 "quoted"' }],
    ["list", {}],
    ["help", {}],
    ["counted", { n: 1 }],
    ["nope", {}]
  ]

  it("answers the server's own tools without the SDK, with the same bytes as the SDK's path", async () => {
    const outputs: Array<Array<Record<string, any>>> = []
    const sdkIds: Array<Array<unknown>> = []
    for (const meta of [undefined, { via: "sdk" }]) {
      const reader = new Reader()
      const { stdin, reachedSdk } = await initialized(reader, [{ name: "counted", tools: () => [countedTool().tool] }])
      let seen = (await reader.until(1)).length
      // one at a time: a call goes directly only while no request is waiting on the SDK
      for (const [index, [name, args]] of calls.entries()) {
        stdin.write(callTool(index + 1, name, args, meta))
        const received = await reader.until(seen + 1)
        while (received.at(-1)?.id !== index + 1) await reader.until(received.length + 1)
        seen = received.length
      }
      outputs.push(await reader.until(seen))
      sdkIds.push(reachedSdk)
    }
    const [direct, viaSdk] = outputs as [Array<Record<string, any>>, Array<Record<string, any>>]
    // the same bytes, but for the times tools were evolved at
    const wire = (messages: ReadonlyArray<object>) => messages.map((m) => JSON.stringify(m).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>"))
    expect(wire(direct)).toEqual(wire(viaSdk))
    // initialize, another module's tool and the unknown tool went through the SDK on the direct side
    expect(sdkIds[0]).toEqual([0, calls.findIndex(([name]) => name === "counted") + 1, calls.length])
    expect(sdkIds[1]).toEqual([0, ...calls.map((_, index) => index + 1)])
    expect(textOf(direct.find((m) => m.id === 7)!)).toBe("42")
    expect(direct.find((m) => m.id === 10)!.result.structuredContent.type).toBe("continuation")
    expect(direct.find((m) => m.id === calls.length)!.error.code).toBe(-32602)
  })

  it("keeps arrival order with requests the SDK answers: a call behind an evolve sees the new tool", async () => {
    const reader = new Reader()
    const { stdin, reachedSdk } = await initialized(reader)
    stdin.write(
      callTool(1, "evolve", double, { via: "sdk" }) +
        callTool(2, "double", { input: 21 }) +
        line({ jsonrpc: "2.0", id: 3, method: "tools/list" }) +
        callTool(4, "double", { input: 1 })
    )
    const answers = (await reader.until(2 + 4)).filter((m) => m.id !== undefined && m.method === undefined)
    expect(answers.map((m) => m.id)).toEqual([0, 1, 2, 3, 4])
    expect(textOf(answers[2]!)).toBe("42")
    expect(textOf(answers[4]!)).toBe("2")
    // the calls arrived while the SDK had requests to answer, so they went its way too
    expect(reachedSdk).toEqual([0, 1, 2, 3, 4])
  })

  it("sends nothing for a direct call cancelled while it runs, and answers the next", async () => {
    const reader = new Reader()
    const { stdin, reachedSdk } = await initialized(reader)
    stdin.write(callTool(1, "run", runaway))
    stdin.write(line({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, reason: "changed my mind" } }))
    stdin.write(run(2, { add: [1, 1] }))
    const messages = (await reader.until(2)).slice(1)
    expect(messages.map((m) => m.id)).toEqual([2])
    expect(textOf(messages[0]!)).toBe("2")
    expect(reachedSdk).toEqual([0])
  })

  it("keeps arrival order after a cancelled direct call: a run behind an evolve the SDK answers sees the new tool", async () => {
    const reader = new Reader()
    const { stdin, reachedSdk } = await initialized(reader)
    // one chunk: the cancelled call is still running when the others are read
    stdin.write(
      callTool(1, "run", runaway) +
        line({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }) +
        callTool(2, "evolve", double, { via: "sdk" }) +
        run(3, "double", 21)
    )
    const answers = (await reader.until(1 + 2 + 2)).filter((m) => m.method === undefined)
    expect(answers.map((m) => m.id)).toEqual([0, 2, 3])
    expect(textOf(answers[2]!)).toBe("42")
    expect(reachedSdk).toEqual([0, 2, 3])
  })

  it("gives up a direct call that is running when the session closes", async () => {
    const reader = new Reader()
    const { stdin, handle } = await initialized(reader)
    stdin.write(callTool(1, "run", runaway))
    await handle.close()
    await handle.closed
    expect((await reader.until(1)).map((m) => m.id)).toEqual([0])
  })
})
