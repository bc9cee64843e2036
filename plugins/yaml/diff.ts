/**
 * A unified diff of two texts, line by line, for showing a rewrite before it is written.
 *
 * @since 0.2.0
 * @module
 */

type Edit = { readonly op: " " | "-" | "+"; readonly line: string }

/** Cells of the longest-common-subsequence table past which the changed middle is shown whole. */
const maxTableCells = 4_000_000

const splitLines = (text: string): Array<string> => {
  if (text === "") return []
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

/** The edit script of the middle part (after the common prefix and suffix), by the LCS table. */
const middleEdits = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<Edit> => {
  const n = a.length
  const m = b.length
  if (n * m > maxTableCells) return [...a.map((line) => ({ op: "-" as const, line })), ...b.map((line) => ({ op: "+" as const, line }))]
  const width = m + 1
  const table = new Uint32Array((n + 1) * width)
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * width + j] = a[i] === b[j] ? table[(i + 1) * width + j + 1]! + 1 : Math.max(table[(i + 1) * width + j]!, table[i * width + j + 1]!)
    }
  }
  const edits: Array<Edit> = []
  let i = 0
  let j = 0
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      edits.push({ op: " ", line: a[i]! })
      i++
      j++
    } else if (table[(i + 1) * width + j]! >= table[i * width + j + 1]!) edits.push({ op: "-", line: a[i++]! })
    else edits.push({ op: "+", line: b[j++]! })
  }
  while (i < n) edits.push({ op: "-", line: a[i++]! })
  while (j < m) edits.push({ op: "+", line: b[j++]! })
  return edits
}

/**
 * The unified diff (`---`/`+++` headers, `@@` hunks with `context` lines around each change) that
 * turns `before` into `after`; empty when they are equal.
 *
 * @since 0.2.0
 * @category formatting
 * @example
 * ```ts
 * import { unifiedDiff } from "lambdagent/yaml"
 * console.log(unifiedDiff("a\nb\n", "a\nc\n", { from: "old.yml", to: "new.yml" }))
 * ```
 */
export const unifiedDiff = (before: string, after: string, names: { readonly from: string; readonly to: string }, context = 3): string => {
  if (before === after) return ""
  const a = splitLines(before)
  const b = splitLines(after)
  let prefix = 0
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++
  let suffix = 0
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++
  const edits: Array<Edit> = [
    ...a.slice(0, prefix).map((line) => ({ op: " " as const, line })),
    ...middleEdits(a.slice(prefix, a.length - suffix), b.slice(prefix, b.length - suffix)),
    ...a.slice(a.length - suffix).map((line) => ({ op: " " as const, line }))
  ]
  const out = [`--- ${names.from}`, `+++ ${names.to}`]
  // Line numbers (1-based) of each edit in the old and the new text.
  const oldAt: Array<number> = []
  const newAt: Array<number> = []
  let oldLine = 1
  let newLine = 1
  for (const e of edits) {
    oldAt.push(oldLine)
    newAt.push(newLine)
    if (e.op !== "+") oldLine++
    if (e.op !== "-") newLine++
  }
  let k = 0
  while (k < edits.length) {
    if (edits[k]!.op === " ") {
      k++
      continue
    }
    const start = Math.max(0, k - context)
    let end = k
    // Extend the hunk while the next change is within 2 × context unchanged lines.
    for (;;) {
      while (end < edits.length && edits[end]!.op !== " ") end++
      let gap = end
      while (gap < edits.length && edits[gap]!.op === " " && gap - end < 2 * context) gap++
      if (gap < edits.length && edits[gap]!.op !== " ") end = gap
      else break
    }
    const stop = Math.min(edits.length, end + context)
    const hunk = edits.slice(start, stop)
    const oldCount = hunk.filter((e) => e.op !== "+").length
    const newCount = hunk.filter((e) => e.op !== "-").length
    const oldStart = oldCount === 0 ? oldAt[start]! - 1 : oldAt[start]!
    const newStart = newCount === 0 ? newAt[start]! - 1 : newAt[start]!
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`)
    for (const e of hunk) out.push(`${e.op}${e.line}`)
    k = stop
  }
  return `${out.join("\n")}\n`
}
