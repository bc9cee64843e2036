/**
 * JSON text in and out without recursion, so that input nested any depth is read and written
 * whole instead of overflowing the JavaScript stack (V8's `JSON.stringify`, and `JSON.parse` with
 * a reviver, recurse and fail a few thousand levels down).
 *
 * - {@link parseExact} reads JSON text keeping integers beyond 2^53 exact (as `bigint`).
 * - {@link writeJson} writes any value as `JSON.stringify` does, with `bigint`s as exact integers.
 */

const WHITESPACE = /[ \t\n\r]*/y
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y

/** An array or object being read, with the key its next value goes to. */
interface Open {
  readonly container: Array<unknown> | Record<string, unknown>
  key: string | undefined
}

const describeAt = (text: string, at: number): string =>
  at >= text.length ? "Unexpected end of JSON input" : `Unexpected token ${JSON.stringify(text[at])} at position ${at}`

export const setKey = (object: Record<string, unknown>, key: string, value: unknown): void => {
  // `__proto__` is an own key in JSON, as `JSON.parse` makes it, never the object's prototype
  if (key === "__proto__") Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true })
  else object[key] = value
}

/**
 * A position in JSON text and the tokens read from there: whitespace, strings, scalars and single
 * characters. Every read that does not find JSON throws a `SyntaxError` naming the position.
 */
export class JsonCursor {
  at = 0
  constructor(readonly text: string) {}

  fail(): never {
    throw new SyntaxError(describeAt(this.text, this.at))
  }

  /** The code of the next character after whitespace (`NaN` at the end). */
  peek(): number {
    WHITESPACE.lastIndex = this.at
    WHITESPACE.test(this.text)
    this.at = WHITESPACE.lastIndex
    return this.text.charCodeAt(this.at)
  }

  /** Step over the next character after whitespace, which must be `code`. */
  expect(code: number): void {
    if (this.peek() !== code) this.fail()
    this.at++
  }

  /** Step over the next character after whitespace when it is `code`. */
  accept(code: number): boolean {
    if (this.peek() !== code) return false
    this.at++
    return true
  }

  /** A string token (the cursor at its opening quote); `JSON.parse` decodes (and checks) its escapes. */
  string(): string {
    const text = this.text
    let at = this.at
    const start = at
    let escaped = false
    for (at++; ; at++) {
      const ch = text.charCodeAt(at)
      if (ch === 0x22) break
      if (ch === 0x5c) {
        escaped = true
        at++
      } else if (!(ch >= 0x20)) {
        this.at = at
        this.fail()
      }
    }
    this.at = ++at
    const token = text.slice(start, at)
    return escaped ? (JSON.parse(token) as string) : token.slice(1, -1)
  }

  /** The key of an object member and its colon (the cursor before the key). */
  key(): string {
    if (this.peek() !== 0x22) this.fail()
    const key = this.string()
    this.expect(0x3a /* : */)
    return key
  }

  /** A string, number, `true`, `false` or `null` (the cursor at its first character). */
  scalar(): unknown {
    const c = this.text.charCodeAt(this.at)
    if (c === 0x22 /* " */) return this.string()
    if (c === 0x74) return this.literal("true", true)
    if (c === 0x66) return this.literal("false", false)
    if (c === 0x6e) return this.literal("null", null)
    NUMBER.lastIndex = this.at
    const match = NUMBER.exec(this.text)
    if (match === null) return this.fail()
    const token = match[0]
    this.at = NUMBER.lastIndex
    const n = Number(token)
    return match[1] === undefined && match[2] === undefined && !Number.isSafeInteger(n) ? BigInt(token) : n
  }

  /** Whether only whitespace is left. */
  atEnd(): boolean {
    this.peek()
    return this.at >= this.text.length
  }

  private literal(word: string, value: unknown): unknown {
    if (!this.text.startsWith(word, this.at)) this.fail()
    this.at += word.length
    return value
  }
}

/**
 * Parse JSON text as `JSON.parse` does, except that integers beyond the safe range of a number
 * are exact `bigint`s, and that nesting depth is limited only by memory. Throws a `SyntaxError`
 * naming the position of the first character that is not JSON.
 */
export const parseExact = (text: string): unknown => {
  const cursor = new JsonCursor(text)
  const stack: Array<Open> = []
  for (;;) {
    // read one value; containers are opened here and completed by the loop below
    let value: unknown
    const c = cursor.peek()
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      cursor.at++
      const isObject = c === 0x7b
      if (!cursor.accept(isObject ? 0x7d : 0x5d)) {
        stack.push({ container: isObject ? {} : [], key: isObject ? cursor.key() : undefined })
        continue
      }
      value = isObject ? {} : []
    } else value = cursor.scalar()
    // hand the value to its container; close every container the text closes
    for (;;) {
      const top = stack[stack.length - 1]
      if (top === undefined) {
        if (!cursor.atEnd()) cursor.fail()
        return value
      }
      const isArray = Array.isArray(top.container)
      if (isArray) (top.container as Array<unknown>).push(value)
      else setKey(top.container as Record<string, unknown>, top.key!, value)
      if (cursor.accept(0x2c /* , */)) {
        if (!isArray) top.key = cursor.key()
        break
      }
      cursor.expect(isArray ? 0x5d : 0x7d)
      stack.pop()
      value = top.container
    }
  }
}

/** Punctuation, and the end of an object or array, waiting on {@link writeJson}'s stack. */
class Raw {
  constructor(
    readonly text: string,
    readonly closes?: object
  ) {}
}
const COMMA = new Raw(",")

/** What `JSON.stringify` calls a value: after `toJSON` and unboxing. */
const prepare = (value: unknown, key: string): unknown => {
  if (typeof value === "object" && value !== null) {
    const toJSON = (value as { toJSON?: unknown }).toJSON
    if (typeof toJSON === "function") value = toJSON.call(value, key)
    if (value instanceof Number || value instanceof String || value instanceof Boolean || value instanceof BigInt) value = value.valueOf()
  } else if (typeof value === "bigint") {
    const toJSON = (BigInt.prototype as { toJSON?: unknown }).toJSON
    if (typeof toJSON === "function") value = toJSON.call(value, key)
  }
  return value
}

/** Whether `JSON.stringify` leaves a value out of an object (and writes `null` for it in an array). */
const isSkipped = (value: unknown): boolean => value === undefined || typeof value === "function" || typeof value === "symbol"

/**
 * Write a value as compact JSON text, as `JSON.stringify` does (`toJSON`, boxed primitives,
 * `undefined` and functions left out of objects and `null` in arrays, non-finite numbers as
 * `null`), except that `bigint`s are written as exact integers, nesting depth is limited only by
 * memory, and a value that is not JSON at all is written `null`. Throws a `TypeError` on a cycle.
 */
export const writeJson = (root: unknown): string => {
  // the engine's writer when it can (it is much faster); it throws on deep nesting and on bigints
  try {
    return JSON.stringify(root) ?? "null"
  } catch {
    return writeDeep(root)
  }
}

const writeDeep = (root: unknown): string => {
  const out: Array<string> = []
  // objects and arrays being written: a value met again inside itself is a cycle
  const open = new Set<object>()
  const stack: Array<unknown> = [prepare(root, "")]
  while (stack.length > 0) {
    const item = stack.pop()
    if (item instanceof Raw) {
      out.push(item.text)
      if (item.closes !== undefined) open.delete(item.closes)
    } else if (typeof item === "string") out.push(JSON.stringify(item))
    else if (typeof item === "number") out.push(Number.isFinite(item) ? String(item) : "null")
    else if (typeof item === "bigint") out.push(item.toString())
    else if (typeof item === "boolean") out.push(item ? "true" : "false")
    else if (item === null || isSkipped(item)) out.push("null")
    else {
      const object = item as object
      if (open.has(object)) throw new TypeError("Converting circular structure to JSON")
      open.add(object)
      if (Array.isArray(object)) {
        out.push("[")
        stack.push(new Raw("]", object))
        for (let i = object.length - 1; i >= 0; i--) {
          stack.push(prepare(object[i], String(i)))
          if (i > 0) stack.push(COMMA)
        }
      } else {
        out.push("{")
        stack.push(new Raw("}", object))
        const record = object as Record<string, unknown>
        const entries: Array<[string, unknown]> = []
        for (const key of Object.keys(record)) {
          const value = prepare(record[key], key)
          if (!isSkipped(value)) entries.push([key, value])
        }
        for (let i = entries.length - 1; i >= 0; i--) {
          stack.push(entries[i]![1])
          stack.push(new Raw(`${i > 0 ? "," : ""}${JSON.stringify(entries[i]![0])}:`))
        }
      }
    }
  }
  return out.join("")
}
