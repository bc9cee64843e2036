/** Which `tools/call` requests the stdio transport may answer without the SDK's request machinery. */
import { describe, expect, it } from "vitest"
import { plainToolCall } from "./directCall.ts"

const request = (params: unknown, extra: object = {}) => ({ jsonrpc: "2.0", id: 7, method: "tools/call", params, ...extra })

describe("plainToolCall", () => {
  it("reads the id, name and arguments of a plain call", () => {
    expect(plainToolCall(request({ name: "run", arguments: { code: 1 } }))).toEqual({ id: 7, name: "run", args: { code: 1 } })
    expect(plainToolCall({ ...request({ name: "list" }), id: "a" })).toEqual({ id: "a", name: "list", args: {} })
    expect(plainToolCall(request({ name: "list", _meta: {} }))).toEqual({ id: 7, name: "list", args: {} })
  })

  it("leaves to the SDK whatever asks for more than a result or that its schemas would judge", () => {
    const refused: ReadonlyArray<unknown> = [
      null,
      [request({ name: "run" })],
      request({ name: "run" }, { jsonrpc: "1.0" }),
      request({ name: "run" }, { id: 1.5 }),
      request({ name: "run" }, { id: null }),
      request({ name: "run" }, { method: "tools/list" }),
      request({ name: "run" }, { extra: true }),
      request({ name: 5 }),
      request(undefined),
      request([]),
      request({ name: "run", arguments: [1] }),
      request({ name: "run", arguments: null }),
      request({ name: "run", _meta: { progressToken: "p" } }),
      request({ name: "run", _meta: { "io.modelcontextprotocol/related-task": { taskId: "t" } } }),
      request({ name: "run", _meta: 3 }),
      request({ name: "run", task: { ttl: 1000 } }),
      JSON.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run"},"__proto__":{"x":1}}'),
      JSON.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run","__proto__":{"x":1}}}')
    ]
    for (const json of refused) expect(plainToolCall(json), JSON.stringify(json)).toBeUndefined()
  })
})
