/**
 * Run a process with input on stdin, a timeout, cancellation and capped output; the whole process
 * group is killed on timeout, abort or overflow, so no child outlives the call.
 */

export interface ProcessResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly timedOut: boolean
  /** Whether stdout or stderr passed `maxOutputBytes` (the process was then stopped). */
  readonly truncated: boolean
  /** Why the process was stopped before it ended (`output`, or a reason `watch` gave), when it was. */
  readonly stopped?: string
  /** What the process wrote on file descriptor 3, when `statusChannel` was asked for. */
  readonly status: string
  readonly pid: number | undefined
}

export interface SpawnOptions {
  readonly stdin?: string
  readonly timeoutMs: number
  readonly signal?: AbortSignal
  readonly env?: NodeJS.ProcessEnv
  readonly cwd?: string
  /** Bytes kept of stdout and of stderr each; past it the process is stopped. */
  readonly maxOutputBytes: number
  /** Open file descriptor 3 as a pipe to read a status report from. */
  readonly statusChannel?: boolean
  /**
   * The process to kill instead of the whole group, given the status read so far (a sandbox's
   * first process, whose death ends the sandbox); the group is killed when it gives none.
   */
  readonly killTarget?: (status: string) => number | undefined
  /** Called with each stderr chunk (after the end of the one before): a reason to stop the process, or `undefined`. */
  readonly watch?: (stderr: string) => string | undefined
}

/** Output beyond this many bytes (of stdout, and of stderr) is cut, and the command stopped. */
export const MAX_OUTPUT_BYTES = 10 * 1024 * 1024

class Capture {
  private readonly chunks: Array<Buffer> = []
  bytes = 0
  overflow = false

  constructor(private readonly limit: number) {}

  add(chunk: Buffer): void {
    if (this.overflow) return
    const room = this.limit - this.bytes
    if (chunk.length > room) {
      this.chunks.push(chunk.subarray(0, room))
      this.bytes = this.limit
      this.overflow = true
      return
    }
    this.chunks.push(chunk)
    this.bytes += chunk.length
  }

  text(): string {
    return Buffer.concat(this.chunks).toString("utf8")
  }
}

export const spawnCaptured = (file: string, args: ReadonlyArray<string>, options: SpawnOptions): Promise<ProcessResult> =>
  new Promise((resolve, reject) => {
    // node:child_process (with net and dgram behind it, ~3 ms) is loaded by the first process
    // started, not with this module: a program that starts none does not pay for it
    const child = process.getBuiltinModule("node:child_process").spawn(file, args, {
      stdio: options.statusChannel === true ? ["pipe", "pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe"],
      detached: true,
      env: options.env ?? process.env,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {})
    })
    const stdout = new Capture(options.maxOutputBytes)
    const stderr = new Capture(options.maxOutputBytes)
    let status = ""
    let stderrTail = ""
    let timedOut = false
    let stopped: string | undefined
    const kill = () => {
      const target = options.killTarget?.(status)
      try {
        if (target !== undefined) return process.kill(target, "SIGKILL")
      } catch {
        // already gone: kill the group
      }
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
    }
    const stop = (reason: string) => {
      stopped ??= reason
      kill()
    }
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout.add(chunk)
      if (stdout.overflow) stop("output")
    })
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr.add(chunk)
      if (stderr.overflow) stop("output")
      if (options.watch === undefined) return
      const recent = stderrTail + chunk.toString("utf8")
      stderrTail = recent.slice(-256)
      const reason = options.watch(recent)
      if (reason !== undefined) stop(reason)
    })
    child.stdio[3]?.on("data", (chunk: Buffer) => (status += chunk.toString("utf8")))
    const timer = setTimeout(() => {
      timedOut = true
      kill()
    }, options.timeoutMs)
    const onAbort = () => kill()
    if (options.signal?.aborted === true) kill()
    else options.signal?.addEventListener("abort", onAbort, { once: true })
    child.on("error", (error) => {
      clearTimeout(timer)
      options.signal?.removeEventListener("abort", onAbort)
      reject(error)
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      options.signal?.removeEventListener("abort", onAbort)
      resolve({
        code,
        signal,
        stdout: stdout.text(),
        stderr: stderr.text(),
        timedOut,
        truncated: stdout.overflow || stderr.overflow,
        ...(stopped !== undefined ? { stopped } : {}),
        status,
        pid: child.pid
      })
    })
    child.stdin!.on("error", () => {}) // the command may not read its input
    child.stdin!.end(options.stdin ?? "")
  })

/** Run `program` with `/bin/sh -c`. */
export const runShell = (
  program: string,
  options: Omit<SpawnOptions, "maxOutputBytes" | "statusChannel" | "watch"> & { readonly maxOutputBytes?: number }
): Promise<ProcessResult> => spawnCaptured("/bin/sh", ["-c", program], { maxOutputBytes: MAX_OUTPUT_BYTES, ...options })
