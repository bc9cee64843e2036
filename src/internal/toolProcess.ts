/**
 * The one place shell tools and CLI agents start their processes: `/bin/sh -c program`, in the
 * sandbox when a policy is given (a limit that stops it is thrown as the `SandboxViolation`).
 */
import { constants } from "node:os"
import * as Sandbox from "../Sandbox.ts"
import { runShell } from "./process.ts"

export interface ToolProcessResult {
  /** The exit status (128 + n for signal n). */
  readonly exitCode: number | null
  readonly stdout: string
  readonly stderr: string
  readonly timedOut: boolean
  /** Unsandboxed output past the 10 MB cap was cut and the command stopped. */
  readonly truncated: boolean
}

export interface ToolProcessOptions {
  readonly sandbox?: Sandbox.Policy
  readonly stdin?: string
  readonly env?: NodeJS.ProcessEnv
  readonly cwd?: string
  readonly timeoutMs: number
  readonly signal?: AbortSignal
}

export const runToolProgram = async (program: string, options: ToolProcessOptions): Promise<ToolProcessResult> => {
  const common = {
    timeoutMs: options.timeoutMs,
    ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
    ...(options.env !== undefined ? { env: options.env } : {}),
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {})
  }
  if (options.sandbox === undefined) {
    const r = await runShell(program, common)
    const fromSignal = r.signal !== null ? 128 + (constants.signals[r.signal] ?? 0) : null
    return { exitCode: r.code ?? fromSignal, stdout: r.stdout, stderr: r.stderr, timedOut: r.timedOut, truncated: r.truncated }
  }
  const r = await Sandbox.run(["/bin/sh", "-c", program], { policy: options.sandbox, ...common })
  if (r.violation !== undefined) throw r.violation
  return { exitCode: r.exitCode ?? null, stdout: r.stdout, stderr: r.stderr, timedOut: r.timedOut, truncated: false }
}
