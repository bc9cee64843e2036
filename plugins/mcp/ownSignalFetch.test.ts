import { getEventListeners, once } from "node:events"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fetchWithOwnSignal } from "./ownSignalFetch.ts"

describe("fetchWithOwnSignal", () => {
  let server: Server
  let url: string
  // requests to /hang are answered only when the test says so
  const hanging: Array<() => void> = []

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === "/empty") {
        response.writeHead(204).end()
      } else if (request.url === "/hang") {
        response.writeHead(200, { "content-type": "text/plain" })
        response.write("started")
        hanging.push(() => response.end())
      } else {
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ path: request.url }))
      }
    })
    server.listen(0, "127.0.0.1")
    await once(server, "listening")
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    for (const end of hanging) end()
    server.closeAllConnections()
    server.close()
  })

  it("leaves no listener on the caller's signal once each response has been read", async () => {
    const shared = new AbortController()
    for (let i = 0; i < 50; i++) {
      const response = await fetchWithOwnSignal(`${url}/n${i}`, { signal: shared.signal })
      expect(await response.json()).toEqual({ path: `/n${i}` })
      const empty = await fetchWithOwnSignal(`${url}/empty`, { signal: shared.signal })
      expect(empty.status).toBe(204)
    }
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0)
  })

  it("lets go of the caller's signal when a body is cancelled unread", async () => {
    const shared = new AbortController()
    const response = await fetchWithOwnSignal(`${url}/n`, { signal: shared.signal })
    await response.body?.cancel()
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0)
  })

  it("aborts a request in flight when the caller's signal aborts", async () => {
    const shared = new AbortController()
    const response = await fetchWithOwnSignal(`${url}/hang`, { signal: shared.signal })
    const reading = response.text()
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(1)
    shared.abort(new Error("closed by the client"))
    await expect(reading).rejects.toThrow()
  })

  it("refuses at once with an already aborted signal", async () => {
    const shared = new AbortController()
    shared.abort(new Error("gone"))
    await expect(fetchWithOwnSignal(`${url}/n`, { signal: shared.signal })).rejects.toThrow()
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0)
  })
})
