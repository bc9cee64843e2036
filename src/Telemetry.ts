/**
 * OpenTelemetry export: the spans of runs (see `TraceSink.layerSpans` and docs/observability.md)
 * sent to an OpenTelemetry collector, Jaeger, Grafana Tempo or any OTLP/HTTP endpoint, through
 * Effect's own OTLP exporter (`effect/observability`, loaded only when a host asks for it).
 *
 * `createRuntime({ otel: { url } })` is the Promise way; {@link layer} is the Effect way. Spans are
 * batched and sent every few seconds, and flushed when the runtime (the layer's scope) closes. A
 * collector that cannot be reached never fails or holds up a run: the spans are dropped, and one
 * line says so. Effect marks its exporter unstable: this module's options may follow its changes.
 *
 * @since 0.2.0
 * @module
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { TaggedError } from "./Errors.ts"
import * as TraceSink from "./TraceSink.ts"

/**
 * Where and how to export spans.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Telemetry } from "lambdagent"
 * const o: Telemetry.OtelOptions = { url: "http://127.0.0.1:4318", serviceName: "support-bot", headers: { authorization: "Bearer …" } }
 * ```
 */
export interface OtelOptions {
  /**
   * The OTLP/HTTP endpoint: a base URL (`http://collector:4318`, to which `/v1/traces` is added)
   * or the full traces URL (any URL with a path, used as it is).
   */
  readonly url: string
  /** `service.name` of the exported resource; default `lambdagent`. */
  readonly serviceName?: string
  /** `service.version` of the exported resource. */
  readonly serviceVersion?: string
  /** HTTP headers of every export request (an API key, a tenant). */
  readonly headers?: Readonly<Record<string, string>>
  /** The body encoding: `json` (default) or `protobuf`; OTLP/HTTP receivers accept both. */
  readonly protocol?: "json" | "protobuf"
  /** How often batched spans are sent, in ms; default 5000. */
  readonly exportIntervalMs?: number
  /** How long closing waits for the last spans to be sent, in ms; default 3000. */
  readonly flushTimeoutMs?: number
  /**
   * Told, once, when the endpoint cannot be reached or refuses spans; default: the line is
   * written to stderr (`console.error`).
   */
  readonly onWarning?: (line: string) => void
}

/**
 * Telemetry options that cannot work: a URL that is not an `http:` or `https:` URL.
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { Telemetry } from "lambdagent"
 * const e = new Telemetry.TelemetryConfigError({ message: "the OTLP endpoint must be an http(s) URL, got \"nope\"" })
 * ```
 */
export class TelemetryConfigError extends TaggedError<TelemetryConfigError>()("TelemetryConfigError", {
  message: Schema.String
}) {}

/**
 * The traces URL of an endpoint: a base URL gets `/v1/traces`, a URL with a path is kept. Throws
 * {@link TelemetryConfigError} for anything but an `http:` or `https:` URL.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Telemetry } from "lambdagent"
 * console.log(Telemetry.tracesUrl("http://127.0.0.1:4318")) // "http://127.0.0.1:4318/v1/traces"
 * ```
 */
export const tracesUrl = (url: string): string => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new TelemetryConfigError({ message: `the OTLP endpoint must be an http(s) URL, got ${JSON.stringify(url)}` })
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new TelemetryConfigError({ message: `the OTLP endpoint must be an http(s) URL, got ${JSON.stringify(url)}` })
  }
  if (parsed.pathname === "/" || parsed.pathname === "") parsed.pathname = "/v1/traces"
  return parsed.toString()
}

/** Why an export failed, in a few words: the system's error code (`ECONNREFUSED`) when there is one. */
const reasonOf = (error: unknown): string => {
  let cause: unknown = error
  for (let depth = 0; depth < 6 && typeof cause === "object" && cause !== null; depth++) {
    const code = (cause as { readonly code?: unknown }).code
    if (typeof code === "string" && code !== "") return code
    const next = cause as { readonly reason?: { readonly cause?: unknown }; readonly cause?: unknown }
    cause = next.reason?.cause ?? next.cause
  }
  const message = error instanceof Error ? error.message : String(error)
  return message.split("\n")[0] ?? "export failed"
}

/**
 * A layer that exports the spans of runs over OTLP/HTTP: it provides Effect's tracer and turns
 * spans on (it sets the trace sink to `TraceSink.spansOnly`; merge a sink of your own after it,
 * with `spans: true`, to keep both). The exporter's modules are loaded when the layer is built.
 * Throws {@link TelemetryConfigError} at once for a URL that is not http(s).
 *
 * @since 0.2.0
 * @category layers
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Agent, LanguageModel, Scripted, Telemetry, Term, Tools } from "lambdagent"
 * const layer = Layer.mergeAll(
 *   Layer.succeed(LanguageModel.LanguageModel, Scripted.echo()),
 *   Tools.layer([]),
 *   Telemetry.layer({ url: "http://127.0.0.1:4318", serviceName: "docs-example" })
 * )
 * const program = Agent.run(Term.llm({ system: "Repeat." }), "hello").pipe(Effect.provide(layer))
 * ```
 */
export const layer = (options: OtelOptions): Layer.Layer<never> => {
  const url = tracesUrl(options.url)
  const warn = options.onWarning ?? ((line: string) => console.error(line))
  let warned = false
  const warnOnce = (reason: string) => {
    if (warned) return
    warned = true
    warn(`[otel: spans could not be sent to ${url} (${reason}); runs go on without them]`)
  }
  const exporter = Layer.unwrap(
    Effect.promise(async () => {
      const [{ OtlpSerialization, OtlpTracer }, { FetchHttpClient, HttpClient }] = await Promise.all([import("effect/observability"), import("effect/http")])
      // the exporter retries and then pauses on its own; this client only tells the user, once
      const client = Layer.effect(
        HttpClient.HttpClient,
        Effect.gen(function* () {
          const inner = yield* HttpClient.HttpClient
          return inner.pipe(
            HttpClient.tap((response) => Effect.sync(() => (response.status >= 300 ? warnOnce(`HTTP ${response.status}`) : undefined))),
            HttpClient.tapError((error) => Effect.sync(() => warnOnce(reasonOf(error))))
          )
        })
      ).pipe(Layer.provide(FetchHttpClient.layer))
      return OtlpTracer.layer({
        url,
        resource: {
          serviceName: options.serviceName ?? "lambdagent",
          ...(options.serviceVersion !== undefined ? { serviceVersion: options.serviceVersion } : {})
        },
        ...(options.headers !== undefined ? { headers: options.headers } : {}),
        exportInterval: options.exportIntervalMs ?? 5000,
        shutdownTimeout: options.flushTimeoutMs ?? 3000
      }).pipe(Layer.provide([client, options.protocol === "protobuf" ? OtlpSerialization.layerProtobuf : OtlpSerialization.layerJson]))
    })
  )
  return Layer.mergeAll(exporter, Layer.succeed(TraceSink.TraceSink, TraceSink.spansOnly))
}
