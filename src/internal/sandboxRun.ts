/**
 * Run one command in the sandbox and say which limit stopped it. The cause is exact for the output
 * cap (the host counts the bytes), for the process limit under a pids cgroup (its `pids.events`),
 * and for CPU time (the status of a process killed by SIGXCPU or by the hard limit's SIGKILL).
 * The rest is read from stderr, as the programs report the failure (`Read-only file system`,
 * `Network is unreachable`, `MemoryError`, `Cannot fork`, …), so it is a heuristic: a program that
 * fails silently is reported by its exit status only.
 */
import { type ProcessResult, spawnCaptured } from "./process.ts"
import { type Capabilities, makeCgroup } from "./sandboxProbe.ts"
import { launchCommand } from "./sandboxSetup.ts"

/** Which limit stopped a command. */
export type ViolationKind = "timeout" | "memory" | "processes" | "files" | "output" | "network" | "filesystem"

/** The limits of one run, in the launcher's units. */
export interface Limits {
  readonly cpuSeconds: number
  readonly memoryMb: number
  readonly network: boolean
  /** Processes (and threads) the command may have at once. */
  readonly processes: number
  readonly maxOutputBytes: number
  readonly files: number
  /** Absolute. */
  readonly workDir: string
}

export interface Violation {
  readonly kind: ViolationKind
  readonly message: string
}

export interface SandboxedResult extends ProcessResult {
  /** Whether the setup finished and the command started. */
  readonly started: boolean
  /** The command's exit status as its shell reports it (128 + n for signal n). */
  readonly exitStatus?: number
  readonly violation?: Violation
  /** Why the setup failed, when the command did not start. */
  readonly setupError?: string
}

const FORK_FAILURE = /Cannot fork|can't fork|fork: (retry: )?Resource temporarily unavailable|fork failed|BlockingIOError: \[Errno 11\]|spawn EAGAIN/i

const SYMPTOMS: ReadonlyArray<readonly [ViolationKind, RegExp]> = [
  ["memory", /MemoryError|out of memory|Cannot allocate memory|memory exhausted|bad_alloc|allocation failed|ENOMEM|xrealloc|xmalloc|failed to map segment/i],
  ["processes", FORK_FAILURE],
  ["files", /Too many open files|EMFILE/i],
  ["filesystem", /Read-only file system|EROFS/i],
  [
    "network",
    /Network is unreachable|ENETUNREACH|Could not resolve host|Temporary failure in name resolution|Name or service not known|EAI_AGAIN|getaddrinfo|Couldn't connect to server|No address associated with hostname|Cannot assign requested address|EADDRNOTAVAIL/i
  ]
]

const SIGXCPU_STATUS = 128 + 24
const SIGKILL_STATUS = 128 + 9
const CRASH_STATUSES = new Set([128 + 11, 128 + 6, 128 + 7]) // SIGSEGV, SIGABRT, SIGBUS

/** The stderr line that shows a symptom, shortened. */
const lineOf = (stderr: string, index: number): string => {
  const start = stderr.lastIndexOf("\n", index) + 1
  const end = stderr.indexOf("\n", index)
  const line = stderr.slice(start, end < 0 ? undefined : end).trim()
  return line.length > 300 ? `${line.slice(0, 300)}…` : line
}

const describe = (kind: ViolationKind, limits: Limits, evidence: string, stdout: string): string => {
  const seen = evidence !== "" ? ` (${evidence})` : ""
  switch (kind) {
    case "timeout":
      return `[SANDBOX:timeout] the command used its ${limits.cpuSeconds} s of CPU time and was stopped`
    case "memory":
      return `[SANDBOX:memory] the command ran out of memory: it may use ${limits.memoryMb} MB of address space${seen}`
    case "processes":
      return `[SANDBOX:processes] the command tried to run more than ${limits.processes} processes at once and was stopped${seen}`
    case "files":
      return `[SANDBOX:files] the command tried to open more than ${limits.files} files at once${seen}`
    case "output":
      return `[SANDBOX:output] truncated at ${limits.maxOutputBytes} bytes: the command wrote more and was stopped\n${stdout}`
    case "network":
      return `[SANDBOX:network] the command has no network access${seen}`
    case "filesystem":
      return `[SANDBOX:filesystem] only the work directory ${limits.workDir} and a private /tmp are writable${seen}`
  }
}

/** Which limit, if any, explains how a sandboxed command ended. */
export const classify = (
  result: Pick<SandboxedResult, "stopped" | "timedOut" | "exitStatus" | "stderr" | "stdout">,
  limits: Limits,
  processLimitHit: boolean
): Violation | undefined => {
  const violation = (kind: ViolationKind, evidence = ""): Violation => ({ kind, message: describe(kind, limits, evidence, result.stdout) })
  if (result.stopped === "output") return violation("output")
  const fork = FORK_FAILURE.exec(result.stderr)
  if (result.stopped === "processes" || processLimitHit) return violation("processes", fork !== null ? lineOf(result.stderr, fork.index) : "")
  if (result.timedOut || result.exitStatus === undefined || result.exitStatus === 0) return undefined
  if (result.exitStatus === SIGXCPU_STATUS || result.exitStatus === SIGKILL_STATUS) return violation("timeout")
  let first: { kind: ViolationKind; index: number } | undefined
  for (const [kind, pattern] of SYMPTOMS) {
    if (kind === "network" && limits.network) continue
    const match = pattern.exec(result.stderr)
    if (match !== null && (first === undefined || match.index < first.index)) first = { kind, index: match.index }
  }
  if (first !== undefined) return violation(first.kind, lineOf(result.stderr, first.index))
  if (CRASH_STATUSES.has(result.exitStatus)) {
    return violation("memory", `it crashed with status ${result.exitStatus}, as programs do when an allocation fails under an address-space limit`)
  }
  return undefined
}

/** Run `argv` in the sandbox (the capabilities must allow the limits). */
export const runSandboxed = async (
  argv: ReadonlyArray<string>,
  limits: Limits,
  capabilities: Capabilities,
  options: { readonly stdin?: string; readonly env?: NodeJS.ProcessEnv; readonly timeoutMs: number; readonly signal?: AbortSignal }
): Promise<SandboxedResult> => {
  // the launcher's own processes count too: unshare (which joins the user namespace) for
  // RLIMIT_NPROC, and the namespaces' first process for both
  const tasks = limits.processes + 2
  const cgroup = capabilities.processLimit === "cgroup" && capabilities.cgroup !== undefined ? makeCgroup(capabilities.cgroup, limits.processes + 1) : undefined
  try {
    const { args, file } = launchCommand({
      programs: capabilities.programs!,
      workDir: limits.workDir,
      isolateNetwork: !limits.network,
      tmpMb: limits.memoryMb,
      cpuSeconds: limits.cpuSeconds,
      addressSpaceBytes: limits.memoryMb * 1024 * 1024,
      tasks,
      files: limits.files,
      ...(cgroup !== undefined ? { cgroupProcs: cgroup.procs } : {}),
      argv
    })
    const result = await spawnCaptured(file, args, {
      ...options,
      maxOutputBytes: limits.maxOutputBytes,
      statusChannel: true,
      killTarget: (status) => {
        const pid = /^pid (\d+)$/m.exec(status)
        return pid !== null ? Number(pid[1]) : undefined
      },
      watch: (stderr) => (FORK_FAILURE.test(stderr) ? "processes" : undefined)
    })
    const started = result.status.includes("ready")
    const exit = /exit (\d+)/.exec(result.status)
    const exitStatus = exit !== null ? Number(exit[1]) : undefined
    if (!started && result.stopped === undefined && !result.timedOut && options.signal?.aborted !== true) {
      const reasons = result.stderr.split("\n").filter((l) => /^(lambdagent-sandbox|unshare|mount|setpriv|prlimit):/.test(l.trim()))
      return { ...result, started, setupError: (reasons.at(-1) ?? result.stderr.trim().split("\n").at(-1) ?? `exit ${result.code}`).trim() }
    }
    const withStatus = { ...result, started, ...(exitStatus !== undefined ? { exitStatus } : {}) }
    const violation = classify(withStatus, limits, (cgroup?.events() ?? 0) > 0)
    return { ...withStatus, ...(violation !== undefined ? { violation } : {}) }
  } finally {
    cgroup?.release()
  }
}
