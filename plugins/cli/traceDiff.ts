/**
 * `lambdagent trace diff <a.json> <b.json> [--format json]`: two runs side by side — their steps
 * aligned, the first divergence, the prompts, tool calls and outputs that changed, and the token
 * and time deltas. With the recordings `run --trace-file` writes, prompts and tool calls are
 * compared whole, by request; without, by the trace's previews.
 */
import { Errors, Replay, Term, type Trace } from "lambdagent"
import { CliError, ExitCode, readTextFile } from "./io.ts"
import { eventLabel, parseTraceFile } from "./trace.ts"

/** One side's trace file: its events, counters and (when it has one) its recording. */
interface Side {
  readonly path: string
  readonly events: ReadonlyArray<Trace.TraceEvent>
  readonly stats: { readonly tokens?: number; readonly durationMs?: number } | undefined
  readonly recording: Replay.Recording | undefined
  /** The recorded answer each oracle event of the trace belongs to (see {@link eventKey}). */
  readonly entries: ReadonlyMap<string, Replay.Entry>
}

/** An event's identity within its run: the step it was recorded at, its kind, name and branch. */
const eventKey = (e: Trace.TraceEvent) => `${e.step}\u0000${e.kind}\u0000${e.name}\u0000${e.branch ?? ""}`

const readSide = async (path: string): Promise<Side> => {
  const text = await readTextFile(path, "trace")
  const events = parseTraceFile(text, path)
  const data = JSON.parse(text) as { stats?: unknown; replay?: unknown }
  let recording: Replay.Recording | undefined
  if (typeof data === "object" && data !== null && !Array.isArray(data) && data.replay !== undefined) {
    try {
      recording = Replay.parse(text)
    } catch (error) {
      if (error instanceof Errors.ReplayError) throw new CliError(`${path}: ${error.message}`, ExitCode.failed, "TraceFileError")
      throw error
    }
  }
  const stats = typeof data === "object" && data !== null && typeof data.stats === "object" && data.stats !== null ? (data.stats as Side["stats"]) : undefined
  const entries = new Map<string, Replay.Entry>()
  for (const entry of recording?.answers ?? []) for (const event of entry.events) entries.set(eventKey(event as Trace.TraceEvent), entry)
  return { path, events, stats, recording, entries }
}

type Status = "same" | "changed" | "added" | "removed"
const FIELDS = ["input", "output", "error", "model", "branch"] as const

/** An event as the diff shows it. */
const eventRef = (event: Trace.TraceEvent, index: number) => ({
  index,
  step: event.step,
  kind: event.kind,
  name: event.name,
  ...(event.input !== undefined ? { input: event.input } : {}),
  ...(event.output !== undefined ? { output: event.output } : {}),
  tokens: tokensOf(event),
  durationMs: event.durationMs ?? 0
})

type EventRef = ReturnType<typeof eventRef>

interface Row {
  readonly status: Status
  readonly a: EventRef | null
  readonly b: EventRef | null
  readonly changes: ReadonlyArray<string>
  readonly tokensDelta: number
  readonly durationMsDelta: number
}

const tokensOf = (e: Trace.TraceEvent) => (e.tokens === undefined ? 0 : e.tokens.input + e.tokens.output)
const alignKey = (e: Trace.TraceEvent) => `${e.kind}\u0000${e.name}\u0000${e.branch ?? ""}`

/** Most cells of the alignment table; longer traces are aligned step by step instead. */
const MAX_CELLS = 4_000_000

/**
 * Pairs of indexes of the two traces' events that correspond: a longest common subsequence of
 * their (kind, name, branch), so an inserted or removed step shifts nothing after it.
 */
const align = (a: ReadonlyArray<Trace.TraceEvent>, b: ReadonlyArray<Trace.TraceEvent>): Array<readonly [number | null, number | null]> => {
  const n = a.length
  const m = b.length
  if (n * m > MAX_CELLS) {
    return Array.from({ length: Math.max(n, m) }, (_, i) => [i < n ? i : null, i < m ? i : null] as const)
  }
  const ka = a.map(alignKey)
  const kb = b.map(alignKey)
  // lengths[i * (m + 1) + j]: the longest common subsequence of a[i..] and b[j..]
  const lengths = new Uint32Array((n + 1) * (m + 1))
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lengths[i * (m + 1) + j] =
        ka[i] === kb[j] ? lengths[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(lengths[(i + 1) * (m + 1) + j]!, lengths[i * (m + 1) + j + 1]!)
    }
  }
  const pairs: Array<readonly [number | null, number | null]> = []
  let i = 0
  let j = 0
  while (i < n || j < m) {
    if (i < n && j < m && ka[i] === kb[j]) pairs.push([i++, j++])
    else if (j >= m || (i < n && lengths[(i + 1) * (m + 1) + j]! >= lengths[i * (m + 1) + j + 1]!)) pairs.push([i++, null])
    else pairs.push([null, j++])
  }
  return pairs
}

const rowOf = (a: Side, b: Side, [i, j]: readonly [number | null, number | null]): Row => {
  const ea = i === null ? undefined : a.events[i]
  const eb = j === null ? undefined : b.events[j]
  const ra = ea === undefined ? null : eventRef(ea, i!)
  const rb = eb === undefined ? null : eventRef(eb, j!)
  const changes: Array<string> = ea !== undefined && eb !== undefined ? FIELDS.filter((f) => ea[f] !== eb[f]) : []
  // with recordings, the whole request and answer, not only the previews
  const recorded = ea !== undefined && eb !== undefined ? [a.entries.get(eventKey(ea)), b.entries.get(eventKey(eb))] : []
  if (recorded[0] !== undefined && recorded[1] !== undefined) {
    if (Term.stringify(recorded[0].request) !== Term.stringify(recorded[1].request)) changes.push("request")
    if (Term.stringify(recorded[0].answer) !== Term.stringify(recorded[1].answer) && !changes.includes("output")) changes.push("answer")
  }
  return {
    status: ra === null ? "added" : rb === null ? "removed" : changes.length > 0 ? "changed" : "same",
    a: ra,
    b: rb,
    changes,
    tokensDelta: (rb?.tokens ?? 0) - (ra?.tokens ?? 0),
    durationMsDelta: (rb?.durationMs ?? 0) - (ra?.durationMs ?? 0)
  }
}

/** A changed LLM or tool call: its request key (when the traces hold recordings), name, and both sides. */
interface Change {
  readonly key: string | null
  readonly name: string
  readonly a: Record<string, unknown> | null
  readonly b: Record<string, unknown> | null
}

const withoutKind = (request: unknown): Record<string, unknown> => {
  const { kind: _kind, ...rest } = request as Record<string, unknown>
  return rest
}

/** The LLM and tool calls whose requests or answers differ, by request key of the two recordings. */
const recordedChanges = (a: Replay.Recording, b: Replay.Recording, kind: "llm" | "tool"): Array<Change> => {
  const side = (entry: Replay.Entry | undefined) =>
    entry === undefined ? null : kind === "llm" ? withoutKind(entry.request) : { ...withoutKind(entry.request), output: entry.answer }
  const byKey = (r: Replay.Recording) => new Map(r.answers.filter((e) => e.kind === kind).map((e) => [e.key, e]))
  const ma = byKey(a)
  const mb = byKey(b)
  const keys = [...new Set([...ma.keys(), ...mb.keys()])]
  return keys.flatMap((key) => {
    const sa = side(ma.get(key))
    const sb = side(mb.get(key))
    if (sa !== null && sb !== null && Term.stringify(sa) === Term.stringify(sb)) return []
    const name = String((sa ?? sb)!.name ?? kind)
    return [{ key, name, a: sa, b: sb }]
  })
}

/** The same from the aligned steps' previews, for traces without recordings. */
const previewChanges = (rows: ReadonlyArray<Row>, kind: "llm" | "tool"): Array<Change> =>
  rows
    .filter((r) => r.status !== "same" && (r.a ?? r.b)!.kind === kind && (r.status !== "changed" || r.changes.some((c) => c === "input" || c === "output")))
    .map((r) => {
      const side = (e: EventRef | null) => (e === null ? null : kind === "llm" ? { input: e.input ?? "" } : { input: e.input ?? "", output: e.output ?? "" })
      return { key: null, name: (r.a ?? r.b)!.name, a: side(r.a), b: side(r.b) }
    })
    .filter((c) => c.a === null || c.b === null || Term.stringify(c.a) !== Term.stringify(c.b))

const totalsOf = (side: Side) => ({
  events: side.events.length,
  llmCalls: side.events.filter((e) => e.kind === "llm").length,
  toolCalls: side.events.filter((e) => e.kind === "tool").length,
  tokens: side.stats?.tokens ?? side.events.reduce((n, e) => n + tokensOf(e), 0),
  durationMs: side.stats?.durationMs ?? side.events.reduce((n, e) => n + (e.durationMs ?? 0), 0)
})

/** The diff of two trace files, as `--format json` prints it (keys documented in docs/cli.md). */
export const diffTraces = (a: Side, b: Side) => {
  const rows = align(a.events, b.events).map((pair) => rowOf(a, b, pair))
  const first = rows.findIndex((r) => r.status !== "same")
  const recorded = a.recording !== undefined && b.recording !== undefined
  const prompts = recorded ? recordedChanges(a.recording!, b.recording!, "llm") : previewChanges(rows, "llm")
  const tools = recorded ? recordedChanges(a.recording!, b.recording!, "tool") : previewChanges(rows, "tool")
  const ta = totalsOf(a)
  const tb = totalsOf(b)
  return {
    a: a.path,
    b: b.path,
    identical: first === -1 && prompts.length === 0 && tools.length === 0,
    firstDivergence: first === -1 ? null : { row: first, ...rows[first]! },
    steps: rows,
    prompts,
    tools,
    totals: {
      a: ta,
      b: tb,
      delta: {
        events: tb.events - ta.events,
        llmCalls: tb.llmCalls - ta.llmCalls,
        toolCalls: tb.toolCalls - ta.toolCalls,
        tokens: tb.tokens - ta.tokens,
        durationMs: tb.durationMs - ta.durationMs
      }
    }
  }
}

type Diff = ReturnType<typeof diffTraces>

const textOf = (value: unknown) => (typeof value === "string" ? value : Term.stringify(value ?? null)).replace(/\s+/g, " ")

/** `field "before" → "after"`, both cut where they start to differ. */
const change = (field: string, before: unknown, after: unknown) => {
  const [from, to] = Replay.contrast(textOf(before), textOf(after))
  return `${field} ${JSON.stringify(from)} → ${JSON.stringify(to)}`
}
const signed = (n: number, digits = 0) => `${n >= 0 ? "+" : ""}${n.toFixed(digits)}`
const labelOf = (r: EventRef) => eventLabel(r as unknown as Trace.TraceEvent)
const MARKS: Record<Status, string> = { same: " ", changed: "~", added: "+", removed: "-" }

const rowLine = (row: Row): string => {
  const e = (row.b ?? row.a)!
  const where = row.status === "added" ? `b β[${row.b!.index}]` : row.status === "removed" ? `a β[${row.a!.index}]` : `β[${row.a!.index}|${row.b!.index}]`
  const detail =
    row.status === "changed"
      ? "  " +
        row.changes
          .map((c) => {
            const [before, after] = [row.a![c as keyof EventRef], row.b![c as keyof EventRef]]
            return before === undefined && after === undefined ? `${c} differs` : change(c, before, after)
          })
          .join(", ")
      : ""
  return `${MARKS[row.status]} ${where.padEnd(12)} ${labelOf(e)}${detail}`
}

const changeLines = (title: string, changes: ReadonlyArray<Change>): Array<string> =>
  changes.length === 0
    ? []
    : [
        `${title} (${changes.length}):`,
        ...changes.map((c) => {
          const fields = [...new Set([...Object.keys(c.a ?? {}), ...Object.keys(c.b ?? {})])].filter(
            (f) => Term.stringify(c.a?.[f] ?? null) !== Term.stringify(c.b?.[f] ?? null)
          )
          const what = c.a === null ? "only in b" : c.b === null ? "only in a" : fields.map((f) => change(f, c.a![f], c.b![f])).join(", ")
          return `  ${c.name}${c.key !== null ? ` (request ${c.key})` : ""}: ${what}`
        })
      ]

/** The diff as text: a summary, the first divergence, every aligned step, the changed calls, the deltas. */
export const formatDiff = (diff: Diff): string => {
  const { a, b, delta } = diff.totals
  const side = (name: string, path: string, t: typeof a) =>
    `${name}: ${path} (${t.events} steps, ${t.llmCalls} LLM calls, ${t.toolCalls} tool calls, ${t.tokens} tokens, ${(t.durationMs / 1000).toFixed(2)}s)`
  const first = diff.firstDivergence
  return (
    [
      side("a", diff.a, a),
      side("b", diff.b, b),
      first === null
        ? diff.identical
          ? "the runs took the same steps with the same inputs and outputs"
          : "the runs took the same steps; their recorded requests or answers differ"
        : `first divergence at row ${first.row}: ${rowLine(first).slice(2)}`,
      ...diff.steps.map(rowLine),
      ...changeLines("changed prompts", diff.prompts),
      ...changeLines("changed tool calls", diff.tools),
      `tokens ${a.tokens} → ${b.tokens} (${signed(delta.tokens)}), time ${(a.durationMs / 1000).toFixed(2)}s → ${(b.durationMs / 1000).toFixed(2)}s (${signed(delta.durationMs / 1000, 2)}s), steps ${signed(delta.events)}`
    ].join("\n") + "\n"
  )
}

export const traceDiffCommand = async (pathA: string, pathB: string, options: { readonly format: "text" | "json" }): Promise<void> => {
  const diff = diffTraces(await readSide(pathA), await readSide(pathB))
  process.stdout.write(options.format === "json" ? Term.stringify(diff) + "\n" : formatDiff(diff))
}
