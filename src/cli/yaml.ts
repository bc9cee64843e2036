/**
 * `lambdagent compile | lint | lambda`: the YAML plugin's commands.
 */
import type { Registration } from "./shell.ts"
import { CliError, ExitCode } from "./io.ts"


const emit = (result: { readonly stdout: string; readonly stderr: string; readonly exitCode: number }) => {
  process.stdout.write(result.stdout)
  process.stderr.write(result.stderr)
  process.exitCode = result.exitCode
}

const list = (text: string | undefined) => (text === undefined ? undefined : text.split(",").map((s) => s.trim()).filter((s) => s !== ""))

const count = (text: string | undefined, flag: string): number | undefined => {
  if (text === undefined) return undefined
  const n = Number(text)
  if (!Number.isInteger(n) || n < 0) throw new CliError(`${flag} expects a non-negative integer, got ${JSON.stringify(text)}`, ExitCode.compile, "UsageError")
  return n
}

export const registerYaml: Registration = (program, run) => {
  program
    .command("compile")
    .description("compile agent configs (a file or a directory) and print their lambda structure")
    .argument("<target>", "a .yml/.yaml file or a directory of them")
    .option("--format <format>", "text or json", "text")
    .option("--validate", "also lint; lint errors give exit code 3")
    .action(async (target: string, options: { format: "text" | "json"; validate?: boolean }) =>
      run(async () => {
        const yaml = await import("lambdagent/yaml")
        emit(yaml.compileCommand(target, { format: options.format, ...(options.validate === true ? { validate: true } : {}) }))
      }, () => options.format)
    )
  program
    .command("lint")
    .description("check agent configs: structure, termination, bounds, tools, routes")
    .argument("<target>", "a .yml/.yaml file or a directory of them")
    .option("--level <level>", "lowest level to report: error, warn or info")
    .option("--rules <ids>", "only these rules (comma-separated, e.g. L001,L004)")
    .option("--ignore <ids>", "skip these rules")
    .option("--max-llm-calls <n>", "fail when the worst case makes more LLM calls")
    .option("--max-tool-calls <n>", "fail when the worst case makes more tool calls")
    .option("--format <format>", "text or json", "text")
    .action(async (target: string, options: { level?: "error" | "warn" | "info"; rules?: string; ignore?: string; maxLlmCalls?: string; maxToolCalls?: string; format: "text" | "json" }) =>
      run(async () => {
        const yaml = await import("lambdagent/yaml")
        if (options.level !== undefined && !["error", "warn", "info"].includes(options.level)) {
          throw new CliError(`--level expects error, warn or info, got ${JSON.stringify(options.level)}`, ExitCode.compile, "UsageError")
        }
        const rules = list(options.rules)
        const ignore = list(options.ignore)
        const maxLlmCalls = count(options.maxLlmCalls, "--max-llm-calls")
        const maxToolCalls = count(options.maxToolCalls, "--max-tool-calls")
        emit(yaml.lintCommand(target, {
          format: options.format,
          ...(options.level !== undefined ? { level: options.level } : {}),
          ...(rules !== undefined ? { rules } : {}),
          ...(ignore !== undefined ? { ignore } : {}),
          ...(maxLlmCalls !== undefined ? { maxLlmCalls } : {}),
          ...(maxToolCalls !== undefined ? { maxToolCalls } : {})
        }))
      }, () => options.format)
    )
  program
    .command("lambda")
    .description("print an agent as a lambda expression")
    .argument("<config>", "a .yml/.yaml file")
    .option("--format <format>", "human, formal or json", "human")
    .option("--desugar", "expand the agent forms into the pure core where one exists")
    .action(async (config: string, options: { format: "human" | "formal" | "json"; desugar?: boolean }) =>
      run(async () => {
        const yaml = await import("lambdagent/yaml")
        if (!["human", "formal", "json"].includes(options.format)) {
          throw new CliError(`--format expects human, formal or json, got ${JSON.stringify(options.format)}`, ExitCode.compile, "UsageError")
        }
        emit(yaml.lambdaCommand(config, { format: options.format, ...(options.desugar === true ? { desugar: true } : {}) }))
      }, () => (options.format === "json" ? "json" : "text"))
    )
}
