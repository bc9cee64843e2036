import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

export const cliPath = fileURLToPath(new URL("../../../dist/cli/main.js", import.meta.url))

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Run the built `lambdagent` binary as a user would, with optional stdin (`cli`: another copy of it). */
export const runCli = (
  args: ReadonlyArray<string>,
  options: { stdin?: string; cwd?: string; env?: Record<string, string>; timeoutMs?: number; cli?: string } = {}
): Promise<CliResult> => {
  if (!existsSync(cliPath)) throw new Error("dist/cli/main.js is missing: run `npm run build` first")
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.cli ?? cliPath, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(options.stdin ?? "")
  })
}

export interface Served {
  /** The server's base URL, read from its readiness line. */
  readonly url: string
  /** Send SIGTERM and resolve with the exit code. */
  readonly stop: () => Promise<number | null>
}

/** Start `lambdagent serve …` and wait for the line that names its URL. */
export const startServe = (args: ReadonlyArray<string>, env?: Readonly<Record<string, string>>): Promise<Served> => {
  if (!existsSync(cliPath)) throw new Error("dist/cli/main.js is missing: run `npm run build` first")
  const child = spawn(process.execPath, [cliPath, "serve", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    ...(env !== undefined ? { env: { ...process.env, ...env } } : {})
  })
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
  let out = ""
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`no URL in: ${out}`))
    }, 20_000)
    const read = (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out)
      if (m === null) return
      clearTimeout(timer)
      resolve({ url: m[0], stop: () => (child.kill("SIGTERM"), exited) })
    }
    child.stdout.on("data", read)
    child.stderr.on("data", read)
    void exited.then(() => reject(new Error(`serve exited before listening: ${out}`)))
  })
}
