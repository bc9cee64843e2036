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
export const runCli = (args: ReadonlyArray<string>, options: { stdin?: string; cwd?: string; env?: Record<string, string>; timeoutMs?: number; cli?: string } = {}): Promise<CliResult> => {
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
