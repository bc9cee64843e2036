/**
 * The JSON of a run as `run --format json` and `--trace-file` print it: the keys of the
 * specification (`trace[].term`, `trace[].duration_ms`, `stats.total_*`) beside the fields the
 * runtime records (`kind`, `name`, `durationMs`, `tokens`, `stats.steps`…), which older readers use.
 */
import type { Agent, Term, Trace } from "lambdagent"
import { eventLabel } from "./trace.ts"

/** One trace event with `term` (its label: `think`, `Tool:sum`), `duration_ms`, and `input`/`output` (null when it has none). */
export const eventJson = (event: Trace.TraceEvent) => {
  const { step, input, output, ...rest } = event
  return { step, term: eventLabel(event), duration_ms: Math.round(event.durationMs ?? 0), input: input ?? null, output: output ?? null, ...rest }
}

/** The run's totals: `total_steps` counts the trace's events (the β-reductions the text output reports). */
export const statsJson = (stats: Agent.Stats, trace: ReadonlyArray<Trace.TraceEvent>) => ({
  total_steps: trace.length,
  total_time_ms: Math.round(stats.durationMs),
  total_tokens: stats.tokens,
  ...stats
})

/** `{result, trace, stats}` of a finished run. */
export const runJson = (output: { readonly result: Term.Json; readonly trace: ReadonlyArray<Trace.TraceEvent>; readonly stats: Agent.Stats }) => ({
  result: output.result,
  trace: output.trace.map(eventJson),
  stats: statsJson(output.stats, output.trace)
})
