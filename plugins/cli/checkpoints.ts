/**
 * Durable runs on the command line: `run --checkpoint DIR` (or a config's `checkpoint:` block)
 * saves a checkpoint before every oracle call; `resume <checkpoint>` goes on from one in a new
 * process; `checkpoints list|show|prune` look after a directory of them.
 */
import { randomBytes } from "node:crypto"
import { basename, dirname, resolve } from "node:path"
import { Checkpoint, CheckpointStore, type Runtime, Term, Value } from "lambdagent"
import { buildRuntime, type LoadedAgent, loadAgent, shellTools } from "./agent.ts"
import { CliError, ExitCode, onInterrupt } from "./io.ts"
import { integer, textOrJson } from "./options.ts"
import type { Registration } from "./shell.ts"
import type { Host } from "./plugins.ts"

/** Where a run's checkpoints go: `--checkpoint DIR`, else an enabled `checkpoint:` block of its config. */
export interface CheckpointPlan {
  readonly directory: string
  readonly maxCheckpoints?: number
}

export const checkpointPlan = (agent: LoadedAgent, flag: string | undefined): CheckpointPlan | undefined => {
  if (flag !== undefined) return { directory: resolve(flag), ...maxOf(agent) }
  const block = agent.compiled?.runtime.checkpoint as { enabled?: boolean; directory?: string } | undefined
  if (block === undefined || block.enabled === false) return undefined
  return { directory: resolve(agent.baseDir, block.directory ?? ".lambdagent/checkpoints"), ...maxOf(agent) }
}

const maxOf = (agent: LoadedAgent): { maxCheckpoints?: number } => {
  const max = (agent.compiled?.runtime.checkpoint as { maxCheckpoints?: number } | undefined)?.maxCheckpoints
  return max !== undefined ? { maxCheckpoints: max } : {}
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
}

/**
 * The call options that checkpoint a run into `plan`'s directory (checked writable now, before
 * any oracle call).
 */
export const checkpointing = (plan: CheckpointPlan, meta: Omit<RunMeta, "runId"> & { readonly runId?: string }, firstSequence?: number): NonNullable<Runtime.CallOptions["checkpoint"]> => {
  const runId = meta.runId ?? randomBytes(6).toString("hex")
  const store = CheckpointStore.directory({
    path: plan.directory,
    runId,
    ...(plan.maxCheckpoints !== undefined ? { maxCheckpoints: plan.maxCheckpoints } : {}),
    ...(firstSequence !== undefined ? { firstSequence } : {})
  })
  return { save: store.save, meta: { ...meta, runId } }
}

const metaOf = (file: string, checkpoint: Checkpoint.Checkpoint): RunMeta => {
  const m = checkpoint.meta as Partial<RunMeta>
  if (typeof m.runId !== "string" || typeof m.config !== "string" || typeof m.input !== "string") {
    throw new CliError(`${file}: the checkpoint was not written by lambdagent run (it names no config); resume it with runtime.resume`, ExitCode.failed, "CheckpointError")
  }
  return m as RunMeta
}

interface ResumeOptions {
  readonly model?: string
  readonly format: "text" | "json"
  readonly quiet?: boolean
}

const resumeCommand = async (file: string, options: ResumeOptions, host: Host) => {
  const checkpoint = CheckpointStore.read(file)
  const meta = metaOf(file, checkpoint)
  const extraTools = shellTools(meta.tools ?? [], meta.toolTimeout !== undefined ? { timeoutMs: meta.toolTimeout * 1000 } : {})
  const agent = await loadAgent(meta.config, { tools: extraTools })
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
  const directory = dirname(resolve(file))
  const sequence = Math.max(0, ...CheckpointStore.list(directory).filter((e) => e.runId === meta.runId).map((e) => e.sequence)) + 1
  const controller = new AbortController()
  onInterrupt(() => controller.abort(new CliError("interrupted", ExitCode.interrupted, "Interrupted")))
  try {
    const output = await runtime.resume(checkpoint, {
      signal: controller.signal,
      checkpoint: checkpointing({ directory, ...maxOf(agent) }, { ...meta, ...(model !== undefined ? { model } : {}) }, sequence)
    })
    if (options.format === "json") process.stdout.write(JSON.stringify({ result: output.result, trace: output.trace, stats: output.stats }) + "\n")
    else process.stdout.write(Value.toText(output.value) + "\n")
  } finally {
    onInterrupt(undefined)
    await close()
  }
}

const summary = (entry: CheckpointStore.Entry) => {
  const checkpoint = CheckpointStore.read(entry.file)
  const pending = (checkpoint.graph.heap.length > 0 ? pendingKind(checkpoint) : undefined) ?? "start"
  return {
    file: entry.file,
    run: entry.runId,
    sequence: entry.sequence,
    createdAt: checkpoint.createdAt,
    waitingOn: pending,
    steps: checkpoint.usage.steps,
    llmCalls: checkpoint.usage.llmCalls,
    toolCalls: checkpoint.usage.toolCalls,
    answers: checkpoint.answers.length,
    bytes: entry.bytes
  }
}

const pendingKind = (checkpoint: Checkpoint.Checkpoint): string | undefined => {
  const pending = Checkpoint.restore(checkpoint).pending
  if (pending === undefined) return undefined
  return pending.kind === "tool" ? `tool ${pending.name}` : pending.kind === "llm" ? `llm${pending.term.name !== undefined ? ` ${pending.term.name}` : ""}` : pending.kind
}

export const registerCheckpoints: Registration = (program, run, host) => {
  program
    .command("resume")
    .description("resume a run from a checkpoint (written by run --checkpoint), in this process")
    .argument("<checkpoint>", "a checkpoint file")
    .option("--model <spec>", "send the remaining LLM calls to this model (default: the run's)")
    .option("--format <format>", "text (default) or json: {result, trace, stats} on stdout", textOrJson, "text")
    .option("--quiet", "nothing on stderr but errors")
    .action(async (file: string, options: ResumeOptions) => run(() => resumeCommand(file, options, host), () => options.format))

  const checkpoints = program.command("checkpoints").description("list, show and prune the checkpoints of a directory")
  checkpoints
    .command("list")
    .description("the checkpoints of a directory, oldest first")
    .argument("<dir>", "a checkpoint directory")
    .option("--format <format>", "text (default) or json", textOrJson, "text")
    .action(async (dir: string, options: { format: "text" | "json" }) =>
      run(async () => {
        const rows = CheckpointStore.list(dir).map(summary)
        if (options.format === "json") return void process.stdout.write(JSON.stringify(rows) + "\n")
        for (const r of rows) {
          process.stdout.write(`${basename(r.file)}  ${r.createdAt}  waiting on ${r.waitingOn}  steps ${r.steps}  llm ${r.llmCalls}  tools ${r.toolCalls}  ${r.bytes} B\n`)
        }
      }, () => options.format)
    )
  checkpoints
    .command("show")
    .description("what a checkpoint holds: its run, term, counters, pending request and trace")
    .argument("<checkpoint>", "a checkpoint file")
    .option("--format <format>", "text (default) or json", textOrJson, "text")
    .action(async (file: string, options: { format: "text" | "json" }) =>
      run(async () => {
        const checkpoint = CheckpointStore.read(file)
        const info = {
          file,
          meta: checkpoint.meta,
          term: checkpoint.term,
          createdAt: checkpoint.createdAt,
          usage: checkpoint.usage,
          waitingOn: pendingKind(checkpoint) ?? "start",
          answers: checkpoint.answers.map((a) => ({ key: a.key, kind: a.kind })),
          trace: checkpoint.events
        }
        if (options.format === "json") return void process.stdout.write(JSON.stringify(info) + "\n")
        process.stdout.write(`${file}\n  run ${String(checkpoint.meta.runId ?? "?")} of ${String(checkpoint.meta.config ?? "?")}\n  term ${checkpoint.term}\n`)
        process.stdout.write(`  waiting on ${info.waitingOn}; steps ${info.usage.steps}, llm calls ${info.usage.llmCalls}, tool calls ${info.usage.toolCalls}, tokens ${info.usage.tokens}\n`)
        process.stdout.write(`  ${info.answers.length} answers recorded, ${info.trace.length} trace events\n  ${Term.pretty(Checkpoint.rootTerm(checkpoint)).slice(0, 200)}\n`)
      }, () => options.format)
    )
  checkpoints
    .command("prune")
    .description("delete each run's checkpoints but the newest")
    .argument("<dir>", "a checkpoint directory")
    .option("--keep <n>", "checkpoints kept per run (default 1)", integer("--keep", 0), 1)
    .action(async (dir: string, options: { keep: number }) =>
      run(async () => {
        const deleted = CheckpointStore.prune(dir, options.keep)
        process.stdout.write(`${deleted.length} checkpoint${deleted.length === 1 ? "" : "s"} deleted\n`)
      }, () => "text")
    )
}
