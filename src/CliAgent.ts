/**
 * Another program as a tool (`cli.agents` in YAML): the input goes to its standard input, its
 * standard output is the result — a β-reduction across processes. The command is the author's
 * text, run by `/bin/sh -c`; the input never becomes part of it. With `options.sandbox` every
 * call runs in the sandbox (see the `Sandbox` module).
 *
 * @since 0.1.0
 * @module
 */
import { writeJson } from "./internal/json.ts"
import { sandboxable } from "./internal/processTools.ts"
import { runToolProgram } from "./internal/toolProcess.ts"
import type * as Sandbox from "./Sandbox.ts"
import type * as Tools from "./Tools.ts"

/**
 * How to call the program.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { CliAgent } from "lambdagent"
 * const o: CliAgent.Options = { command: "lambdagent run summarizer.yml --quiet -", format: "text", timeoutMs: 60_000, retry: 1 }
 * ```
 */
export interface Options {
  readonly command: string
  /**
   * `text`: stdout is the answer; `json`: stdout is JSON and its `result` field (or the whole
   * value) is the answer; `jsonl`: the same, from the last line of stdout.
   */
  readonly format?: "text" | "json" | "jsonl"
  /** Default 60 seconds. */
  readonly timeoutMs?: number
  /** Extra attempts after a failure or timeout (default 0). */
  readonly retry?: number
  readonly description?: string
  readonly env?: NodeJS.ProcessEnv
  /** Where the program runs (and, sandboxed, the one writable directory); default the process's. */
  readonly cwd?: string
  /** Run every call in the sandbox under this policy (see `Sandbox.resolvePolicy`). */
  readonly sandbox?: Sandbox.Policy
}

const decodeJson = (stdout: string): string => {
  let data: unknown
  try {
    data = JSON.parse(stdout)
  } catch {
    return `[CLI_ERROR:json] output is not JSON: ${stdout.slice(0, 200)}`
  }
  const result = typeof data === "object" && data !== null && "result" in data ? (data as { result: unknown }).result : data
  return typeof result === "string" ? result : writeJson(result)
}

/**
 * A tool that runs another program. Failures never throw: a non-zero exit gives
 * `[CLI_ERROR:n] <stderr>` and a timeout `[CLI_TIMEOUT after Ns]`, after the retries. Sandboxed, a
 * call a limit stops fails with the `Sandbox.SandboxViolation` (`[SANDBOX:memory] …`) at once,
 * without retries: the same input would hit the same limit.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { CliAgent } from "lambdagent"
 * const upper = CliAgent.make("upper", { command: "tr a-z A-Z" })
 * ```
 */
export const make = (name: string, options: Options): Tools.ToolDefinition<string> => {
  const timeoutMs = options.timeoutMs ?? 60_000
  const attempts = 1 + Math.max(0, options.retry ?? 0)
  const tool: Tools.ToolDefinition<string> = {
    name,
    kind: "cli",
    description: options.description ?? `The program \`${options.command}\` (input on stdin, answer on stdout).`,
    source: options.command,
    timeoutMs: attempts * (timeoutMs + 1_000),
    run: async (input: string, { signal }) => {
      let last = ""
      for (let attempt = 0; attempt < attempts && !signal.aborted; attempt++) {
        const result = await runToolProgram(options.command, {
          stdin: input,
          timeoutMs,
          signal,
          ...(options.env !== undefined ? { env: options.env } : {}),
          ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
          ...(options.sandbox !== undefined ? { sandbox: options.sandbox } : {})
        })
        if (result.timedOut) last = `[CLI_TIMEOUT after ${timeoutMs / 1000}s] ${name}`
        else if (result.exitCode !== 0) last = `[CLI_ERROR:${result.exitCode}] ${result.stderr.trim()}`
        else {
          const out = result.stdout.trim()
          if (options.format === "json") return decodeJson(out)
          if (options.format === "jsonl")
            return decodeJson(
              out
                .split("\n")
                .filter((l) => l.trim() !== "")
                .at(-1) ?? ""
            )
          return out
        }
      }
      return last
    }
  }
  return sandboxable(tool, (sandbox) => make(name, { ...options, sandbox }))
}
