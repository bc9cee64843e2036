/**
 * `lambdagent eval '<term json>' [--input '<json>'] [--fuel N] [--trace] [--format json|text]`.
 */
import type { Registration } from "./shell.ts"
import { Budget, Evaluator, Term, type Trace, Value } from "lambdagent"
import { CliError, ExitCode, readJsonArgument, readTextFile } from "./io.ts"
import { integer, textOrJson } from "./options.ts"

interface EvalOptions {
  readonly input?: string
  readonly fuel?: number
  readonly trace?: boolean
  readonly format: "json" | "text"
  readonly tools?: string
  readonly as?: string
  readonly step?: number
}

const readTools = async (path: string): Promise<Record<string, Term.Term>> => {
  const json = Term.parseJsonText(await readTextFile(path, "tools"))
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new CliError(`tools file ${path} must hold a JSON object of tool name → term`, ExitCode.failed, "ToolsFileError")
  }
  return Object.fromEntries(Object.entries(json).map(([name, code]) => [name, Term.parse(code)]))
}

const formatEvent = (event: Trace.TraceEvent): string =>
  `  β[${event.step}] ${event.kind === "beta" ? "λ" : event.kind}${event.name}${event.input !== undefined ? `: ${event.input}` : ""}${
    event.output !== undefined ? ` → ${event.output}` : ""
  }`

export const evalCommand = async (termArg: string, options: EvalOptions): Promise<void> => {
  const budget = options.fuel === undefined ? {} : { steps: options.fuel }
  const termText = await readJsonArgument(termArg, "term")
  Evaluator.checkSize(termText, budget)
  // the time budget runs from here: reading a huge term is part of the run
  const startedAt = Date.now()
  const timeMs = Budget.make(budget).timeMs
  const term = Term.parseText(termText, { deadline: startedAt + timeMs, timeMs })
  const tools = options.tools === undefined ? {} : await readTools(options.tools)
  const common = { budget, tools, startedAt, trace: options.trace === true ? ("beta" as const) : ("off" as const) }
  const execution =
    options.input === undefined && options.as === undefined
      ? Evaluator.start(term, common)
      : Evaluator.startRun(term, options.input === undefined ? null : Evaluator.readInput(await readJsonArgument(options.input, "input"), budget), {
          ...common,
          ...(options.as !== undefined ? { tool: options.as } : {}),
          ...(options.step !== undefined ? { step: options.step } : {})
        })
  // in slices, so that Ctrl+C is served while a long term computes
  const result = await Evaluator.complete(execution)
  if (options.format === "json") {
    const body =
      options.trace === true
        ? `{"value":${Value.toJsonText(result.value)},"steps":${result.steps},"trace":${JSON.stringify(result.trace)}}`
        : Value.toJsonText(result.value)
    process.stdout.write(body + "\n")
    return
  }
  if (options.trace === true) {
    for (const event of result.trace) process.stderr.write(formatEvent(event) + "\n")
    process.stderr.write(`(${result.steps} steps)\n`)
  }
  process.stdout.write(Value.toJsonText(result.value) + "\n")
}

export const registerEval: Registration = (program, run) => {
  program
    .command("eval")
    .description("evaluate a term (JSON text, a file, or - for stdin) and print its value as JSON")
    .argument("<term>", "the term: JSON text, a file path, or - for standard input")
    .option("-i, --input <json>", "apply the term to this input (JSON text, a file path, or -)")
    .option("--fuel <n>", "step budget (default 10,000,000)", integer("--fuel", 1))
    .option("--trace", "record every β-reduction (on stderr in text format; in the output object in json format)")
    .option("--format <format>", "text: the value as JSON, errors as one readable line; json: errors as JSON too", textOrJson, "text")
    .option("--tools <file>", "a JSON file of named tools (name → term) for code_of")
    .option("--as <name>", "run the term as this named tool (enables self and continue)")
    .option("--step <n>", "the continuation step this call continues from", integer("--step", 0))
    .action(async (termArg: string, options: EvalOptions) =>
      run(
        () => evalCommand(termArg, options),
        () => options.format
      )
    )
}
