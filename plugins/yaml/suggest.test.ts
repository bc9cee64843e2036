import { describe, expect, it } from "vitest"
import { editDistance, nearest } from "./suggest.ts"

describe("editDistance", () => {
  it("counts insertions, deletions, substitutions and adjacent swaps", () => {
    expect(editDistance("systemPromt", "systemPrompt")).toBe(1)
    expect(editDistance("tpye", "type")).toBe(1)
    expect(editDistance("modle", "model")).toBe(1)
    expect(editDistance("kitten", "sitting")).toBe(3)
    expect(editDistance("", "abc")).toBe(3)
    expect(editDistance("same", "same")).toBe(0)
    expect(editDistance("ab", "ba")).toBe(1)
  })
})

describe("nearest", () => {
  const keys = ["type", "name", "systemPrompt", "model", "maxSteps", "temperature"]

  it("finds the closest key within a third of the word's length", () => {
    expect(nearest("systemPromt", keys)).toBe("systemPrompt")
    expect(nearest("temprature", keys)).toBe("temperature")
    expect(nearest("maxstep", keys)).toBe("maxSteps")
    expect(nearest("SystemPrompt", keys)).toBe("systemPrompt")
  })

  it("suggests nothing for unrelated words or exact matches", () => {
    expect(nearest("banana", keys)).toBeUndefined()
    expect(nearest("model", keys)).toBeUndefined()
    expect(nearest("x", ["y"])).toBe("y")
    expect(nearest("ab", ["xy"])).toBeUndefined()
  })
})
