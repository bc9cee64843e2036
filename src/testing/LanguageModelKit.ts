/**
 * A conformance kit for `LanguageModel` implementations: one call registers vitest suites that check
 * the behaviour every provider must share.
 *
 * - `chat` answers with text (and, when asked, the expected text);
 * - `stream` ends with exactly one `Finish` chunk, and its text deltas concatenate to the `chat`
 *   text for the same deterministic request;
 * - usage, when reported, is made of non-negative integers;
 * - interrupting a call stops it promptly;
 * - failures are `ProviderError`s with a known `reason`.
 *
 * Import it from `lambdagent/testing`; `vitest` is a peer dependency of this entry.
 *
 * @since 0.1.0
 * @module
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import type { LanguageModel } from "lambdagent"

type ChatChunk = LanguageModel.ChatChunk
type ChatRequest = LanguageModel.ChatRequest
type LanguageModelShape = LanguageModel.LanguageModelShape
type ProviderErrorReason = LanguageModel.ProviderErrorReason
type Usage = LanguageModel.Usage

/**
 * Options of {@link languageModelConformance}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LanguageModelConformanceOptions } from "lambdagent/testing"
 * const o: LanguageModelConformanceOptions = {
 *   request: { messages: [{ role: "user", content: "Say hi" }], temperature: 0 },
 *   expectedText: "hi"
 * }
 * ```
 */
export interface LanguageModelConformanceOptions {
  /** A request the model answers deterministically; default one user message, temperature 0. */
  readonly request?: ChatRequest
  /** When set, `chat` must answer exactly this text. */
  readonly expectedText?: string
  /**
   * A request the model is slow to answer (a server that stalls, a script with latency), used to
   * check interruption. Absent: the interruption test is skipped.
   */
  readonly slowRequest?: ChatRequest
  /** Milliseconds to wait before interrupting the slow call; default 50. */
  readonly interruptAfterMs?: number
  /** Called after the interruption, to check that the work really stopped (the server saw the socket close, …). */
  readonly afterInterrupt?: () => void | Promise<void>
  /**
   * A model (and request) that must fail, used to check failures are `ProviderError`s, optionally
   * with a given reason. Absent: the failure test is skipped.
   */
  readonly failing?: {
    /** A fresh model that fails, for each check. */
    readonly make: () => LanguageModelShape | Promise<LanguageModelShape>
    /** The request it fails on; default the suite's request. */
    readonly request?: ChatRequest
    /** The reason its `ProviderError` must have; any reason when absent. */
    readonly reason?: ProviderErrorReason
  }
  /** Per-test timeout in milliseconds; default 10 000. */
  readonly timeoutMs?: number
}

const reasons: ReadonlyArray<ProviderErrorReason> = ["Auth", "RateLimited", "Timeout", "BadResponse", "Server", "Network", "BadRequest", "Unavailable"]

const defaultRequest: ChatRequest = {
  messages: [{ role: "user", content: "Reply with the word pong." }],
  temperature: 0
}

const expectUsage = (usage: Usage | undefined): void => {
  if (usage === undefined) return
  for (const n of [usage.inputTokens, usage.outputTokens]) {
    expect(Number.isInteger(n), `usage counts are integers, got ${n}`).toBe(true)
    expect(n).toBeGreaterThanOrEqual(0)
  }
}

const expectProviderError = (error: unknown, reason: ProviderErrorReason | undefined): void => {
  expect(typeof error === "object" && error !== null, "the failure is an object").toBe(true)
  const e = error as { readonly _tag?: unknown; readonly reason?: unknown; readonly provider?: unknown; readonly message?: unknown }
  expect(e._tag).toBe("ProviderError")
  expect(reasons).toContain(e.reason)
  expect(typeof e.provider).toBe("string")
  expect(typeof e.message).toBe("string")
  if (reason !== undefined) expect(e.reason).toBe(reason)
}

const failureOf = <A, E>(exit: Exit.Exit<A, E>): unknown => {
  expect(Exit.isFailure(exit), "the call fails").toBe(true)
  if (!Exit.isFailure(exit)) return undefined
  const error = Cause.findErrorOption(exit.cause)
  expect(error._tag, `the call fails with an error, not a defect: ${Cause.pretty(exit.cause)}`).toBe("Some")
  return error._tag === "Some" ? error.value : undefined
}

/**
 * Register the conformance suite for one implementation. `make` is called once per check, so a
 * stateful model (a script, a session) starts fresh each time.
 *
 * @since 0.1.0
 * @category testing
 * @example
 * ```ts
 * import { Scripted } from "lambdagent"
 * import { languageModelConformance } from "lambdagent/testing"
 * languageModelConformance("scripted echo", () => Scripted.echo(), {
 *   expectedText: "Reply with the word pong.",
 *   slowRequest: { messages: [{ role: "user", content: "slow" }] }
 * })
 * ```
 */
export const languageModelConformance = (
  name: string,
  make: () => LanguageModelShape | Promise<LanguageModelShape>,
  options: LanguageModelConformanceOptions = {}
): void => {
  const request = options.request ?? defaultRequest
  const timeout = options.timeoutMs ?? 10_000

  describe(`LanguageModel conformance: ${name}`, () => {
    it(
      "has a name",
      async () => {
        const model = await make()
        expect(typeof model.name).toBe("string")
        expect(model.name.length).toBeGreaterThan(0)
      },
      timeout
    )

    it(
      "chat answers with text",
      async () => {
        const model = await make()
        const response = await Effect.runPromise(model.chat(request))
        expect(typeof response.text).toBe("string")
        if (options.expectedText !== undefined) expect(response.text).toBe(options.expectedText)
        expectUsage(response.usage)
        for (const call of response.toolCalls ?? []) {
          expect(typeof call.id).toBe("string")
          expect(typeof call.name).toBe("string")
          expect(typeof call.arguments).toBe("string")
        }
      },
      timeout
    )

    it(
      "stream ends with one Finish chunk and its text equals the chat text",
      async () => {
        const chatText = (await Effect.runPromise((await make()).chat(request))).text
        const chunks: Array<ChatChunk> = await Effect.runPromise(Stream.runCollect((await make()).stream(request)))
        expect(chunks.length).toBeGreaterThan(0)
        const finishes = chunks.filter((c) => c._tag === "Finish")
        expect(finishes.length).toBe(1)
        expect(chunks[chunks.length - 1]!._tag).toBe("Finish")
        const streamed = chunks.map((c) => (c._tag === "TextDelta" ? c.text : "")).join("")
        expect(streamed).toBe(chatText)
        const finish = finishes[0]!
        if (finish._tag === "Finish") expectUsage(finish.usage)
      },
      timeout
    )

    it.skipIf(options.slowRequest === undefined)(
      "interrupting a call stops it",
      async () => {
        const model = await make()
        const slow = options.slowRequest!
        const wait = options.interruptAfterMs ?? 50
        for (const call of [model.chat(slow), Stream.runCollect(model.stream(slow))] as const) {
          const started = Date.now()
          const exit = await Effect.runPromise(
            Effect.gen(function* () {
              const fiber = yield* Effect.forkChild(call as Effect.Effect<unknown, unknown>)
              yield* Effect.sleep(wait)
              yield* Fiber.interrupt(fiber)
              return yield* Fiber.await(fiber)
            })
          )
          expect(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause), "the call ends interrupted").toBe(true)
          expect(Date.now() - started).toBeLessThan(wait + 2_000)
          if (options.afterInterrupt !== undefined) await options.afterInterrupt()
        }
      },
      timeout
    )

    it.skipIf(options.failing === undefined)(
      "failures are ProviderErrors",
      async () => {
        const failing = options.failing!
        const failingRequest = failing.request ?? request
        const chatExit = await Effect.runPromiseExit((await failing.make()).chat(failingRequest))
        expectProviderError(failureOf(chatExit), failing.reason)
        const streamExit = await Effect.runPromiseExit(Stream.runCollect((await failing.make()).stream(failingRequest)))
        expectProviderError(failureOf(streamExit), failing.reason)
      },
      timeout
    )
  })
}
