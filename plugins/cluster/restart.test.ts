/**
 * PostgreSQL going away in the middle of a run and coming back: the runner reaches PostgreSQL
 * through a TCP proxy that, while "down", cuts every connection and refuses new ones. The run
 * goes on once PostgreSQL is back, and ends with its result; the call completed before the outage
 * is not made again.
 */
import { createServer, connect as connectTcp, type AddressInfo, type Socket } from "node:net"
import { Tools } from "lambdagent"
import { connect } from "lambdagent/cluster"
import { afterAll, expect, test } from "vitest"
import { dropTables, freshPrefix, testPgUrl } from "./test-support.ts"

const target = new URL(testPgUrl)
let down = false
let refused = 0
let onRefused: () => void = () => {}
const sockets = new Set<Socket>()
const proxy = createServer((client) => {
  if (down) {
    refused++
    onRefused()
    client.destroy()
    return
  }
  const upstream = connectTcp(Number(target.port || 5432), target.hostname)
  for (const [a, b] of [
    [client, upstream],
    [upstream, client]
  ] as const) {
    sockets.add(a)
    a.pipe(b)
    a.on("error", () => b.destroy())
    a.on("close", () => (sockets.delete(a), b.destroy()))
  }
})
afterAll(async () => {
  for (const s of sockets) s.destroy()
  proxy.close()
  await dropTables()
})

test("a run goes on after PostgreSQL was gone and came back", async () => {
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  const url = new URL(target)
  url.port = String((proxy.address() as AddressInfo).port)
  let counted = 0
  let reached!: () => void
  const gateReached = new Promise<void>((resolve) => (reached = resolve))
  let open!: () => void
  const gateOpen = new Promise<void>((resolve) => (open = resolve))
  const cluster = await connect({
    pg: url.toString(),
    prefix: freshPrefix(),
    tools: [
      Tools.define({ name: "count", description: "Count.", run: (s: string) => `${s}+${++counted}` }),
      Tools.define({ name: "gate", description: "Wait.", run: async (s: string) => (reached(), await gateOpen, `${s}!`) })
    ]
  })
  try {
    const { id } = await cluster.submit({ compose: [{ tool: "count" }, { tool: "gate" }, { tool: "count" }] }, "in")
    await gateReached
    // PostgreSQL goes away: every connection cut, new ones refused until a few were
    down = true
    const triedAgain = new Promise<void>((resolve) => (onRefused = () => refused >= 3 && resolve()))
    for (const s of sockets) s.destroy()
    open()
    await triedAgain
    down = false
    const ended = await cluster.result(id, { wait: true })
    expect(ended.state).toBe("done")
    expect(ended.outcome?.result).toBe("in+1!+2")
    expect(counted).toBe(2)
  } finally {
    await cluster.close()
  }
}, 120_000)
