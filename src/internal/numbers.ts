/**
 * Numbers read out of text by Python's rules (`int("12")`, `float(" 1e3\n")`), for the `toInt`,
 * `toFloat` and `compareNumbers` operators. The language has no fractional values: a float is
 * carried as its canonical text (Python's `repr` of the double), and compared as a double, exactly
 * against integers of any size.
 */
import * as Value from "../Value.ts"
import * as Int from "./int.ts"
import { Fault, typeError } from "./operators.ts"

/** The characters Python's `int()` and `float()` strip around a number (`str.isspace`). */
const isSpace = (c: number): boolean =>
  (c >= 0x09 && c <= 0x0d) ||
  (c >= 0x1c && c <= 0x20) ||
  c === 0x85 ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000

const strip = (text: string): string => {
  let start = 0
  let end = text.length
  while (start < end && isSpace(text.charCodeAt(start))) start++
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--
  return text.slice(start, end)
}

const DIGITS = "\\d+(?:_\\d+)*"
const INTEGER = new RegExp(`^[+-]?${DIGITS}$`)
const FLOAT = new RegExp(`^[+-]?(?:${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?$`)
const SPECIAL = /^([+-]?)(inf|infinity|nan)$/i

/** Longest text read as a number (spaces around it aside): Python's limit for `int()` of decimal text, applied to `float()` too to bound the work. */
const MAX_DIGITS = 4300

const quoted = (text: string): string => JSON.stringify(text.length <= 40 ? text : `${text.slice(0, 40)}…`)

const valueError = (what: string, text: string): Fault =>
  new Fault("ValueError", `${what}: ${quoted(text)} is not ${what === "toInt" ? "an integer" : "a number"}`)

/** `int(v)`: an integer as it is, a boolean as 1 or 0, decimal text (sign, `_` between digits, surrounding spaces) as its integer. */
export const toInt = (v: Value.Value): Value.Value => {
  if (typeof v === "number" || typeof v === "bigint") return v
  if (typeof v === "boolean") return v ? 1 : 0
  if (typeof v !== "string") throw typeError(`toInt expects a string, an integer or a boolean, got ${Value.typeName(v)}`)
  const text = strip(v)
  if (text.length > MAX_DIGITS || !INTEGER.test(text)) throw valueError("toInt", v)
  return Int.normalize(BigInt(text.replaceAll("_", "")), "toInt")
}

/** The double a text in Python's `float()` syntax stands for, or `undefined` when it is not one. */
const readDouble = (v: string): number | undefined => {
  const text = strip(v)
  if (text.length > MAX_DIGITS) return undefined
  const special = SPECIAL.exec(text)
  if (special !== null) {
    if (special[2]!.toLowerCase() === "nan") return Number.NaN
    return special[1] === "-" ? -Infinity : Infinity
  }
  if (!FLOAT.test(text)) return undefined
  return Number(text.replaceAll("_", ""))
}

/** Python's `repr` of a double: the shortest digits that read back to it, `1000.0`, `1e+16`, `1e-05`, `nan`, `-inf`. */
export const floatText = (x: number): string => {
  if (Number.isNaN(x)) return "nan"
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf"
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0"
  const [mantissa, exponentText] = Math.abs(x).toExponential().split("e") as [string, string]
  const exponent = Number(exponentText)
  const digits = mantissa.replace(".", "")
  const sign = x < 0 ? "-" : ""
  if (exponent < -4 || exponent >= 16) {
    const e = Math.abs(exponent).toString().padStart(2, "0")
    return `${sign}${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ""}e${exponent < 0 ? "-" : "+"}${e}`
  }
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`
  const whole = digits.length > exponent + 1 ? digits.slice(0, exponent + 1) : digits.padEnd(exponent + 1, "0")
  const fraction = digits.slice(exponent + 1)
  return `${sign}${whole}.${fraction === "" ? "0" : fraction}`
}

/** `float(v)`: the canonical text of the double an integer, a boolean or a text in `float()` syntax stands for. */
export const toFloat = (v: Value.Value): Value.Value => {
  if (typeof v === "boolean") return v ? "1.0" : "0.0"
  if (typeof v === "number" || typeof v === "bigint") return floatText(Number(v))
  if (typeof v !== "string") throw typeError(`toFloat expects a string, an integer or a boolean, got ${Value.typeName(v)}`)
  const x = readDouble(v)
  if (x === undefined) throw valueError("toFloat", v)
  return floatText(x)
}

type Operand = { readonly int: Int.Int } | { readonly double: number }

const operand = (v: Value.Value): Operand => {
  if (typeof v === "number" || typeof v === "bigint") return { int: v }
  if (typeof v === "boolean") return { int: v ? 1 : 0 }
  if (typeof v !== "string") throw typeError(`compareNumbers expects integers or numeric text, got ${Value.typeName(v)}`)
  const x = readDouble(v)
  if (x === undefined) throw valueError("compareNumbers", v)
  return { double: x }
}

const order = <T extends number | bigint>(a: T, b: T): number => (a < b ? -1 : a > b ? 1 : 0)

/** An integer against a finite or infinite double, exactly (Python compares them without rounding). */
const intAgainstDouble = (i: Int.Int, d: number): number => {
  if (typeof i === "number") return order(i, d)
  if (!Number.isFinite(d)) return d > 0 ? -1 : 1
  const floor = BigInt(Math.floor(d))
  if (i <= floor) return i === floor && Number.isInteger(d) ? 0 : -1
  return 1
}

/**
 * Compare two numbers, each an integer (a boolean as 1 or 0) or a text in `float()` syntax: -1, 0
 * or 1, or `null` when either is NaN (NaN is unordered and equal to nothing).
 */
export const compareNumbers = (a: Value.Value, b: Value.Value): Value.Value => {
  const x = operand(a)
  const y = operand(b)
  if ("int" in x) return "int" in y ? order(x.int, y.int) : Number.isNaN(y.double) ? null : intAgainstDouble(x.int, y.double)
  if (Number.isNaN(x.double)) return null
  if ("double" in y) return Number.isNaN(y.double) ? null : order(x.double, y.double)
  return -intAgainstDouble(y.int, x.double) || 0
}
