/**
 * `lambdagent compile --dry-run`: compile, then check that every tool of each config can be
 * reached, without running the agent. MCP servers over HTTP are pinged, a stdio MCP server's
 * program and a CLI agent's or shell tool's program must be on `PATH`, a remote A2A agent's card
 * must be readable, a RAG source must exist; the runtime is built as `run` builds it, so a memory
 * store module that does not load fails here too. Programs are found, never started: a program
 * need not understand `--version`, and starting one may have effects a dry run must not have.
 */
import { buildRuntime, loadAgent } from "./agent.ts"
import type { Host } from "./plugins.ts"
import { checkReachability, listTools, type Reachability } from "./tools.ts"

interface CheckedTool {
  readonly name: string
  readonly kind: string
  readonly reachability: Reachability
}

const checkTools = async (file: string, host: Host, timeoutMs: number): Promise<ReadonlyArray<CheckedTool>> => {
  const agent = await loadAgent(file)
  const { close, tools } = await buildRuntime(agent, { plugins: host.plugins })
  try {
    const entries = listTools(agent, tools)
    return await Promise.all(entries.map(async (e) => ({ name: e.name, kind: e.kind, reachability: await checkReachability(e, agent.baseDir, timeoutMs) })))
  } finally {
    await close()
  }
}

const line = (t: CheckedTool): string => {
  const r = t.reachability
  const word = r.ok === true ? "✓ reachable" : r.ok === false ? "✗ unreachable" : "? unknown"
  return `  ${word}  ${t.name} (${t.kind}): ${r.detail}${r.ms !== undefined ? `, ${r.ms}ms` : ""}`
}

/** Exit code 1 when a tool is unreachable (and the configs compiled); otherwise compile's own. */
export const compileDryRun = async (
  target: string,
  options: { readonly format: "text" | "json"; readonly validate?: boolean; readonly timeoutMs?: number },
  host: Host
): Promise<{ readonly stdout: string; readonly stderr: string; readonly exitCode: number }> => {
  const yaml = await import("lambdagent/yaml")
  const compiled = yaml.compileCommand(target, { format: options.format, ...(options.validate === true ? { validate: true } : {}) })
  const files = yaml.agentFiles(target)
  if (compiled.exitCode === 2 || files === undefined || files.length === 0) return compiled
  const timeoutMs = options.timeoutMs ?? 2000
  const checked: Array<ReadonlyArray<CheckedTool>> = []
  for (const file of files) checked.push(await checkTools(file, host, timeoutMs))
  const unreachable = checked.flat().filter((t) => t.reachability.ok === false)
  const exitCode = compiled.exitCode !== 0 ? compiled.exitCode : unreachable.length > 0 ? 1 : 0
  if (options.format === "json") {
    const report = JSON.parse(compiled.stdout) as { files: Array<Record<string, unknown>> }
    const filesOut = report.files.map((entry, i) => {
      const tools = checked[i]!
      return { ...entry, dryRun: { ok: tools.every((t) => t.reachability.ok !== false), tools } }
    })
    return { stdout: `${JSON.stringify({ ...report, files: filesOut, exitCode }, null, 2)}\n`, stderr: compiled.stderr, exitCode }
  }
  const sections = files.map((file, i) => {
    const tools = checked[i]!
    const head = `Dry run of ${file}: ${tools.length === 0 ? "no tools" : tools.every((t) => t.reachability.ok !== false) ? "every tool reachable" : "some tools unreachable"}`
    return [head, ...tools.map(line)].join("\n")
  })
  return { stdout: `${compiled.stdout}\n${sections.join("\n\n")}\n`, stderr: compiled.stderr, exitCode }
}
