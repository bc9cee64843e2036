/**
 * Trace entries written by the Python reference implementation, read as trace events: its run
 * trace files and `run --format json` output (entries `{step, term, term_id, duration_ms, input,
 * output, model, tokens}`) and its tracing store's entries (`{term_type, name, elapsed_ms,
 * tokens_in, tokens_out}`), either as a list or inside an object with `entries` and metadata.
 */
import type { Trace } from "lambdagent"

type Entry = Readonly<Record<string, unknown>>

const isEntry = (value: unknown): value is Entry => typeof value === "object" && value !== null && !Array.isArray(value)

/** Whether an entry is in one of the reference's shapes (ours always has `kind`). */
export const isReferenceEntry = (value: unknown): value is Entry =>
  isEntry(value) && value.kind === undefined && (typeof value.term === "string" || typeof value.term_type === "string")

/** The reference's term classes, by the kind of event they are here. */
const kindOfTermType: Readonly<Record<string, Trace.EventKind>> = {
  lam: "llm",
  conversationlam: "llm",
  tool: "tool",
  validatedtool: "tool",
  mcptool: "tool",
  route: "route",
  loop: "loop",
  guard: "guard",
  memory: "memory",
  par: "par",
  asyncpar: "par",
  groupchat: "groupchat",
  handoff: "handoff"
}

const text = (value: unknown): string | undefined =>
  value === undefined || value === null ? undefined : typeof value === "string" ? value : JSON.stringify(value)

const number = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) ? value : undefined)

/**
 * One reference entry as an event. A list entry (`term`) with a model is an LLM call and one
 * without is a tool call, as the reference records only those; it gives one token total, kept as
 * output tokens. A store entry (`term_type`) names its term class.
 */
export const referenceEvent = (entry: Entry, index: number): Trace.TraceEvent => {
  const model = text(entry.model)
  const input = text(entry.input)
  const output = text(entry.output)
  const error = text(entry.error)
  const common = {
    ...(input !== undefined ? { input } : {}),
    ...(output !== undefined ? { output } : {}),
    ...(model !== undefined && model !== "" ? { model } : {}),
    ...(error !== undefined ? { error } : {})
  }
  if (typeof entry.term_type === "string") {
    const tokensIn = number(entry.tokens_in) ?? 0
    const tokensOut = number(entry.tokens_out) ?? 0
    const durationMs = number(entry.elapsed_ms) ?? number(entry.duration_ms)
    return {
      step: number(entry.step) ?? index,
      kind: kindOfTermType[entry.term_type.toLowerCase()] ?? "beta",
      name: text(entry.name) ?? entry.term_type,
      ...common,
      ...(durationMs !== undefined ? { durationMs } : {}),
      ...(tokensIn + tokensOut > 0 ? { tokens: { input: tokensIn, output: tokensOut } } : {})
    }
  }
  const tokens = number(entry.tokens) ?? 0
  const durationMs = number(entry.duration_ms)
  return {
    step: number(entry.step) ?? index,
    kind: model !== undefined && model !== "" ? "llm" : "tool",
    name: entry.term as string,
    ...common,
    ...(durationMs !== undefined ? { durationMs } : {}),
    ...(tokens > 0 ? { tokens: { input: 0, output: tokens } } : {})
  }
}

/** The entry list of a reference trace object (`{entries: […], …metadata}`), if it is one. */
export const referenceEntries = (data: unknown): ReadonlyArray<unknown> | undefined =>
  isEntry(data) && Array.isArray(data.entries) && !Array.isArray(data.trace) ? data.entries : undefined
