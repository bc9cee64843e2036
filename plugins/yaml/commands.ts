/**
 * The `compile`, `lint` and `lambda` commands as pure functions: they read files and return what
 * to print and the exit code, so the CLI only wires arguments to them.
 *
 * Exit codes: 0 ok, 2 a YAML, schema or semantic error, 3 lint found errors, 4 file not found.
 *
 * @since 0.1.0
 * @module
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Term } from "lambdagent"
import { type CompiledAgent, loadConfig, type Overrides, subAgentToolName } from "./compile.ts"
import { description, describe, toLambdaExpr } from "./describe.ts"
import { formatIssue, isYamlError, type YamlError } from "./errors.ts"
import { lint, type LintOptions, type LintResult } from "./lint.ts"
import { type Fix, fixConfig } from "./fix.ts"
import { errorReport, formatLintText, lintExitCode, lintReport } from "./report.ts"
import { lintRules } from "./rules.ts"
import { unifiedDiff } from "./diff.ts"

/**
 * What a command prints and how it exits.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { CommandResult } from "lambdagent/yaml"
 * const r: CommandResult = { stdout: "ok\n", stderr: "", exitCode: 0 }
 * ```
 */
export interface CommandResult {
  readonly stdout: string
  readonly stderr: string
  readonly exitCode: number
}

/**
 * The agent files a command argument names: the file itself, or the `.yml`/`.yaml` files of a
 * directory (not recursive), sorted by name. `undefined` when the path does not exist.
 *
 * @since 0.1.0
 * @category commands
 * @example
 * ```ts
 * import { agentFiles } from "lambdagent/yaml"
 * agentFiles("examples/agents")?.length // 8
 * ```
 */
export const agentFiles = (target: string): ReadonlyArray<string> | undefined => {
  let isDirectory: boolean
  try {
    isDirectory = statSync(target).isDirectory()
  } catch {
    return undefined
  }
  if (!isDirectory) return [target]
  return readdirSync(target)
    .filter((f) => /\.ya?ml$/i.test(f))
    .sort()
    .map((f) => join(target, f))
    .filter(isFile)
}

/** Whether `path` is a regular file (false when it does not exist or cannot be read). */
const isFile = (path: string): boolean => {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

const notFound = (target: string, format: "text" | "json" | "human" | "formal"): CommandResult =>
  format === "json"
    ? {
        stdout: `${JSON.stringify({ version: 1, files: [], error: { tag: "ConfigError", message: `${target}: file not found` }, exitCode: 4 }, null, 2)}\n`,
        stderr: "",
        exitCode: 4
      }
    : { stdout: "", stderr: `error: ${target}: file not found\n`, exitCode: 4 }

const errorText = (e: YamlError): string => {
  if (e._tag === "ConfigError") return `error: ${e.message}`
  const title = e._tag === "SchemaError" ? "not a valid agent file" : "the agent cannot run"
  return [`error: ${e.file ?? "<text>"}: ${title}:`, ...e.issues.map((i) => `  ${formatIssue(i, e.file)}`)].join("\n")
}

const noFiles = (target: string, format: string): CommandResult =>
  format === "json"
    ? { stdout: `${JSON.stringify({ version: 1, files: [], exitCode: 4 }, null, 2)}\n`, stderr: `error: ${target}: no .yml or .yaml files\n`, exitCode: 4 }
    : { stdout: "", stderr: `error: ${target}: no .yml or .yaml files\n`, exitCode: 4 }

/**
 * Options of {@link compileCommand}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { CompileCommandOptions } from "lambdagent/yaml"
 * const o: CompileCommandOptions = { format: "json", validate: true }
 * ```
 */
export interface CompileCommandOptions {
  /** `text` (the structure, default) or `json`. */
  readonly format?: "text" | "json"
  /** Also lint each file; lint errors make the exit code 3. */
  readonly validate?: boolean
  /** Options for the lint run of `validate`. */
  readonly lint?: LintOptions
  readonly overrides?: Overrides
}

const compiledJson = (agent: CompiledAgent) => {
  const d = description(agent)
  return {
    file: agent.file ?? null,
    name: agent.name,
    type: agent.type,
    error: null,
    lambda: d.lambda,
    structure: d.structure,
    constructs: d.constructs,
    bounds: {
      llmCalls: Number.isFinite(d.bounds.llmCalls) ? d.bounds.llmCalls : null,
      toolCalls: Number.isFinite(d.bounds.toolCalls) ? d.bounds.toolCalls : null
    },
    tools: agent.tools.map((t) => ({
      name: t.name,
      kind: t.kind,
      declared: t.declared,
      usedAt: t.usedAt,
      ...(t.server !== undefined ? { server: t.server } : {}),
      ...(t.connection !== undefined ? { connection: t.connection } : {}),
      ...(t.cli !== undefined ? { cli: t.cli } : {}),
      ...(t.a2a !== undefined ? { a2a: t.a2a } : {})
    })),
    memory: agent.memory,
    ...(agent.sharedMemory !== undefined ? { sharedMemory: agent.sharedMemory } : {}),
    budget: agent.budget,
    term: Term.encode(agent.term)
  }
}

const jsonText = (value: unknown): string =>
  `${JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? (JSON as unknown as { rawJSON: (s: string) => unknown }).rawJSON(v.toString()) : v), 2)}\n`

/**
 * `lambdagent compile FILE|DIR [--format text|json] [--validate]`: compile each file and print
 * its structure (text) or its term, bounds and tools (JSON, `{version: 1, files: […], exitCode}`).
 *
 * @since 0.1.0
 * @category commands
 * @example
 * ```ts
 * import { compileCommand } from "lambdagent/yaml"
 * const { stdout, exitCode } = compileCommand("examples/agents/simple.yml")
 * console.log(exitCode, stdout.split("\n")[0]) // 0 "Summarizer ="
 * ```
 */
export const compileCommand = (target: string, options: CompileCommandOptions = {}): CommandResult => {
  const format = options.format ?? "text"
  const files = agentFiles(target)
  if (files === undefined) return notFound(target, format)
  if (files.length === 0) return noFiles(target, format)
  const out: Array<string> = []
  const err: Array<string> = []
  const entries: Array<unknown> = []
  let failed = false
  const lintResults: Array<LintResult> = []
  for (const file of files) {
    let agent: CompiledAgent
    try {
      agent = loadConfig({ path: file }, options.overrides ?? {})
    } catch (e) {
      if (!isYamlError(e)) throw e
      failed = true
      err.push(errorText(e))
      entries.push({ file, error: errorReport(e) })
      continue
    }
    const lintResult =
      options.validate === true
        ? lint({ path: file }, { ...options.lint, ...(options.overrides !== undefined ? { overrides: options.overrides } : {}) })
        : undefined
    if (lintResult !== undefined) lintResults.push(lintResult)
    if (format === "json") {
      entries.push({ ...compiledJson(agent), ...(lintResult !== undefined ? { lint: lintReport([lintResult]).files[0] } : {}) })
    } else {
      out.push(describe(agent) + (lintResult !== undefined ? `\n\n--- Lint ---\n${formatLintText([lintResult], { summary: false })}` : ""))
    }
  }
  const exitCode = failed ? 2 : lintExitCode(lintResults) === 3 ? 3 : 0
  if (format === "json") {
    return { stdout: jsonText({ version: 1, files: entries, exitCode }), stderr: "", exitCode }
  }
  return {
    stdout: out.length === 0 ? "" : `${out.join("\n\n")}\n`,
    stderr: err.length === 0 ? "" : `${err.join("\n")}\n`,
    exitCode
  }
}

/**
 * Options of {@link lintCommand}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LintCommandOptions } from "lambdagent/yaml"
 * const o: LintCommandOptions = { format: "json", level: "warn", rules: ["L004", "L011"], maxLlmCalls: 50 }
 * ```
 */
export interface LintCommandOptions extends LintOptions {
  /** `text` (default) or `json` (see `LintReportSchema`). */
  readonly format?: "text" | "json"
  /** `--fix`: repair what is mechanically fixable (see `fixConfig`), show the diff, lint the result. */
  readonly fix?: boolean
  /** With `fix`: show the diff and lint the repaired text, writing nothing. */
  readonly dryRun?: boolean
}

/**
 * `lambdagent lint FILE|DIR [--level] [--format text|json] [--rules] [--ignore] [--max-llm-calls N]`.
 * Exit 0 without error findings, 3 with, 2 when a file is not a valid agent file, 4 when the
 * target does not exist.
 *
 * @since 0.1.0
 * @category commands
 * @example
 * ```ts
 * import { lintCommand } from "lambdagent/yaml"
 * lintCommand("examples/agents", { format: "json" }).exitCode // 0
 * ```
 */
export const lintCommand = (target: string, options: LintCommandOptions = {}): CommandResult => {
  const format = options.format ?? "text"
  const files = agentFiles(target)
  if (files === undefined) return notFound(target, format)
  if (files.length === 0) return noFiles(target, format)
  const unknownRules = [...(options.rules ?? []), ...(options.ignore ?? [])].filter((r) => !/^L\d{3}$/i.test(r))
  if (unknownRules.length > 0) {
    return {
      stdout: "",
      stderr: `error: unknown rule id${unknownRules.length > 1 ? "s" : ""} ${unknownRules.join(", ")} (rules are ${lintRules[0]!.id}…${lintRules.at(-1)!.id})\n`,
      exitCode: 2
    }
  }
  if (options.fix === true) return lintFixed(files, options, format)
  const results = files.map((file) => lint({ path: file }, options))
  const exitCode = lintExitCode(results)
  if (format === "json") return { stdout: jsonText(lintReport(results)), stderr: "", exitCode }
  return { stdout: `${formatLintText(results, { summary: options.level === undefined || options.level === "info" })}\n`, stderr: "", exitCode }
}

/** `lint --fix [--dry-run]`: repair each file (or only show how), then lint the repaired text. */
const lintFixed = (files: ReadonlyArray<string>, options: LintCommandOptions, format: "text" | "json"): CommandResult => {
  const dryRun = options.dryRun === true
  const repaired: Array<{ readonly file: string; readonly fixes: ReadonlyArray<Fix>; readonly diff: string }> = []
  const results = files.map((file) => {
    const before = readFileSync(file, "utf8")
    const { text, fixes } = fixConfig(before)
    repaired.push({ file, fixes, diff: unifiedDiff(before, text, { from: file, to: `${file} (fixed)` }) })
    if (fixes.length > 0 && !dryRun) writeFileSync(file, text)
    return lint(dryRun ? { text, file } : { path: file }, options)
  })
  const exitCode = lintExitCode(results)
  if (format === "json") return { stdout: jsonText({ ...lintReport(results), dryRun, fixed: repaired }), stderr: "", exitCode }
  const count = repaired.reduce((n, r) => n + r.fixes.length, 0)
  const summary =
    count === 0
      ? "lint --fix: nothing to fix"
      : `lint --fix: ${count} fix${count === 1 ? "" : "es"} ${dryRun ? "would be made (--dry-run: nothing written)" : "made"}:\n${repaired
          .flatMap((r) => r.fixes.map((f) => `  ${r.file}: ${f.rule} ${f.field}: ${f.message}`))
          .join("\n")}`
  const diffs = repaired.map((r) => r.diff).join("")
  return {
    stdout: `${diffs}${diffs === "" ? "" : "\n"}${formatLintText(results, { summary: options.level === undefined || options.level === "info" })}\n`,
    stderr: `${summary}\n`,
    exitCode
  }
}

/**
 * Options of {@link lambdaCommand}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LambdaCommandOptions } from "lambdagent/yaml"
 * const o: LambdaCommandOptions = { format: "formal", desugar: true }
 * ```
 */
export interface LambdaCommandOptions {
  readonly format?: "human" | "formal" | "json"
  readonly desugar?: boolean
  readonly overrides?: Overrides
}

/**
 * `lambdagent lambda FILE [--format human|formal|json] [--desugar]`: print the agent as a lambda
 * expression.
 *
 * @since 0.1.0
 * @category commands
 * @example
 * ```ts
 * import { lambdaCommand } from "lambdagent/yaml"
 * lambdaCommand("examples/agents/chain.yml", { format: "formal" }).stdout.startsWith("Report writer = ") // true
 * ```
 */
export const lambdaCommand = (file: string, options: LambdaCommandOptions = {}): CommandResult => {
  const format = options.format ?? "human"
  if (!isFile(file)) return notFound(file, format)
  try {
    const agent = loadConfig({ path: file }, options.overrides ?? {})
    return {
      stdout: `${toLambdaExpr(agent, { format, ...(options.desugar !== undefined ? { desugar: options.desugar } : {}) }).replace(/\n$/, "")}\n`,
      stderr: "",
      exitCode: 0
    }
  } catch (e) {
    if (!isYamlError(e)) throw e
    return format === "json"
      ? { stdout: jsonText({ error: errorReport(e) }), stderr: "", exitCode: 2 }
      : { stdout: "", stderr: `${errorText(e)}\n`, exitCode: 2 }
  }
}

/**
 * One entry of {@link skillsCommand}'s listing: a skill or a sub-agent of the file.
 *
 * @since 0.2.0
 * @category commands
 * @example
 * ```ts
 * import type { SkillListing } from "lambdagent/yaml"
 * const s: SkillListing = { kind: "skill", name: "headline", tool: "headline", tags: ["text"], input: "Str", output: "Str" }
 * ```
 */
export interface SkillListing {
  readonly kind: "skill" | "subagent"
  readonly name: string
  /** The tool name agents call it by. */
  readonly tool: string
  readonly description?: string
  readonly tags: ReadonlyArray<string>
  readonly input: string
  readonly output: string
  /** For a sub-agent: its file (`config:`), else absent (inline). */
  readonly config?: string
}

/**
 * `lambdagent skills list CONFIG [--format text|json]`: the skills and sub-agents of an agent
 * file, with the tool names agents call them by.
 *
 * @since 0.2.0
 * @category commands
 * @example
 * ```ts
 * import { skillsCommand } from "lambdagent/yaml"
 * skillsCommand("examples/agents/assistant.yml").stdout.includes("headline") // true
 * ```
 */
export const skillsCommand = (file: string, options: { readonly format?: "text" | "json" } = {}): CommandResult => {
  const format = options.format ?? "text"
  if (!isFile(file)) return notFound(file, format)
  let agent: CompiledAgent
  try {
    agent = loadConfig({ path: file })
  } catch (e) {
    if (!isYamlError(e)) throw e
    return format === "json"
      ? { stdout: jsonText({ error: errorReport(e) }), stderr: "", exitCode: 2 }
      : { stdout: "", stderr: `${errorText(e)}\n`, exitCode: 2 }
  }
  const entries: Array<SkillListing> = [
    ...(agent.config.skills ?? []).map(
      (s): SkillListing => ({
        kind: "skill",
        name: s.name,
        tool: s.name,
        ...(s.description !== undefined ? { description: s.description } : {}),
        tags: s.tags ?? [],
        input: s.inputType ?? "Str",
        output: s.outputType ?? "Str"
      })
    ),
    ...Object.entries(agent.config.subAgents ?? {}).map(
      ([name, s]): SkillListing => ({
        kind: "subagent",
        name,
        tool: subAgentToolName(name, s),
        ...(s.description !== undefined ? { description: s.description } : {}),
        tags: s.tags ?? [],
        input: "Str",
        output: "Str",
        ...(s.config !== undefined ? { config: s.config } : {})
      })
    )
  ]
  if (format === "json") return { stdout: jsonText({ file, skills: entries }), stderr: "", exitCode: 0 }
  if (entries.length === 0) return { stdout: `${file}: no skills or sub-agents\n`, stderr: "", exitCode: 0 }
  const lines = entries.map((e) => {
    const tags = e.tags.length > 0 ? ` [${e.tags.join(", ")}]` : ""
    const where = e.config !== undefined ? ` (${e.config})` : ""
    return `  ${e.kind === "skill" ? "skill   " : "subagent"} ${e.tool}: ${e.input} → ${e.output}${tags}${where}${e.description !== undefined ? ` — ${e.description}` : ""}`
  })
  return { stdout: `${file}:\n${lines.join("\n")}\n`, stderr: "", exitCode: 0 }
}
