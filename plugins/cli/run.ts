/**
 * `lambdagent run <config> [input | -] [options]`: compile an agent and apply it to an input.
 */
import { writeFile } from "node:fs/promises"
import { type Host, noPlugins, pluginTools } from "./plugins.ts"
import type { Registration } from "./shell.ts"
import { Replay, Term, type Trace, Value } from "lambdagent"
import { buildRuntime, loadAgent, shellTools } from "./agent.ts"
import { checkpointing, checkpointPlan, reportPause } from "./checkpoints.ts"
import { CliError, describeError, ExitCode, onInterrupt, readStdin, readTextFile } from "./io.ts"
import { integer, positive, temperature, textOrJson, usageError } from "./options.ts"
import { OTEL_FLAGS, OTEL_HELP, otelOptions } from "./otel.ts"
import { parseSandboxFlag, SANDBOX_FLAGS, SANDBOX_HELP } from "./sandbox.ts"
import { silentStatus, startStatus, type Status } from "./status.ts"
import { formatEventLine, summaryLine } from "./trace.ts"
import { eventJson, runJson } from "./runJson.ts"
import { runMetaOf, writeTraceFile } from "./traceFile.ts"

export interface RunOptions {
  readonly input?: string
  readonly trace?: boolean
  readonly traceFile?: string
  readonly maxSteps?: number
  readonly temperature?: number
  readonly model?: string
  readonly timeout?: number
  readonly tool: Array<string>
  readonly toolTimeout?: number
  readonly sandbox?: string
  readonly env: Array<string>
  readonly output?: string
  readonly format: "text" | "json"
  readonly quiet?: boolean
  readonly verbose?: boolean
  readonly checkpoint?: string
  readonly otel?: string
}

const parseEnv = (pairs: ReadonlyArray<string>): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const pair of pairs) {
    const eq = pair.indexOf("=")
    if (eq <= 0) throw usageError(`--env expects KEY=VALUE, got ${JSON.stringify(pair)}`)
    env[pair.slice(0, eq)] = pair.slice(eq + 1)
  }
  return env
}

/** The input: the positional argument (`-` reads stdin), else `--input FILE`, else piped stdin, else empty. */
const readRunInput = async (positional: string | undefined, options: RunOptions): Promise<string> => {
  if (positional === "-") return (await readStdin()).replace(/\n$/, "")
  if (positional !== undefined) return positional
  if (options.input !== undefined) return await readTextFile(options.input, "input")
  if (process.stdin.isTTY !== true) return (await readStdin()).replace(/\n$/, "")
  return ""
}

/** Defaults from the environment (seed §15.6): flags win over them. */
const withEnvironment = (options: RunOptions): RunOptions => {
  const env = process.env
  const traceOn = env.LAMBDAGENT_TRACE !== undefined && !["", "0", "false"].includes(env.LAMBDAGENT_TRACE.toLowerCase())
  return {
    ...options,
    ...(options.model === undefined && env.LAMBDAGENT_MODEL ? { model: env.LAMBDAGENT_MODEL } : {}),
    ...(options.temperature === undefined && env.LAMBDAGENT_TEMPERATURE
      ? { temperature: temperature("LAMBDAGENT_TEMPERATURE")(env.LAMBDAGENT_TEMPERATURE) }
      : {}),
    ...(options.traceFile === undefined && env.LAMBDAGENT_TRACE_FILE ? { traceFile: env.LAMBDAGENT_TRACE_FILE } : {}),
    ...(options.trace === undefined && traceOn ? { trace: true } : {})
  }
}

export const runCommand = async (config: string, positional: string | undefined, flags: RunOptions, host: Host = noPlugins): Promise<void> => {
  const options = withEnvironment(flags)
  const { maxSteps, temperature, timeout, toolTimeout } = options
  const sandbox = parseSandboxFlag(options.sandbox)
  const extraEnv = parseEnv(options.env)
  const env = Object.keys(extraEnv).length > 0 ? { ...process.env, ...extraEnv } : undefined
  if (env !== undefined) Object.assign(process.env, extraEnv)
  const extraTools = [
    ...shellTools(options.tool, {
      ...(toolTimeout !== undefined ? { timeoutMs: toolTimeout * 1000 } : {}),
      ...(env !== undefined ? { env } : {})
    }),
    ...pluginTools(host)
  ]
  const agent = await loadAgent(config, {
    ...(temperature !== undefined ? { temperature } : {}),
    ...(maxSteps !== undefined ? { maxSteps } : {}),
    tools: extraTools
  })
  const otel = otelOptions(options.otel, process.env, agent.compiled?.runtime.otel)
  const input = await readRunInput(positional, options)
  const plan = checkpointPlan(agent, options.checkpoint)
  // an unwritable checkpoint store fails here, before the first oracle call
  const saving = await checkpointing(agent, plan, runMetaOf(config, input, options))
  const checkpoint = saving?.call
  const showSteps = (options.trace === true || options.verbose === true) && options.quiet !== true && options.format !== "json"
  let status: Status | undefined
  const { close, demo, notices, runtime } = await buildRuntime(agent, {
    ...(showSteps ? { progress: (line: string) => (status ?? silentStatus).log(line) } : {}),
    ...(options.model !== undefined ? { model: options.model } : {}),
    input,
    extraTools,
    plugins: host.plugins,
    ...(env !== undefined ? { env } : {}),
    ...(sandbox !== undefined ? { sandbox } : {}),
    ...(otel !== undefined ? { otel } : {}),
    trace: options.verbose === true ? "beta" : "agent",
    budgets: { ...agent.compiled?.budget, ...(timeout !== undefined ? { timeMs: timeout * 1000 } : {}) }
  }).catch(async (error: unknown) => {
    await saving?.opened.close()
    throw error
  })
  if (options.quiet !== true) for (const notice of notices) process.stderr.write(`${notice}\n`)
  const controller = new AbortController()
  onInterrupt(() => controller.abort(new CliError("interrupted", ExitCode.interrupted, "Interrupted")))
  status = options.quiet === true || options.format === "json" ? undefined : startStatus(`${agent.name}`)
  const seen: Array<Trace.TraceEvent> = []
  // a trace file holds every oracle answer too, so `lambdagent replay` can run it again offline
  const answers: Array<Replay.Entry> = []
  const recording = () => Replay.make({ term: agent.term, answers, meta: runMetaOf(config, input, options) })
  try {
    const output = await (async () => {
      const call = {
        signal: controller.signal,
        ...(checkpoint !== undefined ? { checkpoint } : {}),
        ...(options.traceFile !== undefined ? { record: (entry: Replay.Entry) => void answers.push(entry) } : {})
      }
      if (status === undefined && options.traceFile === undefined) return runtime.run(agent.term, input, call)
      let result: Awaited<ReturnType<typeof runtime.run>> | undefined
      for await (const event of runtime.stream(agent.term, input, call)) {
        if (event.type === "result") result = event.output
        else {
          if (event.type === "trace") seen.push(event.event)
          status?.update(event)
        }
      }
      return result!
    })()
      .catch(async (error: unknown) => {
        // an interrupted or failed run still leaves its partial trace where one was asked for
        if (options.traceFile !== undefined) {
          await writeTraceFile(options.traceFile, { result: null, trace: seen.map(eventJson), stats: null, error: describeError(error), replay: recording() })
        }
        throw error
      })
      .finally(() => status?.stop())
      .catch((error: unknown) => reportPause(error, saving, options.format))
    const resultText = Value.toText(output.value)
    const record = runJson(output)
    if (options.traceFile !== undefined) await writeTraceFile(options.traceFile, { ...record, replay: recording() })
    if (options.output !== undefined) await writeFile(options.output, resultText + "\n")
    if (options.format === "json") {
      process.stdout.write(Term.stringify(record) + "\n")
      return
    }
    // a demo run shows what the agent did: that is what it is for
    if (showSteps || (demo && options.quiet !== true)) {
      output.trace.forEach((event, i) => process.stderr.write(`${formatEventLine(event, i)}\n`))
      process.stderr.write(`${"─".repeat(40)}\n${summaryLine(output.trace)}\n`)
    }
    if (options.output === undefined || options.quiet !== true) process.stdout.write(resultText + "\n")
    if (options.quiet !== true) {
      const s = output.stats
      const tokens = s.tokens > 0 ? `, ~${s.tokens} tokens` : ""
      process.stderr.write(`(${output.trace.length} β-reductions, ${(s.durationMs / 1000).toFixed(1)}s${tokens})\n`)
    }
    if (options.traceFile !== undefined && options.quiet !== true) process.stderr.write(`[trace saved to ${options.traceFile}]\n`)
  } finally {
    onInterrupt(undefined)
    await saving?.opened.close()
    await close()
  }
}

const collect = (value: string, previous: Array<string>) => [...previous, value]

export const registerRun: Registration = (program, run, host) => {
  program
    .command("run")
    .description("run an agent (a YAML config or a term's JSON) on an input")
    .argument("<config>", "the agent: a .yml/.yaml config or a .json term")
    .argument("[input]", "the input text, or - to read standard input; after --, an input that starts with - (run CONFIG -- -x)")
    .option("--input <file>", "read the input from a file")
    .option("--trace", "print every step of the run on stderr")
    .option("--trace-file <file>", "save the result, trace, stats and every oracle answer as JSON (for lambdagent trace and replay)")
    .option("--max-steps <n>", "override the maxSteps of ReAct agents (a positive integer)", integer("--max-steps", 1))
    .option("--temperature <t>", "override the temperature of every LLM call (0 to 2)", temperature("--temperature"))
    .option("--model <spec>", "send every LLM call to this model (provider:name, e.g. openai:gpt-4o-mini or scripted:echo)")
    .option("--timeout <seconds>", "wall-time budget of the run", positive("--timeout", "seconds"))
    .option("--tool <NAME=CMD>", "a shell command as a tool; {} stands for the input, passed as one argument (repeatable)", collect, [])
    .option("--tool-timeout <seconds>", "timeout of --tool commands (default 30)", positive("--tool-timeout", "seconds"))
    .option(SANDBOX_FLAGS, SANDBOX_HELP)
    .option("--env <KEY=VALUE>", "set an environment variable for the run, its tools and providers (repeatable)", collect, [])
    .option("--output <file>", "also write the result to a file")
    .option("--format <format>", "text (default) or json: {result, trace, stats} on stdout", textOrJson, "text")
    .option("--quiet", "stdout holds only the result; nothing on stderr but errors")
    .option("--verbose", "record every β-reduction and print the trace")
    .option(
      "--checkpoint <location>",
      "save a checkpoint before every oracle call into this directory, redis://HOST[:PORT][?prefix=P] or sqlite:PATH (lambdagent resume goes on from one)"
    )
    .option(OTEL_FLAGS, OTEL_HELP)
    .action(async (config: string, input: string | undefined, options: RunOptions) =>
      run(
        () => runCommand(config, input, options, host),
        () => options.format
      )
    )
}
