/**
 * Reading agent files: YAML text to a plain value, keeping every node's position so that later
 * errors can name the line and column of the field they are about.
 *
 * @since 0.1.0
 * @module
 */
import { readFileSync, statSync } from "node:fs"
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from "yaml"
import { configError, type FieldPath, type Position } from "./errors.ts"

/**
 * Largest YAML text accepted (1 MiB): far beyond any hand-written agent (a router with 30,000
 * short routes fits), and small enough that every accepted file compiles within a second (the
 * YAML parser alone takes about half a second per MiB, see docs/performance.md); a larger file is
 * refused before it is read. Split a larger agent into files of its own (`subAgents.<name>.config`).
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { maxSourceBytes } from "lambdagent/yaml"
 * console.log(maxSourceBytes) // 1048576
 * ```
 */
export const maxSourceBytes = 1024 * 1024

const tooLarge = `the file is larger than ${maxSourceBytes} bytes (1 MiB), the most an agent file may be: move parts of it into files of their own (subAgents.<name>.config)`

/**
 * Deepest nesting of mappings and lists accepted (agent files nest a few levels per sub-agent).
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { maxNesting } from "lambdagent/yaml"
 * console.log(maxNesting) // 200
 * ```
 */
export const maxNesting = 200

/**
 * A parsed YAML document: its value, and where each field is.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { parseSource } from "lambdagent/yaml"
 * const source = parseSource("type: simple\nmodel:\n  name: gpt-4o\n")
 * source.locate(["model", "name"]) // { line: 3, column: 9 }
 * ```
 */
export interface Source {
  /** The file name used in messages, when the text came from a file. */
  readonly file?: string
  readonly text: string
  /** The document as plain data (mappings are objects, sequences arrays). */
  readonly value: unknown
  /**
   * Where a field is: its value (default) or its key. A path that does not exist gives the
   * position of the key of the deepest mapping on the way, so a missing field points at the
   * key of the mapping that should hold it (the top of the file for a missing top-level key).
   */
  readonly locate: (path: FieldPath, part?: "key" | "value") => Position | undefined
  /** Where character `offset` of the string at `path` is, when the scalar is written plainly. */
  readonly locateInString: (path: FieldPath, offset: number) => Position | undefined
}

const keyOf = (node: unknown): string | undefined => (isScalar(node) ? String(node.value) : undefined)

/**
 * Parse YAML text (one document, YAML 1.2 core schema). Throws {@link ConfigError} with the
 * position of the first syntax error, for duplicate keys, unknown tags (`!!python/object`),
 * alias bombs, text over {@link maxSourceBytes} and nesting deeper than {@link maxNesting}.
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import { parseSource } from "lambdagent/yaml"
 * parseSource("type: simple\nsystemPrompt: Hi\n").value // { type: "simple", systemPrompt: "Hi" }
 * ```
 */
export const parseSource = (text: string, file?: string): Source => {
  if (text.length > maxSourceBytes || Buffer.byteLength(text, "utf8") > maxSourceBytes) {
    throw configError("TooLarge", tooLarge, { file })
  }
  const lines = new LineCounter()
  const at = (offset: number): Position => {
    const p = lines.linePos(offset)
    return { line: p.line, column: p.col }
  }
  let doc: Document.Parsed
  try {
    // duplicate keys are found by checkTree in one pass (the parser's own check is quadratic)
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false, version: "1.2", merge: true })
  } catch (cause) {
    throw configError("Syntax", `cannot parse YAML: ${cause instanceof Error ? cause.message : String(cause)}`, { file, cause })
  }
  const problem = doc.errors[0] ?? doc.warnings.find((w) => w.code === "TAG_RESOLVE_FAILED")
  if (problem !== undefined) {
    const pos = at(problem.pos[0])
    const detail = /call stack/i.test(problem.message) ? "the YAML nests too deeply to read" : problem.message
    throw configError(/call stack/i.test(problem.message) ? "TooDeep" : "Syntax", detail, { file, ...pos, cause: problem })
  }
  checkTree(doc, (offset) => ({ file, ...at(offset) }))
  let value: unknown
  try {
    value = doc.toJS({ maxAliasCount: 100 })
  } catch (cause) {
    const detail =
      cause instanceof RangeError ? "the YAML nests too deeply to read" : `cannot read the YAML: ${cause instanceof Error ? cause.message : String(cause)}`
    throw configError(cause instanceof RangeError ? "TooDeep" : "Syntax", detail, { file, cause })
  }
  checkNesting(value, file)

  const walk = (path: FieldPath): { node: Node | null; keyNode?: Node; found: boolean } => {
    let node: unknown = doc.contents
    let keyNode: Node | undefined
    for (const segment of path) {
      if (isAlias(node)) node = node.resolve(doc)
      if (isMap(node)) {
        const pair = node.items.find((p) => keyOf(p.key) === String(segment))
        if (pair === undefined) return { node: node as Node, ...(keyNode !== undefined ? { keyNode } : {}), found: false }
        keyNode = pair.key as Node
        node = pair.value
      } else if (isSeq(node) && typeof segment === "number" && segment < node.items.length) {
        keyNode = undefined
        node = node.items[segment]
      } else {
        return { node: (node ?? null) as Node | null, ...(keyNode !== undefined ? { keyNode } : {}), found: false }
      }
    }
    if (isAlias(node)) node = node.resolve(doc)
    return { node: (node ?? null) as Node | null, ...(keyNode !== undefined ? { keyNode } : {}), found: true }
  }

  const locate = (path: FieldPath, part: "key" | "value" = "value"): Position | undefined => {
    const { found, keyNode, node } = walk(path)
    // A missing field points at the key of the mapping that should hold it.
    const target = found ? (part === "key" && keyNode !== undefined ? keyNode : (node ?? keyNode)) : (keyNode ?? node)
    const range = target?.range
    if (range === undefined || range === null) return path.length === 0 ? { line: 1, column: 1 } : undefined
    return at(range[0])
  }

  const locateInString = (path: FieldPath, offset: number): Position | undefined => {
    const { found, node } = walk(path)
    if (!found || !isScalar(node) || typeof node.value !== "string" || node.range === undefined || node.range === null) {
      return locate(path)
    }
    const start = node.range[0]
    const raw = text.slice(start, node.range[1])
    const value = node.value
    // Plain scalars hold the text as written; quoted ones without escapes are one character in.
    if (node.type === "PLAIN" && raw === value) return at(start + offset)
    if ((node.type === "QUOTE_SINGLE" || node.type === "QUOTE_DOUBLE") && raw.slice(1, -1) === value) return at(start + 1 + offset)
    if (node.type === "BLOCK_LITERAL" || node.type === "BLOCK_FOLDED") {
      // Find the text of the first content line in the source and count from there.
      const firstLine = value.split("\n")[0] ?? ""
      const index = firstLine === "" ? -1 : text.indexOf(firstLine, start)
      if (index >= 0 && offset <= firstLine.length) return at(index + offset)
    }
    return at(start)
  }

  return { ...(file !== undefined ? { file } : {}), text, value, locate, locateInString }
}

const scalarKey = (node: unknown): string | undefined => {
  if (!isScalar(node)) return undefined
  const v = node.value
  return v === null || typeof v !== "object" ? `${typeof v}:${String(v)}` : undefined
}

/**
 * One pass over the parsed document, without recursion: duplicate keys of a mapping (at the
 * second one), nesting deeper than {@link maxNesting} (at the node that goes too deep) and aliases
 * that refer to a node containing them (a cycle: `a: &x [*x]`), each with its line and column.
 * Aliases are not followed, so an alias bomb costs nothing here (`toJS` bounds it).
 */
const checkTree = (doc: Document.Parsed, where: (offset: number) => { file: string | undefined; line: number; column: number }): void => {
  interface Frame {
    readonly node: unknown
    readonly depth: number
    readonly exit?: true
  }
  const open = new Set<unknown>()
  const stack: Array<Frame> = [{ node: doc.contents, depth: 0 }]
  const offsetOf = (node: unknown) => (node as Node | null)?.range?.[0] ?? 0
  while (stack.length > 0) {
    const { depth, exit, node } = stack.pop()!
    if (exit === true) {
      open.delete(node)
      continue
    }
    if (isAlias(node)) {
      const target = node.resolve(doc)
      if (target !== undefined && open.has(target)) {
        throw configError(
          "Cycle",
          `the alias *${node.source} refers to the node that contains it, a cycle; an agent file must be a tree (copy the part you need instead)`,
          where(offsetOf(node))
        )
      }
      continue
    }
    if (!isMap(node) && !isSeq(node)) continue
    if (depth >= maxNesting) throw configError("TooDeep", `the YAML nests deeper than ${maxNesting} levels`, where(offsetOf(node)))
    open.add(node)
    stack.push({ node, depth, exit: true })
    if (isMap(node)) {
      const keys = new Set<string>()
      for (const pair of node.items) {
        const key = scalarKey(pair.key)
        if (key !== undefined && key !== "string:<<") {
          if (keys.has(key)) throw configError("Syntax", "Map keys must be unique", where(offsetOf(pair.key)))
          keys.add(key)
        }
        stack.push({ node: pair.value, depth: depth + 1 })
        if (isMap(pair.key) || isSeq(pair.key)) stack.push({ node: pair.key, depth: depth + 1 })
      }
    } else {
      for (const item of node.items) stack.push({ node: item, depth: depth + 1 })
    }
  }
}

/** Reject values nested deeper than {@link maxNesting}, without recursion (through aliases, too). */
const checkNesting = (value: unknown, file: string | undefined): void => {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }]
  while (stack.length > 0) {
    const { depth, value: v } = stack.pop()!
    if (typeof v !== "object" || v === null) continue
    if (depth >= maxNesting) {
      throw configError("TooDeep", `the YAML nests deeper than ${maxNesting} levels`, { file })
    }
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push({ value: child, depth: depth + 1 })
  }
}

/**
 * Read and parse an agent file. Throws {@link ConfigError} (`NotFound`, `Unreadable`, or as
 * {@link parseSource} does).
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import { readSource } from "lambdagent/yaml"
 * const source = readSource("examples/agents/simple.yml")
 * console.log(source.file) // "examples/agents/simple.yml"
 * ```
 */
export const readSource = (path: string): Source => {
  let size: number
  try {
    const stat = statSync(path)
    if (!stat.isFile()) throw configError("Unreadable", `${path} is not a file`, { file: path })
    size = stat.size
  } catch (cause) {
    if (cause instanceof Error && "code" in cause && cause.code === "ENOENT") {
      throw configError("NotFound", "file not found", { file: path, cause })
    }
    if (typeof cause === "object" && cause !== null && "_tag" in cause) throw cause
    throw configError("Unreadable", `cannot read the file: ${cause instanceof Error ? cause.message : String(cause)}`, { file: path, cause })
  }
  if (size > maxSourceBytes) throw configError("TooLarge", tooLarge, { file: path })
  let text: string
  try {
    text = readFileSync(path, "utf8")
  } catch (cause) {
    throw configError("Unreadable", `cannot read the file: ${cause instanceof Error ? cause.message : String(cause)}`, { file: path, cause })
  }
  return parseSource(text.startsWith("\uFEFF") ? text.slice(1) : text, path)
}
