/**
 * Trace files (`run --trace-file`, `resume --trace-file`, `replay --trace-file`): the run's result,
 * trace and stats with a recording of every oracle answer, and what the recording keeps of the run
 * to run it again (`lambdagent replay`).
 */
import { writeFile } from "node:fs/promises"
import { resolve } from "node:path"
import { Term } from "lambdagent"
import type { RunOptions } from "./run.ts"

/** What a trace file keeps of the run, to run it again (`lambdagent replay`): never its environment, which may hold secrets. */
export const runMetaOf = (config: string, input: string, options: Pick<RunOptions, "tool" | "toolTimeout" | "model" | "temperature" | "maxSteps">) => ({
  config: resolve(config),
  input,
  tools: options.tool,
  ...(options.toolTimeout !== undefined ? { toolTimeout: options.toolTimeout } : {}),
  ...(options.model !== undefined ? { model: options.model } : {}),
  ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
  ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {})
})

/** A trace file: `{result, trace, stats, replay}` (and `error` for a run that failed), integers exact. */
export const writeTraceFile = (path: string, record: Readonly<Record<string, unknown>>): Promise<void> => writeFile(path, Term.stringify(record) + "\n")
