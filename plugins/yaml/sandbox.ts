/**
 * The `sandbox:` block (seed §20): a preset (`policy: strict | default | permissive`) and the
 * fields that override it, compiled to the `Sandbox.Policy` a runtime applies to every tool that
 * runs a process. The term does not change (§20.4): the policy is kept in
 * `CompiledAgent.runtime.sandbox`. The checks of the block's values are here too (L039–L041).
 *
 * @since 0.2.0
 * @module
 */
import { isAbsolute, resolve } from "node:path"
import { Sandbox } from "lambdagent"
import type { FieldPath } from "./errors.ts"
import type { AgentFile } from "./schema.ts"

type SandboxBlock = NonNullable<AgentFile["sandbox"]>

/**
 * Whether a `sandbox:` block is on: `enabled` defaults to true when the block is present.
 *
 * @since 0.2.0
 * @category sandbox
 * @example
 * ```ts
 * import { sandboxEnabled } from "lambdagent/yaml"
 * sandboxEnabled({ policy: "strict" }) // true
 * sandboxEnabled({ enabled: false, policy: "strict" }) // false
 * ```
 */
export const sandboxEnabled = (block: SandboxBlock | undefined): block is SandboxBlock => block !== undefined && block.enabled !== false

/**
 * The policy of an enabled `sandbox:` block: its preset (default `default`) with the fields it
 * sets; `work_dir` relative to `baseDir`. `undefined` when the block is absent or disabled.
 *
 * @since 0.2.0
 * @category sandbox
 * @example
 * ```ts
 * import { sandboxPolicy } from "lambdagent/yaml"
 * sandboxPolicy({ policy: "strict", network: true })?.network // true
 * sandboxPolicy({ policy: "strict", network: true })?.timeout // 5
 * ```
 */
export const sandboxPolicy = (block: SandboxBlock | undefined, baseDir?: string): Sandbox.Policy | undefined => {
  if (!sandboxEnabled(block)) return undefined
  const workDir =
    block.work_dir === undefined ? undefined : baseDir !== undefined && !isAbsolute(block.work_dir) ? resolve(baseDir, block.work_dir) : block.work_dir
  return Sandbox.resolvePolicy(block.policy ?? "default", {
    timeout: block.timeout,
    memoryMb: block.memory_mb,
    network: block.network,
    allowSubprocess: block.allow_subprocess,
    maxOutputBytes: block.max_output_bytes,
    maxFds: block.max_fds,
    workDir
  })
}

/** The policy, or `undefined` when a limit is out of range (L039 reports it). */
const checkedPolicy = (block: SandboxBlock): Sandbox.Policy | undefined => {
  try {
    return sandboxPolicy(block)
  } catch (error) {
    if (error instanceof Sandbox.InvalidPolicy) return undefined
    throw error
  }
}

/** The least a limit may be for a command to run at all. */
const FLOORS: ReadonlyArray<readonly [field: "timeout" | "memory_mb" | "max_fds" | "max_output_bytes", least: number, why: string]> = [
  ["timeout", 1, "every command would be stopped before it used any CPU time"],
  ["memory_mb", 8, "not even /bin/sh starts in less than about 4 MB of address space, and most programs need more"],
  ["max_fds", 3, "a command needs three file descriptors for its standard input, output and error"],
  ["max_output_bytes", 1, "every command that prints anything would be stopped"]
]

/**
 * L039: limits no command can run under. Reported through `add`, as the compiler's semantic
 * checks are.
 *
 * @since 0.2.0
 * @category sandbox
 * @example
 * ```ts
 * import { sandboxIssues } from "lambdagent/yaml"
 * const found: Array<string> = []
 * sandboxIssues({ type: "simple", sandbox: { timeout: 0 } }, (_rule, path) => found.push(path.join(".")))
 * found // ["sandbox.timeout"]
 * ```
 */
export const sandboxIssues = (file: AgentFile, add: (rule: string, path: FieldPath, message: string, expected: string, actual: string) => void): void => {
  const block = file.sandbox
  if (!sandboxEnabled(block)) return
  for (const [field, least, why] of FLOORS) {
    const value = block[field]
    if (value !== undefined && value < least) add("L039", ["sandbox", field], `sandbox.${field} is ${value}: ${why}`, `${field} ≥ ${least}`, String(value))
  }
}

// Runtimes that reserve about a gigabyte of address space when they start (measured: Node.js 22
// does not start with RLIMIT_AS below 1024 MB), so RLIMIT_AS below that stops them at once.
const LARGE_RUNTIMES = new Set(["node", "nodejs", "npx", "npm", "pnpm", "yarn", "tsx", "lambdagent", "deno", "bun", "java"])
const LARGE_RUNTIME_MB = 1024

/** A finding of the sandbox rules: rule, field and message. */
export interface SandboxFinding {
  readonly rule: string
  readonly path: FieldPath
  readonly message: string
}

/**
 * The lint findings of the `sandbox:` block: L041 (enabled, with its limits), L040 (a CLI agent
 * whose runtime cannot start under the memory limit), L030 (fields of a disabled block).
 *
 * @since 0.2.0
 * @category sandbox
 * @example
 * ```ts
 * import { sandboxFindings } from "lambdagent/yaml"
 * sandboxFindings({ type: "simple", sandbox: { policy: "strict" } }).map((f) => f.rule) // ["L041"]
 * ```
 */
export const sandboxFindings = (file: AgentFile): Array<SandboxFinding> => {
  const block = file.sandbox
  if (block === undefined) return []
  if (!sandboxEnabled(block)) {
    return Object.keys(block).length > 1
      ? [{ rule: "L030", path: ["sandbox"], message: "the sandbox is disabled (enabled: false): its other fields have no effect" }]
      : []
  }
  const policy = checkedPolicy(block)
  if (policy === undefined) return []
  const findings: Array<SandboxFinding> = []
  findings.push({ rule: "L041", path: ["sandbox"], message: `sandbox enabled for every tool that runs a process: ${Sandbox.describe(policy)}` })
  for (const [name, agent] of Object.entries(file.cli?.agents ?? {})) {
    const program = agent.command.trim().split(/\s+/)[0]!.replace(/^.*\//, "")
    if (LARGE_RUNTIMES.has(program) && policy.memoryMb < LARGE_RUNTIME_MB) {
      findings.push({
        rule: "L040",
        path: block.memory_mb !== undefined ? ["sandbox", "memory_mb"] : ["cli", "agents", name, "command"],
        message: `cli.agents.${name} runs ${program}, which reserves about 1 GB of address space when it starts: it cannot start under the sandbox's ${policy.memoryMb} MB (set sandbox.memory_mb to ${LARGE_RUNTIME_MB} or more)`
      })
    }
  }
  return findings
}
