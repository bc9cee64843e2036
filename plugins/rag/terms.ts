/**
 * Search terms: how text is split into words for BM25 and for the hashing embedder.
 *
 * @since 0.1.0
 * @module
 */
const stopWords = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being below between both but by " +
    "can could did do does doing down during each few for from further had has have having he her here hers herself him " +
    "himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other " +
    "our ours ourselves out over own same she should so some such than that the their theirs them themselves then there " +
    "these they this those through to too under until up very was we were what when where which while who whom why will " +
    "with would you your yours yourself yourselves"
  ).split(" ")
)

const cjk = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u
const wordPattern = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu

/**
 * Split text into search terms the way the `simple` backend does: Unicode words, CJK characters
 * one by one, lower-cased, English stop words removed, plural endings stripped.
 *
 * @since 0.1.0
 * @category search
 * @example
 * ```ts
 * import { searchTerms } from "lambdagent/rag"
 * console.log(searchTerms("The Libraries of Alexandria")) // ["library", "alexandria"]
 * ```
 */
export const searchTerms = (text: string): Array<string> => {
  const out: Array<string> = []
  for (const token of tokenize(text)) {
    const term = processTerm(token)
    if (term !== null) out.push(term)
  }
  return out
}

/**
 * Split text into raw words; CJK characters one by one. Not part of the public entry point.
 *
 * @since 0.1.0
 * @category internal
 * @example
 * ```ts
 * import { tokenize } from "./terms.ts"
 * tokenize("Green tea 绿茶") // ["Green", "tea", "绿", "茶"]
 * ```
 */
export const tokenize = (text: string): Array<string> => {
  const tokens: Array<string> = []
  for (const match of text.matchAll(wordPattern)) {
    const word = match[0]
    if (cjk.test(word)) {
      // Split runs mixing CJK and other letters into single CJK characters and the rest.
      let latin = ""
      for (const ch of word) {
        if (cjk.test(ch)) {
          if (latin !== "") tokens.push(latin)
          latin = ""
          tokens.push(ch)
        } else {
          latin += ch
        }
      }
      if (latin !== "") tokens.push(latin)
    } else {
      tokens.push(word)
    }
  }
  return tokens
}

/** Harman's "S" stemmer: conservative plural stripping. */
const stem = (word: string): string => {
  if (word.length <= 3) return word
  if (word.endsWith("ies") && !word.endsWith("eies") && !word.endsWith("aies")) return word.slice(0, -3) + "y"
  if (word.endsWith("es") && !word.endsWith("aes") && !word.endsWith("ees") && !word.endsWith("oes")) {
    return /(?:ss|x|z|ch|sh)es$/.test(word) ? word.slice(0, -2) : word.slice(0, -1)
  }
  if (word.endsWith("s") && !word.endsWith("us") && !word.endsWith("ss") && !word.endsWith("is")) return word.slice(0, -1)
  return word
}

/**
 * Normalise one word (lower case, no stop words, plural stripped); `null` drops it. Not part of the public entry point.
 *
 * @since 0.1.0
 * @category internal
 * @example
 * ```ts
 * import { processTerm } from "./terms.ts"
 * processTerm("Libraries") // "library"
 * ```
 */
export const processTerm = (token: string): string | null => {
  const lower = token
    .toLowerCase()
    .replace(/['’]s$/, "")
    .replace(/['’]/g, "")
  if (lower === "" || stopWords.has(lower)) return null
  if (lower.length === 1 && !cjk.test(lower) && !/\p{N}/u.test(lower)) return null
  return /^[a-z]+$/.test(lower) ? stem(lower) : lower
}
