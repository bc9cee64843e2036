/**
 * Durable runs on the command line: `run --checkpoint LOCATION` (or a config's `checkpoint:` block)
 * saves a checkpoint before every oracle call into a directory, Redis or a SQLite file (see
 * `checkpointLocations.ts`); `resume <checkpoint>` goes on from one in a new process;
 * `checkpoints list|show|prune` look after them.
 */
import { runJson } from "./runJson.ts"
import { randomBytes } from "node:crypto"
import { writeFile } from "node:fs/promises"
import { basename, dirname, resolve } from "node:path"
import * as Effect from "effect/Effect"
import { Checkpoint, CheckpointStore, Errors, Replay, type Runtime, Term, Trace, Value } from "lambdagent"
import { buildRuntime, type LoadedAgent, loadAgent, shellTools } from "./agent.ts"
import { normalizeLocation, type OpenLocation, openLocation } from "./checkpointLocations.ts"
import { CliError, ExitCode, onInterrupt, Reported } from "./io.ts"
import { integer, textOrJson } from "./options.ts"
import type { Registration } from "./shell.ts"
import type { Host } from "./plugins.ts"
import { runMetaOf, writeTraceFile } from "./traceFile.ts"
import { formatEventLine, summaryLine } from "./trace.ts"

/** Where a run's checkpoints go: `--checkpoint LOCATION`, else an enabled `checkpoint:` block of its config. */
export interface CheckpointPlan {
  /** A directory (absolute), `redis://…` or `sqlite:/absolute/path`. */
  readonly location: string
  readonly maxCheckpoints?: number
  /** The block's `fsync: false`: a directory's checkpoints survive a crash of the process, not of the machine. */
  readonly fsync?: boolean
  /** The block's `autoSaveSteps`: also a checkpoint every this many steps of pure evaluation. */
  readonly everySteps?: number
}

export const checkpointPlan = (agent: LoadedAgent, flag: string | undefined): CheckpointPlan | undefined => {
  if (flag !== undefined) return { location: normalizeLocation(flag, process.cwd()), ...maxOf(agent) }
  const block = agent.compiled?.runtime.checkpoint as { enabled?: boolean; directory?: string; store?: string } | undefined
  if (block === undefined || block.enabled === false) return undefined
  return { location: normalizeLocation(block.store ?? block.directory ?? DEFAULT_DIRECTORY, agent.baseDir), ...maxOf(agent) }
}

const maxOf = (agent: LoadedAgent): { maxCheckpoints?: number; everySteps?: number; fsync?: boolean } => {
  const block = agent.compiled?.runtime.checkpoint as { maxCheckpoints?: number; autoSaveSteps?: number; fsync?: boolean } | undefined
  return {
    ...(block?.maxCheckpoints !== undefined ? { maxCheckpoints: block.maxCheckpoints } : {}),
    ...(block?.fsync !== undefined ? { fsync: block.fsync } : {}),
    ...(block?.autoSaveSteps !== undefined && block.autoSaveSteps > 0 ? { everySteps: block.autoSaveSteps } : {})
  }
}

/** What the CLI keeps with each checkpoint, to rebuild the run's runtime in another process. */
interface RunMeta {
  readonly runId: string
  readonly config: string
  readonly input: string
  readonly model?: string
  /** `--tool NAME=CMD` specs and `--tool-timeout` (environment variables are not kept: they may hold secrets). */
  readonly tools?: ReadonlyArray<string>
  readonly toolTimeout?: number
  /** `--temperature` and `--max-steps`: they change the term, so the resumed run needs them too. */
  readonly temperature?: number
  readonly maxSteps?: number
}

/**
 * Where the checkpoints of a run go: every one (`--checkpoint`, a `checkpoint:` block) or, for a
 * term that can pause at an `ask`, only the paused one.
 */
export interface Checkpointing {
  /** The call option: saves before every oracle call, or (`pausesOnly`) keeps just the run's meta. */
  readonly call: NonNullable<Runtime.CallOptions["checkpoint"]>
  readonly store: CheckpointStore.RunStore
  /** Where, and how to close it. */
  readonly opened: OpenLocation
}

/**
 * The checkpointing of a run: into `plan`'s location, else (a term with an `ask`) the config's
 * default directory for its paused checkpoint alone. The location is opened and checked writable
 * now, before any oracle call.
 */
export const checkpointing = async (
  agent: LoadedAgent,
  plan: CheckpointPlan | undefined,
  meta: Omit<RunMeta, "runId"> & { readonly runId?: string },
  firstSequence?: number,
  opened?: OpenLocation
): Promise<Checkpointing | undefined> => {
  const pausesOnly = plan === undefined
  if (pausesOnly && !Term.capabilities(agent.term).ask) return undefined
  const target = plan ?? { location: resolve(agent.baseDir, DEFAULT_DIRECTORY), ...maxOf(agent) }
  const runId = meta.runId ?? randomBytes(6).toString("hex")
  const open = opened ?? (await openLocation(target.location, undefined, target.fsync !== undefined ? { fsync: target.fsync } : {}))
  try {
    const store = await Effect.runPromise(
      CheckpointStore.open(open.location, {
        runId,
        ...(target.maxCheckpoints !== undefined ? { maxCheckpoints: target.maxCheckpoints } : {}),
        ...(firstSequence !== undefined ? { firstSequence } : {})
      })
    )
    const every = !pausesOnly && target.everySteps !== undefined ? { everySteps: target.everySteps } : {}
    return { store, opened: open, call: { save: pausesOnly ? () => Effect.void : store.save, meta: { ...meta, runId }, ...every } }
  } catch (error) {
    if (opened === undefined) await open.close()
    throw error
  }
}

/** How a user names a checkpoint to `resume` or `checkpoints show` it: the file, or the key and `--store`. */
const resumeArgs = (opened: OpenLocation, key: string) => (opened.isDirectory ? key : `${key} --store ${opened.spec}`)

const DEFAULT_DIRECTORY = ".lambdagent/checkpoints"

/**
 * A run that paused at an `ask`: write its checkpoint and say how to go on (stderr, or one JSON
 * object on stdout), exit code 5. Any other error is thrown on.
 */
export const reportPause = async (error: unknown, checkpointing: Checkpointing | undefined, format: "text" | "json"): Promise<never> => {
  if (!(error instanceof Errors.RunPaused) || checkpointing === undefined) throw error
  await Effect.runPromise(checkpointing.store.save({ _tag: "Base", checkpoint: error.checkpoint as Checkpoint.Checkpoint }))
  const file = checkpointing.store.lastWritten!
  const opened = checkpointing.opened
  if (format === "json") {
    const where = opened.isDirectory ? {} : { store: opened.spec }
    process.stdout.write(JSON.stringify({ paused: { question: error.question, input: error.input, checkpoint: file, ...where } }) + "\n")
  } else {
    process.stderr.write(`paused: the run asks ${JSON.stringify(error.question)}${error.input !== "" ? ` about: ${Trace.preview(error.input)}` : ""}\n`)
    process.stderr.write(`answer with: lambdagent resume ${resumeArgs(opened, file)} --answer "…"\n`)
  }
  throw new Reported(ExitCode.paused)
}

const metaOf = (file: string, checkpoint: Checkpoint.Checkpoint): RunMeta => {
  const m = checkpoint.meta as Partial<RunMeta>
  if (typeof m.runId !== "string" || typeof m.config !== "string" || typeof m.input !== "string") {
    throw new CliError(
      `${file}: the checkpoint was not written by lambdagent run (it names no config); resume it with runtime.resume`,
      ExitCode.failed,
      "CheckpointError"
    )
  }
  return m as RunMeta
}

interface ResumeOptions {
  readonly model?: string
  readonly answer?: string
  readonly format: "text" | "json"
  readonly quiet?: boolean
  /** The store the checkpoint is in (its key is then the argument); default: the file's directory. */
  readonly store?: string
  /** Save the result, trace, stats and every oracle answer of the run (before the checkpoint too), as `run --trace-file` does. */
  readonly traceFile?: string
  readonly output?: string
  /** Print the run's trace on stderr when it ends. */
  readonly trace?: boolean
}

/** The location of a checkpoint named on the command line: `--store`, else the directory of its file. */
const locationOf = (file: string, store: string | undefined): Promise<OpenLocation> => openLocation(store ?? dirname(resolve(file)))

const keyIn = (opened: OpenLocation, file: string) => (opened.isDirectory ? resolve(file) : file)

const resumeCommand = async (file: string, options: ResumeOptions, host: Host) => {
  const opened = await locationOf(file, options.store)
  try {
    await resumeFrom(opened, keyIn(opened, file), file, options, host)
  } finally {
    await opened.close()
  }
}

const resumeFrom = async (opened: OpenLocation, key: string, file: string, options: ResumeOptions, host: Host) => {
  const checkpoint = await Effect.runPromise(CheckpointStore.readFrom(opened.location, key))
  const meta = metaOf(file, checkpoint)
  const extraTools = shellTools(meta.tools ?? [], meta.toolTimeout !== undefined ? { timeoutMs: meta.toolTimeout * 1000 } : {})
  const agent = await loadAgent(meta.config, {
    tools: extraTools,
    ...(meta.temperature !== undefined ? { temperature: meta.temperature } : {}),
    ...(meta.maxSteps !== undefined ? { maxSteps: meta.maxSteps } : {})
  })
  try {
    Checkpoint.decode(checkpoint, { term: agent.term })
  } catch (error) {
    throw new CliError(`${file}: ${(error as Error).message} (${meta.config} changed since the run)`, ExitCode.failed, "CheckpointError")
  }
  const model = options.model ?? meta.model
  const { close, runtime } = await buildRuntime(agent, {
    ...(model !== undefined ? { model } : {}),
    input: meta.input,
    extraTools,
    plugins: host.plugins
  })
  if (options.answer !== undefined && checkpoint.asking === undefined) {
    throw new CliError(
      `${file}: --answer given, but the run is not waiting for an answer (it waits on ${waitingText(checkpoint.waiting, undefined)})`,
      ExitCode.usage,
      "UsageError"
    )
  }
  if (options.answer === undefined && checkpoint.asking !== undefined) {
    throw new CliError(
      `${file}: the run is waiting for an answer to ${JSON.stringify(checkpoint.asking.question)}: give it with --answer`,
      ExitCode.usage,
      "UsageError"
    )
  }
  const ours = (await Effect.runPromise(opened.location.list)).filter((e) => e.runId === meta.runId)
  const sequence = Math.max(0, ...ours.map((e) => e.sequence)) + 1
  // a run resumed from its paused checkpoint alone goes on saving only where it pauses again
  const every = checkpoint.asking === undefined || ours.length > 1
  const saving = await checkpointing(
    agent,
    every ? { location: opened.spec, ...maxOf(agent) } : undefined,
    { ...meta, ...(model !== undefined ? { model } : {}) },
    sequence,
    every || opened.isDirectory ? opened : undefined
  )
  const controller = new AbortController()
  onInterrupt(() => controller.abort(new CliError("interrupted", ExitCode.interrupted, "Interrupted")))
  // with a trace file the run records every answer: it replays those before the checkpoint from the record
  const answers: Array<Replay.Entry> = []
  const recording = () =>
    Replay.make({
      term: agent.term,
      answers,
      meta: runMetaOf(meta.config, meta.input, {
        tool: [...(meta.tools ?? [])],
        ...(meta.toolTimeout !== undefined ? { toolTimeout: meta.toolTimeout } : {}),
        ...(model !== undefined ? { model } : {}),
        ...(meta.temperature !== undefined ? { temperature: meta.temperature } : {}),
        ...(meta.maxSteps !== undefined ? { maxSteps: meta.maxSteps } : {})
      })
    })
  try {
    const output = await runtime
      .resume(checkpoint, {
        signal: controller.signal,
        ...(saving !== undefined ? { checkpoint: saving.call } : {}),
        ...(options.answer !== undefined ? { answer: options.answer } : {}),
        ...(options.traceFile !== undefined ? { record: (entry: Replay.Entry) => void answers.push(entry) } : {})
      })
      .catch((error: unknown) => reportPause(error, saving, options.format))
    const record = runJson(output)
    if (options.traceFile !== undefined) await writeTraceFile(options.traceFile, { ...record, replay: recording() })
    if (options.output !== undefined) await writeFile(options.output, Value.toText(output.value) + "\n")
    if (options.format === "json") process.stdout.write(Term.stringify(record) + "\n")
    else {
      if (options.trace === true && options.quiet !== true) {
        output.trace.forEach((event, i) => process.stderr.write(`${formatEventLine(event, i)}\n`))
        process.stderr.write(`${"─".repeat(40)}\n${summaryLine(output.trace)}\n`)
      }
      if (options.output === undefined || options.quiet !== true) process.stdout.write(Value.toText(output.value) + "\n")
    }
    if (options.traceFile !== undefined && options.quiet !== true && options.format !== "json") process.stderr.write(`[trace saved to ${options.traceFile}]\n`)
  } finally {
    onInterrupt(undefined)
    if (saving !== undefined && saving.opened !== opened) await saving.opened.close()
    await close()
  }
}

/** What a checkpoint waits on, in words. */
const waitingText = (waiting: Checkpoint.Checkpoint["waiting"], asking: Checkpoint.Asking | undefined): string => {
  if (asking !== undefined) return `an answer to ${JSON.stringify(asking.question)}`
  if (waiting === undefined) return "nothing (taken during pure evaluation)"
  switch (waiting.kind) {
    case "tool":
    case "tools":
      return `tool ${waiting.name ?? ""}`.trim()
    case "llm":
      return `llm${waiting.name !== undefined ? ` ${waiting.name}` : ""}`
    case "ask":
      return `an answer to ${JSON.stringify(waiting.name ?? "")}`
    default:
      return waiting.kind
  }
}

const summaryRow = (opened: OpenLocation, s: CheckpointStore.Summary) => ({
  file: opened.isDirectory ? basename(s.key) : s.key,
  key: s.key,
  run: s.runId,
  sequence: s.sequence,
  base: s.base,
  createdAt: s.createdAt ?? null,
  waitingOn: s.problem !== undefined ? null : waitingText(s.waiting, s.asking),
  steps: s.usage?.steps ?? null,
  llmCalls: s.usage?.llmCalls ?? null,
  toolCalls: s.usage?.toolCalls ?? null,
  answers: s.answers ?? null,
  bytes: s.bytes,
  ...(s.problem !== undefined ? { problem: s.problem } : {})
})

/** Run `body` with the location `spec` open, then close it. */
const withLocation = async <A>(spec: string, body: (opened: OpenLocation) => Promise<A>): Promise<A> => {
  const opened = await openLocation(spec)
  try {
    return await body(opened)
  } finally {
    await opened.close()
  }
}

const STORE_HELP = "the store the checkpoint is in: redis://HOST[:PORT][?prefix=P] or sqlite:PATH (default: the directory of the file)"

export const registerCheckpoints: Registration = (program, run, host) => {
  program
    .command("resume")
    .description("resume a run from a checkpoint (written by run --checkpoint), in this process")
    .argument("<checkpoint>", "a checkpoint: DIR/RUNID.SEQUENCE or a journal file of a directory (its newest), or with --store its key (RUNID.SEQUENCE)")
    .option("--store <location>", STORE_HELP)
    .option("--model <spec>", "send the remaining LLM calls to this model (default: the run's)")
    .option("--answer <text>", "the answer to the question a paused run asks (see lambdagent checkpoints show)")
    .option("--trace", "print the run's trace on stderr when it ends")
    .option(
      "--trace-file <file>",
      "save the result, trace, stats and every oracle answer of the run, before the checkpoint too, as JSON (for lambdagent trace and replay)"
    )
    .option("--output <file>", "also write the result to a file")
    .option("--format <format>", "text (default) or json: {result, trace, stats} on stdout", textOrJson, "text")
    .option("--quiet", "nothing on stderr but errors")
    .action(async (file: string, options: ResumeOptions) =>
      run(
        () => resumeCommand(file, options, host),
        () => options.format
      )
    )

  const checkpoints = program.command("checkpoints").description("list, show and prune the checkpoints of a directory, Redis or a SQLite file")
  checkpoints
    .command("list")
    .description("the checkpoints of a location, oldest first")
    .argument("<location>", "a checkpoint directory, redis://HOST[:PORT][?prefix=P] or sqlite:PATH")
    .option("--format <format>", "text (default) or json", textOrJson, "text")
    .action(async (spec: string, options: { format: "text" | "json" }) =>
      run(
        () =>
          withLocation(spec, async (opened) => {
            const rows = (await Effect.runPromise(CheckpointStore.inventory(opened.location))).map((s) => summaryRow(opened, s))
            if (options.format === "json") return void process.stdout.write(JSON.stringify(rows) + "\n")
            for (const r of rows) {
              process.stdout.write(
                r.problem !== undefined
                  ? `${r.file}  damaged: ${r.problem}\n`
                  : `${r.file}  ${r.createdAt}  waiting on ${r.waitingOn}  steps ${r.steps}  llm ${r.llmCalls}  tools ${r.toolCalls}  ${r.bytes} B\n`
              )
            }
          }),
        () => options.format
      )
    )
  checkpoints
    .command("show")
    .description("what a checkpoint holds: its run, term, counters, pending request and trace")
    .argument("<checkpoint>", "a checkpoint file, or with --store its key (RUNID.SEQUENCE)")
    .option("--store <location>", STORE_HELP)
    .option("--format <format>", "text (default) or json", textOrJson, "text")
    .action(async (file: string, options: { format: "text" | "json"; store?: string }) =>
      run(
        async () => {
          const opened = await locationOf(file, options.store)
          const checkpoint = await Effect.runPromise(CheckpointStore.readFrom(opened.location, keyIn(opened, file))).finally(opened.close)
          const trace = await Effect.runPromise(Checkpoint.traceTo(checkpoint))
          const info = {
            file,
            meta: checkpoint.meta,
            term: checkpoint.term,
            createdAt: checkpoint.createdAt,
            usage: checkpoint.usage,
            waitingOn: waitingText(checkpoint.waiting, checkpoint.asking),
            ...(checkpoint.asking !== undefined ? { asking: checkpoint.asking } : {}),
            base: { steps: checkpoint.base.usage.steps, answers: checkpoint.base.answers },
            answers: checkpoint.answers.map((a) => ({ key: a.key, kind: a.kind })),
            trace
          }
          if (options.format === "json") return void process.stdout.write(JSON.stringify(info) + "\n")
          process.stdout.write(
            `${file}\n  run ${String(checkpoint.meta.runId ?? "?")} of ${String(checkpoint.meta.config ?? "?")}\n  term ${checkpoint.term}\n`
          )
          if (checkpoint.asking !== undefined)
            process.stdout.write(
              `  asks ${JSON.stringify(checkpoint.asking.question)} (answer with lambdagent resume ${resumeArgs(opened, file)} --answer …)\n`
            )
          process.stdout.write(
            `  waiting on ${info.waitingOn}; steps ${info.usage.steps}, llm calls ${info.usage.llmCalls}, tool calls ${info.usage.toolCalls}, tokens ${info.usage.tokens}\n`
          )
          process.stdout.write(
            `  ${info.answers.length} answers recorded (${info.answers.length - info.base.answers} after its base, at step ${info.base.steps}), ${trace.length} trace events\n  ${Term.pretty(Checkpoint.rootTerm(checkpoint)).slice(0, 200)}\n`
          )
        },
        () => options.format
      )
    )
  checkpoints
    .command("prune")
    .description("delete each run's checkpoints but the newest (and the whole checkpoint it extends)")
    .argument("<location>", "a checkpoint directory, redis://HOST[:PORT][?prefix=P] or sqlite:PATH")
    .option("--keep <n>", "checkpoints kept per run (default 1)", integer("--keep", 0), 1)
    .option("--format <format>", "text (default) or json: {deleted: [checkpoint…]}", textOrJson, "text")
    .action(async (spec: string, options: { keep: number; format: "text" | "json" }) =>
      run(
        () =>
          withLocation(spec, async (opened) => {
            const deleted = await Effect.runPromise(CheckpointStore.pruneIn(opened.location, options.keep))
            process.stdout.write(
              options.format === "json" ? `${JSON.stringify({ deleted })}\n` : `${deleted.length} checkpoint${deleted.length === 1 ? "" : "s"} deleted\n`
            )
          }),
        () => options.format
      )
    )
}
