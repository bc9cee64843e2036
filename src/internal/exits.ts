import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"

// Effect's own guards go through a dual-arity wrapper; these run several times per oracle answer.
const EXIT = "~effect/Exit"
const EFFECT: string = Effect.TypeId

/** Whether `u` is an `Exit` (an effect that is already complete). Same answer as `Exit.isExit`. */
export const isExit = (u: unknown): u is Exit.Exit<unknown, unknown> => typeof u === "object" && u !== null && EXIT in u

/** Whether `u` is an `Effect`. Same answer as `Effect.isEffect`. */
export const isEffect = (u: unknown): u is Effect.Effect<unknown, unknown, unknown> => typeof u === "object" && u !== null && EFFECT in u
