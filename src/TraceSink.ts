/**
 * The `TraceSink` service: where a runtime sends trace events as they happen.
 *
 * Built in: {@link layerNone} (the default), {@link layerMemory} (collect in an array),
 * {@link layerJsonl} (append one JSON object per line to a file), and {@link layerSpans}, which
 * opens an Effect span per run, LLM call, tool call and `par` branch so that any tracer the host
 * provides (`Telemetry.layer`, or `@effect/opentelemetry`) exports them.
 *
 * @since 0.1.0
 * @module
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import { createWriteStream, openSync } from "node:fs"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { TaggedError } from "./Errors.ts"
import type * as Trace from "./Trace.ts"

/**
 * An event as a sink receives it: the trace event plus the id of the run it belongs to.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { TraceSink } from "lambdagent"
 * const e: TraceSink.SinkEvent = { runId: "r1", step: 4, kind: "llm", name: "writer" }
 * ```
 */
export type SinkEvent = Trace.TraceEvent & { readonly runId: string }

/**
 * What a sink does. `record` is called synchronously for every event, so it must be cheap;
 * `spans` asks the runtime to open Effect spans around the run and its calls.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { TraceSink } from "lambdagent"
 * const printing: TraceSink.TraceSinkShape = { record: (e) => console.error(e.kind, e.name), spans: false }
 * ```
 */
export interface TraceSinkShape {
  /** Receive one event (synchronously; must not throw). */
  readonly record: (event: SinkEvent) => void
  readonly spans: boolean
}

/**
 * The trace sink service. Its default, when a host provides none, is {@link none}.
 *
 * @since 0.1.0
 * @category services
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { TraceSink } from "lambdagent"
 * const note = TraceSink.TraceSink.use((sink) => Effect.sync(() => sink.record({ runId: "r", step: 0, kind: "tool", name: "x" })))
 * ```
 */
export const TraceSink: Context.Reference<TraceSinkShape> = Context.Reference<TraceSinkShape>("lambdagent/TraceSink", {
  defaultValue: () => none
})

/**
 * A sink that keeps nothing (runs still return their own trace).
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { TraceSink } from "lambdagent"
 * const layer = TraceSink.layerNone
 * ```
 */
export const none: TraceSinkShape = { record: () => {}, spans: false }

/**
 * Layer for {@link none}.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { TraceSink } from "lambdagent"
 * const layer = TraceSink.layerNone
 * ```
 */
export const layerNone: Layer.Layer<never> = Layer.succeed(TraceSink, none)

/**
 * A sink that appends every event to the given array.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { TraceSink } from "lambdagent"
 * const events: Array<TraceSink.SinkEvent> = []
 * const layer = TraceSink.layerMemory(events)
 * ```
 */
export const layerMemory = (events: Array<SinkEvent>): Layer.Layer<never> => Layer.succeed(TraceSink, { record: (e) => void events.push(e), spans: false })

/**
 * A file a JSONL sink could not open or write.
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { TraceSink } from "lambdagent"
 * const e = new TraceSink.TraceFileError({ path: "/nope/trace.jsonl", message: "ENOENT: no such file or directory" })
 * ```
 */
export class TraceFileError extends TaggedError<TraceFileError>()("TraceFileError", {
  path: Schema.String,
  message: Schema.String
}) {}

/**
 * A sink that appends one JSON object per line to a file; the file is flushed and closed when the
 * layer's scope closes. A file that cannot be opened fails the layer with {@link TraceFileError};
 * a write that fails later (a full disk) stops the sink, never the process.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { TraceSink } from "lambdagent"
 * const layer = TraceSink.layerJsonl("trace.jsonl")
 * ```
 */
export const layerJsonl = (path: string): Layer.Layer<never, TraceFileError> =>
  Layer.effect(
    TraceSink,
    Effect.acquireRelease(
      Effect.try({
        try: () => {
          const fd = openSync(path, "a")
          const stream = createWriteStream(path, { fd })
          const sink = { stream, failed: false }
          stream.on("error", () => void (sink.failed = true))
          return sink
        },
        catch: (cause) => new TraceFileError({ path, message: cause instanceof Error ? cause.message : String(cause) })
      }),
      ({ stream }) => Effect.promise(() => new Promise<void>((resolve) => stream.end(() => resolve())))
    ).pipe(
      Effect.map(
        (sink): TraceSinkShape => ({
          record: (e) => {
            if (!sink.failed) sink.stream.write(JSON.stringify(e) + "\n")
          },
          spans: false
        })
      )
    )
  )

/**
 * A sink that records nothing itself but makes the runtime open Effect spans: one per run
 * (`lambdagent.run`), LLM call (`chat <model>`, with the OpenTelemetry `gen_ai.*` attributes),
 * tool call (`execute_tool <name>`), memory access, `par` and `par` branch (see
 * docs/observability.md). Provide a tracer to export them: `Telemetry.layer` sends them to an
 * OpenTelemetry collector over OTLP/HTTP.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { TraceSink } from "lambdagent"
 * const layer = TraceSink.layerSpans
 * ```
 */
export const layerSpans: Layer.Layer<never> = Layer.sync(TraceSink, () => spansOnly)

/**
 * The sink of {@link layerSpans}: it records nothing and asks for spans. A runtime given an
 * OpenTelemetry exporter and no sink of its own uses it.
 *
 * @since 0.2.0
 * @category layers
 * @example
 * ```ts
 * import { createRuntime, TraceSink } from "lambdagent"
 * const runtime = createRuntime({ traceSink: TraceSink.spansOnly })
 * await runtime.close()
 * ```
 */
export const spansOnly: TraceSinkShape = { record: () => {}, spans: true }
