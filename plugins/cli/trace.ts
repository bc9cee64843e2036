/**
 * `lambdagent trace <trace.json> [--step N] [--filter TERM] [--timeline] [--flamegraph out.svg]`.
 */
import { writeFile } from "node:fs/promises"
import type { Command } from "commander"
import type { Registration } from "./shell.ts"
import type { Trace } from "lambdagent"
import { CliError, ExitCode, readTextFile } from "./io.ts"
import { integer, textOrJson } from "./options.ts"
import { isReferenceEntry, referenceEntries, referenceEvent } from "./referenceTrace.ts"
import { traceDiffCommand } from "./traceDiff.ts"

interface TraceOptions {
  readonly step?: number
  readonly filter?: string
  readonly timeline?: boolean
  readonly flamegraph?: string
  readonly slow?: boolean
  readonly format: "text" | "json"
}

/**
 * A trace file: an array of events, or any object with a `trace` array (run output); or a trace of
 * the Python reference (a list of its entries, or an object with `entries` and metadata).
 */
export const parseTraceFile = (text: string, path: string): ReadonlyArray<Trace.TraceEvent> => {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (cause) {
    throw new CliError(`${path} is not JSON: ${(cause as Error).message}`, ExitCode.failed, "TraceFileError")
  }
  const events = Array.isArray(data)
    ? data
    : typeof data === "object" && data !== null && Array.isArray((data as { trace?: unknown }).trace)
      ? (data as { trace: Array<unknown> }).trace
      : referenceEntries(data)
  if (events === undefined)
    throw new CliError(
      `${path} holds no trace: expected an array of events, an object with "trace", or a reference trace with "entries"`,
      ExitCode.failed,
      "TraceFileError"
    )
  return events.map((e, i) => {
    if (isReferenceEntry(e)) return referenceEvent(e, i)
    if (typeof e !== "object" || e === null || typeof (e as { kind?: unknown }).kind !== "string") {
      throw new CliError(
        `${path}: event ${i} is not a trace event (needs "kind" and "name", or a reference entry's "term" or "term_type")`,
        ExitCode.failed,
        "TraceFileError"
      )
    }
    // `run --format json` writes null for an event without input or output
    const { input, output, ...event } = e as Partial<Omit<Trace.TraceEvent, "input" | "output">> & { input?: string | null; output?: string | null }
    return {
      step: event.step ?? i,
      kind: event.kind!,
      name: String(event.name ?? event.kind),
      ...event,
      ...(typeof input === "string" ? { input } : {}),
      ...(typeof output === "string" ? { output } : {})
    } as Trace.TraceEvent
  })
}

const seconds = (ms: number | undefined) => `${((ms ?? 0) / 1000).toFixed(1)}s`
const short = (text: string | undefined, max = 60) => {
  if (text === undefined) return ""
  const flat = text.replace(/\s+/g, " ")
  return flat.length > max ? flat.slice(0, max) + "…" : flat
}
/** How an event is named in step lines: `Tool:name` for tools, the LLM's name, else `kind:name`. */
export const eventLabel = (e: Trace.TraceEvent): string => (e.kind === "tool" ? `Tool:${e.name}` : e.kind === "llm" ? e.name : `${e.kind}:${e.name}`)

/** One line per event, as `run --trace` prints them. */
export const formatEventLine = (event: Trace.TraceEvent, index: number): string => {
  const io =
    event.input !== undefined || event.output !== undefined
      ? `  ${event.input !== undefined ? `"${short(event.input, 40)}" ` : ""}→ ${event.output !== undefined ? `"${short(event.output)}"` : ""}`
      : ""
  return `β[${index}]  ${eventLabel(event).padEnd(14)} (${seconds(event.durationMs)})${io}${event.branch !== undefined ? `  [branch ${event.branch}]` : ""}`
}

export const summaryLine = (events: ReadonlyArray<Trace.TraceEvent>): string => {
  const ms = events.reduce((n, e) => n + (e.durationMs ?? 0), 0)
  const tokens = events.reduce((n, e) => n + (e.tokens === undefined ? 0 : e.tokens.input + e.tokens.output), 0)
  return `Total: ${events.length} β-reductions, ${seconds(ms)}${tokens > 0 ? `, ~${tokens} tokens` : ""}`
}

/** Every field of one event, one per line, as `trace --step N` prints it. */
export const formatEventDetail = (event: Trace.TraceEvent, index: number): string =>
  [
    `β[${index}] ${eventLabel(event)}`,
    `  Kind:     ${event.kind}`,
    `  Step:     ${event.step}`,
    `  Duration: ${event.durationMs === undefined ? "n/a" : `${event.durationMs.toFixed(1)} ms`}`,
    ...(event.model !== undefined ? [`  Model:    ${event.model}`] : []),
    `  Tokens:   ${event.tokens === undefined ? "n/a" : `${event.tokens.input} in, ${event.tokens.output} out`}`,
    ...(event.branch !== undefined ? [`  Branch:   ${event.branch}`] : []),
    ...(event.error !== undefined ? [`  Error:    ${event.error}`] : []),
    `  Input:    ${event.input ?? ""}`,
    `  Output:   ${event.output ?? ""}`
  ].join("\n")

/** Cumulative time view: one bar per event, its length proportional to its duration. */
export const timeline = (events: ReadonlyArray<Trace.TraceEvent>): string => {
  const total = events.reduce((n, e) => n + (e.durationMs ?? 0), 0)
  const width = 50
  let at = 0
  const lines = events.map((e, i) => {
    const start = total === 0 ? 0 : Math.round((at / total) * width)
    const length = total === 0 ? 1 : Math.max(1, Math.round(((e.durationMs ?? 0) / total) * width))
    const line = `${seconds(at).padStart(7)} │${" ".repeat(start)}${"█".repeat(length)} ${eventLabel(e)} (${(e.durationMs ?? 0).toFixed(0)}ms) β[${i}]`
    at += e.durationMs ?? 0
    return line
  })
  return [`   Time │${"─".repeat(width)}→`, ...lines, `${seconds(total).padStart(7)} ┤ END`].join("\n")
}

const escapeXml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** A flame-graph style SVG: events laid out on a time axis, one row per parallel branch. */
export const flamegraph = (events: ReadonlyArray<Trace.TraceEvent>): string => {
  const rows = [...new Set(events.map((e) => e.branch ?? ""))].sort()
  const total = Math.max(
    1,
    events.reduce((n, e) => n + (e.durationMs ?? 0), 0)
  )
  const width = 1200
  const rowHeight = 22
  const height = rows.length * (rowHeight + 4) + 40
  const colors: Record<string, string> = { llm: "#e8743b", tool: "#19a979", memory: "#5899da", route: "#945ecf", loop: "#bf399e", guard: "#f4b400" }
  let at = 0
  const rects = events.map((e, i) => {
    const x = (at / total) * (width - 20) + 10
    const w = Math.max(1, ((e.durationMs ?? 0) / total) * (width - 20))
    const y = rows.indexOf(e.branch ?? "") * (rowHeight + 4) + 30
    at += e.durationMs ?? 0
    const title = `β[${i}] ${eventLabel(e)} ${(e.durationMs ?? 0).toFixed(1)}ms`
    return (
      `<g><title>${escapeXml(title)}</title><rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${rowHeight}" fill="${colors[e.kind] ?? "#999"}" stroke="#fff"/>` +
      (w > 40
        ? `<text x="${(x + 3).toFixed(1)}" y="${y + 15}" font-size="11" font-family="monospace">${escapeXml(eventLabel(e).slice(0, Math.floor(w / 7)))}</text>`
        : "") +
      "</g>"
    )
  })
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
    `<text x="10" y="18" font-size="13" font-family="sans-serif">${escapeXml(summaryLine(events))}</text>${rects.join("")}</svg>\n`
  )
}

/** The next key pressed on the terminal (raw mode: no Enter needed for `q`). */
const nextKey = (): Promise<string> =>
  new Promise((resolve) => {
    process.stdin.setRawMode(true)
    process.stdin.resume()
    process.stdin.once("data", (data: Buffer) => {
      process.stdin.setRawMode(false)
      process.stdin.pause()
      resolve(data.toString("utf8"))
    })
  })

/** `--slow`: one step at a time on a terminal; Enter (or space) shows the next, q (or Ctrl+C, Esc) stops. */
const stepThrough = async (selected: ReadonlyArray<{ readonly event: Trace.TraceEvent; readonly index: number }>): Promise<void> => {
  for (const [n, { event, index }] of selected.entries()) {
    process.stdout.write(`${formatEventDetail(event, index)}\n`)
    if (n === selected.length - 1) break
    process.stdout.write(`-- step ${n + 1} of ${selected.length}: Enter for the next, q to quit --`)
    const key = await nextKey()
    process.stdout.write("\r\x1b[K")
    if (key === "q" || key === "Q" || key === "\x03" || key === "\x1b") return
  }
  process.stdout.write(`${"─".repeat(40)}\n${summaryLine(selected.map((s) => s.event))}\n`)
}

export const traceCommand = async (path: string, options: TraceOptions): Promise<void> => {
  if (options.slow === true) {
    if (options.format === "json" || options.step !== undefined || options.timeline === true) {
      throw new CliError(
        "--slow shows the steps one at a time as text: it goes with neither --format json, --step nor --timeline",
        ExitCode.usage,
        "UsageError"
      )
    }
    if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) {
      throw new CliError(
        "--slow steps through the trace on a terminal (Enter for the next step, q to quit), and stdin or stdout is not one: leave out --slow to print every step",
        ExitCode.usage,
        "UsageError"
      )
    }
  }
  let events = parseTraceFile(await readTextFile(path, "trace"), path)
  const indexed = events.map((event, index) => ({ event, index }))
  const selected =
    options.filter === undefined
      ? indexed
      : indexed.filter(({ event }) => event.name.includes(options.filter!) || event.kind === options.filter || eventLabel(event).includes(options.filter!))
  events = selected.map((s) => s.event)
  if (options.step !== undefined) {
    const found = indexed.find((s) => s.index === options.step)
    if (found === undefined) throw new CliError(`Step ${options.step} not found (total: ${indexed.length})`, ExitCode.failed, "StepNotFound")
    process.stdout.write((options.format === "json" ? JSON.stringify(found.event) : formatEventDetail(found.event, found.index)) + "\n")
    return
  }
  if (options.flamegraph !== undefined) {
    await writeFile(options.flamegraph, flamegraph(events))
    process.stderr.write(`[flame graph written to ${options.flamegraph}]\n`)
  }
  if (options.format === "json") {
    process.stdout.write(JSON.stringify(events) + "\n")
    return
  }
  if (options.slow === true) return stepThrough(selected)
  const body = options.timeline === true ? timeline(events) : selected.map(({ event, index }) => formatEventLine(event, index)).join("\n")
  process.stdout.write(`${body}${body === "" ? "" : "\n"}${"─".repeat(40)}\n${summaryLine(events)}\n`)
}

export const registerTrace: Registration = (program, run) => {
  const trace = program
    .command("trace")
    .description("show a recorded trace: every step, one step in detail, a timeline or a flame graph")
    .argument("<file>", "a trace file (from run --trace-file, run --format json output, or the Python reference's trace files)")
    .option("--step <n>", "show step N in detail", integer("--step", 0))
    .option("--filter <term>", "only the steps of this name or kind")
    .option("--timeline", "a time line of the steps")
    .option("--flamegraph <out.svg>", "write a flame graph as SVG")
    .option("--slow", "on a terminal, show one step at a time: Enter for the next, q to quit")
    .option("--format <format>", "text or json", textOrJson, "text")
    .action(async (file: string, options: TraceOptions) =>
      run(
        () => traceCommand(file, options),
        () => options.format
      )
    )
  trace
    .command("diff")
    .description("compare two traces: aligned steps, first divergence, changed prompts and tool calls, token and time deltas")
    .argument("<a>", "a trace file (from run --trace-file, or run --format json output)")
    .argument("<b>", "another trace file")
    .option("--format <format>", "text or json", textOrJson, "text")
    .action(async (a: string, b: string, options: { format: "text" | "json" }, command: Command) => {
      // `trace` has a --format of its own, which takes the option when it is given after `diff`
      const format = options.format === "json" || command.parent?.opts().format === "json" ? "json" : "text"
      return run(
        () => traceDiffCommand(a, b, { format }),
        () => format
      )
    })
}
