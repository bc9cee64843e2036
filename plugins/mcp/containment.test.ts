import { afterEach, describe, expect, it } from "vitest"
import { cliPath, connectHttp, RawServer, spawnHttpServer } from "./test-support.ts"

/**
 * `p = (k, (m, s))`: double `s` k times, then take its length m times. Each step is cheap to
 * write but touches a large string; with m large the call runs until the server's time budget.
 */
const scanForever = {
  lam: "p",
  body: {
    if: {
      cond: { gt: [{ fst: { var: "p" } }, 0] },
      then: {
        app: {
          func: { self: true },
          arg: {
            pair: [
              { sub: [{ fst: { var: "p" } }, 1] },
              { pair: [{ fst: { snd: { var: "p" } } }, { concat: [{ snd: { snd: { var: "p" } } }, { snd: { snd: { var: "p" } } }] }] }
            ]
          }
        }
      },
      else: {
        if: {
          cond: { eq: [{ fst: { snd: { var: "p" } } }, 0] },
          then: 0,
          else: {
            app: {
              func: { self: true },
              arg: {
                pair: [
                  0,
                  {
                    pair: [{ sub: [{ fst: { snd: { var: "p" } } }, { div: [{ length: { snd: { snd: { var: "p" } } } }, 1] }] }, { snd: { snd: { var: "p" } } }]
                  }
                ]
              }
            }
          }
        }
      }
    }
  }
}
const slowInput = { pair: [20, { pair: [1_000_000_000_000, "ab"] }] }

const servers: Array<RawServer> = []
afterEach(() => {
  for (const server of servers.splice(0)) server.kill()
})

describe("one slow call never holds the server", () => {
  it("over stdio: a ping is answered while a long run computes, and SIGTERM ends the server without waiting for it", async () => {
    const server = new RawServer([], [cliPath, "mcp", "--store", ":memory:"])
    servers.push(server)
    await server.initialize()
    server.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "evolve", arguments: { name: "scan", description: "slow", code: scanForever } }
    })
    expect((await server.response(1)).result.isError).toBeUndefined()
    server.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "scan", arguments: { input: slowInput } } })
    server.send({ jsonrpc: "2.0", id: 3, method: "ping" })
    // the ping's answer comes first: the run is still computing
    const first = await server.next()
    expect(first).toEqual({ jsonrpc: "2.0", id: 3, result: {} })
    server.child.kill("SIGTERM")
    expect(await server.exited).toBe(0)
    // the run never answered: the server stopped instead of finishing it
    expect(server.lines.map((line) => JSON.parse(line).id)).not.toContain(2)
  })

  it("over HTTP: another session is served while one session's call computes", async () => {
    const http = await spawnHttpServer([cliPath, "mcp", "--http", "0", "--store", ":memory:"])
    try {
      const slow = await connectHttp(http.url)
      const other = await connectHttp(http.url)
      await slow.client.callTool({ name: "evolve", arguments: { name: "scan", description: "slow", code: scanForever } })
      let slowDone = false
      const running = slow.client.callTool({ name: "scan", arguments: { input: slowInput } }).finally(() => (slowDone = true))
      await other.client.ping()
      const quick = await other.client.callTool({ name: "run", arguments: { code: { lam: "x", body: { add: [{ var: "x" }, 2] } }, input: 40 } })
      expect(quick.structuredContent).toMatchObject({ value: 42 })
      expect(slowDone).toBe(false)
      await other.close()
      await slow.close()
      await running.catch(() => undefined)
    } finally {
      await http.stop()
    }
  })
})
