/**
 * Chunking: cut a document into overlapping passages of about `chunkSize` characters.
 *
 * Cuts fall on word boundaries, preferring a paragraph break, then a line break, then the end of a
 * sentence, then any space. Markdown is cut by section first, so a heading always stays with the
 * text under it and each chunk records its section path. JSON is flattened to `path: value` lines
 * before it is cut.
 *
 * @since 0.1.0
 * @module
 */
import { RagError } from "./RagError.ts"

/**
 * The kind of document a chunk came from.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { DocumentFormat } from "lambdagent/rag"
 * const f: DocumentFormat = "markdown"
 * ```
 */
export type DocumentFormat = "text" | "markdown" | "json"

/**
 * Where a chunk comes from. Offsets are character offsets (UTF-16 code units) into the document's
 * text; for JSON that is the flattened text, not the raw file.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ChunkMetadata } from "lambdagent/rag"
 * const m: ChunkMetadata = { source: "docs/a.md", format: "markdown", index: 0, start: 0, end: 120, heading: "Install", section: ["Guide", "Install"] }
 * ```
 */
export interface ChunkMetadata {
  /** The file path as it was reached from the source given (relative if the source was). */
  readonly source: string
  readonly format: DocumentFormat
  /** Position of the chunk within its document, from 0. */
  readonly index: number
  /** First character of the chunk in the document text. */
  readonly start: number
  /** One past the last character of the chunk in the document text. */
  readonly end: number
  /** Markdown: the nearest heading above the chunk. */
  readonly heading?: string
  /** Markdown: the headings from the top level down to {@link heading}. */
  readonly section?: ReadonlyArray<string>
}

/**
 * One passage of a document, the unit that is indexed and retrieved.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Chunk } from "lambdagent/rag"
 * const c: Chunk = { id: "notes.txt#0", text: "Tea is a drink.", metadata: { source: "notes.txt", format: "text", index: 0, start: 0, end: 15 } }
 * ```
 */
export interface Chunk {
  /** Unique within an index: `<source>#<index>`. */
  readonly id: string
  readonly text: string
  readonly metadata: ChunkMetadata
}

/**
 * Sizes for chunking, in characters.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ChunkOptions } from "lambdagent/rag"
 * const o: ChunkOptions = { chunkSize: 800, chunkOverlap: 100 }
 * ```
 */
export interface ChunkOptions {
  /** Largest chunk, in characters; default {@link defaultChunkSize}. */
  readonly chunkSize?: number
  /** Characters repeated at the start of the next chunk of the same section; default {@link defaultChunkOverlap}. */
  readonly chunkOverlap?: number
}

/**
 * Default chunk size: 1000 characters (about 200 English words).
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { defaultChunkSize } from "lambdagent/rag"
 * console.log(defaultChunkSize) // 1000
 * ```
 */
export const defaultChunkSize = 1000

/**
 * Default chunk overlap: 150 characters.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { defaultChunkOverlap } from "lambdagent/rag"
 * console.log(defaultChunkOverlap) // 150
 * ```
 */
export const defaultChunkOverlap = 150

/**
 * Chunk sizes with defaults filled in and checked; throws `InvalidConfig`. Not part of the public entry point.
 *
 * @since 0.1.0
 * @category internal
 * @example
 * ```ts
 * import { resolveChunkOptions } from "./chunk.ts"
 * resolveChunkOptions({ chunkSize: 400 }) // { chunkSize: 400, chunkOverlap: 100 }
 * ```
 */
export const resolveChunkOptions = (options: ChunkOptions | undefined): { chunkSize: number; chunkOverlap: number } => {
  const chunkSize = options?.chunkSize ?? defaultChunkSize
  const chunkOverlap = options?.chunkOverlap ?? Math.min(defaultChunkOverlap, Math.floor(chunkSize / 4))
  if (!Number.isInteger(chunkSize) || chunkSize < 20) {
    throw new RagError({ reason: "InvalidConfig", message: `chunkSize must be an integer ≥ 20, got ${chunkSize}` })
  }
  if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0 || chunkOverlap >= chunkSize / 2) {
    throw new RagError({
      reason: "InvalidConfig",
      message: `chunkOverlap must be an integer from 0 to less than half of chunkSize (${chunkSize}), got ${chunkOverlap}`
    })
  }
  return { chunkSize, chunkOverlap }
}

/**
 * A half-open character range `[start, end)` of a text.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { Span } from "lambdagent/rag"
 * const s: Span = { start: 0, end: 10 }
 * ```
 */
export interface Span {
  readonly start: number
  readonly end: number
}

const isSpace = (c: string | undefined): boolean => c !== undefined && /\s/u.test(c)

/** The best place to end a chunk that starts at `from` and may not pass `limit`. */
const findCut = (text: string, from: number, limit: number): number => {
  // Only look at the second half of the window, so chunks do not come out tiny.
  const floor = from + Math.floor((limit - from) / 2)
  const window = text.slice(floor, limit + 1)
  const last = (pattern: RegExp): number => {
    let found = -1
    for (const m of window.matchAll(pattern)) found = m.index + m[0].length
    return found < 0 ? -1 : floor + found
  }
  for (const pattern of [/\n[ \t]*\n\s*/g, /\n\s*/g, /[.!?。！？][)"'\]]?\s+/g, /\s+/g]) {
    const at = last(pattern)
    if (at > from && at <= limit) return at
  }
  return -1
}

const trimEnd = (text: string, start: number, end: number): number => {
  let e = end
  while (e > start && isSpace(text[e - 1])) e--
  return e
}

const skipSpace = (text: string, at: number, end: number): number => {
  let s = at
  while (s < end && isSpace(text[s])) s++
  return s
}

/**
 * Cut `text[start, end)` into spans of at most `chunkSize` characters on word boundaries, each
 * (but the first) starting up to `chunkOverlap` characters before the previous one ended. A single
 * word longer than `chunkSize` is cut inside the word. Leading and trailing spaces are left out.
 *
 * @since 0.1.0
 * @category chunking
 * @example
 * ```ts
 * import { splitSpans } from "lambdagent/rag"
 * const text = "one two three four five six"
 * console.log(splitSpans(text, { chunkSize: 20, chunkOverlap: 0 }).map((s) => text.slice(s.start, s.end)))
 * // ["one two three four", "five six"]
 * ```
 */
export const splitSpans = (text: string, options?: ChunkOptions, range: Span = { start: 0, end: text.length }): Array<Span> => {
  const { chunkOverlap, chunkSize } = resolveChunkOptions(options)
  const spans: Array<Span> = []
  const end = range.end
  let pos = skipSpace(text, range.start, end)
  while (pos < end) {
    const limit = pos + chunkSize
    if (limit >= end) {
      spans.push({ start: pos, end: trimEnd(text, pos, end) })
      break
    }
    let cut = findCut(text, pos, limit)
    if (cut < 0) cut = limit // one word longer than the window
    const chunkEnd = trimEnd(text, pos, cut)
    spans.push({ start: pos, end: chunkEnd > pos ? chunkEnd : cut })
    // Next chunk: back up by the overlap, then forward to the start of a word.
    let next = cut - chunkOverlap
    if (chunkOverlap > 0 && next > pos) {
      if (!isSpace(text[next - 1])) {
        while (next < cut && !isSpace(text[next])) next++
      }
      next = skipSpace(text, next, cut)
    }
    if (next <= pos || next >= cut) next = cut
    pos = skipSpace(text, next, end)
  }
  return spans
}

/**
 * A markdown section: a heading, the text under it, and its path of enclosing headings.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { MarkdownSection } from "lambdagent/rag"
 * const s: MarkdownSection = { start: 0, end: 42, path: ["Guide", "Install"] }
 * ```
 */
export interface MarkdownSection extends Span {
  /** Headings from the top level down to this section's own heading; empty before the first heading. */
  readonly path: ReadonlyArray<string>
}

interface Heading {
  readonly level: number
  readonly title: string
  readonly start: number
  /** Where the heading's own lines end. */
  readonly bodyStart: number
}

const cleanTitle = (raw: string): string =>
  raw
    .replace(/\s+#+\s*$/, "")
    .replace(/[*_`]/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()

/** ATX (`## Title`) and setext (`Title` over `===`/`---`) headings outside fenced code blocks. */
const findHeadings = (text: string): Array<Heading> => {
  const headings: Array<Heading> = []
  const lines: Array<{ start: number; end: number; body: string }> = []
  let at = 0
  while (at <= text.length) {
    const nl = text.indexOf("\n", at)
    const end = nl < 0 ? text.length : nl
    lines.push({ start: at, end, body: text.slice(at, end).replace(/\r$/, "") })
    if (nl < 0) break
    at = nl + 1
  }
  let fence: string | undefined
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const fenceMatch = /^ {0,3}(`{3,}|~{3,})/.exec(line.body)
    if (fenceMatch !== null) {
      const marker = fenceMatch[1]!
      if (fence === undefined) fence = marker
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined
      continue
    }
    if (fence !== undefined) continue
    const atx = /^ {0,3}(#{1,6})[ \t]+(.*)$/.exec(line.body) ?? /^ {0,3}(#{1,6})$/.exec(line.body)
    if (atx !== null) {
      const title = cleanTitle(atx[2] ?? "")
      if (title !== "") {
        headings.push({ level: atx[1]!.length, title, start: line.start, bodyStart: Math.min(line.end + 1, text.length) })
      }
      continue
    }
    const next = lines[i + 1]
    if (next !== undefined && line.body.trim() !== "" && !/^ {0,3}([-*+>|]|\d+[.)])/.test(line.body)) {
      const setext = /^ {0,3}(=+|-+)[ \t]*$/.exec(next.body)
      const previous = lines[i - 1]
      if (setext !== null && (previous === undefined || previous.body.trim() === "")) {
        headings.push({
          level: setext[1]![0] === "=" ? 1 : 2,
          title: cleanTitle(line.body),
          start: line.start,
          bodyStart: Math.min(next.end + 1, text.length)
        })
        i++
      }
    }
  }
  return headings
}

/**
 * Split markdown into sections, one per heading (plus the text before the first heading). A
 * heading with no text of its own before the next heading is kept with that next section, so no
 * section is a bare heading. Fenced code blocks are never mistaken for headings.
 *
 * @since 0.1.0
 * @category chunking
 * @example
 * ```ts
 * import { markdownSections } from "lambdagent/rag"
 * const md = "# Guide\n\n## Install\n\nRun npm i.\n\n## Use\n\nCall it."
 * console.log(markdownSections(md).map((s) => s.path.join(" > "))) // ["Guide > Install", "Guide > Use"]
 * ```
 */
export const markdownSections = (text: string): Array<MarkdownSection> => {
  const headings = findHeadings(text)
  const sections: Array<MarkdownSection> = []
  const first = headings[0]?.start ?? text.length
  if (text.slice(0, first).trim() !== "") sections.push({ start: 0, end: first, path: [] })
  const stack: Array<{ level: number; title: string }> = []
  let pendingStart: number | undefined
  for (let i = 0; i < headings.length; i++) {
    const h = headings[i]!
    while (stack.length > 0 && stack[stack.length - 1]!.level >= h.level) stack.pop()
    stack.push({ level: h.level, title: h.title })
    const end = headings[i + 1]?.start ?? text.length
    const start = pendingStart ?? h.start
    const hasBody = text.slice(h.bodyStart, end).trim() !== ""
    const isLast = i === headings.length - 1
    if (!hasBody && !isLast) {
      pendingStart = start
      continue
    }
    pendingStart = undefined
    sections.push({ start, end, path: stack.map((s) => s.title) })
  }
  return sections
}

/**
 * Flatten a JSON value to readable text: one `path: value` line per scalar (`a.b[2].c: 1`),
 * arrays of scalars on one line (`tags: a, b, c`), and a blank line between the elements of an
 * array of objects, so records become paragraphs and chunks tend to hold whole records.
 *
 * @since 0.1.0
 * @category chunking
 * @example
 * ```ts
 * import { flattenJson } from "lambdagent/rag"
 * console.log(flattenJson({ name: "Ada", langs: ["en", "fr"], address: { city: "London" } }))
 * // name: Ada
 * // langs: en, fr
 * // address.city: London
 * ```
 */
export const flattenJson = (value: unknown): string => {
  const lines: Array<string> = []
  const scalar = (v: unknown): string => (typeof v === "string" ? v : v === null ? "null" : String(v))
  const isScalar = (v: unknown): boolean => v === null || typeof v !== "object"
  const walk = (v: unknown, path: string): void => {
    if (isScalar(v)) {
      lines.push(path === "" ? scalar(v) : `${path}: ${scalar(v)}`)
    } else if (Array.isArray(v)) {
      if (v.length === 0) return
      if (v.every(isScalar)) {
        lines.push(path === "" ? v.map(scalar).join(", ") : `${path}: ${v.map(scalar).join(", ")}`)
        return
      }
      v.forEach((item, i) => {
        if (i > 0 && lines.length > 0 && lines[lines.length - 1] !== "") lines.push("")
        walk(item, `${path}[${i}]`)
      })
      if (lines[lines.length - 1] !== "") lines.push("")
    } else {
      for (const [key, item] of Object.entries(v as Record<string, unknown>)) {
        const safeKey = /^[\p{L}\p{N}_$-]+$/u.test(key) ? key : JSON.stringify(key)
        walk(item, path === "" ? safeKey : `${path}.${safeKey}`)
      }
    }
  }
  walk(value, "")
  while (lines[lines.length - 1] === "") lines.pop()
  return lines.join("\n")
}

/**
 * Chunk a document held in memory. `source` names it in the metadata and chunk ids; markdown is
 * cut by section, JSON text is parsed and flattened first (a parse failure is `InvalidSource`).
 *
 * @since 0.1.0
 * @category chunking
 * @example
 * ```ts
 * import { chunkDocument } from "lambdagent/rag"
 * const chunks = chunkDocument("# Tea\n\nGreen tea is not fermented.", { source: "tea.md", format: "markdown" })
 * console.log(chunks[0]?.metadata.heading) // "Tea"
 * ```
 */
export const chunkDocument = (
  content: string,
  document: { readonly source: string; readonly format: DocumentFormat },
  options?: ChunkOptions
): Array<Chunk> => {
  const sizes = resolveChunkOptions(options)
  const { format, source } = document
  let text = content.charCodeAt(0) === 0xfeff ? content.slice(1) : content
  if (format === "json") {
    try {
      text = flattenJson(JSON.parse(text))
    } catch (cause) {
      throw new RagError({
        reason: "InvalidSource",
        message: `${source} is not valid JSON: ${cause instanceof Error ? cause.message : String(cause)}`,
        path: source,
        cause
      })
    }
  }
  const chunks: Array<Chunk> = []
  const push = (span: Span, path?: ReadonlyArray<string>): void => {
    const index = chunks.length
    const heading = path !== undefined && path.length > 0 ? path[path.length - 1] : undefined
    chunks.push({
      id: `${source}#${index}`,
      text: text.slice(span.start, span.end),
      metadata: {
        source,
        format,
        index,
        start: span.start,
        end: span.end,
        ...(heading !== undefined && path !== undefined ? { heading, section: [...path] } : {})
      }
    })
  }
  if (format === "markdown") {
    for (const section of markdownSections(text)) {
      for (const span of splitSpans(text, sizes, section)) push(span, section.path)
    }
  } else {
    for (const span of splitSpans(text, sizes)) push(span)
  }
  return chunks
}
