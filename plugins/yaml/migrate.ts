/**
 * `lambdagent migrate`: rewriting an agent file written for the Python reference into this
 * format. The YAML is edited in place (comments, order and style of the untouched fields are
 * kept); the command shows the diff and what each change means, and writes only with `--write`.
 *
 * @since 0.2.0
 * @module
 */
import { renameSync, writeFileSync } from "node:fs"
import { type Document, isAlias, isMap, isScalar, isSeq, parseDocument, type YAMLMap, type YAMLSeq } from "yaml"
import { unifiedDiff } from "./diff.ts"
import { type FieldPath, formatFieldPath, isYamlError } from "./errors.ts"
import type { CommandResult } from "./commands.ts"
import { lintSource } from "./lint.ts"
import { migrationFields, type ReferenceField } from "./reference.ts"
import { parseSource, readSource } from "./source.ts"

/**
 * The result of migrating one file: the new text and the changes that lead to it.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { migrateText } from "lambdagent/yaml"
 * const m = migrateText("type: simple\nsystemPrompt: Hi\nhooks: {pre: [x]}\n")
 * console.log(m.text) // "type: simple\nsystemPrompt: Hi\n"
 * console.log(m.changes.length) // 1
 * ```
 */
export interface Migration {
  readonly text: string
  readonly changes: ReadonlyArray<ReferenceField>
}

/**
 * Migrate YAML text: apply every change of {@link migrationFields} to the document, keeping the
 * rest of the text as written. Text with nothing to change comes back unchanged. Throws the
 * `ConfigError` of text that is not YAML.
 *
 * @since 0.2.0
 * @category commands
 * @example
 * ```ts
 * import { migrateText } from "lambdagent/yaml"
 * const m = migrateText("type: simple\nagentId: helper\nmax_iter: 3\n")
 * console.log(m.text) // "type: simple\nagentId: helper\nsystemPrompt: You are a helpful assistant.\n"
 * ```
 */
export const migrateText = (text: string, file?: string): Migration => {
  const changes = migrationFields(parseSource(text, file).value)
  if (changes.length === 0) return { text, changes }
  const doc = parseDocument(text)
  for (const { fix } of changes) {
    const parent = collectionAt(doc, fix.path.slice(0, -1))
    const key = fix.path[fix.path.length - 1]!
    if (parent === undefined) continue
    if (fix._tag === "set") {
      parent.set(key, doc.createNode(fix.value))
      continue
    }
    if (fix._tag === "rename") {
      const pair = isMap(parent) ? parent.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === key) : undefined
      if (pair !== undefined) pair.key = doc.createNode(fix.to)
      continue
    }
    parent.delete(key)
    // A block the removal left empty goes too, as the compiler reads it.
    for (let at = fix.path.slice(0, -1); at.length > 0; at = at.slice(0, -1)) {
      const node = collectionAt(doc, at)
      if (!isMap(node) || node.items.length > 0) break
      collectionAt(doc, at.slice(0, -1))?.delete(at[at.length - 1]!)
    }
  }
  return { text: doc.toString({ flowCollectionPadding: false, lineWidth: 0 }), changes }
}

/**
 * The mapping or list at `path`, following aliases (a field under an anchor is changed where the
 * anchor is, for every alias of it); `undefined` when the path leads elsewhere (through a merge
 * key: the merged mapping is changed through its own path, if the file has one).
 */
const collectionAt = (doc: Document, path: FieldPath): YAMLMap | YAMLSeq | undefined => {
  let node: unknown = doc.contents
  for (const segment of [undefined, ...path]) {
    if (segment !== undefined) node = isMap(node) || isSeq(node) ? node.get(segment, true) : undefined
    if (isAlias(node)) node = node.resolve(doc)
  }
  return isMap(node) || isSeq(node) ? node : undefined
}

/**
 * Options of {@link migrateCommand}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { MigrateCommandOptions } from "lambdagent/yaml"
 * const o: MigrateCommandOptions = { write: true, format: "json" }
 * ```
 */
export interface MigrateCommandOptions {
  /** Write the migrated file in place (default: only show the diff). */
  readonly write?: boolean
  /** `text` (the diff and the changes, default) or `json`. */
  readonly format?: "text" | "json"
}

const describeChange = (c: ReferenceField): string =>
  c.fix._tag === "set"
    ? `${formatFieldPath(c.path)}: set to ${JSON.stringify(c.fix.value)} (${c.why})`
    : c.fix._tag === "rename"
      ? `${formatFieldPath(c.path)}: renamed ${c.fix.to} (${c.why})`
      : `${formatFieldPath(c.path)}: removed (${c.why})`

/**
 * `lambdagent migrate CONFIG [--write] [--format text|json]`: the diff from the file to its
 * migrated form and the reason for each change; with `write`, the file is replaced (atomically).
 * After the changes, the file is linted: its remaining errors are reported (exit code 3), since
 * some reference configs need a decision no rewrite can make. Exit codes: 0 done (or nothing to
 * do), 2 the file is not YAML, 3 the migrated file still has lint errors, 4 not found.
 *
 * @since 0.2.0
 * @category commands
 * @example
 * ```ts
 * import { migrateCommand } from "lambdagent/yaml"
 * const r = migrateCommand("examples/agents/react.yml")
 * console.log(r.exitCode) // 0
 * ```
 */
export const migrateCommand = (file: string, options: MigrateCommandOptions = {}): CommandResult => {
  const json = options.format === "json"
  let original: string
  let migration: Migration
  try {
    const source = readSource(file)
    original = source.text
    migration = migrateText(original, file)
  } catch (e) {
    if (!isYamlError(e)) throw e
    const code = e._tag === "ConfigError" && e.reason === "NotFound" ? 4 : 2
    const message = `${file}: ${e.message}`
    return json
      ? { stdout: `${JSON.stringify({ file, error: { tag: e._tag, message } }, null, 2)}\n`, stderr: "", exitCode: code }
      : { stdout: "", stderr: `error: ${message}\n`, exitCode: code }
  }
  const written = options.write === true && migration.changes.length > 0
  if (written) {
    const temporary = `${file}.migrate-${process.pid}.tmp`
    writeFileSync(temporary, migration.text)
    renameSync(temporary, file)
  }
  const after = lintSource(parseSource(migration.text, file), { level: "error" })
  const remaining = after.error !== undefined ? [after.error.message] : after.findings.map((f) => `${f.field}: ${f.message} [${f.rule}]`)
  const exitCode = remaining.length > 0 ? 3 : 0
  if (json) {
    const report = {
      file,
      written,
      changes: migration.changes.map((c) => ({
        field: formatFieldPath(c.path),
        action: c.fix._tag === "set" ? "set" : c.fix._tag === "rename" ? "renamed" : "removed",
        ...(c.fix._tag === "set" ? { value: c.fix.value } : {}),
        ...(c.fix._tag === "rename" ? { to: c.fix.to } : {}),
        why: c.why
      })),
      diff: unifiedDiff(original, migration.text, { from: file, to: `${file} (migrated)` }),
      remainingErrors: remaining
    }
    return { stdout: `${JSON.stringify(report, null, 2)}\n`, stderr: "", exitCode }
  }
  const lines: Array<string> = []
  if (migration.changes.length === 0) lines.push(`${file}: nothing to migrate`)
  else {
    lines.push(unifiedDiff(original, migration.text, { from: file, to: `${file} (migrated)` }).trimEnd())
    lines.push("", `${migration.changes.length} change${migration.changes.length === 1 ? "" : "s"}:`)
    for (const c of migration.changes) lines.push(`  ${describeChange(c)}`)
    lines.push(written ? `\nwrote ${file}` : `\nnot written: run again with --write to apply`)
  }
  const stderr = remaining.length > 0 ? `the migrated file still has errors (see lambdagent lint):\n${remaining.map((r) => `  ${r}\n`).join("")}` : ""
  return { stdout: `${lines.join("\n")}\n`, stderr, exitCode }
}
