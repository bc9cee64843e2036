/**
 * The pure operators of the machine. Operations whose cost grows with their operands (string
 * scans, list copies, deep equality) report the work they do to a {@link Meter}, so the time
 * budget is checked as often as the work requires, and every value they build is checked against
 * the memory budget.
 */
import type { EvalErrorKind } from "../Errors.ts"
import { toValue } from "../Oracle.ts"
import * as Value from "../Value.ts"
import { BinOp, UnOp } from "./code.ts"
import * as Int from "./int.ts"
import * as Numbers from "./numbers.ts"

/** A runtime fault inside the machine; becomes an `EvalError` with the failing node's path. */
export class Fault {
  constructor(
    readonly kind: EvalErrorKind,
    readonly message: string
  ) {}
}

/** Where operations report the work they do and the sizes of the values they build. */
export interface Meter {
  /** `units` of work beyond one step (about one unit per 16 characters or 2 list cells touched). */
  touch(units: number): void
  /** A value of about `bytes` bytes was built. */
  built(bytes: number): void
}

/** Bytes a string of `length` UTF-16 code units takes. */
export const stringBytes = (length: number): number => 16 + 2 * length
/** Bytes of a list of `length` cells (the elements are counted where they were built). */
export const listBytes = (length: number): number => 24 * length

export const typeError = (message: string): Fault => new Fault("TypeError", message)

export const isTrue = (v: Value.Value, what: string): boolean => {
  if (v === true) return true
  if (v === false) return false
  throw typeError(`${what} must be a boolean, got ${Value.typeName(v)}`)
}

const int = (v: Value.Value, op: string): Int.Int => {
  if (typeof v === "number" || typeof v === "bigint") return v
  throw typeError(`${op} expects integers, got ${Value.typeName(v)}`)
}

const SURROGATE = /[\uD800-\uDFFF]/
const SURROGATE_PAIRS = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g

/** Length in code points: UTF-16 length minus one per surrogate pair (natively scanned). */
const codePointLength = (s: string): number => {
  if (!SURROGATE.test(s)) return s.length
  let pairs = 0
  SURROGATE_PAIRS.lastIndex = 0
  while (SURROGATE_PAIRS.exec(s) !== null) pairs++
  return s.length - pairs
}

/** Work units for scanning `n` characters. */
const scan = (m: Meter, n: number) => {
  if (n > 64) m.touch(n >> 4)
}

const compare = (op: BinOp, a: Value.Value, b: Value.Value, m: Meter): boolean => {
  const bothInts = (typeof a === "number" || typeof a === "bigint") && (typeof b === "number" || typeof b === "bigint")
  if (!bothInts) {
    if (!(typeof a === "string" && typeof b === "string")) {
      throw typeError(`comparison expects two integers or two strings, got ${Value.typeName(a)} and ${Value.typeName(b)}`)
    }
    scan(m, Math.min(a.length, b.length))
  }
  const x = a as number | string
  const y = b as number | string
  switch (op) {
    case BinOp.Lt:
      return x < y
    case BinOp.Gt:
      return x > y
    case BinOp.Lte:
      return x <= y
    default:
      return x >= y
  }
}

/** Work units for reading a number out of `v` when it is text. */
const scanText = (m: Meter, v: Value.Value) => {
  if (typeof v === "string") scan(m, v.length)
}

/** Deep equality, charged by the size of what it compares. */
const equal = (a: Value.Value, b: Value.Value, m: Meter): boolean => {
  if (a === b) return true
  if (typeof a === "string" && typeof b === "string") {
    if (a.length === b.length) scan(m, a.length)
    return false
  }
  if (typeof a !== "object" || typeof b !== "object") return false
  if (a instanceof Value.List && b instanceof Value.List) m.touch(a.length >> 1)
  return Value.equals(a, b)
}

export const binary = (op: BinOp, a: Value.Value, b: Value.Value, m: Meter): Value.Value => {
  switch (op) {
    case BinOp.Add:
      return typeof a === "number" && typeof b === "number" && Math.abs(a + b) <= 9007199254740991 ? a + b : Int.add(int(a, "add"), int(b, "add"))
    case BinOp.Sub:
      return typeof a === "number" && typeof b === "number" && Math.abs(a - b) <= 9007199254740991 ? a - b : Int.sub(int(a, "sub"), int(b, "sub"))
    case BinOp.Mul:
      return Int.mul(int(a, "mul"), int(b, "mul"))
    case BinOp.Div: {
      const x = int(a, "div")
      const y = int(b, "div")
      if (Int.isZero(y)) throw new Fault("DivisionByZero", "division by zero")
      return Int.div(x, y)
    }
    case BinOp.Mod: {
      const x = int(a, "mod")
      const y = int(b, "mod")
      if (Int.isZero(y)) throw new Fault("DivisionByZero", "modulo by zero")
      return Int.mod(x, y)
    }
    case BinOp.Eq:
      return equal(a, b, m)
    case BinOp.Concat:
      if (typeof a === "string" && typeof b === "string") {
        m.built(stringBytes(a.length + b.length))
        return a + b
      }
      if (a instanceof Value.List && b instanceof Value.List) {
        const length = a.length + b.length
        m.built(listBytes(length))
        m.touch(a.length >> 1)
        if (b.length === 0) return a
        let out = b
        const items = Value.toArray(a)
        for (let i = items.length - 1; i >= 0; i--) out = new Value.List(items[i]!, out, out.length + 1)
        return out
      }
      throw typeError(`concat expects two strings or two lists, got ${Value.typeName(a)} and ${Value.typeName(b)}`)
    case BinOp.Contains:
      if (typeof a === "string" && typeof b === "string") {
        scan(m, a.length)
        return a.includes(b)
      }
      if (a instanceof Value.List) {
        m.touch(a.length >> 1)
        for (let l = a; l.length > 0; l = l.tail) if (l.head === b || Value.equals(l.head, b)) return true
        return false
      }
      throw typeError(`contains expects a string and a string, or a list and a value, got ${Value.typeName(a)} and ${Value.typeName(b)}`)
    case BinOp.StartsWith:
    case BinOp.EndsWith:
      if (typeof a === "string" && typeof b === "string") {
        scan(m, b.length)
        return op === BinOp.StartsWith ? a.startsWith(b) : a.endsWith(b)
      }
      throw typeError(`${op === BinOp.StartsWith ? "startsWith" : "endsWith"} expects two strings, got ${Value.typeName(a)} and ${Value.typeName(b)}`)
    case BinOp.Get:
      return get(a, b, m)
    case BinOp.CompareNumbers:
      scanText(m, a)
      scanText(m, b)
      return Numbers.compareNumbers(a, b)
    default:
      return compare(op, a, b, m)
  }
}

/** The last JSON text `get` parsed: fields of one structured answer are usually read one after another. */
let lastText: string | undefined
let lastParsed: unknown

const parsedJson = (text: string, m: Meter): unknown => {
  if (text !== lastText) {
    scan(m, text.length)
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      throw typeError("get expects a list or the JSON text of an object or array, got a string that is not JSON")
    }
    lastText = text
    lastParsed = json
  }
  return lastParsed
}

const isIndex = (k: Value.Value): k is number => typeof k === "number" && k >= 0

/**
 * A field of a JSON object or an element of a JSON array, as a value by the oracle answers' rule
 * (`null` when there is none): of a JSON text by a key or an index, of a list by an index, of a
 * list of `(key, value)` pairs by a key.
 */
const get = (a: Value.Value, k: Value.Value, m: Meter): Value.Value => {
  if (typeof k !== "string" && !isIndex(k)) throw typeError(`get expects a key (a string) or an index (an integer ≥ 0), got ${Value.typeName(k)}`)
  if (typeof a === "string") {
    const json = parsedJson(a, m)
    if (Array.isArray(json)) return isIndex(k) && k < json.length ? toValue(json[k]) : null
    if (typeof json === "object" && json !== null) return typeof k === "string" && Object.hasOwn(json, k) ? toValue((json as Record<string, unknown>)[k]) : null
    throw typeError("get expects a list or the JSON text of an object or array, got the JSON text of a " + (json === null ? "null" : typeof json))
  }
  if (a instanceof Value.List) {
    if (isIndex(k)) {
      if (k >= a.length) return null
      m.touch(k >> 1)
      let l = a
      for (let i = 0; i < k; i++) l = l.tail
      return l.head
    }
    let l = a
    for (let i = 0; l.length > 0; l = l.tail, i++) {
      const entry = l.head
      if (!(entry instanceof Value.Pair)) throw typeError(`get with a key expects a list of (key, value) pairs, got a ${Value.typeName(entry)} at index ${i}`)
      if (entry.fst === k) {
        m.touch(i >> 1)
        return entry.snd
      }
    }
    m.touch(a.length >> 1)
    return null
  }
  throw typeError(`get expects a list or the JSON text of an object or array, got ${Value.typeName(a)}`)
}

const list = (v: Value.Value, op: string): Value.List => {
  if (v instanceof Value.List) return v
  throw typeError(`${op} expects a list, got ${Value.typeName(v)}`)
}

const STRING_OPS = ["trim", "trimStart", "trimEnd", "lower", "upper", "isJson"] as const

const stringOp = (op: UnOp, v: Value.Value, m: Meter): Value.Value => {
  if (typeof v !== "string") throw typeError(`${STRING_OPS[op - UnOp.Trim]} expects a string, got ${Value.typeName(v)}`)
  scan(m, v.length)
  switch (op) {
    case UnOp.Trim:
      return v.trim()
    case UnOp.TrimStart:
      return v.trimStart()
    case UnOp.TrimEnd:
      return v.trimEnd()
    case UnOp.Lower:
      return v.toLowerCase()
    case UnOp.Upper: {
      // upper case can grow a string (ß → SS)
      const upper = v.toUpperCase()
      if (upper.length > v.length) m.built(stringBytes(upper.length))
      return upper
    }
    default:
      try {
        JSON.parse(v)
        return true
      } catch {
        return false
      }
  }
}

export const unary = (op: UnOp, v: Value.Value, m: Meter): Value.Value => {
  switch (op) {
    case UnOp.Not:
      return !isTrue(v, "not's argument")
    case UnOp.Head: {
      const l = list(v, "head")
      if (l.length === 0) throw new Fault("EmptyList", "head of an empty list")
      return l.head
    }
    case UnOp.Tail: {
      const l = list(v, "tail")
      if (l.length === 0) throw new Fault("EmptyList", "tail of an empty list")
      return l.tail
    }
    case UnOp.IsEmpty:
      return list(v, "isEmpty").length === 0
    case UnOp.Length:
      if (typeof v === "string") {
        scan(m, v.length)
        return codePointLength(v)
      }
      if (v instanceof Value.List) return v.length
      throw typeError(`length expects a string or a list, got ${Value.typeName(v)}`)
    case UnOp.Fst:
      if (v instanceof Value.Pair) return v.fst
      throw typeError(`fst expects a pair, got ${Value.typeName(v)}`)
    case UnOp.Snd:
      if (v instanceof Value.Pair) return v.snd
      throw typeError(`snd expects a pair, got ${Value.typeName(v)}`)
    case UnOp.ToText: {
      if (typeof v === "string") return v
      const text = Value.toText(v)
      m.built(stringBytes(text.length))
      return text
    }
    case UnOp.TypeName:
      return Value.typeName(v)
    case UnOp.ToInt:
      scanText(m, v)
      return Numbers.toInt(v)
    case UnOp.ToFloat:
      scanText(m, v)
      return Numbers.toFloat(v)
    default:
      return stringOp(op, v, m)
  }
}
