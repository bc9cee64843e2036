/**
 * 64-bit integer arithmetic that never wraps. Values inside the safe range of a double are plain
 * numbers (the fast path); larger ones are bigints; anything outside 64 bits is an overflow.
 */

export type Int = number | bigint

const MIN = -(2n ** 63n)
const MAX = 2n ** 63n - 1n

/** Thrown by the arithmetic below; the evaluator turns it into an `Overflow` error. */
export class IntOverflow {
  constructor(readonly op: string) {}
}

/** Back to the canonical representation: a number when safe, else a bigint within 64 bits. */
export const normalize = (n: bigint, op: string): Int => {
  if (n < MIN || n > MAX) throw new IntOverflow(op)
  return n >= -9007199254740991n && n <= 9007199254740991n ? Number(n) : n
}

const big = (n: Int): bigint => (typeof n === "bigint" ? n : BigInt(n))

export const add = (a: Int, b: Int): Int => {
  if (typeof a === "number" && typeof b === "number") {
    const r = a + b
    if (r <= 9007199254740991 && r >= -9007199254740991) return r
  }
  return normalize(big(a) + big(b), "add")
}

export const sub = (a: Int, b: Int): Int => {
  if (typeof a === "number" && typeof b === "number") {
    const r = a - b
    if (r <= 9007199254740991 && r >= -9007199254740991) return r
  }
  return normalize(big(a) - big(b), "sub")
}

export const mul = (a: Int, b: Int): Int => {
  if (typeof a === "number" && typeof b === "number") {
    const r = a * b
    if (r <= 9007199254740991 && r >= -9007199254740991) return r === 0 ? 0 : r
  }
  return normalize(big(a) * big(b), "mul")
}

/** Floor division; the caller has checked that `b` is not zero. */
export const div = (a: Int, b: Int): Int => {
  if (typeof a === "number" && typeof b === "number") {
    const q = Math.floor(a / b)
    return q === 0 ? 0 : q
  }
  const x = big(a)
  const y = big(b)
  let q = x / y
  if (x % y !== 0n && x < 0n !== y < 0n) q -= 1n
  return normalize(q, "div")
}

/** Floor modulo: the result takes the divisor's sign; `b` is not zero. */
export const mod = (a: Int, b: Int): Int => {
  if (typeof a === "number" && typeof b === "number") {
    let r = a % b
    if (r !== 0 && r < 0 !== b < 0) r += b
    return r === 0 ? 0 : r
  }
  const x = big(a)
  const y = big(b)
  let r = x % y
  if (r !== 0n && r < 0n !== y < 0n) r += y
  return normalize(r, "mod")
}

export const isZero = (n: Int): boolean => n === 0 || n === 0n
