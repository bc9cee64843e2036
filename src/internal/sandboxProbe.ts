/**
 * What this machine can enforce, found out once per process by running the launcher itself: the
 * util-linux programs it needs, user/mount/pid namespaces, a network namespace, and how a process
 * limit binds. RLIMIT_NPROC does not bind uid 0 of the initial user namespace (root, even inside
 * a user namespace that maps it to itself), so for root the probe falls back to a pids cgroup.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { spawnCaptured } from "./process.ts"
import { launchCommand, type LauncherPrograms, type LaunchSpec } from "./sandboxSetup.ts"

/** A pids cgroup hierarchy the sandbox can make children in. */
export interface PidsCgroup {
  readonly version: 1 | 2
  /** The directory the sandbox's cgroups are made in. */
  readonly base: string
}

/** What the sandbox can use here. */
export interface Capabilities {
  readonly platform: NodeJS.Platform
  readonly programs?: LauncherPrograms
  /** User, mount and pid namespaces work, with the launcher's setup. */
  readonly namespaces: boolean
  /** A private network namespace can be made too. */
  readonly network: boolean
  /** How the process limit binds: RLIMIT_NPROC in the user namespace, or a pids cgroup. */
  readonly processLimit?: "rlimit" | "cgroup"
  readonly cgroup?: PidsCgroup
  /** What is missing, each as a sentence naming it. */
  readonly missing: ReadonlyArray<string>
  /** What is missing for a policy without network. */
  readonly missingNetwork?: string
}

const SEARCH = ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"]

const findProgram = (name: string): string | undefined => {
  const dirs = [...(process.env.PATH ?? "").split(delimiter).filter((d) => d.startsWith("/")), ...SEARCH]
  return dirs.map((d) => join(d, name)).find((p) => existsSync(p))
}

/** The pids cgroup hierarchy of this machine, when this process may make cgroups in it. */
const pidsCgroup = (): PidsCgroup | undefined => {
  let mounts: Array<Array<string>>
  try {
    mounts = readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .map((l) => l.split(" "))
  } catch {
    return undefined
  }
  const candidates: Array<{ version: 1 | 2; root: string }> = []
  for (const fields of mounts) {
    const dash = fields.indexOf("-")
    if (dash < 0) continue
    const type = fields[dash + 1]
    const superOptions = (fields[dash + 3] ?? "").split(",")
    if (type === "cgroup" && superOptions.includes("pids")) candidates.push({ version: 1, root: fields[4]! })
    if (type === "cgroup2") candidates.push({ version: 2, root: fields[4]! })
  }
  for (const { root, version } of candidates) {
    try {
      if (version === 2) {
        if (!readFileSync(join(root, "cgroup.controllers"), "utf8").split(/\s+/).includes("pids")) continue
        if (!readFileSync(join(root, "cgroup.subtree_control"), "utf8").split(/\s+/).includes("pids")) {
          writeFileSync(join(root, "cgroup.subtree_control"), "+pids")
        }
      }
      const base = join(root, "lambdagent-sandbox")
      mkdirSync(base, { recursive: true })
      if (version === 2) writeFileSync(join(base, "cgroup.subtree_control"), "+pids")
      const trial = join(base, `probe-${process.pid}`)
      mkdirSync(trial, { recursive: true })
      const usable = existsSync(join(trial, "pids.max"))
      rmdirSync(trial)
      if (usable) return { version, base }
    } catch {}
  }
  return undefined
}

let counter = 0

/** A fresh pids cgroup with `pids.max` set; `release` removes it once its processes are gone. */
export const makeCgroup = (cgroup: PidsCgroup, max: number): { readonly procs: string; readonly events: () => number; readonly release: () => void } => {
  const dir = join(cgroup.base, `${process.pid}-${++counter}`)
  mkdirSync(dir)
  writeFileSync(join(dir, "pids.max"), String(max))
  return {
    procs: join(dir, "cgroup.procs"),
    events: () => {
      try {
        return Number(/max (\d+)/.exec(readFileSync(join(dir, "pids.events"), "utf8"))?.[1] ?? 0)
      } catch {
        return 0
      }
    },
    release: () => {
      // the processes are gone when the launcher has exited; the kernel may take a moment to say so
      for (let attempt = 0; attempt < 100; attempt++) {
        try {
          rmdirSync(dir)
          return
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EBUSY") return
        }
      }
    }
  }
}

/** A probe run of the launcher: did the command start, and what did it print. */
const trial = async (programs: LauncherPrograms, workDir: string, isolateNetwork: boolean, cgroupProcs?: string) => {
  const spec: LaunchSpec = {
    programs,
    workDir,
    isolateNetwork,
    tmpMb: 1,
    cpuSeconds: 10,
    addressSpaceBytes: 256 * 1024 * 1024,
    tasks: 1,
    files: 64,
    ...(cgroupProcs !== undefined ? { cgroupProcs } : {}),
    argv: ["/bin/sh", "-c", "( : ) && echo processes-unlimited"]
  }
  const { args, file } = launchCommand(spec)
  const result = await spawnCaptured(file, args, { timeoutMs: 20_000, maxOutputBytes: 64 * 1024, statusChannel: true })
  const started = result.status.includes("ready")
  const reason =
    result.stderr
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "")
      .slice(-2)
      .join(" ") || `exit ${result.code ?? result.signal}`
  // a shell that cannot fork says so ("Cannot fork") and stops
  return { started, limited: !result.stdout.includes("processes-unlimited") && /fork/i.test(result.stderr), reason }
}

const probeNow = async (): Promise<Capabilities> => {
  const platform = process.platform
  if (platform !== "linux") {
    return { platform, namespaces: false, network: false, missing: [`Linux namespaces (this system is ${platform}; the sandbox needs Linux)`] }
  }
  const found = { unshare: findProgram("unshare"), mount: findProgram("mount"), setpriv: findProgram("setpriv"), prlimit: findProgram("prlimit") }
  const absent = Object.entries(found)
    .filter(([, path]) => path === undefined)
    .map(([name]) => name)
  if (absent.length > 0) {
    return {
      platform,
      namespaces: false,
      network: false,
      missing: [`the util-linux program${absent.length > 1 ? "s" : ""} ${absent.join(", ")} (install util-linux)`]
    }
  }
  const programs = found as LauncherPrograms
  const workDir = mkdtempSync(join(tmpdir(), "lambdagent-probe-"))
  try {
    let network = true
    let missingNetwork: string | undefined
    let outcome = await trial(programs, workDir, true)
    if (!outcome.started) {
      const withoutNetwork = await trial(programs, workDir, false)
      if (!withoutNetwork.started) {
        return {
          platform,
          programs,
          namespaces: false,
          network: false,
          missing: [`user, mount and pid namespaces (unshare --user failed: ${withoutNetwork.reason})`]
        }
      }
      network = false
      missingNetwork = `a network namespace (unshare --net failed: ${outcome.reason})`
      outcome = withoutNetwork
    }
    const base = { platform, programs, namespaces: true, network, ...(missingNetwork !== undefined ? { missingNetwork } : {}) }
    if (outcome.limited) return { ...base, processLimit: "rlimit", missing: [] }
    const cgroup = pidsCgroup()
    if (cgroup !== undefined) {
      // the first process and the command's shell: the shell's subshell is one too many
      const group = makeCgroup(cgroup, 2)
      const check = await trial(programs, workDir, network, group.procs)
      group.release()
      if (check.started && check.limited) return { ...base, processLimit: "cgroup", cgroup, missing: [] }
    }
    return {
      ...base,
      missing: [
        "a process limit: RLIMIT_NPROC does not bind this user (uid 0 on the host) and no pids cgroup could be made " +
          "(run lambdagent as an unprivileged user, or give it a writable pids cgroup)"
      ]
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true })
  }
}

let cached: Promise<Capabilities> | undefined

/** Probe once per process; later calls share the answer. */
export const capabilities = (): Promise<Capabilities> => (cached ??= probeNow())
