import { Term } from "lambdagent"
import { describe, expect, it } from "vitest"
import { serveCommand, type ServeCommandOptions } from "./command.ts"
import { waitFor } from "../../test/fixtures/waitFor.ts"
import { hangMs, waitForEvent, waitTool } from "./test/helpers.ts"

const echoAgent = Term.llm({ system: "Repeat the input.", conversation: false })

/** Start the command, collecting its output, and wait for its URL. */
const launch = async (options: Partial<ServeCommandOptions> & Pick<ServeCommandOptions, "agent">) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const done = serveCommand({ port: 0, out: (l) => out.push(l), err: (l) => err.push(l), onError: () => {}, ...options })
  let failed: unknown
  done.catch((e: unknown) => (failed = e))
  await waitFor(() => failed !== undefined || out.some((l) => l.includes("listening on")), "the server listening (or failing)")
  if (failed !== undefined) throw failed
  const url = /listening on (\S+)/.exec(out.find((l) => l.includes("listening on"))!)![1]!
  return { out, err, done, url }
}

const run = (url: string, input: string) => fetch(`${url}/run`, { method: "POST", body: JSON.stringify({ input }), signal: AbortSignal.timeout(hangMs) })

describe("serveCommand", () => {
  it("serves, logs requests, and on SIGTERM lets the run in flight finish", async () => {
    const before = process.listenerCount("SIGTERM")
    // every run blocks in its tool until released
    const wait = waitTool()
    const { out, done, url } = await launch({
      agent: Term.tool("wait"),
      name: "echoer",
      runtimeOptions: { tools: [wait.tool] }
    })
    expect(out[0]).toMatch(/^lambdagent serve: "echoer" listening on http:\/\/127\.0\.0\.1:\d+$/)
    expect(process.listenerCount("SIGTERM")).toBe(before + 1)
    const warmUp = run(url, "warm up")
    await wait.started
    wait.release()
    expect((await warmUp).status).toBe(200)
    await waitFor(() => out.some((l) => /^POST \/run 200 \d+ ms$/.test(l)), "the request logged")

    wait.reset()
    const inFlight = run(url, "finish me")
    await wait.started
    process.emit("SIGTERM")
    wait.release()
    const res = await inFlight
    expect(res.status).toBe(200)
    expect(((await res.json()) as { result: string }).result).toBe("released finish me")
    await waitForEvent(done, "command stopped")
    expect(out).toContain("lambdagent serve: SIGTERM; shutting down, letting 1 run finish (up to 10000 ms)")
    expect(out.at(-1)).toBe("lambdagent serve: stopped")
    expect(process.listenerCount("SIGTERM")).toBe(before)
    await expect(fetch(`${url}/health`)).rejects.toThrow()
  })

  it("cancels the runs in flight on a second signal", async () => {
    const wait = waitTool()
    const { out, done, url } = await launch({ agent: Term.tool("wait"), runtimeOptions: { tools: [wait.tool] }, accessLog: false })
    const inFlight = run(url, "x")
    await waitForEvent(wait.started, "run started")
    process.emit("SIGINT")
    process.emit("SIGINT")
    const res = await inFlight
    expect(res.status).toBe(503)
    expect(((await res.json()) as { error: { kind: string } }).error.kind).toBe("ShuttingDown")
    await waitForEvent(done, "command stopped")
    expect(wait.state.cancellations).toBe(1)
    expect(out).toContain("lambdagent serve: SIGINT again; cancelling the runs in flight")
    expect(out.some((l) => l.startsWith("POST "))).toBe(false)
  })

  it("stops on its abort signal and warns when exposed without a token", async () => {
    const controller = new AbortController()
    const { err, done } = await launch({ agent: echoAgent, host: "0.0.0.0", handleSignals: false, signal: controller.signal })
    expect(err.some((l) => l.includes("without a token"))).toBe(true)
    controller.abort()
    await waitForEvent(done, "command stopped")
  })

  it("rejects when it cannot listen", async () => {
    const controller = new AbortController()
    const first = await launch({ agent: echoAgent, handleSignals: false, signal: controller.signal })
    const port = Number(new URL(first.url).port)
    await expect(serveCommand({ agent: echoAgent, port, out: () => {}, handleSignals: false })).rejects.toThrow(/already in use/)
    controller.abort()
    await waitForEvent(first.done, "command stopped")
  })
})
