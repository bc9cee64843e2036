/**
 * The cost of sandboxing one shell tool call: `Tools.call` of a shell tool with and without a
 * policy, cold (the first call of the process, which also probes what the machine can enforce)
 * and warm, beside a bare `/bin/sh -c true` spawn measured in the same run.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Sandbox, ShellTool, Tools } from "lambdagent"
import { fmt, measureAsync, table } from "./harness.ts"

const RUNS = 15

const bareSpawn = () =>
  new Promise<void>((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", "true"], { stdio: "ignore" })
    child.on("error", reject)
    child.on("close", () => resolve())
  })

const timed = async (fn: () => Promise<unknown>): Promise<number> => {
  const started = performance.now()
  await fn()
  return performance.now() - started
}

export async function run(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "lambdagent-bench-sandbox-"))
  try {
    const call = (tool: Tools.ToolDefinition) => () => Effect.runPromise(Tools.call(tool, "x"))
    const plain = ShellTool.make("echo", "printf '%s' {}", { cwd: work })
    const plainCold = await timed(call(plain))
    const probeMs = await timed(() => Sandbox.probe())
    const capabilities = await Sandbox.probe()
    const baseline = await measureAsync(bareSpawn, RUNS)
    const plainWarm = await measureAsync(call(plain), RUNS)
    const rows: Array<Array<string>> = [
      ["bare spawn of /bin/sh -c true (baseline)", "", `${fmt(baseline.medianMs)} ms`],
      ["shell tool call, no sandbox", `${fmt(plainCold)} ms`, `${fmt(plainWarm.medianMs)} ms`],
      ["probe of what the machine can enforce (once per process)", `${fmt(probeMs)} ms`, ""]
    ]
    if (capabilities.available) {
      for (const preset of ["strict", "permissive"] as const) {
        const sandboxed = ShellTool.make("echo", "printf '%s' {}", { cwd: work, sandbox: Sandbox.presets[preset] })
        const cold = await timed(call(sandboxed))
        const warm = await measureAsync(call(sandboxed), RUNS)
        rows.push([`shell tool call, sandbox ${preset} (process limit: ${capabilities.processLimit})`, `${fmt(cold)} ms`, `${fmt(warm.medianMs)} ms`])
        rows.push([`  overhead over the unsandboxed call`, "", `${fmt(warm.medianMs - plainWarm.medianMs)} ms`])
      }
    } else {
      rows.push([`sandboxed calls: not measured (the sandbox needs ${capabilities.missing.join("; ")})`, "", ""])
    }
    table(`One shell tool call (median of ${RUNS}; cold = first call of the process)`, ["workload", "cold", "warm"], rows)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
