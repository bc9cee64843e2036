/**
 * `lambdagent compile | lint | migrate | lambda | skills list`: the YAML plugin's commands.
 */
import type { Host } from "./plugins.ts"
import type { Registration } from "./shell.ts"
import { integer, oneOf, textOrJson, usageError } from "./options.ts"

const emit = (result: { readonly stdout: string; readonly stderr: string; readonly exitCode: number }) => {
  process.stdout.write(result.stdout)
  process.stderr.write(result.stderr)
  process.exitCode = result.exitCode
}

const list = (text: string | undefined) =>
  text === undefined
    ? undefined
    : text
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "")

/**
 * `compile --format`: text or json. Python is refused with the reason: a config compiles to a term
 * that lambdagent's runtime runs, and no generator of Python source exists.
 */
const compileFormat = (text: string): "text" | "json" => {
  if (text.toLowerCase() === "python") {
    throw usageError(
      "--format python is not supported: a config compiles to a lambdagent term, which lambdagent's runtime runs; no Python source is generated. Use --format json for the term, or run it with lambdagent run"
    )
  }
  return textOrJson(text)
}

/** `compile --dry-run`: compile, then check every tool's reachability (the full program provides it). */
export type CompileDryRun = (
  target: string,
  options: { readonly format: "text" | "json"; readonly validate?: boolean; readonly timeoutMs?: number },
  host: Host
) => Promise<{ readonly stdout: string; readonly stderr: string; readonly exitCode: number }>

/** The YAML commands; `dryRun` is given by the full program (the lean one starts no runtime). */
export const yamlCommands =
  (dryRun?: CompileDryRun): Registration =>
  (program, run, host) => {
    registerCommands(program, run, host, dryRun)
  }

const registerCommands = (program: Parameters<Registration>[0], run: Parameters<Registration>[1], host: Host, dryRun: CompileDryRun | undefined) => {
  program
    .command("compile")
    .description("compile agent configs (a file or a directory) and print their lambda structure")
    .argument("<target>", "a .yml/.yaml file or a directory of them")
    .option("--format <format>", "text or json (python is refused: no Python source is generated)", compileFormat, "text")
    .option("--validate", "also lint; lint errors give exit code 3")
    .option("--dry-run", "also check that every tool can be reached (MCP servers pinged, programs found on PATH); exit 1 if one cannot")
    .option("--timeout <seconds>", "with --dry-run: how long to wait for each server (default 2)", integer("--timeout", 1))
    .action(async (target: string, options: { format: "text" | "json"; validate?: boolean; dryRun?: boolean; timeout?: number }) =>
      run(
        async () => {
          if (options.dryRun === true) {
            if (dryRun === undefined) throw usageError("--dry-run needs the full lambdagent program")
            emit(
              await dryRun(
                target,
                {
                  format: options.format,
                  ...(options.validate === true ? { validate: true } : {}),
                  ...(options.timeout !== undefined ? { timeoutMs: options.timeout * 1000 } : {})
                },
                host
              )
            )
            return
          }
          if (options.timeout !== undefined) throw usageError("--timeout goes with --dry-run")
          const yaml = await import("lambdagent/yaml")
          emit(yaml.compileCommand(target, { format: options.format, ...(options.validate === true ? { validate: true } : {}) }))
        },
        () => options.format
      )
    )
  program
    .command("lint")
    .description("check agent configs: structure, termination, bounds, tools, routes")
    .argument("<target>", "a .yml/.yaml file or a directory of them")
    .option("--level <level>", "lowest level to report: error, warn or info", oneOf("--level", ["error", "warn", "info"]))
    .option("--rules <ids>", "only these rules (comma-separated, e.g. L001,L004)")
    .option("--ignore <ids>", "skip these rules")
    .option("--max-llm-calls <n>", "fail when the worst case makes more LLM calls", integer("--max-llm-calls", 0))
    .option("--max-tool-calls <n>", "fail when the worst case makes more tool calls", integer("--max-tool-calls", 0))
    .option("--format <format>", "text or json", textOrJson, "text")
    .option("--fix", "repair what is mechanically fixable (missing terminate, unset maxSteps, numbers out of range), show the diff, then lint")
    .option("--dry-run", "with --fix: show the diff and lint the repaired text, writing nothing")
    .action(
      async (
        target: string,
        options: {
          level?: "error" | "warn" | "info"
          rules?: string
          ignore?: string
          maxLlmCalls?: number
          maxToolCalls?: number
          format: "text" | "json"
          fix?: boolean
          dryRun?: boolean
        }
      ) =>
        run(
          async () => {
            const yaml = await import("lambdagent/yaml")
            const rules = list(options.rules)
            const ignore = list(options.ignore)
            const { maxLlmCalls, maxToolCalls } = options
            if (options.dryRun === true && options.fix !== true) throw usageError("--dry-run goes with --fix")
            emit(
              yaml.lintCommand(target, {
                format: options.format,
                ...(options.level !== undefined ? { level: options.level } : {}),
                ...(rules !== undefined ? { rules } : {}),
                ...(ignore !== undefined ? { ignore } : {}),
                ...(maxLlmCalls !== undefined ? { maxLlmCalls } : {}),
                ...(maxToolCalls !== undefined ? { maxToolCalls } : {}),
                ...(options.fix === true ? { fix: true } : {}),
                ...(options.dryRun === true ? { dryRun: true } : {})
              })
            )
          },
          () => options.format
        )
    )
  program
    .command("migrate")
    .description("rewrite a config written for the Python reference into this format: shows the diff; --write applies it")
    .argument("<config>", "a .yml/.yaml file")
    .option("--write", "replace the file with the migrated text")
    .option("--dry-run", "only show the diff and the changes (the default)")
    .option("--format <format>", "text or json", textOrJson, "text")
    .action(async (config: string, options: { write?: boolean; dryRun?: boolean; format: "text" | "json" }) =>
      run(
        async () => {
          if (options.write === true && options.dryRun === true) throw usageError("--write and --dry-run exclude each other")
          const yaml = await import("lambdagent/yaml")
          emit(yaml.migrateCommand(config, { format: options.format, ...(options.write === true ? { write: true } : {}) }))
        },
        () => options.format
      )
    )
  program
    .command("lambda")
    .description("print an agent as a lambda expression")
    .argument("<config>", "a .yml/.yaml file")
    .option("--format <format>", "human, formal or json", oneOf("--format", ["human", "formal", "json"]), "human")
    .option("--desugar", "expand the agent forms into the pure core where one exists")
    .action(async (config: string, options: { format: "human" | "formal" | "json"; desugar?: boolean }) =>
      run(
        async () => {
          const yaml = await import("lambdagent/yaml")
          emit(yaml.lambdaCommand(config, { format: options.format, ...(options.desugar === true ? { desugar: true } : {}) }))
        },
        () => (options.format === "json" ? "json" : "text")
      )
    )
  program
    .command("skills")
    .description("the skills and sub-agents of an agent config")
    .command("list")
    .description("list the skills and sub-agents of an agent config, with their tool names")
    .argument("<config>", "a .yml/.yaml file")
    .option("--format <format>", "text or json", textOrJson, "text")
    .action(async (config: string, options: { format: "text" | "json" }) =>
      run(
        async () => {
          const yaml = await import("lambdagent/yaml")
          emit(yaml.skillsCommand(config, { format: options.format }))
        },
        () => options.format
      )
    )
}
