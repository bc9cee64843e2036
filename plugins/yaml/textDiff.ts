/**
 * A unified diff of two texts, line by line, for showing what `lint --fix` changes.
 */

/** Past this many lines × lines of changed middle, the middle is shown as one replaced block. */
const MAX_TABLE = 4_000_000

type Op = readonly [kind: " " | "-" | "+", line: string]

/** The edit script of the lines between the common prefix and suffix (a longest common subsequence). */
const middleOps = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<Op> => {
  const n = a.length
  const m = b.length
  if (n * m > MAX_TABLE) return [...a.map((l): Op => ["-", l]), ...b.map((l): Op => ["+", l])]
  const lcs = new Uint32Array((n + 1) * (m + 1))
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i * (m + 1) + j] = a[i] === b[j] ? lcs[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(lcs[(i + 1) * (m + 1) + j]!, lcs[i * (m + 1) + j + 1]!)
  const ops: Array<Op> = []
  let i = 0
  let j = 0
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push([" ", a[i]!])
      i++
      j++
    } else if (lcs[(i + 1) * (m + 1) + j]! >= lcs[i * (m + 1) + j + 1]!) ops.push(["-", a[i++]!])
    else ops.push(["+", b[j++]!])
  }
  while (i < n) ops.push(["-", a[i++]!])
  while (j < m) ops.push(["+", b[j++]!])
  return ops
}

/**
 * The unified diff (`---`/`+++` header, `@@` hunks with three lines of context) that turns
 * `before` into `after`; empty when they are equal.
 *
 * @since 0.2.0
 * @category linting
 * @example
 * ```ts
 * import { unifiedDiff } from "lambdagent/yaml"
 * unifiedDiff("a\nb\n", "a\nc\n", "agent.yml") // "--- agent.yml\n+++ agent.yml (fixed)\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
 * ```
 */
export const unifiedDiff = (before: string, after: string, file: string): string => {
  if (before === after) return ""
  const a = before.split("\n")
  const b = after.split("\n")
  if (a.at(-1) === "" && b.at(-1) === "") {
    a.pop()
    b.pop()
  }
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let endA = a.length
  let endB = b.length
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--
    endB--
  }
  const ops: Array<Op> = [
    ...a.slice(0, start).map((l): Op => [" ", l]),
    ...middleOps(a.slice(start, endA), b.slice(start, endB)),
    ...a.slice(endA).map((l): Op => [" ", l])
  ]
  const context = 3
  const out = [`--- ${file}`, `+++ ${file} (fixed)`]
  // positions (in ops) of changed lines, grouped into hunks whose context overlaps
  const changed = ops.flatMap((op, k) => (op[0] === " " ? [] : [k]))
  let k = 0
  while (k < changed.length) {
    let last = k
    while (last + 1 < changed.length && changed[last + 1]! - changed[last]! <= 2 * context) last++
    const from = Math.max(0, changed[k]! - context)
    const to = Math.min(ops.length, changed[last]! + context + 1)
    let lineA = 1
    let lineB = 1
    for (const [kind] of ops.slice(0, from)) {
      if (kind !== "+") lineA++
      if (kind !== "-") lineB++
    }
    const hunk = ops.slice(from, to)
    const countA = hunk.filter(([kind]) => kind !== "+").length
    const countB = hunk.filter(([kind]) => kind !== "-").length
    out.push(`@@ -${countA === 0 ? lineA - 1 : lineA},${countA} +${countB === 0 ? lineB - 1 : lineB},${countB} @@`)
    for (const [kind, line] of hunk) out.push(`${kind}${line}`)
    k = last + 1
  }
  return `${out.join("\n")}\n`
}
