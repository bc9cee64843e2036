/**
 * Run a shell command with input on stdin, a timeout and cancellation; the whole process group is
 * killed on timeout or abort, so no child outlives the call.
 */
import { spawn } from "node:child_process"

export interface ProcessResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly timedOut: boolean
}

/** Output beyond this many bytes is cut (and marked) so a chatty command cannot exhaust memory. */
const MAX_OUTPUT = 10 * 1024 * 1024

export const runShell = (
  command: string,
  options: { readonly stdin?: string; readonly timeoutMs: number; readonly signal?: AbortSignal; readonly env?: NodeJS.ProcessEnv }
): Promise<ProcessResult> =>
  new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", command], {
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
      env: options.env ?? process.env
    })
    let stdout = ""
    let stderr = ""
    let timedOut = false
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
    }
    const append = (current: string, chunk: Buffer) =>
      current.length >= MAX_OUTPUT ? current : (current + chunk.toString("utf8")).slice(0, MAX_OUTPUT)
    child.stdout.on("data", (chunk: Buffer) => (stdout = append(stdout, chunk)))
    child.stderr.on("data", (chunk: Buffer) => (stderr = append(stderr, chunk)))
    const timer = setTimeout(() => {
      timedOut = true
      kill()
    }, options.timeoutMs)
    const onAbort = () => kill()
    options.signal?.addEventListener("abort", onAbort, { once: true })
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      options.signal?.removeEventListener("abort", onAbort)
      resolve({ code, stdout, stderr, timedOut })
    })
    child.stdin.on("error", () => {}) // the command may not read its input
    child.stdin.end(options.stdin ?? "")
  })
