import { Effect } from "effect"
import { execFile, spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CliAgent, createRuntime, Sandbox, Scripted, ShellTool, Term, Tools } from "lambdagent"

const call = (tool: Tools.ToolDefinition, input: unknown) => Effect.runPromise(Tools.call(tool, input))
const failure = (tool: Tools.ToolDefinition, input: unknown) => Effect.runPromise(Effect.flip(Tools.call(tool, input)))

describe("policies", () => {
  it("the presets are the table of seed §20.2", () => {
    expect(Sandbox.presets).toEqual({
      strict: { preset: "strict", timeout: 5, memoryMb: 64, network: false, allowSubprocess: false, maxOutputBytes: 4096, maxFds: 8 },
      default: { preset: "default", timeout: 30, memoryMb: 256, network: false, allowSubprocess: false, maxOutputBytes: 65_536, maxFds: 64 },
      permissive: { preset: "permissive", timeout: 300, memoryMb: 2048, network: true, allowSubprocess: true, maxOutputBytes: 1_048_576, maxFds: 256 }
    })
  })

  it("fields override the preset one by one; unset fields keep its values", () => {
    expect(Sandbox.resolvePolicy("strict", { network: true, memoryMb: 128, timeout: undefined })).toEqual({
      ...Sandbox.presets.strict,
      network: true,
      memoryMb: 128
    })
    expect(Sandbox.resolvePolicy()).toEqual(Sandbox.presets.default)
    expect(Sandbox.processLimit(Sandbox.presets.default)).toBe(16)
    expect(Sandbox.processLimit(Sandbox.presets.permissive)).toBe(256)
    expect(Sandbox.describe(Sandbox.presets.strict)).toBe("strict: 5 s CPU, 64 MB, no network, 16 processes, 4096 B output, 8 files")
  })

  it.each([
    [{ timeout: 0 }, "timeout"],
    [{ memoryMb: 1.5 }, "memoryMb"],
    [{ maxFds: -1 }, "maxFds"],
    [{ network: "no" as unknown as boolean }, "network"],
    [{ workDir: "" }, "workDir"]
  ])("rejects %j", (overrides, field) => {
    expect(() => Sandbox.resolvePolicy("default", overrides)).toThrow(Sandbox.InvalidPolicy)
    try {
      Sandbox.resolvePolicy("default", overrides)
    } catch (e) {
      expect((e as Sandbox.InvalidPolicy).field).toBe(field)
    }
  })

  it("rejects an unknown preset", () => {
    expect(() => Sandbox.resolvePolicy("lenient" as Sandbox.PresetName)).toThrow(/unknown sandbox preset "lenient"/)
  })
})

describe("wrapping tools", () => {
  it("rebuilds shell tools and CLI agents under the policy and leaves other tools alone", () => {
    const host = Tools.define({ name: "upper", description: "upper", run: (s: string) => s.toUpperCase() })
    const shell = ShellTool.make("count", "wc -l")
    const cli = CliAgent.make("upper2", { command: "tr a-z A-Z" })
    const [h, s, c] = Sandbox.wrapAll([host, shell, cli], Sandbox.presets.strict)
    expect(h).toBe(host)
    expect(s).not.toBe(shell)
    expect({ ...s, run: undefined }).toEqual({ ...shell, run: undefined })
    expect(c!.name).toBe("upper2")
    expect(Sandbox.runsProcess(shell)).toBe(true)
    expect(Sandbox.runsProcess(host)).toBe(false)
  })

  it("a shell tool that starts its own process cannot be sandboxed, so its calls are refused", async () => {
    const own = Tools.define({ name: "own", kind: "shell", description: "own", run: () => "ran unprotected" })
    const error = await failure(Sandbox.wrap(own, Sandbox.presets.default), "x")
    expect(error.message).toContain("[SANDBOX:unavailable]")
    expect(error.cause).toBeInstanceOf(Sandbox.SandboxUnavailable)
  })

  it("does not change the agent's term: the policy lives beside it", () => {
    const agent = Term.react({ think: Term.llm({ name: "think", system: "Use tools." }), tools: ["run", "terminate"], maxSteps: 3 })
    const before = Term.toJsonText(agent)
    Sandbox.wrapAll([ShellTool.make("run", "sh")], Sandbox.presets.strict)
    expect(Term.toJsonText(agent)).toBe(before)
  })
})

const capabilities = await Sandbox.probe()
if (!capabilities.available) console.log(`[skipping the sandbox's enforcement tests: the sandbox needs ${capabilities.missing.join("; ")}]`)

describe.skipIf(!capabilities.available)("enforcement, seen by a ReAct agent", () => {
  let work = ""
  // outside the work directory and outside /tmp (which is private in the sandbox): read-only there
  let outside = ""
  let server: Server
  let port = 0
  let requests = 0
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "lambdagent-sandbox-work-"))
    outside = mkdtempSync(join(existsSync("/var/tmp") ? "/var/tmp" : process.cwd(), "lambdagent-sandbox-outside-"))
    server = createServer((_, res) => {
      requests++
      res.end("reached")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    port = (server.address() as AddressInfo).port
  })
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve))
    rmSync(work, { recursive: true, force: true })
    rmSync(outside, { recursive: true, force: true })
  })

  /**
   * A ReAct agent calls `run` (a sandboxed `sh` reading the script on stdin) with the attack, sees
   * the observation, then calls it again with a harmless command: the host is still fine.
   */
  const attack = async (script: string, policy: Sandbox.Policy) => {
    const run = ShellTool.make("run", "sh", { sandbox: policy, cwd: work, timeoutMs: 20_000 })
    const seen: Array<string> = []
    const model = Scripted.respond((req) => {
      // the loop's conversation: each observation is a user turn of its own
      const observations = req.messages
        .filter((m) => m.role === "user" && m.content.startsWith("Observation: "))
        .map((m) => m.content.slice("Observation: ".length))
      seen.splice(0, seen.length, ...observations)
      if (observations.length === 0) return JSON.stringify({ tool: "run", args: script })
      if (observations.length === 1) return JSON.stringify({ tool: "run", args: "echo alive" })
      return JSON.stringify({ tool: "terminate", args: "done" })
    })
    const runtime = createRuntime({ model, tools: [run] })
    const agent = Term.react({ think: Term.llm({ name: "think", system: "Run scripts." }), tools: ["run", "terminate"], maxSteps: 4 })
    try {
      const out = await runtime.run(agent, "go")
      return { observation: seen[0] ?? "", after: seen[1] ?? "", value: out.value }
    } finally {
      await runtime.close()
    }
  }

  it("a fork bomb is stopped at the process limit: [SANDBOX:processes]", async () => {
    const { after, observation } = await attack("while :; do sleep 5 & done", Sandbox.presets.default)
    expect(observation).toMatch(/^\[TOOL_ERROR\] run: \[SANDBOX:processes\] the command tried to run more than 16 processes at once and was stopped/)
    expect(after).toBe("alive")
  })

  it("no process of a stopped sandbox outlives it", async () => {
    const r = await Sandbox.run(["/bin/sh", "-c", "while :; do sleep 30 & done"], { policy: Sandbox.presets.default, cwd: work })
    expect(r.violation?.kind).toBe("processes")
    expect(() => process.kill(-r.pid!, 0)).toThrow(/ESRCH/)
    const detached = await Sandbox.run(["/bin/sh", "-c", "setsid sleep 30 & echo started"], { policy: Sandbox.presets.default, cwd: work })
    expect(detached.stdout).toBe("started\n")
    expect(() => process.kill(-detached.pid!, 0)).toThrow(/ESRCH/)
  })

  it("a memory hog is stopped at its address space: [SANDBOX:memory]", async () => {
    const { after, observation } = await attack("tail /dev/zero", Sandbox.presets.strict)
    expect(observation).toMatch(
      /^\[TOOL_ERROR\] run: \[SANDBOX:memory\] the command ran out of memory: it may use 64 MB of address space \(tail: memory exhausted\)/
    )
    expect(after).toBe("alive")
  })

  it("an infinite loop is stopped at its CPU time: [SANDBOX:timeout]", async () => {
    const { after, observation } = await attack("while :; do :; done", Sandbox.resolvePolicy("strict", { timeout: 1 }))
    expect(observation).toBe("[TOOL_ERROR] run: [SANDBOX:timeout] the command used its 1 s of CPU time and was stopped")
    expect(after).toBe("alive")
  })

  it("1 GB of output is stopped at the output cap, and the cut is marked: [SANDBOX:output]", async () => {
    const { after, observation } = await attack("head -c 1000000000 /dev/zero | tr '\\0' x", Sandbox.presets.strict)
    expect(observation).toMatch(/^\[TOOL_ERROR\] run: \[SANDBOX:output\] truncated at 4096 bytes: the command wrote more and was stopped\nx+$/)
    expect(after).toBe("alive")
    const direct = await Sandbox.run(["/bin/sh", "-c", "yes | head -c 1000000000"], { policy: Sandbox.presets.strict, cwd: work })
    expect(direct.stdout.length).toBe(4096)
  })

  const bash = ["/bin/bash", "/usr/bin/bash"].find((p) => existsSync(p))
  it.skipIf(bash === undefined)("a call to a server on the loopback is refused without network: [SANDBOX:network]", async () => {
    const script = `${bash} -c 'exec 3<>/dev/tcp/127.0.0.1/${port}; printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3; cat <&3'`
    const { after, observation } = await attack(script, Sandbox.presets.default)
    expect(observation).toMatch(/^\[TOOL_ERROR\] run: \[SANDBOX:network\] the command has no network access \(.*Network is unreachable\)/)
    expect(after).toBe("alive")
    expect(requests).toBe(0)
    // with network: true the same call reaches the server, which shows the test's server was there to reach
    const open = await Sandbox.run(["/bin/sh", "-c", script], { policy: Sandbox.resolvePolicy("default", { network: true }), cwd: work })
    expect(open.stdout).toContain("reached")
    expect(requests).toBe(1)
  })

  it("a write outside the work directory is refused: [SANDBOX:filesystem]", async () => {
    const target = join(outside, "written")
    const { after, observation } = await attack(`echo x > ${target}`, Sandbox.presets.default)
    expect(observation).toBe(
      `[TOOL_ERROR] run: [SANDBOX:filesystem] only the work directory ${work} and a private /tmp are writable (sh: 1: cannot create ${target}: Read-only file system)`
    )
    expect(after).toBe("alive")
    expect(existsSync(target)).toBe(false)
  })

  it("the work directory is writable, /tmp is private, /dev/null works and devices are gone", async () => {
    const tool = ShellTool.make("run", "sh", { sandbox: Sandbox.presets.default, cwd: work })
    const marker = `lambdagent-private-${process.pid}`
    const out = await call(tool, `echo kept > kept.txt && echo gone > /tmp/${marker} && echo quiet > /dev/null && ls /dev && ls /tmp && ls /sys | wc -l`)
    // the work directory is under /tmp here, so the private /tmp holds its path and the marker only
    const workName = work.slice("/tmp/".length).split("/")[0]!
    expect(String(out).split("\n")).toEqual(["fd", "null", "random", "shm", "stderr", "stdin", "stdout", "urandom", "zero", ...[marker, workName].sort(), "0"])
    expect(readdirSync(work)).toContain("kept.txt")
    expect(existsSync(join("/tmp", marker))).toBe(false)
  })

  it("the command has no capabilities and cannot undo the read-only mounts", async () => {
    const tool = ShellTool.make("run", "sh", { sandbox: Sandbox.presets.default, cwd: work })
    expect(await call(tool, "grep CapEff /proc/self/status")).toBe("CapEff:\t0000000000000000")
    expect(String(await call(tool, "mount -o remount,rw / 2>&1; touch /etc/lambdagent-remounted 2>&1; echo done"))).toMatch(/done$/)
    expect(existsSync("/etc/lambdagent-remounted")).toBe(false)
  })

  it("the command cannot write the sandbox's status channel", async () => {
    const tool = ShellTool.make("run", "sh", { sandbox: Sandbox.presets.default, cwd: work })
    expect(await call(tool, "echo 'exit 0' >&3")).toMatch(/^\[EXIT 2\] .*Bad file descriptor/)
  })

  it("too many open files is reported as such: [SANDBOX:files]", async () => {
    const error = await failure(
      ShellTool.make("run", "sh", { sandbox: Sandbox.presets.strict, cwd: work }),
      "exec 3</dev/null 4</dev/null 5</dev/null 6</dev/null 7</dev/null 8</dev/null; echo no"
    )
    expect(error.message).toMatch(/^\[SANDBOX:files\] the command tried to open more than 8 files at once/)
    expect(Sandbox.violationOf(error)?.kind).toBe("files")
  })

  it("denylist bypasses pass the denylist, and the sandbox stops them", async () => {
    const victim = join(outside, "victim")
    mkdirSync(victim)
    writeFileSync(join(victim, "data"), "precious")
    const encoded = Buffer.from(`rm -rf ${victim}`).toString("base64")
    const bypasses = [
      `r''m -rf ${victim}`,
      `$(echo rm) -rf ${victim}`,
      `X=-rf; rm $X ${victim}`,
      `echo ${encoded} | base64 -d | sh`,
      ...(existsSync("/usr/bin/python3") ? [`/usr/bin/python3 -c "import shutil; shutil.rmtree('${victim}')"`] : [])
    ]
    for (const command of bypasses) {
      expect(ShellTool.dangerousRule(command), command).toBeUndefined()
      const tool = ShellTool.make("cleanup", command, { sandbox: Sandbox.presets.default, cwd: work })
      const error = await failure(tool, "")
      expect(error.message, command).toMatch(/^\[SANDBOX:filesystem\] only the work directory .* \(.*Read-only file system/)
      expect(existsSync(join(victim, "data")), command).toBe(true)
    }
    // Perl's rmtree only warns and exits 0: the call succeeds, and the files are still there.
    const perl = ShellTool.make("cleanup", `perl -MFile::Path=rmtree -e 'rmtree("${victim}")'`, { sandbox: Sandbox.presets.default, cwd: work })
    expect(await call(perl, "")).toBe("")
    expect(existsSync(join(victim, "data"))).toBe(true)
  })

  it("a CLI agent runs sandboxed too, with its input on stdin", async () => {
    const agent = CliAgent.make("upper", { command: "tr a-z A-Z", sandbox: Sandbox.presets.strict, cwd: work })
    expect(await call(agent, "quiet")).toBe("QUIET")
    const hog = CliAgent.make("hog", { command: "tail /dev/zero", sandbox: Sandbox.presets.strict, cwd: work, retry: 3 })
    expect((await failure(hog, "")).message).toMatch(/^\[SANDBOX:memory\]/)
  })

  it("a work directory that is not there, or is /, is refused before anything runs", async () => {
    await expect(Sandbox.run(["/bin/true"], { policy: Sandbox.presets.strict, cwd: join(work, "missing") })).rejects.toThrow(
      /needs the work directory .*missing, which is not a directory here/
    )
    await expect(Sandbox.run(["/bin/true"], { policy: { ...Sandbox.presets.strict, workDir: "/" } })).rejects.toBeInstanceOf(Sandbox.SandboxUnavailable)
  })

  it("a placeholder reaches a sandboxed command as its argument", async () => {
    const tool = ShellTool.make("echo", "printf '%s' '{}'", { sandbox: Sandbox.presets.strict, cwd: work })
    expect(await call(tool, "a'; touch pwned; '")).toBe("a'; touch pwned; '")
    expect(existsSync(join(work, "pwned"))).toBe(false)
  })
})

const setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].find((p) => existsSync(p))
const asRoot = process.getuid?.() === 0
const sandboxWorker = fileURLToPath(new URL("./fixtures/sandboxWorker.ts", import.meta.url))
/** Whether user nobody can run this Node on this checkout: not when it sits in a directory only its owner can enter. */
const nobodyReachesCheckout = (): boolean =>
  spawnSync(
    setpriv!,
    ["--reuid=65534", "--regid=65534", "--clear-groups", "--", process.execPath, "-e", `require("node:fs").accessSync(${JSON.stringify(sandboxWorker)})`],
    { stdio: "ignore" }
  ).status === 0
const nobodyUnavailable = !asRoot
  ? "it runs only as root (it switches to nobody); this run is itself unprivileged"
  : setpriv === undefined
    ? "setpriv (util-linux) is not installed"
    : !nobodyReachesCheckout()
      ? "user nobody cannot run this Node or read this checkout (it sits in a directory only its owner can enter)"
      : undefined
if (nobodyUnavailable !== undefined) console.log(`[skipping the unprivileged-user sandbox test: ${nobodyUnavailable}]`)

describe.skipIf(!capabilities.available || nobodyUnavailable !== undefined)("as an unprivileged user", () => {
  it("the same stops hold, with RLIMIT_NPROC in the sandbox's user namespace as the process limit", async () => {
    const work = mkdtempSync(join(tmpdir(), "lambdagent-sandbox-nobody-"))
    const outside = mkdtempSync(join(existsSync("/var/tmp") ? "/var/tmp" : process.cwd(), "lambdagent-sandbox-nobody-outside-"))
    chmodSync(work, 0o777)
    chmodSync(outside, 0o777)
    try {
      const worker = sandboxWorker
      const tsx = fileURLToPath(new URL("../node_modules/tsx/dist/esm/index.mjs", import.meta.url))
      const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
        execFile(
          setpriv!,
          ["--reuid=65534", "--regid=65534", "--clear-groups", "--", process.execPath, "--import", tsx, worker, work, outside],
          { env: { ...process.env, HOME: work } },
          (error, stdout, stderr) => (error !== null ? reject(new Error(`${error.message}\n${stderr}`)) : resolve({ stdout, stderr }))
        )
      )
      const report = JSON.parse(stdout) as { uid: number; processLimit?: string; missing: Array<string>; outcomes: Record<string, string> }
      expect(report.uid, stderr).toBe(65534)
      expect(report.missing).toEqual([])
      expect(report.processLimit).toBe("rlimit")
      expect(report.outcomes).toEqual({
        forkBomb: "processes",
        memory: "memory",
        cpu: "timeout",
        output: "output",
        writeOutside: "filesystem",
        writeInside: "kept",
        afterwards: "alive"
      })
      expect(existsSync(join(outside, "written"))).toBe(false)
    } finally {
      rmSync(work, { recursive: true, force: true })
      rmSync(outside, { recursive: true, force: true })
    }
  })
})
