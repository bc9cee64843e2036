/**
 * `lambdagent/yaml`: agent files in YAML, compiled to terms of the core language.
 *
 * - {@link fromConfig} / {@link loadConfig}: a file (or YAML text) to a `Term` (and the tools,
 *   memory stores and budget a runtime needs around it).
 * - {@link lint}: the L001–L041 rules, bounds on LLM and tool calls, tool references, reachability.
 * - {@link describe} / {@link toLambdaExpr}: the structure of an agent and its lambda expression.
 * - {@link compileCommand} / {@link lintCommand} / {@link lambdaCommand}: the CLI commands as pure
 *   functions.
 * - `lambdagent/yaml/schema.json`: the JSON Schema of agent files, for editors.
 *
 * See `docs/yaml.md` and `docs/lint.md`.
 *
 * @since 0.1.0
 * @module lambdagent/yaml
 */
export * from "./bounds.ts"
export * from "./builtins.ts"
export * from "./commands.ts"
export * from "./compile.ts"
export * from "./describe.ts"
export * from "./diff.ts"
export * from "./errors.ts"
export * from "./fix.ts"
export * from "./lint.ts"
export * from "./migrate.ts"
export * from "./reference.ts"
export * from "./report.ts"
export * from "./rules.ts"
export * from "./sandbox.ts"
export * from "./schema.ts"
export * from "./source.ts"
export * from "./suggest.ts"
export * from "./validate.ts"
export * from "./validators.ts"
