/**
 * Write the field reference of `docs/yaml.md` from the JSON Schema of agent files
 * (`npm run yaml:docs`). The reference sits between two marker comments; everything else in the
 * file is left alone. A test checks that the committed section is what this script writes.
 *
 * @since 0.1.0
 * @module
 */
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { jsonSchema } from "./schema.ts"

/** A JSON Schema node, as `z.toJSONSchema` writes them. */
interface Node {
  readonly $ref?: string
  readonly type?: string
  readonly title?: string
  readonly description?: string
  readonly properties?: Readonly<Record<string, Node>>
  readonly required?: ReadonlyArray<string>
  readonly additionalProperties?: Node | boolean
  readonly items?: Node
  readonly anyOf?: ReadonlyArray<Node>
  readonly enum?: ReadonlyArray<unknown>
  readonly const?: unknown
  readonly minimum?: number
  readonly maximum?: number
  readonly exclusiveMinimum?: number
  readonly minLength?: number
  readonly minItems?: number
  readonly format?: string
  readonly pattern?: string
}

/**
 * The first line of the generated section.
 *
 * @since 0.1.0
 * @category docs
 * @example
 * ```ts
 * import { FIELD_REFERENCE_START } from "./generate-field-reference.ts"
 * FIELD_REFERENCE_START.startsWith("<!--") // true
 * ```
 */
export const FIELD_REFERENCE_START = "<!-- field reference: generated from plugins/yaml/schema.ts by `npm run yaml:docs`; do not edit by hand -->"

/**
 * The last line of the generated section.
 *
 * @since 0.1.0
 * @category docs
 * @example
 * ```ts
 * import { FIELD_REFERENCE_END } from "./generate-field-reference.ts"
 * FIELD_REFERENCE_END // "<!-- end of the field reference -->"
 * ```
 */
export const FIELD_REFERENCE_END = "<!-- end of the field reference -->"

/** Integers zod writes as bounds of `int()`: not worth showing. */
const SAFE = Number.MAX_SAFE_INTEGER

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ")

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-")

class Writer {
  private readonly defs: Readonly<Record<string, Node>>
  /** Named definitions in the order they are first referenced. */
  readonly order: Array<string> = []

  constructor(readonly root: Node & { readonly $defs?: Readonly<Record<string, Node>> }) {
    this.defs = root.$defs ?? {}
  }

  /** Follow `$ref`s that only point at another definition. */
  private target(ref: string): { readonly id: string; readonly node: Node } {
    let id = ref.replace(/^#\/\$defs\//, "")
    let node = this.defs[id]
    const seen = new Set<string>()
    while (node?.$ref !== undefined && node.properties === undefined && node.anyOf === undefined && !seen.has(id)) {
      seen.add(id)
      id = node.$ref.replace(/^#\/\$defs\//, "")
      node = this.defs[id]
    }
    if (node === undefined) throw new Error(`the schema refers to an unknown definition ${ref}`)
    return { id, node }
  }

  /** A field's description, or that of the alias definitions its `$ref` goes through. */
  description(field: Node): string {
    let node: Node | undefined = field
    const seen = new Set<string>()
    while (node !== undefined) {
      if (node.description !== undefined) return node.description
      if (node.$ref === undefined || node.properties !== undefined || seen.has(node.$ref)) return ""
      seen.add(node.$ref)
      node = this.defs[node.$ref.replace(/^#\/\$defs\//, "")]
    }
    return ""
  }

  /** Whether a definition gets its own table (it has fields). */
  private hasTable(node: Node) {
    return node.properties !== undefined
  }

  heading(id: string): string {
    const node = this.defs[id]!
    return `${node.title ?? id} (\`${id}\`)`
  }

  /** The type of a node, in words; named objects link to their table. */
  type(node: Node): string {
    if (node.$ref !== undefined) {
      const { id, node: target } = this.target(node.$ref)
      if (!this.hasTable(target)) return this.type(target)
      if (!this.order.includes(id)) this.order.push(id)
      return `[${target.title ?? id}](#${slug(this.heading(id))})`
    }
    if (node.anyOf !== undefined) return node.anyOf.map((n) => this.type(n)).join(" or ")
    if (node.enum !== undefined) return node.enum.map((v) => `\`${String(v)}\``).join(", ")
    if (node.const !== undefined) return `\`${String(node.const)}\``
    switch (node.type) {
      case "string":
        if (node.format === "uri") return "URL"
        if (node.pattern !== undefined) return `text matching \`${node.pattern}\``
        return node.minLength !== undefined && node.minLength > 0 ? "non-empty text" : "text"
      case "integer":
      case "number": {
        const what = node.type === "integer" ? "integer" : "number"
        const min = node.minimum !== undefined && node.minimum > -SAFE ? node.minimum : undefined
        const max = node.maximum !== undefined && node.maximum < SAFE ? node.maximum : undefined
        if (node.exclusiveMinimum !== undefined) return `${what} > ${node.exclusiveMinimum}`
        if (min !== undefined && max !== undefined) return `${what} ${min}–${max}`
        if (min !== undefined) return `${what} ≥ ${min}`
        if (max !== undefined) return `${what} ≤ ${max}`
        return what
      }
      case "boolean":
        return "boolean"
      case "null":
        return "null"
      case "array":
        return `${node.minItems !== undefined && node.minItems > 0 ? "non-empty list" : "list"} of ${node.items === undefined ? "values" : this.type(node.items)}`
      case "object":
        if (node.properties !== undefined) return "mapping (below)"
        if (typeof node.additionalProperties === "object") return `mapping of name → ${this.type(node.additionalProperties)}`
        return "mapping"
      default:
        return "any value"
    }
  }

  /** Rows for the fields of an object, nested inline objects flattened to dotted paths. */
  rows(node: Node, prefix = ""): Array<string> {
    const out: Array<string> = []
    const required = new Set(node.required ?? [])
    for (const [key, field] of Object.entries(node.properties ?? {})) {
      const path = `${prefix}${key}`
      out.push(`| \`${path}\` | ${required.has(key) ? "yes" : ""} | ${cell(this.type(field))} | ${cell(this.description(field))} |`)
      out.push(...this.nested(field, path))
    }
    return out
  }

  /** The fields of an inline object under `path` (through lists and maps of them). */
  private nested(field: Node, path: string): Array<string> {
    if (field.$ref !== undefined) return []
    if (field.properties !== undefined) return this.rows(field, `${path}.`)
    if (field.type === "array" && field.items !== undefined) return this.nested(field.items, `${path}[]`)
    if (field.type === "object" && typeof field.additionalProperties === "object") return this.nested(field.additionalProperties, `${path}.<name>`)
    if (field.anyOf !== undefined) return field.anyOf.flatMap((n) => this.nested(n, path))
    return []
  }

  table(node: Node): Array<string> {
    return ["| field | required | type | description |", "|---|---|---|---|", ...this.rows(node)]
  }
}

/**
 * The field reference: a table of the top-level fields, then one table per named part of the
 * schema (model, guard, router, …), each field with whether it is required, its type and its
 * description. `schema` defaults to the schema of agent files.
 *
 * @since 0.1.0
 * @category docs
 * @example
 * ```ts
 * import { fieldReference } from "./generate-field-reference.ts"
 * fieldReference().includes("| `systemPrompt` |") // true
 * ```
 */
export const fieldReference = (schema: Record<string, unknown> = jsonSchema()): string => {
  const writer = new Writer(schema as Node)
  const sections: Array<string> = [
    "Every field of an agent file, as the schema (`plugins/yaml/schema.ts`) defines it. A sub-agent",
    "(a router route or default, a parallel branch) has the fields of an [Agent](#" + slug(`Agent (\`Agent\`)`) + "); the",
    "blocks from `runtime` on exist only at the top level. Keys not listed are errors.",
    "",
    "#### Agent file",
    "",
    ...writer.table(schema as Node)
  ]
  // Tables of named parts, in the order they are first referenced (new references join the queue).
  for (let i = 0; i < writer.order.length; i++) {
    const id = writer.order[i]!
    const node = (schema as { $defs: Record<string, Node> }).$defs[id]!
    sections.push("", `#### ${writer.heading(id)}`, "", ...writer.table(node))
  }
  return sections.join("\n")
}

/**
 * `doc` with the text between the field reference markers replaced by {@link fieldReference}.
 * Throws when the markers are missing.
 *
 * @since 0.1.0
 * @category docs
 * @example
 * ```ts
 * import { readFileSync } from "node:fs"
 * import { withFieldReference } from "./generate-field-reference.ts"
 * const doc = readFileSync("docs/yaml.md", "utf8")
 * withFieldReference(doc) === doc // true when the committed reference is current
 * ```
 */
export const withFieldReference = (doc: string, schema?: Record<string, unknown>): string => {
  const start = doc.indexOf(FIELD_REFERENCE_START)
  const end = doc.indexOf(FIELD_REFERENCE_END)
  if (start < 0 || end < start) throw new Error("the document has no field reference markers")
  return `${doc.slice(0, start)}${FIELD_REFERENCE_START}\n\n${fieldReference(schema)}\n\n${doc.slice(end)}`
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = fileURLToPath(new URL("../../docs/yaml.md", import.meta.url))
  writeFileSync(target, withFieldReference(readFileSync(target, "utf8")))
  console.log(`wrote the field reference of ${target}`)
}
