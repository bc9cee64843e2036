/**
 * `lambdagent replay <trace.json> [config]`: run a recorded run again from the oracle answers its
 * trace file holds (`run --trace-file`), with no provider, tool call or network. A changed config
 * or term stops at the first request that differs from the recorded one, or with
 * `--live-after-divergence` goes on live from there.
 */
import { Errors, Replay, Term, Value } from "lambdagent"
import { buildRuntime, loadAgent, shellTools } from "./agent.ts"
import { CliError, ExitCode, onInterrupt, readTextFile } from "./io.ts"
import { textOrJson, usageError } from "./options.ts"
import type { Host } from "./plugins.ts"
import { runJson } from "./runJson.ts"
import { runMetaOf, writeTraceFile } from "./traceFile.ts"
import type { Registration } from "./shell.ts"

interface ReplayOptions {
  readonly liveAfterDivergence?: boolean
  readonly model?: string
  readonly format: "text" | "json"
  readonly quiet?: boolean
  readonly traceFile?: string
}

/** The run a recording was made of, as `lambdagent run` kept it (see `runMetaOf`). */
interface RecordedRun {
  readonly config?: string
  readonly input: string
  readonly tools: ReadonlyArray<string>
  readonly toolTimeout?: number
  readonly model?: string
  readonly temperature?: number
  readonly maxSteps?: number
}

const recordedRun = (file: string, recording: Replay.Recording): RecordedRun => {
  const m = recording.meta
  const text = (v: unknown) => (typeof v === "string" ? v : undefined)
  const number = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined)
  if (m.input !== undefined && typeof m.input !== "string") throw new CliError(`${file}: the recording's input is not text`, ExitCode.failed, "ReplayError")
  if (m.tools !== undefined && !(Array.isArray(m.tools) && m.tools.every((t) => typeof t === "string"))) {
    throw new CliError(`${file}: the recording's tools are not --tool specs`, ExitCode.failed, "ReplayError")
  }
  const optional = {
    config: text(m.config),
    toolTimeout: number(m.toolTimeout),
    model: text(m.model),
    temperature: number(m.temperature),
    maxSteps: number(m.maxSteps)
  }
  return {
    input: (m.input as string | undefined) ?? "",
    tools: (m.tools as ReadonlyArray<string> | undefined) ?? [],
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined))
  }
}

/** The recording of a trace file, or a one-line error naming the file and what is wrong with it. */
export const readRecording = async (file: string): Promise<Replay.Recording> => {
  const text = await readTextFile(file, "trace")
  try {
    return Replay.parse(text)
  } catch (error) {
    if (error instanceof Errors.ReplayError) throw new CliError(`${file}: ${error.message}`, ExitCode.failed, "ReplayError")
    throw error
  }
}

/** A divergence as `--format json` writes it (keys documented in docs/cli.md). */
const divergenceJson = (d: Errors.ReplayDivergence) => ({ key: d.key, step: d.step, form: d.form, expected: d.expected, actual: d.actual, message: d.message })

const requestLine = (request: unknown) => (request === null ? "none" : Term.stringify(request))

const replayCommand = async (file: string, configArg: string | undefined, options: ReplayOptions, host: Host): Promise<void> => {
  const live = options.liveAfterDivergence === true
  if (options.model !== undefined && !live) throw usageError("--model is the model a replay goes on with: give it with --live-after-divergence")
  const recording = await readRecording(file)
  const run = recordedRun(file, recording)
  const config = configArg ?? run.config
  if (config === undefined) throw usageError(`${file} does not name the config it was recorded with: give it (lambdagent replay ${file} CONFIG)`)
  const extraTools = shellTools(run.tools, run.toolTimeout !== undefined ? { timeoutMs: run.toolTimeout * 1000 } : {})
  const agent = await loadAgent(config, {
    tools: extraTools,
    ...(run.temperature !== undefined ? { temperature: run.temperature } : {}),
    ...(run.maxSteps !== undefined ? { maxSteps: run.maxSteps } : {})
  })
  // offline, no call reaches the model: the scripted echo stands in so no provider is looked up
  const model = live ? (options.model ?? run.model) : "scripted:echo"
  const { close, notices, runtime } = await buildRuntime(agent, {
    ...(model !== undefined ? { model } : {}),
    input: run.input,
    extraTools,
    plugins: host.plugins,
    trace: "agent",
    ...(live ? {} : { offline: true }),
    ...(agent.compiled?.budget !== undefined ? { budgets: agent.compiled.budget } : {})
  })
  if (live && options.quiet !== true) for (const notice of notices) process.stderr.write(`${notice}\n`)
  const controller = new AbortController()
  onInterrupt(() => controller.abort(new CliError("interrupted", ExitCode.interrupted, "Interrupted")))
  let divergence: Errors.ReplayDivergence | undefined
  const answers: Array<Replay.Entry> = []
  try {
    const output = await runtime
      .run(agent.term, run.input, {
        signal: controller.signal,
        replay: { recording, live, onDivergence: (d) => void (divergence = d) },
        ...(options.traceFile !== undefined ? { record: (entry: Replay.Entry) => void answers.push(entry) } : {})
      })
      .catch((error: unknown) => {
        if (error instanceof Errors.ReplayError) throw new CliError(`${file}: ${error.message}`, ExitCode.failed, "ReplayError")
        throw error
      })
    const record = runJson(output)
    if (options.traceFile !== undefined) {
      const meta = runMetaOf(config, run.input, {
        tool: [...run.tools],
        ...(run.toolTimeout !== undefined ? { toolTimeout: run.toolTimeout } : {}),
        ...(live && model !== undefined ? { model } : run.model !== undefined ? { model: run.model } : {}),
        ...(run.temperature !== undefined ? { temperature: run.temperature } : {}),
        ...(run.maxSteps !== undefined ? { maxSteps: run.maxSteps } : {})
      })
      const replay = Replay.make({ term: agent.term, answers, meta })
      await writeTraceFile(options.traceFile, { ...record, replay })
    }
    if (options.format === "json") {
      process.stdout.write(Term.stringify({ ...record, divergence: divergence === undefined ? null : divergenceJson(divergence) }) + "\n")
      return
    }
    if (divergence !== undefined && options.quiet !== true) {
      process.stderr.write(`[replay: ${divergence.message}; went on live from there]\n`)
    }
    process.stdout.write(Value.toText(output.value) + "\n")
  } catch (error) {
    if (!(error instanceof Errors.ReplayDivergence)) throw error
    if (options.format === "json") {
      process.stdout.write(Term.stringify({ result: null, trace: null, stats: null, divergence: divergenceJson(error) }) + "\n")
    } else {
      process.stderr.write(`error: ReplayDivergence: ${error.message}\n  recorded: ${requestLine(error.expected)}\n  new:      ${requestLine(error.actual)}\n`)
    }
    process.exitCode = ExitCode.diverged
  } finally {
    onInterrupt(undefined)
    await close()
  }
}

export const registerReplay: Registration = (program, run, host) => {
  program
    .command("replay")
    .description("run a recorded run again from its trace file's answers, offline; stop at the first request that differs")
    .argument("<trace>", "a trace file (from run --trace-file)")
    .argument("[config]", "the agent to replay (default: the config the trace was recorded with)")
    .option("--live-after-divergence", "go on live from the first request that differs, instead of stopping there")
    .option("--model <spec>", "with --live-after-divergence: the model to go on with (default: the recorded run's, else the config's)")
    .option("--trace-file <file>", "save the replay's result, trace, stats and answers as JSON")
    .option("--format <format>", "text (default) or json: {result, trace, stats, divergence} on stdout", textOrJson, "text")
    .option("--quiet", "nothing on stderr but errors")
    .action(async (trace: string, config: string | undefined, options: ReplayOptions) =>
      run(
        () => replayCommand(trace, config, options, host),
        () => options.format
      )
    )
}
