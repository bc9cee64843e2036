import { describe, expect, it } from "vitest"
import { flamegraph, formatEventLine, parseTraceFile, summaryLine, timeline } from "./trace.ts"

// A run trace file of the Python reference (`run --trace-file`): a list of its entries.
const listFile = JSON.stringify([
  { step: 1, term: "classifier", term_id: "a1b2c3d4", duration_ms: 812.4, input: "fix my code", output: "code", model: "gpt-4o-mini", tokens: 31 },
  { step: 2, term: "lookup", term_id: "e5f6a7b8", duration_ms: 40, input: { query: "x" }, output: ["a", "b"], model: "", tokens: 0 },
  { step: 3, term: "coder", term_id: "c9d0e1f2", duration_ms: 1500, input: "fix my code", output: "done", model: "gpt-4o", tokens: 250 }
])

// The reference's tracing store: an object with entries and metadata, entries in its second shape.
const storeFile = JSON.stringify({
  trace_id: "t-1",
  agent: "triage",
  started_at: "2025-01-01T00:00:00Z",
  entries: [
    { term_type: "ConversationLam", name: "classifier", elapsed_ms: 700, tokens_in: 20, tokens_out: 3 },
    { term_type: "Route", name: "route", elapsed_ms: 2 },
    { term_type: "Tool", name: "search", elapsed_ms: 90.5, input: "q", output: "r" },
    { term_type: "Rewrite", name: "normalize", elapsed_ms: 1 }
  ]
})

describe("trace files of the Python reference", () => {
  it("reads a list of entries: a model makes an LLM call, its token total is kept, non-text values become JSON", () => {
    const events = parseTraceFile(listFile, "old.json")
    expect(events).toEqual([
      {
        step: 1,
        kind: "llm",
        name: "classifier",
        input: "fix my code",
        output: "code",
        model: "gpt-4o-mini",
        durationMs: 812.4,
        tokens: { input: 0, output: 31 }
      },
      { step: 2, kind: "tool", name: "lookup", input: '{"query":"x"}', output: '["a","b"]', durationMs: 40 },
      { step: 3, kind: "llm", name: "coder", input: "fix my code", output: "done", model: "gpt-4o", durationMs: 1500, tokens: { input: 0, output: 250 } }
    ])
    expect(formatEventLine(events[1]!, 1)).toBe('β[1]  Tool:lookup    (0.0s)  "{"query":"x"}" → "["a","b"]"')
    expect(summaryLine(events)).toBe("Total: 3 β-reductions, 2.4s, ~281 tokens")
  })

  it("reads the object with entries and metadata: term classes become event kinds", () => {
    const events = parseTraceFile(storeFile, "store.json")
    expect(events.map((e) => [e.step, e.kind, e.name, e.durationMs, e.tokens])).toEqual([
      [0, "llm", "classifier", 700, { input: 20, output: 3 }],
      [1, "route", "route", 2, undefined],
      [2, "tool", "search", 90.5, undefined],
      [3, "beta", "normalize", 1, undefined]
    ])
  })

  it("reads the reference's run --format json output (its trace entries have no kind)", () => {
    const output = JSON.stringify({
      result: "done",
      trace: [{ step: 1, term: "coder", duration_ms: 12.5, input: "hi", output: "done", model: "gpt-4o" }],
      stats: { total_steps: 1, total_time_ms: 12.5 }
    })
    expect(parseTraceFile(output, "run.json")).toEqual([
      { step: 1, kind: "llm", name: "coder", input: "hi", output: "done", model: "gpt-4o", durationMs: 12.5 }
    ])
  })

  it("draws them as a time line and a flame graph", () => {
    const events = parseTraceFile(listFile, "old.json")
    const lines = timeline(events).split("\n")
    expect(lines).toHaveLength(5)
    expect(lines[1]).toMatch(/^ {3}0\.0s │█+ classifier \(812ms\) β\[0\]$/)
    expect(lines[4]).toBe("   2.4s ┤ END")
    const svg = flamegraph(parseTraceFile(storeFile, "store.json"))
    expect(svg.match(/<rect /g)).toHaveLength(4)
    expect(svg).toContain("<title>β[2] Tool:search 90.5ms</title>")
  })

  it("refuses an object that holds no trace, naming the shapes it reads", () => {
    expect(() => parseTraceFile(JSON.stringify({ agent: "x" }), "x.json")).toThrow(/an object with "trace", or a reference trace with "entries"/)
    expect(() => parseTraceFile(JSON.stringify([{ name: "x" }]), "x.json")).toThrow(/event 0 is not a trace event .*"term" or "term_type"/)
  })
})
