/**
 * Sandboxed tools: limits the operating system enforces on every tool that runs a process (shell
 * tools, CLI agents), whatever the process does.
 *
 * On Linux a sandboxed command runs in new user, mount and pid namespaces (and, without network,
 * a network namespace whose only interface is a loopback that is down), made by util-linux's
 * `unshare`: every mount is read-only except the work directory and a private `/tmp`; `/dev`
 * holds only `null`, `zero`, `full`, `random` and `urandom`; `/proc` shows the sandbox's own
 * processes; the command has no capabilities. `prlimit` sets its CPU time (RLIMIT_CPU), address
 * space (RLIMIT_AS), processes (RLIMIT_NPROC, or a pids cgroup when lambdagent runs as root, whom
 * RLIMIT_NPROC does not bind) and open files (RLIMIT_NOFILE); its output is counted and cut by
 * lambdagent. When the sandbox ends, every process in it ends too.
 *
 * A policy this machine cannot enforce is refused with {@link SandboxUnavailable}, naming what is
 * missing; nothing runs unprotected. A command stopped by a limit fails with a
 * {@link SandboxViolation} whose message the agent sees as its observation:
 * `[SANDBOX:memory] …`, `[SANDBOX:timeout] …`, `[SANDBOX:output] truncated at 4096 bytes …`.
 * See `docs/security.md` for what is and is not protected.
 *
 * @since 0.2.0
 * @module
 */
import { statSync } from "node:fs"
import { resolve } from "node:path"
import * as Schema from "effect/Schema"
import { TaggedError } from "./Errors.ts"
import { rebuilderOf } from "./internal/processTools.ts"
import { type Capabilities as ProbedCapabilities, capabilities } from "./internal/sandboxProbe.ts"
import { type Limits, runSandboxed, type ViolationKind as Kind } from "./internal/sandboxRun.ts"
import type * as Tools from "./Tools.ts"

/**
 * The presets of seed §20.2.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Sandbox } from "lambdagent"
 * const p: Sandbox.PresetName = "strict"
 * ```
 */
export type PresetName = "strict" | "default" | "permissive"

/**
 * Every preset name, strictest first.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * console.log(Sandbox.presetNames.join(", ")) // "strict, default, permissive"
 * ```
 */
export const presetNames: ReadonlyArray<PresetName> = ["strict", "default", "permissive"]

/**
 * What a sandboxed tool may do.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * const p: Sandbox.Policy = { ...Sandbox.presets.strict, network: true }
 * ```
 */
export interface Policy {
  /** The preset the policy starts from. */
  readonly preset: PresetName
  /** CPU seconds of each process (RLIMIT_CPU); a process that waits uses none. */
  readonly timeout: number
  /** Address space of each process, in MB of 2^20 bytes (RLIMIT_AS). */
  readonly memoryMb: number
  /** Whether the command may use the network; without it, it runs in a network namespace of its own. */
  readonly network: boolean
  /** `false`: at most 16 processes and threads at once (a pipeline fits); `true`: 256. */
  readonly allowSubprocess: boolean
  /** Bytes of stdout (and of stderr); past them the command is stopped and its output marked. */
  readonly maxOutputBytes: number
  /** Open file descriptors of each process (RLIMIT_NOFILE). */
  readonly maxFds: number
  /** The one writable directory, where the command starts; default the tool's working directory. */
  readonly workDir?: string
}

/**
 * Fields that override a preset's; an `undefined` field keeps the preset's value.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Sandbox } from "lambdagent"
 * const o: Sandbox.PolicyOverrides = { memoryMb: 512, network: true }
 * ```
 */
export type PolicyOverrides = { readonly [K in Exclude<keyof Policy, "preset">]?: Policy[K] | undefined }

/**
 * The presets, field by field as seed §20.2 gives them.
 *
 * | field | strict | default | permissive |
 * |---|---|---|---|
 * | timeout (CPU s) | 5 | 30 | 300 |
 * | memoryMb | 64 | 256 | 2048 |
 * | network | false | false | true |
 * | allowSubprocess | false | false | true |
 * | maxOutputBytes | 4096 | 65536 | 1048576 |
 * | maxFds | 8 | 64 | 256 |
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * console.log(Sandbox.presets.default.memoryMb) // 256
 * ```
 */
export const presets: Readonly<Record<PresetName, Policy>> = {
  strict: { preset: "strict", timeout: 5, memoryMb: 64, network: false, allowSubprocess: false, maxOutputBytes: 4096, maxFds: 8 },
  default: { preset: "default", timeout: 30, memoryMb: 256, network: false, allowSubprocess: false, maxOutputBytes: 65_536, maxFds: 64 },
  permissive: { preset: "permissive", timeout: 300, memoryMb: 2048, network: true, allowSubprocess: true, maxOutputBytes: 1_048_576, maxFds: 256 }
}

/**
 * A policy with a field out of range (a limit that is not a positive integer, an unknown preset).
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * try { Sandbox.resolvePolicy("default", { memoryMb: 0 }) } catch (e) { console.log((e as Sandbox.InvalidPolicy).field) } // "memoryMb"
 * ```
 */
export class InvalidPolicy extends TaggedError<InvalidPolicy>()("InvalidPolicy", {
  field: Schema.String,
  message: Schema.String
}) {}

const positiveIntegers = ["timeout", "memoryMb", "maxOutputBytes", "maxFds"] as const

/**
 * A preset with overrides, checked: the policy a sandboxed tool runs under.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * const p = Sandbox.resolvePolicy("strict", { network: true, memoryMb: 128 })
 * console.log(p.timeout, p.memoryMb, p.network) // 5 128 true
 * ```
 */
export const resolvePolicy = (preset: PresetName = "default", overrides: PolicyOverrides = {}): Policy => {
  const base = (presets as Record<string, Policy | undefined>)[preset]
  if (base === undefined)
    throw new InvalidPolicy({ field: "preset", message: `unknown sandbox preset ${JSON.stringify(preset)}: use ${presetNames.join(", ")}` })
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)) as Partial<Policy>
  const policy: Policy = { ...base, ...defined }
  for (const field of positiveIntegers) {
    const value = policy[field]
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
      throw new InvalidPolicy({ field, message: `sandbox ${field} must be a positive integer, got ${JSON.stringify(value)}` })
    }
  }
  for (const field of ["network", "allowSubprocess"] as const) {
    if (typeof policy[field] !== "boolean")
      throw new InvalidPolicy({ field, message: `sandbox ${field} must be true or false, got ${JSON.stringify(policy[field])}` })
  }
  if (policy.workDir !== undefined && (typeof policy.workDir !== "string" || policy.workDir === "")) {
    throw new InvalidPolicy({ field: "workDir", message: `sandbox workDir must be a directory path, got ${JSON.stringify(policy.workDir)}` })
  }
  return policy
}

/**
 * How many processes and threads a policy's command may have at once.
 *
 * @since 0.2.0
 * @category getters
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * console.log(Sandbox.processLimit(Sandbox.presets.strict)) // 16
 * ```
 */
export const processLimit = (policy: Policy): number => (policy.allowSubprocess ? 256 : 16)

/**
 * A policy in one line, for notices and listings.
 *
 * @since 0.2.0
 * @category getters
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * Sandbox.describe(Sandbox.presets.strict)
 * // "strict: 5 s CPU, 64 MB, no network, 16 processes, 4096 B output, 8 files"
 * ```
 */
export const describe = (policy: Policy): string =>
  `${policy.preset}: ${policy.timeout} s CPU, ${policy.memoryMb} MB, ${policy.network ? "network" : "no network"}, ` +
  `${processLimit(policy)} processes, ${policy.maxOutputBytes} B output, ${policy.maxFds} files` +
  (policy.workDir !== undefined ? `, work dir ${policy.workDir}` : "")

/**
 * Which limit stopped a command: `timeout` (CPU time), `memory`, `processes`, `files`, `output`,
 * `network` or `filesystem` (a write outside the work directory).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Sandbox } from "lambdagent"
 * const k: Sandbox.ViolationKind = "memory"
 * ```
 */
export type ViolationKind = Kind

/**
 * A sandboxed command stopped by a limit. Its message starts with `[SANDBOX:<kind>]` and is what
 * the agent observes.
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * const v = new Sandbox.SandboxViolation({ kind: "output", message: "[SANDBOX:output] truncated at 4096 bytes" })
 * console.log(v.kind) // "output"
 * ```
 */
export class SandboxViolation extends TaggedError<SandboxViolation>()("SandboxViolation", {
  kind: Schema.Literals(["timeout", "memory", "processes", "files", "output", "network", "filesystem"]),
  message: Schema.String
}) {}

/**
 * A policy this machine cannot enforce: the sandbox refuses to run rather than run unprotected.
 * `missing` names what is lacking (a Linux kernel, user namespaces, a network namespace, util-linux
 * programs, a process limit that binds).
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * const e = new Sandbox.SandboxUnavailable({ missing: ["a network namespace"], message: "[SANDBOX:unavailable] …" })
 * ```
 */
export class SandboxUnavailable extends TaggedError<SandboxUnavailable>()("SandboxUnavailable", {
  missing: Schema.Array(Schema.String),
  message: Schema.String
}) {}

/**
 * What this machine can enforce.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * const caps: Sandbox.Capabilities = await Sandbox.probe()
 * console.log(caps.available, caps.network, caps.processLimit)
 * ```
 */
export interface Capabilities {
  readonly platform: string
  /** The sandbox can run here (for policies with network). */
  readonly available: boolean
  /** A private network namespace can be made (for policies without network). */
  readonly network: boolean
  /** How the process limit binds: RLIMIT_NPROC in the sandbox's user namespace, or a pids cgroup. */
  readonly processLimit?: "rlimit" | "cgroup"
  /** What is missing, each as a sentence naming it. */
  readonly missing: ReadonlyArray<string>
}

const publicView = (caps: ProbedCapabilities): Capabilities => ({
  platform: caps.platform,
  available: caps.missing.length === 0,
  network: caps.network,
  ...(caps.processLimit !== undefined ? { processLimit: caps.processLimit } : {}),
  missing: [...caps.missing, ...(caps.missingNetwork !== undefined ? [caps.missingNetwork] : [])]
})

/**
 * Find out what this machine can enforce. It runs the launcher once (about as long as one
 * sandboxed call); the answer is kept for the life of the process.
 *
 * @since 0.2.0
 * @category probing
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * const { available, missing } = await Sandbox.probe()
 * if (!available) console.log(`no sandbox here: ${missing.join("; ")}`)
 * ```
 */
export const probe = async (): Promise<Capabilities> => publicView(await capabilities())

const unmetBy = (policy: Policy, caps: ProbedCapabilities): Array<string> => [
  ...caps.missing,
  ...(!policy.network && caps.missing.length === 0 && !caps.network ? [caps.missingNetwork ?? "a network namespace"] : [])
]

const unavailable = (missing: ReadonlyArray<string>): SandboxUnavailable =>
  new SandboxUnavailable({ missing, message: `[SANDBOX:unavailable] the sandbox cannot enforce this policy here: it needs ${missing.join("; ")}` })

/**
 * Fail with {@link SandboxUnavailable} unless this machine can enforce `policy`.
 *
 * @since 0.2.0
 * @category probing
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * await Sandbox.ensure(Sandbox.presets.strict) // throws where there are no namespaces
 * ```
 */
export const ensure = async (policy: Policy): Promise<void> => {
  const missing = unmetBy(policy, await capabilities())
  if (missing.length > 0) throw unavailable(missing)
}

/**
 * Options of {@link run}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * const o: Sandbox.RunOptions = { policy: Sandbox.presets.strict, stdin: "hello", timeoutMs: 10_000 }
 * ```
 */
export interface RunOptions {
  readonly policy: Policy
  readonly stdin?: string
  readonly env?: NodeJS.ProcessEnv
  /** The work directory when the policy names none; default `process.cwd()`. */
  readonly cwd?: string
  /** Wall-clock milliseconds before the sandbox is killed; default 30 seconds. */
  readonly timeoutMs?: number
  readonly signal?: AbortSignal
}

/**
 * How a sandboxed command ended.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Sandbox } from "lambdagent"
 * const describe = (r: Sandbox.RunResult) => r.violation?.message ?? r.stdout
 * ```
 */
export interface RunResult {
  /** The command's exit status (128 + n when signal n ended it); `undefined` when the sandbox was killed. */
  readonly exitCode: number | undefined
  readonly stdout: string
  readonly stderr: string
  /** The wall-clock timeout passed and the sandbox was killed. */
  readonly timedOut: boolean
  /** The limit that stopped the command, when one did. */
  readonly violation?: SandboxViolation
  /** The launcher's process id (its process group is the sandbox's outermost). */
  readonly pid: number | undefined
}

/**
 * Run a program (an argument vector, not a shell line) in the sandbox. Rejects with
 * {@link SandboxUnavailable} when the policy cannot be enforced here; a limit that stops the
 * program is reported in `violation`.
 *
 * @since 0.2.0
 * @category running
 * @example
 * ```ts
 * import { Sandbox } from "lambdagent"
 * const r = await Sandbox.run(["/bin/sh", "-c", "echo hi; echo x > /etc/x"], { policy: Sandbox.presets.strict })
 * console.log(r.stdout, r.violation?.kind) // "hi\n" "filesystem"
 * ```
 */
export const run = async (argv: ReadonlyArray<string>, options: RunOptions): Promise<RunResult> => {
  const caps = await capabilities()
  const { policy } = options
  const missing = unmetBy(policy, caps)
  if (missing.length > 0) throw unavailable(missing)
  const workDir = resolve(policy.workDir ?? options.cwd ?? process.cwd())
  if (workDir === "/") throw unavailable(["a work directory other than / (it would make the whole file system writable)"])
  if (!statSync(workDir, { throwIfNoEntry: false })?.isDirectory()) throw unavailable([`the work directory ${workDir}, which is not a directory here`])
  const limits: Limits = {
    cpuSeconds: policy.timeout,
    memoryMb: policy.memoryMb,
    network: policy.network,
    processes: processLimit(policy),
    maxOutputBytes: policy.maxOutputBytes,
    files: policy.maxFds,
    workDir
  }
  const result = await runSandboxed(argv, limits, caps, {
    timeoutMs: options.timeoutMs ?? 30_000,
    ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
    ...(options.env !== undefined ? { env: options.env } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {})
  })
  if (result.setupError !== undefined) throw unavailable([`a sandbox setup that works here (${result.setupError})`])
  return {
    exitCode: result.exitStatus,
    stdout: result.stdout,
    stderr: result.stderr,
    timedOut: result.timedOut,
    ...(result.violation !== undefined ? { violation: new SandboxViolation(result.violation) } : {}),
    pid: result.pid
  }
}

/**
 * The violation behind an error: a {@link SandboxViolation} itself, or the `cause` of the
 * `Tools.ToolError` a sandboxed tool call failed with.
 *
 * @since 0.2.0
 * @category getters
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Sandbox, ShellTool, Tools } from "lambdagent"
 * const tool = ShellTool.make("run", "sh", { sandbox: Sandbox.presets.strict })
 * const error = await Effect.runPromise(Effect.flip(Tools.call(tool, "yes")))
 * console.log(Sandbox.violationOf(error)?.kind) // "output"
 * ```
 */
export const violationOf = (error: unknown): SandboxViolation | undefined => {
  if (error instanceof SandboxViolation) return error
  const cause = typeof error === "object" && error !== null ? (error as { cause?: unknown }).cause : undefined
  return cause instanceof SandboxViolation ? cause : undefined
}

const PROCESS_KINDS: ReadonlySet<Tools.ToolKind> = new Set(["shell", "cli"])

/**
 * A tool under a policy. Shell tools and CLI agents are rebuilt to run their process in the
 * sandbox; other kinds run no process and come back unchanged. A `shell` or `cli` tool that starts
 * its process some other way cannot be sandboxed: its calls fail with {@link SandboxUnavailable}.
 * The term that calls the tool does not change.
 *
 * @since 0.2.0
 * @category combinators
 * @example
 * ```ts
 * import { Sandbox, ShellTool } from "lambdagent"
 * const tool = Sandbox.wrap(ShellTool.make("count", "wc -l"), Sandbox.presets.strict)
 * ```
 */
export const wrap = <I>(tool: Tools.ToolDefinition<I>, policy: Policy): Tools.ToolDefinition<I> => {
  if (!PROCESS_KINDS.has(tool.kind)) return tool
  const rebuild = rebuilderOf(tool)
  if (rebuild !== undefined) return rebuild(policy) as Tools.ToolDefinition<I>
  return {
    ...tool,
    run: () => {
      throw unavailable([`a tool that runs its process through lambdagent (${tool.name} starts its own, outside the sandbox)`])
    }
  }
}

/**
 * Every tool of a list under a policy (see {@link wrap}).
 *
 * @since 0.2.0
 * @category combinators
 * @example
 * ```ts
 * import { CliAgent, Sandbox, ShellTool } from "lambdagent"
 * const tools = Sandbox.wrapAll([ShellTool.make("count", "wc -l"), CliAgent.make("upper", { command: "tr a-z A-Z" })], Sandbox.presets.default)
 * ```
 */
export const wrapAll = (tools: Iterable<Tools.ToolDefinition>, policy: Policy): Array<Tools.ToolDefinition> => [...tools].map((tool) => wrap(tool, policy))

/**
 * Whether a tool runs a process (a shell tool or a CLI agent), so that a policy applies to it.
 *
 * @since 0.2.0
 * @category getters
 * @example
 * ```ts
 * import { Sandbox, ShellTool } from "lambdagent"
 * console.log(Sandbox.runsProcess(ShellTool.make("count", "wc -l"))) // true
 * ```
 */
export const runsProcess = (tool: Tools.ToolDefinition): boolean => PROCESS_KINDS.has(tool.kind)
