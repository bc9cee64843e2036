/**
 * The sandbox launcher: `unshare` creates a user, mount, pid (and network) namespace and runs
 * {@link SETUP_SCRIPT} as the namespaces' first process. The script makes every mount read-only,
 * gives the command a private `/tmp`, a minimal `/dev`, a fresh read-only `/proc`, an empty `/sys`
 * (and, without network, an empty `/run`, where host services keep their sockets), and the work
 * directory as the one writable place; then it starts the command without capabilities, under
 * `prlimit`'s limits. On file descriptor 3 it reports its process id on the host (killing it ends
 * every process of the namespace, and lets `unshare` reap it), that the command started, and how
 * the command ended.
 *
 * The script is a constant: everything variable (paths, limits, the command) reaches it as
 * positional arguments, never as script text.
 */
import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** The util-linux programs the launcher runs, by absolute path. */
export interface LauncherPrograms {
  readonly unshare: string
  readonly mount: string
  readonly setpriv: string
  readonly prlimit: string
}

/** What one sandboxed process gets. */
export interface LaunchSpec {
  readonly programs: LauncherPrograms
  /** The one writable directory (absolute); the command starts in it. */
  readonly workDir: string
  /** A private network namespace (no interface but a loopback that is down). */
  readonly isolateNetwork: boolean
  /** Size of the private `/tmp` and `/dev/shm`, in MiB. */
  readonly tmpMb: number
  readonly cpuSeconds: number
  readonly addressSpaceBytes: number
  /** RLIMIT_NPROC: the tasks of the sandbox's user, `unshare` and the first process included. */
  readonly tasks: number
  readonly files: number
  /** The `cgroup.procs` file of a pids cgroup the first process joins (where RLIMIT_NPROC does not bind). */
  readonly cgroupProcs?: string
  readonly argv: ReadonlyArray<string>
}

/**
 * The first process of the namespaces. Arguments: work directory, /dev skeleton, size of /tmp (a
 * tmpfs size such as `64m`), whether to hide /run (1 or 0), the `cgroup.procs` file of a pids
 * cgroup to join (or `-`), the programs mount, setpriv and prlimit, then prlimit's options, `--`
 * and the command.
 */
export const SETUP_SCRIPT = String.raw`work=$1 stage=$2 tmpsize=$3 hiderun=$4 cgroup=$5 mnt=$6 setpriv=$7 prlimit=$8
shift 8
path=$PATH
PATH=/usr/sbin:/usr/bin:/sbin:/bin
fail() { echo "lambdagent-sandbox: $*" >&2; exit 125; }
read -r hostpid _ </proc/self/stat || fail "cannot read /proc/self/stat"
if [ "$cgroup" != - ]; then echo 0 >"$cgroup" || fail "cannot join the cgroup $cgroup"; fi
echo "pid $hostpid" >&3
cd -- "$work" || fail "cannot enter the work directory $work"
exec 6</dev || fail "cannot open /dev"
while read -r _ _ _ _ point options _; do
  case $options in ro|ro,*) continue ;; esac
  case $point in /proc|/proc/*|/dev|/dev/*|/sys|/sys/*|/tmp|/tmp/*) continue ;; esac
  if [ "$hiderun" = 1 ]; then case $point in /run|/run/*) continue ;; esac; fi
  case $point in *\*) point=$(printf '%b' "$point") ;; esac
  "$mnt" -n -o remount,bind,ro -- "$point" 2>/dev/null || fail "cannot make $point read-only"
done </proc/self/mountinfo
"$mnt" -n -t tmpfs -o size=4k,mode=555,ro,nosuid,nodev,noexec tmpfs /sys || fail "cannot hide /sys"
"$mnt" -n --bind -o ro -- "$stage" /dev || fail "cannot replace /dev"
for device in null zero random urandom; do
  "$mnt" -n -c --bind "/proc/self/fd/6/$device" "/dev/$device" || fail "cannot provide /dev/$device"
done
exec 6<&-
"$mnt" -n -t tmpfs -o "size=$tmpsize,mode=1777,nosuid,nodev" tmpfs /dev/shm || fail "cannot mount /dev/shm"
"$mnt" -n -t tmpfs -o "size=$tmpsize,mode=1777,nosuid,nodev" tmpfs /tmp || fail "cannot mount a private /tmp"
if [ "$hiderun" = 1 ] && [ -d /run ]; then
  "$mnt" -n -t tmpfs -o size=1m,mode=755,nosuid,nodev tmpfs /run || fail "cannot hide /run"
fi
[ -d "$work" ] || mkdir -p -- "$work" || fail "cannot recreate the work directory"
{ "$mnt" -n -c --rbind /proc/self/cwd "$work" && "$mnt" -n -c -o remount,bind,rw "$work"; } || fail "cannot make the work directory writable"
"$mnt" -n -t proc -o ro,nosuid,nodev,noexec proc /proc || fail "cannot mount /proc"
cd -- "$work" || fail "cannot enter the work directory"
PATH=$path
exec 4<&0
"$setpriv" --bounding-set=-all --inh-caps=-all --ambient-caps=-all --no-new-privs -- "$prlimit" "$@" <&4 4<&- 3>&- &
exec 4<&-
echo ready >&3
wait $!
echo "exit $?" >&3
`

let stage: string | undefined

const DEVICES = ["null", "zero", "random", "urandom"]

/** Whether `dir` is a real directory only this user can write, so its contents are the ones we made. */
const ownPrivateDirectory = (dir: string): boolean => {
  const stat = lstatSync(dir, { throwIfNoEntry: false })
  return stat?.isDirectory() === true && stat.uid === process.getuid?.() && (stat.mode & 0o077) === 0
}

/** Make `path` with `make` unless it is there already (another process may be making it too). */
const ensure = (_path: string, make: () => void): void => {
  try {
    make()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
  }
}

/**
 * The skeleton of the sandbox's `/dev`, one per user in the temporary directory: empty files the
 * devices are bound onto, `shm`, and the `fd`, `stdin`, `stdout`, `stderr` links. A directory of
 * that name that is not this user's own private one is not used; a fresh one is made instead.
 */
export const devSkeleton = (): string => {
  if (stage !== undefined) return stage
  let dir = join(tmpdir(), `lambdagent-dev-${process.getuid?.() ?? "user"}`)
  ensure(dir, () => mkdirSync(dir, { mode: 0o700 }))
  if (!ownPrivateDirectory(dir)) {
    dir = mkdtempSync(join(tmpdir(), "lambdagent-dev-"))
    const made = dir
    process.once("exit", () => rmSync(made, { recursive: true, force: true }))
  }
  for (const device of DEVICES) ensure(join(dir, device), () => writeFileSync(join(dir, device), "", { flag: "wx" }))
  ensure(join(dir, "shm"), () => mkdirSync(join(dir, "shm")))
  ensure(join(dir, "fd"), () => symlinkSync("/proc/self/fd", join(dir, "fd")))
  for (const [i, name] of ["stdin", "stdout", "stderr"].entries()) ensure(join(dir, name), () => symlinkSync(`/proc/self/fd/${i}`, join(dir, name)))
  stage = dir
  return dir
}

/** The program and arguments that run `spec.argv` in the sandbox. */
export const launchCommand = (spec: LaunchSpec): { readonly file: string; readonly args: ReadonlyArray<string> } => {
  const { programs } = spec
  return {
    file: programs.unshare,
    args: [
      "--user",
      "--map-root-user",
      "--mount",
      "--pid",
      "--fork",
      "--kill-child",
      "--propagation",
      "private",
      ...(spec.isolateNetwork ? ["--net"] : []),
      "--",
      "/bin/sh",
      "-c",
      SETUP_SCRIPT,
      "lambdagent-sandbox",
      spec.workDir,
      devSkeleton(),
      `${spec.tmpMb}m`,
      spec.isolateNetwork ? "1" : "0",
      spec.cgroupProcs ?? "-",
      programs.mount,
      programs.setpriv,
      programs.prlimit,
      `--cpu=${spec.cpuSeconds}:${spec.cpuSeconds + 1}`,
      `--as=${spec.addressSpaceBytes}`,
      `--nproc=${spec.tasks}`,
      `--nofile=${spec.files}`,
      "--core=0",
      "--",
      ...spec.argv
    ]
  }
}
