import { describe, expect, it } from "vitest"
import { finite, integer, numberFrom, oneOf, port, positive } from "../options.ts"
import { runCli } from "./helpers.ts"

describe("option value parsers", () => {
  it("return the value, or a usage error (exit 2) that names the option, what it accepts and what it got", () => {
    expect(integer("--n", 1)("3")).toBe(3)
    expect(integer("--n", 0)("0")).toBe(0)
    expect(numberFrom("--t", 0, 2)("1.5")).toBe(1.5)
    expect(port("--port")("0")).toBe(0)
    expect(positive("--timeout", "seconds")("0.5")).toBe(0.5)
    expect(finite("--min-score")("-1")).toBe(-1)
    expect(oneOf("--format", ["text", "json"])("json")).toBe("json")
    const refusal = (parse: (text: string) => unknown, text: string) => {
      try {
        parse(text)
      } catch (error) {
        return { message: (error as Error).message, exitCode: (error as { exitCode?: number }).exitCode }
      }
      return undefined
    }
    expect(refusal(integer("--n", 1), "1.5")).toEqual({ message: '--n expects a positive integer, got "1.5"', exitCode: 2 })
    expect(refusal(integer("--n", 0), "")).toEqual({ message: '--n expects a non-negative integer, got ""', exitCode: 2 })
    expect(refusal(integer("--n", 2, 9), "10")).toEqual({ message: '--n expects an integer from 2 to 9, got "10"', exitCode: 2 })
    expect(refusal(numberFrom("--t", 0, 2), " ")).toEqual({ message: '--t expects a number from 0 to 2, got " "', exitCode: 2 })
    expect(refusal(port("--port"), "65536")).toEqual({ message: '--port expects a port number from 0 to 65535, got "65536"', exitCode: 2 })
    expect(refusal(positive("--timeout", "seconds"), "0")).toEqual({ message: '--timeout expects a positive number of seconds, got "0"', exitCode: 2 })
    expect(refusal(finite("--min-score"), "Infinity")).toEqual({ message: '--min-score expects a number, got "Infinity"', exitCode: 2 })
    expect(refusal(oneOf("--level", ["error", "warn", "info"]), "loud")).toEqual({ message: '--level expects error, warn or info, got "loud"', exitCode: 2 })
  })
})

describe("usage errors of the lambdagent command", () => {
  it("exit with 2 and one line saying what the option accepts", async () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["run", "examples/agents/simple.yml", "x", "--temperature", "5"], '--temperature expects a number from 0 to 2, got "5"'],
      [["run", "examples/agents/simple.yml", "x", "--max-steps", "-1"], '--max-steps expects a positive integer, got "-1"'],
      [["run", "examples/agents/simple.yml", "x", "--timeout", "soon"], '--timeout expects a positive number of seconds, got "soon"'],
      [["serve", "examples/agents/simple.yml", "--port", "99999"], '--port expects a port number from 0 to 65535, got "99999"'],
      [["mcp", "--http", "-1"], '--http expects a port number from 0 to 65535, got "-1"'],
      [["trace", "trace.json", "--step", "last"], '--step expects a non-negative integer, got "last"'],
      [["rag", "query", "tea", "--top-k", "0"], '--top-k expects a positive integer, got "0"'],
      [["repl", "examples/agents/simple.yml", "--temperature", "3"], '--temperature expects a number from 0 to 2, got "3"'],
      [["run", "examples/agents/simple.yml", "x", "--env", "NOVALUE"], '--env expects KEY=VALUE, got "NOVALUE"']
    ]
    for (const [args, message] of cases) {
      const r = await runCli(args)
      expect({ args, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ args, code: 2, stdout: "", stderr: `error: UsageError: ${message}\n` })
    }
  })

  it("refuse an unknown --format in every command that prints, naming the values it takes", async () => {
    const commands: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["version"], "text or json"],
      [["run", "examples/agents/simple.yml", "x"], "text or json"],
      [["eval", "1"], "text or json"],
      [["compile", "examples/agents/simple.yml"], "text or json"],
      [["lint", "examples/agents/simple.yml"], "text or json"],
      [["migrate", "examples/agents/simple.yml"], "text or json"],
      [["lambda", "examples/agents/simple.yml"], "human, formal or json"],
      [["skills", "list", "examples/agents/simple.yml"], "text or json"],
      [["trace", "trace.json"], "text or json"],
      [["trace", "diff", "a.json", "b.json"], "text or json"],
      [["replay", "trace.json"], "text or json"],
      [["tools", "examples/agents/simple.yml"], "text or json"],
      [["resume", "x.checkpoint.json"], "text or json"],
      [["checkpoints", "list", "dir"], "text or json"],
      [["checkpoints", "show", "x.checkpoint.json"], "text or json"],
      [["checkpoints", "prune", "dir"], "text or json"],
      [["rag", "index", "docs"], "text or json"],
      [["rag", "query", "tea"], "text or json"],
      [["rag", "eval"], "text or json"],
      [["cluster", "runner"], "text or json"],
      [["cluster", "submit", "examples/agents/simple.yml", "x"], "text or json"],
      [["cluster", "status", "r1"], "text or json"],
      [["cluster", "result", "r1"], "text or json"],
      [["cluster", "cancel", "r1"], "text or json"],
      [["cluster", "list"], "text or json"],
      [["cluster", "answer", "r1", "yes"], "text or json"]
    ]
    for (const [args, allowed] of commands) {
      const r = await runCli([...args, "--format", "yaml"])
      expect({ args, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        args,
        code: 2,
        stdout: "",
        stderr: `error: UsageError: --format expects ${allowed}, got "yaml"\n`
      })
    }
    // every command is in the list but the servers and the interactive loop, whose output is a protocol or a conversation
    const unformatted = new Set(["serve", "mcp", "repl", "help"])
    const commandsOf = (help: string) => [...help.slice(help.indexOf("Commands:")).matchAll(/^ {2}([a-z]+)/gm)].map((m) => m[1]!)
    const top = commandsOf((await runCli(["--help"])).stdout)
    expect(top).toContain("run")
    for (const name of top.filter((n) => !unformatted.has(n))) {
      const sub = commandsOf((await runCli([name, "--help"])).stdout).filter((n) => n !== "help")
      const leaves = sub.length === 0 || name === "trace" ? [[name], ...sub.map((s) => [name, s])] : sub.map((s) => [name, s])
      for (const leaf of leaves)
        expect(
          commands.map(([args]) => args.slice(0, leaf.length).join(" ")),
          leaf.join(" ")
        ).toContain(leaf.join(" "))
    }
  })

  it("compile --format python is refused with exit 2 and the reason", async () => {
    const r = await runCli(["compile", "examples/agents/simple.yml", "--format", "python"])
    expect(r).toMatchObject({ code: 2, stdout: "" })
    expect(r.stderr).toMatch(
      /^error: UsageError: --format python is not supported: a config compiles to a lambdagent term, which lambdagent's runtime runs; no Python source is generated/
    )
    expect(r.stderr).toContain("Use --format json")
  })

  it("version --format json prints the versions as JSON", async () => {
    const r = await runCli(["version", "--format", "json"])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({ lambdagent: expect.stringMatching(/^\d+\.\d+\.\d+/), node: process.version })
  })

  it("give commander's own errors (unknown option, missing argument) the same exit code", async () => {
    const unknown = await runCli(["run", "examples/agents/simple.yml", "x", "--colour", "red"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("error: unknown option '--colour'")
    const missing = await runCli(["run"])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("error: missing required argument 'config'")
  })

  it("tell a malformed --tool (exit 2) from a dangerous one, which is refused (exit 1)", async () => {
    const malformed = await runCli(["run", "examples/agents/simple.yml", "x", "--tool", "nocommand"])
    expect(malformed.code).toBe(2)
    expect(malformed.stderr).toMatch(/^error: InvalidToolSpec: invalid tool spec "nocommand": expected NAME=COMMAND/)
    const dangerous = await runCli(["run", "examples/agents/simple.yml", "x", "--tool", "wipe=rm -rf /tmp/x"])
    expect(dangerous.code).toBe(1)
    expect(dangerous.stderr).toMatch(/^error: DangerousCommand: dangerous command refused \(recursive delete\)/)
  })
})

describe("inputs that start with -", () => {
  it("are read as options unless they follow --, and the error and --help say so", async () => {
    const refused = await runCli(["run", "examples/agents/simple.yml", "-x"])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain("error: unknown option '-x'")
    expect(refused.stderr).toContain("put -- before it: lambdagent run CONFIG -- -x")
    const run = await runCli(["run", "--quiet", "examples/agents/simple.yml", "--", "-x"])
    expect(run).toMatchObject({ code: 0, stdout: "-x\n" })
    expect((await runCli(["run", "--help"])).stdout.replace(/\s+/g, " ")).toContain("after --, an input that starts with - (run CONFIG -- -x)")
  })
})
