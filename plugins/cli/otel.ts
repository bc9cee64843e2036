/**
 * `--otel URL` (on `run` and `serve`): export the spans of runs over OTLP/HTTP to an
 * OpenTelemetry collector, Jaeger or Tempo (an agent file's `runtime.otel` too). Without the flag, the standard
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (a full traces URL) or `OTEL_EXPORTER_OTLP_ENDPOINT` (a
 * base URL) turn it on; `OTEL_SERVICE_NAME` and `OTEL_EXPORTER_OTLP_HEADERS` are read as the
 * OpenTelemetry SDKs read them.
 */
import { Telemetry } from "lambdagent"
import { usageError } from "./options.ts"
import { VERSION } from "./version.ts"

export { OTEL_FLAGS, OTEL_HELP } from "./options.ts"

/** `k1=v1,k2=v2`, each part URL-encoded, as `OTEL_EXPORTER_OTLP_HEADERS` spells headers. */
const parseHeaders = (text: string): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const part of text.split(",")) {
    const eq = part.indexOf("=")
    if (eq <= 0) continue
    try {
      headers[decodeURIComponent(part.slice(0, eq).trim())] = decodeURIComponent(part.slice(eq + 1).trim())
    } catch {
      throw usageError(`OTEL_EXPORTER_OTLP_HEADERS: ${JSON.stringify(part)} is not URL-encoded`)
    }
  }
  return headers
}

/** An agent file's `runtime.otel`. */
export interface ConfigOtel {
  readonly url: string
  readonly serviceName?: string
  readonly headers?: Readonly<Record<string, string>>
}

/** The endpoint asked for: the flag, else the environment's traces or base endpoint, else the file's. */
const endpointOf = (
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  config: ConfigOtel | undefined
): { readonly url: string; readonly from: string } | undefined => {
  if (flag !== undefined) return { url: flag, from: "--otel" }
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  if (traces !== undefined && traces !== "") return { url: traces, from: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" }
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT
  if (base !== undefined && base !== "") return { url: `${base.replace(/\/+$/, "")}/v1/traces`, from: "OTEL_EXPORTER_OTLP_ENDPOINT" }
  if (config !== undefined) return { url: config.url, from: "runtime.otel.url" }
  return undefined
}

/**
 * The runtime's `otel` option, or `undefined` when tracing is off; a bad URL is a usage error (exit
 * 2). The flag wins over the environment, which wins over the agent file's `runtime.otel`; the
 * environment's service name and headers win over the file's.
 */
export const otelOptions = (flag: string | undefined, env: NodeJS.ProcessEnv = process.env, config?: ConfigOtel): Telemetry.OtelOptions | undefined => {
  if (env.OTEL_SDK_DISABLED === "true" && flag === undefined) return undefined
  const endpoint = endpointOf(flag, env, config)
  if (endpoint === undefined) return undefined
  try {
    Telemetry.tracesUrl(endpoint.url)
  } catch (error) {
    throw usageError(`${endpoint.from}: ${(error as Error).message}`)
  }
  const envHeaders = env.OTEL_EXPORTER_OTLP_HEADERS
  const headers = envHeaders !== undefined && envHeaders !== "" ? parseHeaders(envHeaders) : config?.headers
  return {
    url: endpoint.url,
    serviceName: env.OTEL_SERVICE_NAME || config?.serviceName || "lambdagent",
    serviceVersion: VERSION,
    ...(headers !== undefined ? { headers } : {}),
    onWarning: (line) => void process.stderr.write(`${line}\n`)
  }
}
