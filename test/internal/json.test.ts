import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseExact, writeJson } from "../../src/internal/json.ts"

/** `JSON.parse` keeping integers beyond 2^53 exact: what `parseExact` must agree with where both work. */
const nativeExact = (text: string): unknown =>
  JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && !Number.isSafeInteger(value) && context?.source !== undefined && /^-?\d+$/.test(context.source)
      ? BigInt(context.source)
      : value
  )

const outcome = (read: (text: string) => unknown, text: string): unknown => {
  try {
    return { value: read(text) }
  } catch (error) {
    return { error: error instanceof SyntaxError ? "SyntaxError" : String(error) }
  }
}

const json = fc.jsonValue({ maxDepth: 6 })
const nasty = fc.constantFrom('"__proto__"', "9007199254740993", "-9223372036854775809", "1e400", "-0", '"\\ud800"', '"é😀\\n"')

describe("parseExact", () => {
  it("reads every JSON text as JSON.parse does, integers beyond 2^53 exact", () => {
    fc.assert(
      fc.property(json, fc.nat(2), (value, indent) => {
        const text = JSON.stringify(value, null, indent)
        expect(parseExact(text)).toStrictEqual(nativeExact(text))
      }),
      { numRuns: 2000 }
    )
  })

  it("refuses exactly the texts JSON.parse refuses, with a SyntaxError", () => {
    const edits = fc.constantFrom("", "x", ",", "}", "]", "{", "[", '"', "\\", "\n", "\u0001", "-", "0", ":", "tru", "nul")
    fc.assert(
      fc.property(json, nasty, fc.nat(), edits, fc.nat(2), (value, extra, at, edit, drop) => {
        const text = JSON.stringify([value, null]).replace(/null\]$/, `${extra}]`)
        const i = at % (text.length + 1)
        const broken = text.slice(0, i) + edit + text.slice(i + drop)
        expect(outcome(parseExact, broken)).toStrictEqual(outcome(nativeExact, broken))
      }),
      { numRuns: 3000 }
    )
  })

  it("reads 200,000 levels of nesting, where JSON.parse with a reviver overflows the stack", () => {
    const depth = 200_000
    const text = `${"[".repeat(depth)}{"n":12345678901234567890}${"]".repeat(depth)}`
    expect(() => nativeExact(text)).toThrow(RangeError)
    let value = parseExact(text)
    for (let i = 0; i < depth; i++) value = (value as Array<unknown>)[0]
    expect(value).toStrictEqual({ n: 12345678901234567890n })
  })

  it("keeps __proto__ an own key, never the prototype", () => {
    const value = parseExact('{"__proto__":{"polluted":12345678901234567890}}') as Record<string, unknown>
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect(Object.keys(value)).toEqual(["__proto__"])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})

describe("writeJson", () => {
  it("writes what JSON.stringify writes", () => {
    fc.assert(
      fc.property(fc.anything({ maxDepth: 4, withBoxedValues: true, withNullPrototype: true, withObjectString: true }), (value) => {
        const native = JSON.stringify(value)
        expect(writeJson(value)).toBe(native ?? "null")
      }),
      { numRuns: 2000 }
    )
  })

  it("follows toJSON, leaves undefined and functions out of objects, writes bigints exactly", () => {
    const value = { a: 2n ** 64n, b: undefined, c: () => 1, d: [undefined, Symbol("s"), Number.NaN], e: new Date(0) }
    expect(writeJson(value)).toBe('{"a":18446744073709551616,"d":[null,null,null],"e":"1970-01-01T00:00:00.000Z"}')
  })

  it("writes a value met twice twice, and refuses a cycle with a TypeError", () => {
    const shared = { x: 1 }
    expect(writeJson([shared, [shared]])).toBe('[{"x":1},[{"x":1}]]')
    const cyclic: { self?: unknown } = {}
    cyclic.self = [cyclic]
    expect(() => writeJson(cyclic)).toThrow(TypeError)
  })

  it("writes 200,000 levels of nesting, where JSON.stringify overflows the stack", () => {
    let value: unknown = { n: 1n }
    for (let i = 0; i < 200_000; i++) value = i % 2 === 0 ? [value] : { a: value }
    expect(() => JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? Number(v) : v))).toThrow(RangeError)
    const text = writeJson(value)
    expect(text.length).toBe(100_000 * "[]".length + 100_000 * '{"a":}'.length + '{"n":1}'.length)
    expect(parseExact(text.replace('"n":1', '"n":12345678901234567890'))).toBeTypeOf("object")
  })
})
