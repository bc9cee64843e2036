import { readdirSync, readFileSync } from "node:fs"
import { Ajv2020 } from "ajv/dist/2020.js"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { FIELD_REFERENCE_END, FIELD_REFERENCE_START, fieldReference, withFieldReference } from "./generate-field-reference.ts"
import { schemaFileText } from "./generate-schema.ts"
import { lint } from "./lint.ts"
import { lintReportJsonSchema } from "./report.ts"
import { lintRules } from "./rules.ts"
import { AgentFileSchema, jsonSchema } from "./schema.ts"

const examples = readdirSync("examples/agents")
  .filter((f) => f.endsWith(".yml"))
  .sort()

describe("the JSON Schema for editors", () => {
  it("is committed as generated (run npm run yaml:schema after changing schema.ts)", () => {
    expect(readFileSync("plugins/yaml/schema.json", "utf8")).toBe(schemaFileText())
  })

  it("is a valid draft 2020-12 schema", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    expect(() => ajv.compile(jsonSchema())).not.toThrow()
  })

  it("accepts every example and rejects a typo at any depth", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    const validate = ajv.compile(jsonSchema())
    for (const file of examples) {
      const value = parse(readFileSync(`examples/agents/${file}`, "utf8"))
      expect(validate(value), `${file}: ${JSON.stringify(validate.errors)}`).toBe(true)
      expect(AgentFileSchema.safeParse(value).success).toBe(true)
    }
    expect(validate({ type: "simple", systemPromt: "x" })).toBe(false)
    expect(validate({ type: "router", router: { classifier: { prompt: "p" }, routes: { a: { systemPrompt: "a", modle: {} } } } })).toBe(false)
    expect(validate({ type: "simple", model: { temperature: 5 } })).toBe(false)
    expect(validate({ systemPrompt: "no type" })).toBe(false)
  })

  it("takes a demo plan at the top level only: an input and at least one reply", () => {
    const demo = { input: "What is 19 + 23?", plan: ['{"tool": "run", "args": 1}', "{{observation}}"] }
    expect(AgentFileSchema.safeParse({ type: "react", demo }).success).toBe(true)
    expect(AgentFileSchema.safeParse({ type: "react", demo: { input: "x", plan: [] } }).success).toBe(false)
    expect(AgentFileSchema.safeParse({ type: "react", demo: { plan: ["x"] } }).success).toBe(false)
    expect(AgentFileSchema.safeParse({ type: "react", demo: { ...demo, replies: ["x"] } }).success).toBe(false)
    const nested = "type: router\nrouter:\n  classifier: {prompt: p}\n  routes:\n    a: {systemPrompt: a, demo: {input: x, plan: [y]}}\n"
    expect(lint(nested).error?.message).toMatch(/demo.*top level/)
  })

  it("describes fields, for hover help", () => {
    const schema = jsonSchema() as {
      properties: Record<string, { description?: string }>
      $defs: Record<string, { properties: Record<string, { description?: string }> }>
    }
    expect(schema.properties.systemPrompt!.description).toMatch(/λ body/)
    expect(schema.$defs.Model!.properties.temperature!.description).toMatch(/0 to 2/)
  })
})

describe("the examples", () => {
  it.each(examples)("%s points editors at the schema and lints clean", (file) => {
    const text = readFileSync(`examples/agents/${file}`, "utf8")
    expect(text.split("\n")[0]).toBe("# yaml-language-server: $schema=../../plugins/yaml/schema.json")
    const result = lint(`examples/agents/${file}`)
    expect(result.error).toBeUndefined()
    expect(result.findings.filter((f) => f.level !== "info")).toEqual([])
  })
})

describe("the documentation", () => {
  const lintDoc = readFileSync("docs/lint.md", "utf8")
  const yamlDoc = readFileSync("docs/yaml.md", "utf8")

  it("prints the current JSON Schema of the lint report", () => {
    expect(lintDoc).toContain(`\`\`\`json\n${JSON.stringify(lintReportJsonSchema(), null, 2)}\n\`\`\``)
  })

  it("describes every rule, with its level and lambda meaning", () => {
    for (const rule of lintRules) {
      const row = lintDoc.split("\n").find((l) => l.startsWith(`| ${rule.id} |`))
      expect(row, rule.id).toBeDefined()
      expect(row).toContain(`| ${rule.level} |`)
      expect(row).toContain(rule.lambda.replace(/\|/g, "\\|"))
      expect(row!.trimEnd().endsWith(rule.blocksCompile ? "| yes |" : "| |")).toBe(true)
    }
  })

  it("has a field reference generated from the current schema (run npm run yaml:docs after changing schema.ts)", () => {
    expect(yamlDoc).toContain(FIELD_REFERENCE_START)
    expect(yamlDoc).toContain(FIELD_REFERENCE_END)
    expect(yamlDoc).toBe(withFieldReference(yamlDoc))
    expect(() => withFieldReference("# no markers\n")).toThrow(/markers/)
  })

  it("lists every field of the schema at every depth, and its links lead to its headings", () => {
    const reference = fieldReference()
    const rows = new Set(
      reference
        .split("\n")
        .filter((l) => l.startsWith("| `"))
        .map((l) => l.slice(3, l.indexOf("`", 3)))
    )
    // Every property of every object of the schema, under its path in its table.
    type Node = { properties?: Record<string, Node>; items?: Node; additionalProperties?: Node | boolean; anyOf?: Array<Node>; $ref?: string }
    const schema = jsonSchema() as Node & { $defs: Record<string, Node> }
    const paths = (node: Node, prefix: string): Array<string> => {
      if (node.$ref !== undefined) return []
      if (node.properties !== undefined) return Object.entries(node.properties).flatMap(([k, v]) => [`${prefix}${k}`, ...paths(v, `${prefix}${k}.`)])
      if (node.items !== undefined) return paths(node.items, `${prefix.slice(0, -1)}[].`)
      if (typeof node.additionalProperties === "object") return paths(node.additionalProperties, `${prefix}<name>.`)
      return (node.anyOf ?? []).flatMap((n) => paths(n, prefix))
    }
    const expected = [...paths(schema, ""), ...Object.values(schema.$defs).flatMap((d) => paths(d, ""))]
    expect(expected.length).toBeGreaterThan(100)
    expect(expected.filter((p) => !rows.has(p))).toEqual([])
    const headings = new Set(
      reference
        .split("\n")
        .filter((l) => l.startsWith("#### "))
        .map((l) =>
          l
            .slice(5)
            .toLowerCase()
            .replace(/[^\p{L}\p{N}\s_-]/gu, "")
            .replace(/\s/g, "-")
        )
    )
    const links = [...reference.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!)
    expect(links.length).toBeGreaterThan(10)
    expect(links.filter((l) => !headings.has(l))).toEqual([])
  })

  it("describes every field of the schema, for the reference and for hover help", () => {
    const undescribed = fieldReference()
      .split("\n")
      .filter((l) => l.startsWith("| `") && l.endsWith("|  |"))
    expect(undescribed).toEqual([])
  })

  it("mentions every field of the agent file", () => {
    const keys = Object.keys((AgentFileSchema as unknown as { shape: Record<string, unknown> }).shape)
    for (const key of keys) expect(yamlDoc, key).toContain(`\`${key}\``)
  })
})
