import type { IncomingMessage } from "node:http"
import { Errors, LanguageModel, MemoryStore } from "lambdagent"
import { describe, expect, it } from "vitest"
import { parseJson, toJsonText } from "./internal/json.ts"
import { bearerCheck, wantsEventStream } from "./internal/request.ts"
import { RunTracker } from "./internal/runs.ts"
import { sseFrame } from "./internal/sse.ts"
import { failureOf, HttpFailure, parseRunRequest, RunAborted } from "./protocol.ts"

const statusOf = (f: () => unknown): number => {
  try {
    f()
  } catch (e) {
    if (e instanceof HttpFailure) return e.status
    throw e
  }
  return 0
}

describe("run requests", () => {
  it("accepts the documented fields and keeps big integers exact", () => {
    expect(parseRunRequest(parseJson('{"input": 12345678901234567890, "session": "a", "trace": "beta"}'))).toEqual({
      input: 12345678901234567890n,
      session: "a",
      trace: "beta"
    })
    expect(parseRunRequest({ input: null })).toEqual({ input: null })
    expect(parseRunRequest({ input: 1, id: "r1" }, { allowId: true })).toEqual({ input: 1, id: "r1" })
  })

  it("refuses ids outside WebSocket messages, control characters and long sessions", () => {
    expect(statusOf(() => parseRunRequest({ input: 1, id: "r1" }))).toBe(400)
    expect(statusOf(() => parseRunRequest({ input: 1, session: "a\nb" }))).toBe(400)
    expect(statusOf(() => parseRunRequest({ input: 1, session: "s".repeat(257) }))).toBe(400)
    expect(statusOf(() => parseRunRequest({ input: 1, id: { x: 1 } }, { allowId: true }))).toBe(400)
    expect(statusOf(() => parseJson("   "))).toBe(400)
  })
})

describe("failures", () => {
  it("maps every kind of error to a status and a stable kind", () => {
    const cases: Array<[unknown, number, string]> = [
      [new Errors.EvalError({ kind: "OracleError", message: "unknown tool", steps: 1 }), 422, "OracleError"],
      [new Errors.BudgetExceeded({ budget: "time", limit: 10, steps: 4, message: "time budget of 10 ms exhausted" }), 422, "BudgetExceeded"],
      [new Errors.TermParseError({ message: "bad", path: ["var"], expected: "a string" }), 422, "TermParseError"],
      [new LanguageModel.ProviderError({ provider: "openai", reason: "RateLimited", message: "slow down" }), 502, "ProviderError"],
      [new MemoryStore.MemoryError({ store: "redis", operation: "put", message: "connection refused" }), 502, "MemoryError"],
      [new RunAborted({ reason: "Timeout", message: "too slow" }), 504, "Timeout"],
      [new RunAborted({ reason: "ShuttingDown", message: "bye" }), 503, "ShuttingDown"],
      [new RunAborted({ reason: "Cancelled", message: "by the client" }), 499, "Cancelled"],
      [new TypeError("undefined is not a function"), 500, "Internal"],
      ["a string thrown", 500, "Internal"]
    ]
    for (const [error, status, kind] of cases) {
      const failure = failureOf(error)
      expect([failure.status, failure.kind]).toEqual([status, kind])
    }
    expect(failureOf(new LanguageModel.ProviderError({ provider: "openai", reason: "RateLimited", message: "slow down" })).body()).toEqual({
      error: { kind: "ProviderError", message: "slow down", reason: "RateLimited" }
    })
    expect(failureOf(new Errors.BudgetExceeded({ budget: "time", limit: 10, steps: 4, message: "m" })).body().error.budget).toBe("time")
    expect(failureOf(new TypeError("private detail")).message).toBe("internal server error")
  })
})

describe("encoding", () => {
  it("writes bigints as exact integers", () => {
    expect(toJsonText({ n: 2n ** 64n, m: [1n] })).toBe('{"n":18446744073709551616,"m":[1]}')
    expect(toJsonText(undefined)).toBe("null")
  })

  it("splits multi-line SSE data into data lines", () => {
    expect(sseFrame("token", "a\nb")).toBe("event: token\ndata: a\ndata: b\n\n")
  })
})

describe("request helpers", () => {
  it("checks bearer tokens", () => {
    const check = bearerCheck("abc")
    expect(() => check("Bearer abc")).not.toThrow()
    expect(() => check("bearer   abc ")).not.toThrow()
    for (const header of [undefined, "", "Bearer", "Bearer ab", "Bearer abcd", "Bearer abc def", "Token abc"]) {
      expect(statusOf(() => check(header))).toBe(401)
    }
  })

  it("refuses to build a bearer check without a token (an unset variable), with a clear message", () => {
    expect(() => bearerCheck(process.env["LAMBDAGENT_TEST_UNSET_TOKEN"]!)).toThrow(
      new TypeError("bearerCheck needs a non-empty token, got undefined: is the variable that should hold it set?")
    )
    expect(() => bearerCheck("")).toThrow("bearerCheck needs a non-empty token, got an empty string")
  })

  it("recognises requests for an event stream", () => {
    const req = (accept?: string) => ({ headers: accept === undefined ? {} : { accept } }) as IncomingMessage
    expect(wantsEventStream(req("text/event-stream"))).toBe(true)
    expect(wantsEventStream(req("application/json, Text/Event-Stream;q=0.9"))).toBe(true)
    expect(wantsEventStream(req("application/json"))).toBe(false)
    expect(wantsEventStream(req())).toBe(false)
  })
})

describe("RunTracker", () => {
  it("limits concurrency, refuses runs when closing, and tells when idle", async () => {
    const runs = new RunTracker({ timeoutMs: 0, maxConcurrent: 2 })
    const a = runs.acquire()
    const b = runs.acquire()
    expect(statusOf(() => runs.acquire())).toBe(503)
    let idle = false
    const waiting = runs.idle().then(() => (idle = true))
    a.end()
    a.end() // twice is harmless
    expect(runs.size).toBe(1)
    runs.refuseNew()
    expect(statusOf(() => runs.acquire())).toBe(503)
    runs.abortAll(new RunAborted({ reason: "ShuttingDown", message: "bye" }))
    expect(b.signal.reason).toBeInstanceOf(RunAborted)
    expect(idle).toBe(false)
    b.end()
    await waiting
    expect(idle).toBe(true)
  })

  it("aborts a run when its time is up", async () => {
    const runs = new RunTracker({ timeoutMs: 20 })
    const slot = runs.acquire()
    await new Promise((resolve) => slot.signal.addEventListener("abort", resolve, { once: true }))
    expect((slot.signal.reason as RunAborted).reason).toBe("Timeout")
    slot.end()
  })
})
