import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { TestClock } from "effect/testing"
import { LanguageModel } from "lambdagent"
import * as Resilience from "../../src/providers/internal/resilience.ts"

const caller = (options: Resilience.ResilienceOptions = {}): Resilience.Caller => ({
  provider: "test",
  policy: Resilience.policy(options),
  secrets: ["super-secret-key-123"],
  keyEnv: "TEST_API_KEY"
})

const headers = (entries: Record<string, string>) => new Headers(entries)

class FakeApiError extends Error {
  override readonly name = "APIError"
  constructor(
    readonly status: number | undefined,
    readonly error: unknown,
    readonly headers: Headers | undefined
  ) {
    super(`${status ?? ""} failed`)
  }
}

describe("resilience policy", () => {
  it("defaults: 60 s timeout, 3 retries, 500 ms base, 30 s cap", () => {
    assert.deepStrictEqual(Resilience.policy(undefined), { timeoutMs: 60_000, maxRetries: 3, backoffBaseMs: 500, backoffMaxMs: 30_000 })
    assert.deepStrictEqual(Resilience.policy({ maxRetries: -1, timeoutMs: Number.NaN }), Resilience.defaultPolicy)
  })

  it("backoff doubles from the base and is capped; Retry-After wins but is capped too", () => {
    const p = Resilience.policy({})
    const plain = new LanguageModel.ProviderError({ provider: "t", reason: "Server", message: "x" })
    const delays = Array.from({ length: 8 }, (_, i) => Resilience.retryDelayMs(p, i, plain))
    assert.deepStrictEqual(delays, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000])
    const limited = new LanguageModel.ProviderError({ provider: "t", reason: "RateLimited", message: "x", retryAfter: 2 })
    assert.strictEqual(Resilience.retryDelayMs(p, 0, limited), 2000)
    const huge = new LanguageModel.ProviderError({ provider: "t", reason: "RateLimited", message: "x", retryAfter: 3600 })
    assert.strictEqual(Resilience.retryDelayMs(p, 0, huge), 30_000)
  })

  it("parses retry-after-ms, retry-after seconds and HTTP dates", () => {
    assert.strictEqual(Resilience.parseRetryAfter(headers({ "retry-after-ms": "250" })), 0.25)
    assert.strictEqual(Resilience.parseRetryAfter(headers({ "retry-after": "3" })), 3)
    const now = Date.parse("2026-01-01T00:00:00Z")
    assert.strictEqual(Resilience.parseRetryAfter(headers({ "retry-after": "Thu, 01 Jan 2026 00:00:05 GMT" }), now), 5)
    assert.isUndefined(Resilience.parseRetryAfter(headers({ "retry-after": "soon" })))
    assert.isUndefined(Resilience.parseRetryAfter(headers({})))
  })

  it("only RateLimited, Server and Network are retryable", () => {
    const retryable = (["Auth", "RateLimited", "Timeout", "BadResponse", "Server", "Network", "BadRequest", "Unavailable"] as const).filter((reason) =>
      Resilience.isRetryable(new LanguageModel.ProviderError({ provider: "t", reason, message: "" }))
    )
    assert.deepStrictEqual(retryable, ["RateLimited", "Server", "Network"])
  })

  it("maps HTTP statuses to reasons and keeps Retry-After", () => {
    const c = caller()
    const reason = (status: number) => Resilience.toProviderError(c, new FakeApiError(status, { error: { message: "m" } }, headers({}))).reason
    assert.strictEqual(reason(401), "Auth")
    assert.strictEqual(reason(403), "Auth")
    assert.strictEqual(reason(429), "RateLimited")
    assert.strictEqual(reason(500), "Server")
    assert.strictEqual(reason(503), "Server")
    assert.strictEqual(reason(400), "BadRequest")
    assert.strictEqual(reason(404), "BadRequest")
    const limited = Resilience.toProviderError(c, new FakeApiError(429, undefined, headers({ "retry-after": "4" })))
    assert.strictEqual(limited.retryAfter, 4)
    assert.strictEqual(limited.status, 429)
  })

  it("maps error events, parse errors, cut-off bodies and connection errors", () => {
    const c = caller()
    assert.strictEqual(Resilience.toProviderError(c, new FakeApiError(undefined, { error: { type: "overloaded_error" } }, undefined)).reason, "Server")
    assert.strictEqual(Resilience.toProviderError(c, new SyntaxError("Unexpected end of JSON input")).reason, "BadResponse")
    assert.strictEqual(Resilience.toProviderError(c, new TypeError("terminated", { cause: { code: "UND_ERR_SOCKET" } })).reason, "BadResponse")
    assert.strictEqual(Resilience.toProviderError(c, Object.assign(new Error("connect"), { code: "ECONNREFUSED" })).reason, "Network")
    class Conn extends Error {}
    class Timeout extends Conn {}
    const withClasses: Resilience.Caller = {
      ...c,
      errors: { APIError: Error, APIConnectionError: Conn, APIConnectionTimeoutError: Timeout, APIUserAbortError: class extends Error {} }
    }
    assert.strictEqual(Resilience.toProviderError(withClasses, new Timeout("t")).reason, "Timeout")
    assert.strictEqual(Resilience.toProviderError(withClasses, new Conn("c")).reason, "Network")
  })

  it("never leaks secrets: the caller's key, bearer tokens and sk- keys are redacted", () => {
    const c = caller()
    const error = Resilience.toProviderError(
      c,
      new FakeApiError(401, { error: { message: "bad key super-secret-key-123 (Bearer abcdefghijkl, sk-proj-ABCDEFGH1234)" } }, headers({}))
    )
    assert.strictEqual(error.reason, "Auth")
    assert.notInclude(error.message, "super-secret-key-123")
    assert.notInclude(error.message, "abcdefghijkl")
    assert.notInclude(error.message, "sk-proj-ABCDEFGH1234")
    assert.include(error.message, "[redacted]")
    assert.include(error.message, "check TEST_API_KEY")
    assert.notInclude(String(error.cause), "super-secret-key-123")
  })

  it.effect("retries transient failures with exponential backoff (TestClock)", () =>
    Effect.gen(function* () {
      const c = caller({ maxRetries: 3 })
      const attempts: Array<number> = []
      const attempt = Effect.suspend(() => {
        attempts.push(attempts.length)
        return attempts.length < 4 ? Effect.fail(Resilience.fail(c, "Server", "boom")) : Effect.succeed("ok")
      })
      const fiber = yield* Effect.forkChild(Resilience.resilient(c, attempt))
      yield* TestClock.adjust(0)
      assert.strictEqual(attempts.length, 1)
      yield* TestClock.adjust(500)
      assert.strictEqual(attempts.length, 2)
      yield* TestClock.adjust(999)
      assert.strictEqual(attempts.length, 2)
      yield* TestClock.adjust(1)
      assert.strictEqual(attempts.length, 3)
      yield* TestClock.adjust(2000)
      assert.strictEqual(attempts.length, 4)
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
    })
  )

  it.effect("gives up after maxRetries and does not retry Auth", () =>
    Effect.gen(function* () {
      const c = caller({ maxRetries: 2, backoffBaseMs: 1 })
      let count = 0
      const failing = Effect.suspend(() => {
        count++
        return Effect.fail(Resilience.fail(c, "Network", "down"))
      })
      const fiber = yield* Effect.forkChild(Effect.flip(Resilience.resilient(c, failing)))
      yield* TestClock.adjust(1_000)
      assert.strictEqual((yield* Fiber.join(fiber)).reason, "Network")
      assert.strictEqual(count, 3)

      let authCount = 0
      const auth = Effect.suspend(() => {
        authCount++
        return Effect.fail(Resilience.fail(c, "Auth", "no"))
      })
      assert.strictEqual((yield* Effect.flip(Resilience.resilient(c, auth))).reason, "Auth")
      assert.strictEqual(authCount, 1)
    })
  )

  it.effect("the per-attempt timeout fails with Timeout and interrupts the attempt", () =>
    Effect.gen(function* () {
      const c = caller({ timeoutMs: 1_000 })
      let interrupted = false
      const never = Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true))))
      const fiber = yield* Effect.forkChild(Effect.flip(Resilience.resilient(c, never)))
      yield* TestClock.adjust(1_000)
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error.reason, "Timeout")
      assert.isTrue(interrupted)
    })
  )

  it("lazy: loads once; a package that cannot be loaded is Unavailable", async () => {
    let loads = 0
    const ok = Resilience.lazy(caller(), "some-sdk", async () => ++loads)
    assert.strictEqual(await ok(), 1)
    assert.strictEqual(await ok(), 1)
    const missing = Resilience.lazy(caller(), "missing-sdk", () => import("lambdagent-no-such-package" as string))
    const error = await missing().then(
      () => undefined,
      (e: unknown) => e as LanguageModel.ProviderError
    )
    assert.strictEqual(error?.reason, "Unavailable")
    assert.include(error?.message, "missing-sdk")
  })

  it.live("request passes an AbortSignal that fires on interruption", () =>
    Effect.gen(function* () {
      let signal: AbortSignal | undefined
      let called!: () => void
      const requested = new Promise<void>((resolve) => (called = resolve))
      const fiber = yield* Effect.forkChild(
        Resilience.request(caller(), (s) => {
          signal = s
          called()
          return new Promise<never>(() => {})
        })
      )
      yield* Effect.promise(() => requested)
      assert.isFalse(signal!.aborted)
      yield* Fiber.interrupt(fiber)
      assert.isTrue(signal!.aborted)
    })
  )
})
