/**
 * Lint output: the text format (one block per file, as the `lint` command prints it) and the
 * JSON report, whose shape is fixed by {@link LintReportSchema} (version 1; fields are only ever
 * added). `docs/lint.md` shows its JSON Schema.
 *
 * @since 0.1.0
 * @module
 */
import { Term } from "lambdagent"
import * as z from "zod"
import type { Bounds } from "./bounds.ts"
import type { Issue, YamlError } from "./errors.ts"
import type { LintResult } from "./lint.ts"

const IssueReport = z.strictObject({
  field: z.string(),
  line: z.number().int().nullable(),
  column: z.number().int().nullable(),
  message: z.string(),
  expected: z.string().nullable(),
  actual: z.string().nullable(),
  suggestion: z.string().nullable(),
  rule: z.string().nullable()
})

const ErrorReport = z.strictObject({
  tag: z.enum(["ConfigError", "SchemaError", "SemanticError"]),
  message: z.string(),
  line: z.number().int().nullable(),
  column: z.number().int().nullable(),
  issues: z.array(IssueReport)
})

const FindingReport = z.strictObject({
  rule: z.string().regex(/^L\d{3}$/),
  level: z.enum(["error", "warn", "info"]),
  field: z.string(),
  path: z.array(z.union([z.string(), z.number().int()])),
  line: z.number().int().nullable(),
  column: z.number().int().nullable(),
  message: z.string(),
  lambda: z.string()
})

const BoundsReport = z.strictObject({
  llmCalls: z.number().int().nullable().describe("null: unbounded"),
  toolCalls: z.number().int().nullable().describe("null: unbounded")
})

const Counts = z.strictObject({ error: z.number().int(), warn: z.number().int(), info: z.number().int() })

const FileReport = z.strictObject({
  file: z.string().nullable(),
  agent: z.string().nullable(),
  error: ErrorReport.nullable().describe("set when the file could not be read or does not have the shape of an agent file"),
  findings: z.array(FindingReport),
  bounds: BoundsReport.nullable(),
  counts: Counts
})

/**
 * The JSON lint report: `version` (1), one entry per file, the totals and the exit code.
 *
 * @since 0.1.0
 * @category schemas
 * @example
 * ```ts
 * import { lint, lintReport, LintReportSchema } from "lambdagent/yaml"
 * LintReportSchema.parse(lintReport([lint("examples/agents/simple.yml")]))
 * ```
 */
export const LintReportSchema = z
  .strictObject({
    version: z.literal(1),
    files: z.array(FileReport),
    counts: z.strictObject({
      files: z.number().int(),
      failed: z.number().int().describe("files with an error (not linted)"),
      error: z.number().int(),
      warn: z.number().int(),
      info: z.number().int()
    }),
    exitCode: z.union([z.literal(0), z.literal(2), z.literal(3), z.literal(4)])
  })
  .meta({ title: "lambdagent lint report" })

/**
 * The JSON lint report.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LintReport } from "lambdagent/yaml"
 * const empty: LintReport = { version: 1, files: [], counts: { files: 0, failed: 0, error: 0, warn: 0, info: 0 }, exitCode: 0 }
 * ```
 */
export type LintReport = z.output<typeof LintReportSchema>

const issueReport = (i: Issue) => ({
  field: i.field,
  line: i.line ?? null,
  column: i.column ?? null,
  message: i.message,
  expected: i.expected ?? null,
  actual: i.actual ?? null,
  suggestion: i.suggestion ?? null,
  rule: i.rule ?? null
})

/**
 * A YAML error as it appears in JSON reports.
 *
 * @since 0.1.0
 * @category formatting
 * @example
 * ```ts
 * import { configError, errorReport } from "lambdagent/yaml"
 * errorReport(configError("NotFound", "file not found", { file: "a.yml" })).tag // "ConfigError"
 * ```
 */
export const errorReport = (e: YamlError) => ({
  tag: e._tag,
  message: e.message,
  line: e.line ?? null,
  column: e.column ?? null,
  issues: e._tag === "ConfigError" ? [] : e.issues.map(issueReport)
})

const boundsReport = (b: Bounds) => ({
  llmCalls: Number.isFinite(b.llmCalls) ? b.llmCalls : null,
  toolCalls: Number.isFinite(b.toolCalls) ? b.toolCalls : null
})

/**
 * The exit code of a set of lint results: 2 when a file could not be linted (YAML or schema
 * error; 4 when it was not found), otherwise 3 when there are error findings, otherwise 0.
 *
 * @since 0.1.0
 * @category formatting
 * @example
 * ```ts
 * import { lint, lintExitCode } from "lambdagent/yaml"
 * lintExitCode([lint("examples/agents/simple.yml")]) // 0
 * ```
 */
export const lintExitCode = (results: ReadonlyArray<LintResult>): 0 | 2 | 3 | 4 => {
  if (results.some((r) => r.error?._tag === "ConfigError" && r.error.reason === "NotFound")) return 4
  if (results.some((r) => r.error !== undefined)) return 2
  if (results.some((r) => r.counts.error > 0)) return 3
  return 0
}

/**
 * Build the JSON report of lint results.
 *
 * @since 0.1.0
 * @category formatting
 * @example
 * ```ts
 * import { lint, lintReport } from "lambdagent/yaml"
 * const report = lintReport([lint("examples/agents/react.yml")])
 * console.log(report.files[0]!.bounds) // { llmCalls: 12, toolCalls: 12 }
 * ```
 */
export const lintReport = (results: ReadonlyArray<LintResult>): LintReport => {
  const counts = { files: results.length, failed: 0, error: 0, warn: 0, info: 0 }
  const files = results.map((r) => {
    if (r.error !== undefined) counts.failed++
    counts.error += r.counts.error
    counts.warn += r.counts.warn
    counts.info += r.counts.info
    return {
      file: r.file ?? null,
      agent: r.name ?? null,
      error: r.error === undefined ? null : errorReport(r.error),
      findings: r.findings.map((f) => ({
        rule: f.rule,
        level: f.level,
        field: f.field,
        path: [...f.path],
        line: f.line ?? null,
        column: f.column ?? null,
        message: f.message,
        lambda: f.lambda
      })),
      bounds: r.bounds === undefined ? null : boundsReport(r.bounds),
      counts: { ...r.counts }
    }
  })
  return { version: 1, files, counts, exitCode: lintExitCode(results) }
}

const RULE_LINE = "=".repeat(60)
const END_LINE = "─".repeat(60)
const MARK = { error: "✗ [ERROR]", warn: "⚠ [WARN] ", info: "ℹ [INFO] " } as const

const clip = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max)}…`)

/**
 * One file's lint result as text:
 *
 * ```
 * lambdagent lint: agent.yml
 * ============================================================
 *   ✗ [ERROR] L004 mcp.localTools (12:3): react agent without a terminate tool: …
 *     Lambda: Y without the base case terminate = λx.x: …
 *   ℹ [INFO]  summary: Agent 'X' Lambda structure:
 *     Y₁₂(…)
 * ────────────────────────────────────────────────────────────
 *   1 error(s), 0 warning(s), 0 info(s)
 * ```
 *
 * @since 0.1.0
 * @category formatting
 * @example
 * ```ts
 * import { formatLintResult, lint } from "lambdagent/yaml"
 * console.log(formatLintResult(lint("examples/agents/router.yml")))
 * ```
 */
export const formatLintResult = (r: LintResult, options: { readonly summary?: boolean } = {}): string => {
  const lines = [`lambdagent lint: ${r.file ?? "<text>"}`, RULE_LINE]
  if (r.error !== undefined) {
    r.error.message.split("\n").forEach((line, i) => lines.push(i === 0 ? `  ${MARK.error} ${line}` : `    ${line}`))
    lines.push(END_LINE, `  not linted: ${r.error._tag === "ConfigError" ? "the file cannot be read as YAML" : "the file is not a valid agent file"}`)
    return lines.join("\n")
  }
  for (const f of r.findings) {
    const where = f.line === undefined ? "" : ` (${f.line}:${f.column})`
    lines.push(`  ${MARK[f.level]} ${f.rule} ${f.field}${where}: ${f.message}`, `    Lambda: ${f.lambda}`)
  }
  if (options.summary !== false && r.term !== undefined) {
    lines.push(`  ${MARK.info} summary: Agent '${r.name ?? "agent"}' Lambda structure:`, `    ${clip(Term.pretty(r.term), 300)}`)
  }
  lines.push(END_LINE, `  ${r.counts.error} error(s), ${r.counts.warn} warning(s), ${r.counts.info} info(s)`)
  return lines.join("\n")
}

/**
 * Several files' lint results as text, with a total line when there is more than one.
 *
 * @since 0.1.0
 * @category formatting
 * @example
 * ```ts
 * import { formatLintText, lint } from "lambdagent/yaml"
 * console.log(formatLintText([lint("examples/agents/simple.yml"), lint("examples/agents/chain.yml")]))
 * ```
 */
export const formatLintText = (results: ReadonlyArray<LintResult>, options: { readonly summary?: boolean } = {}): string => {
  const blocks = results.map((r) => formatLintResult(r, options))
  if (results.length > 1) {
    const report = lintReport(results)
    const c = report.counts
    blocks.push(`${c.files} file(s)${c.failed > 0 ? `, ${c.failed} not linted` : ""}: ${c.error} error(s), ${c.warn} warning(s), ${c.info} info(s)`)
  }
  return blocks.join("\n\n")
}

/**
 * The JSON Schema (draft 2020-12) of the JSON lint report, as printed in `docs/lint.md`.
 *
 * @since 0.1.0
 * @category schemas
 * @example
 * ```ts
 * import { lintReportJsonSchema } from "lambdagent/yaml"
 * lintReportJsonSchema().title // "lambdagent lint report"
 * ```
 */
export const lintReportJsonSchema = (): Record<string, unknown> => z.toJSONSchema(LintReportSchema, { target: "draft-2020-12" }) as Record<string, unknown>
