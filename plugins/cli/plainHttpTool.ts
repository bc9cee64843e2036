/**
 * The plain HTTP tool protocol of seed §6.1, for `app.mcp.custom.nodes` servers that are not MCP
 * servers: `POST {url}{endpoint}` with `{"tool": name, "input": text}` answers `{"output": …}`. A
 * timeout answers `[MCP_TIMEOUT: server/tool]`, an HTTP error `[MCP_ERROR: status]`, a body that is
 * not JSON (or has no `output`) is the answer as it is. Network errors, 5xx and 429 are retried
 * `retryOnFail` times, waiting min(2^attempt s, 30 s) between attempts.
 */
import type { Tools } from "lambdagent"
import * as z from "zod"

/** How to reach one plain HTTP tool. */
export interface PlainHttpOptions {
  readonly server: string
  /** `url` joined with `endpoint`. */
  readonly url: string
  readonly headers?: Readonly<Record<string, string>>
  /** Seconds per attempt (default 30). */
  readonly timeout?: number
  readonly retryOnFail?: number
  /** For `${VAR}` in header values. */
  readonly env?: NodeJS.ProcessEnv
}

/** `${VAR}` in a header value, from the environment; an unset variable is an empty string. */
const expand = (value: string, env: NodeJS.ProcessEnv): string => value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? "")

const wait = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener("abort", () => {
      clearTimeout(timer)
      resolve()
    })
  })

const answerOf = (body: string): string => {
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return body
  }
  if (typeof json !== "object" || json === null || !("output" in json)) return body
  const output = (json as { output: unknown }).output
  return typeof output === "string" ? output : JSON.stringify(output)
}

/**
 * A tool that calls `name` on a plain HTTP tool server.
 */
export const plainHttpTool = (name: string, options: PlainHttpOptions): Tools.ToolDefinition => {
  const timeoutMs = (options.timeout ?? 30) * 1000
  const attempts = 1 + Math.max(0, options.retryOnFail ?? 0)
  const env = options.env ?? process.env
  return {
    name,
    kind: "mcp",
    description: `The tool ${name} of the HTTP tool server ${options.server}.`,
    source: options.url,
    input: z.any(),
    timeoutMs: attempts * (timeoutMs + 30_000),
    run: async (input: unknown, { signal }) => {
      const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" }
      for (const [key, value] of Object.entries(options.headers ?? {})) headers[key] = expand(value, env)
      const body = JSON.stringify({ tool: name, input: typeof input === "string" ? input : JSON.stringify(input) })
      let last = ""
      for (let attempt = 0; attempt < attempts && !signal.aborted; attempt++) {
        if (attempt > 0) await wait(Math.min(2 ** (attempt - 1) * 1000, 30_000), signal)
        try {
          const response = await fetch(options.url, { method: "POST", headers, body, signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) })
          const text = await response.text()
          if (response.ok) return answerOf(text)
          last = `[MCP_ERROR: ${response.status}]`
          if (response.status < 500 && response.status !== 429) return last
        } catch (error) {
          if (signal.aborted) throw error
          last =
            (error as Error).name === "TimeoutError"
              ? `[MCP_TIMEOUT: ${options.server}/${name}]`
              : `[MCP_ERROR: ${options.server}/${name}: ${(error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message}]`
        }
      }
      return last
    }
  }
}
