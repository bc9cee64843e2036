import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { describe, expect, it } from "vitest"
import { isEffect, isExit } from "../src/internal/exits.ts"

describe("the driver's effect guards", () => {
  it("answer as Effect's own guards do", () => {
    const samples: Array<unknown> = [
      Exit.succeed(1),
      Exit.fail("no"),
      Effect.succeed(1),
      Effect.fail("no"),
      Effect.sync(() => 1),
      Effect.promise(() => Promise.resolve(1)),
      Effect.gen(function* () {
        return yield* Effect.succeed(1)
      }),
      null,
      undefined,
      1,
      "text",
      { _tag: "Success", value: 1 },
      [1],
      () => 1,
      Promise.resolve(1)
    ]
    for (const u of samples) {
      expect(isExit(u)).toBe(Exit.isExit(u))
      expect(isEffect(u)).toBe(Effect.isEffect(u))
    }
    expect(samples.filter(isExit)).toHaveLength(samples.filter((u) => Exit.isExit(u)).length)
    expect(samples.filter(isExit).length).toBeGreaterThan(0)
  })
})
