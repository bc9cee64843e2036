import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import type { ChatChunk, ProviderError } from "../../src/LanguageModel.ts"

/** Resilience settings that keep tests in milliseconds. */
export const fast = { timeoutMs: 2_000, maxRetries: 3, backoffBaseMs: 1, backoffMaxMs: 20 } as const

export const run = <A>(effect: Effect.Effect<A, ProviderError>): Promise<A> => Effect.runPromise(effect)

export const collect = (stream: Stream.Stream<ChatChunk, ProviderError>): Promise<Array<ChatChunk>> => Effect.runPromise(Stream.runCollect(stream))

/** The ProviderError an effect fails with; throws if it succeeds or dies. */
export const failure = async (effect: Effect.Effect<unknown, ProviderError>): Promise<ProviderError> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
  const error = Cause.findErrorOption(exit.cause)
  if (error._tag === "None") throw new Error(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return error.value
}

/** The chunks emitted before a stream failed, and its ProviderError. */
export const streamFailure = async (
  stream: Stream.Stream<ChatChunk, ProviderError>
): Promise<{ readonly chunks: Array<ChatChunk>; readonly error: ProviderError }> => {
  const chunks: Array<ChatChunk> = []
  const error = await failure(Stream.runForEach(stream, (chunk) => Effect.sync(() => void chunks.push(chunk))))
  return { chunks, error }
}

export const textOf = (chunks: ReadonlyArray<ChatChunk>): string => chunks.map((c) => (c._tag === "TextDelta" ? c.text : "")).join("")

/** Run `effect` in the background, wait for `started`, interrupt it; resolves with how it ended. */
export const interruptWhen = async (effect: Effect.Effect<unknown, unknown>, started: () => Promise<void>): Promise<Exit.Exit<unknown, unknown>> => {
  const fiber = Effect.runFork(effect)
  await started()
  await Effect.runPromise(Fiber.interrupt(fiber))
  return Effect.runPromise(Fiber.await(fiber))
}

export const isInterrupted = (exit: Exit.Exit<unknown, unknown>): boolean => Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * `effect` on the live clock, recording the delay (ms) of every sleep it starts: a test checks the
 * backoff a provider chose, not how long the run took.
 */
export const recordingSleeps = <A, E>(effect: Effect.Effect<A, E>): { readonly effect: Effect.Effect<A, E>; readonly sleeps: Array<number> } => {
  const sleeps: Array<number> = []
  const recorded = Effect.clockWith((live) =>
    Effect.provideService(effect, Clock.Clock, {
      currentTimeMillisUnsafe: () => live.currentTimeMillisUnsafe(),
      currentTimeMillis: live.currentTimeMillis,
      currentTimeNanosUnsafe: () => live.currentTimeNanosUnsafe(),
      currentTimeNanos: live.currentTimeNanos,
      monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: live.monotonicTimeNanos,
      sleep: (duration) => Effect.suspend(() => (sleeps.push(Duration.toMillis(duration)), live.sleep(duration)))
    })
  )
  return { effect: recorded, sleeps }
}
