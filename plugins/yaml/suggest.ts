/**
 * "Did you mean …?" for misspelt keys and values: the nearest candidate by edit distance.
 *
 * @since 0.1.0
 * @module
 */

/**
 * The optimal-string-alignment distance between two strings: insertions, deletions,
 * substitutions and swaps of two adjacent characters each cost 1. Case differences count.
 *
 * @since 0.1.0
 * @category suggestions
 * @example
 * ```ts
 * import { editDistance } from "lambdagent/yaml"
 * editDistance("systemPromt", "systemPrompt") // 1
 * editDistance("tpye", "type") // 1 (one swap)
 * ```
 */
export const editDistance = (a: string, b: string): number => {
  if (a === b) return 0
  if (a.length === 0) return b.length
  if (b.length === 0) return a.length
  // Three rolling rows: the row before the previous one is needed for swaps.
  let before: Array<number> = new Array(b.length + 1).fill(0)
  let previous: Array<number> = Array.from({ length: b.length + 1 }, (_, j) => j)
  let current: Array<number> = new Array(b.length + 1).fill(0)
  for (let i = 1; i <= a.length; i++) {
    current[0] = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1)
      current[j] = best
    }
    ;[before, previous, current] = [previous, current, before]
  }
  return previous[b.length]!
}

/**
 * The candidate nearest to `word`, when it is near enough to be a plausible typo: at most a
 * third of the word's length away (at least 1, at most 3 edits), or equal ignoring case.
 * Ties go to the earlier candidate, so results do not depend on anything but the inputs.
 *
 * @since 0.1.0
 * @category suggestions
 * @example
 * ```ts
 * import { nearest } from "lambdagent/yaml"
 * nearest("systemPromt", ["name", "systemPrompt", "model"]) // "systemPrompt"
 * nearest("banana", ["name", "model"]) // undefined
 * ```
 */
export const nearest = (word: string, candidates: Iterable<string>): string | undefined => {
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)))
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of candidates) {
    if (candidate === word) continue
    const distance = candidate.toLowerCase() === word.toLowerCase() ? 0.5 : editDistance(word, candidate)
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return bestDistance <= limit ? best : undefined
}
