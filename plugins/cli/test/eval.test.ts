import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { cliPath, runCli } from "./helpers.ts"

const square = JSON.stringify({ lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } })

describe("lambdagent eval", () => {
  it("prints the JSON value of a term", async () => {
    const r = await runCli(["eval", '{"add":[40,2]}'])
    expect(r).toMatchObject({ code: 0, stdout: "42\n", stderr: "" })
    expect((await runCli(["eval", '{"pair":[1,["a"]]}'])).stdout).toBe('{"pair":[1,["a"]]}\n')
  })

  it("applies a term from a file to an input, and reads the term from stdin", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lambdagent-cli-"))
    const file = join(dir, "square.json")
    writeFileSync(file, square)
    expect((await runCli(["eval", file, "--input", "7"])).stdout).toBe("49\n")
    expect((await runCli(["eval", "-", "--input", '"12"'], { stdin: square })).stdout).toBe("144\n")
  })

  it("accepts a UTF-8 byte-order mark; refuses invalid UTF-8 with the offset, never decoding lossily", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lambdagent-cli-"))
    const bom = join(dir, "bom.json")
    writeFileSync(bom, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(square)]))
    expect(await runCli(["eval", bom, "--input", "7"])).toMatchObject({ code: 0, stdout: "49\n" })
    expect((await runCli(["eval", "-", "--input", "3"], { stdin: `\uFEFF${square}` })).stdout).toBe("9\n")
    const bad = join(dir, "bad.json")
    writeFileSync(bad, Buffer.concat([Buffer.from('{"concat":["a'), Buffer.from([0xff]), Buffer.from('","b"]}')]))
    const refused = await runCli(["eval", bad])
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe("")
    expect(refused.stderr).toBe(`error: EncodingError: term file ${bad} is not valid UTF-8 (invalid byte at offset 13); save it as UTF-8\n`)
    const input = join(dir, "input.txt")
    writeFileSync(input, Buffer.from([0x22, 0xc3, 0x28, 0x22]))
    expect((await runCli(["eval", square, "--input", input])).stderr).toContain(`input file ${input} is not valid UTF-8 (invalid byte at offset 2)`)
  })

  it("prints β-reductions with --trace, and a JSON object with --format json", async () => {
    const id = '{"app":{"func":{"lam":"x","body":{"var":"x"}},"arg":5}}'
    const text = await runCli(["eval", id, "--trace"])
    expect(text.stdout).toBe("5\n")
    expect(text.stderr).toContain("β[")
    const json = await runCli(["eval", id, "--trace", "--format", "json"])
    const parsed = JSON.parse(json.stdout)
    expect(parsed.value).toBe(5)
    expect(parsed.trace[0]).toMatchObject({ kind: "beta", name: "x", input: "5" })
  })

  it("runs a named tool through continue round trips", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lambdagent-cli-"))
    const tools = join(dir, "tools.json")
    writeFileSync(
      tools,
      JSON.stringify({
        countdown: { lam: "n", body: { if: { cond: { eq: [{ var: "n" }, 0] }, then: "done", else: { continue: { input: { sub: [{ var: "n" }, 1] } } } } } }
      })
    )
    const first = JSON.parse((await runCli(["eval", '{"code_of":"countdown"}', "--tools", tools])).stdout)
    const code = JSON.stringify(first.quote)
    const step1 = JSON.parse((await runCli(["eval", code, "--tools", tools, "--as", "countdown", "--input", "2"])).stdout)
    expect(step1).toEqual({ type: "continuation", tool: "countdown", next_input: 1, step: 1 })
    const step2 = JSON.parse((await runCli(["eval", code, "--tools", tools, "--as", "countdown", "--input", "1", "--step", "1"])).stdout)
    expect(step2.step).toBe(2)
  })

  it("reports errors as one line on stderr, exit 1 (JSON with --format json)", async () => {
    const r = await runCli(["eval", '{"div":[1,0]}'])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe("error: DivisionByZero: division by zero\n")
    const j = await runCli(["eval", '{"app":{"func":{"var":1},"arg":2}}', "--format", "json"])
    expect(j.code).toBe(1)
    expect(JSON.parse(j.stderr)).toEqual({
      error: { kind: "TermParseError", message: "$.app.func.var: expected a variable name (string), found number", path: ["app", "func", "var"] }
    })
  })

  it("survives ugly input: malformed JSON, missing files, bad flags, budgets", async () => {
    const malformed = await runCli(["eval", '{"add":[1,'])
    expect(malformed.code).toBe(1)
    expect(malformed.stderr).toMatch(/^error: TermParseError: invalid JSON/)
    expect(malformed.stderr.split("\n").length).toBe(2)
    const missing = await runCli(["eval", "no-such-file.json"])
    expect(missing).toMatchObject({ code: 4, stderr: "error: FileNotFound: term file not found: no-such-file.json\n" })
    expect(await runCli(["eval", "1", "--fuel", "zero"])).toMatchObject({
      code: 2,
      stderr: 'error: UsageError: --fuel expects a positive integer, got "zero"\n'
    })
    expect((await runCli(["eval"])).code).toBe(2)
    const omega =
      '{"app":{"func":{"lam":"x","body":{"app":{"func":{"var":"x"},"arg":{"var":"x"}}}},"arg":{"lam":"x","body":{"app":{"func":{"var":"x"},"arg":{"var":"x"}}}}}}'
    const budget = await runCli(["eval", omega, "--fuel", "100000"])
    expect(budget.code).toBe(1)
    expect(budget.stderr).toContain("BudgetExceeded")
    const empty = await runCli(["eval", "-"], { stdin: "" })
    expect(empty.code).toBe(1)
    expect(empty.stderr).toContain("invalid JSON")
  })
})

describe("lambdagent eval, bounded", () => {
  const omega = JSON.stringify({
    app: {
      func: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } },
      arg: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } }
    }
  })

  it("a budget exhaustion in --format json carries the budget, the counters and the partial trace", async () => {
    const r = await runCli(["eval", omega, "--fuel", "40", "--trace", "--format", "json"])
    expect(r.code).toBe(1)
    const { error } = JSON.parse(r.stderr)
    expect(error).toMatchObject({ kind: "BudgetExceeded", budget: "steps", limit: 40, usage: { llmCalls: 0, toolCalls: 0, tokens: 0 } })
    expect(error.steps).toBeGreaterThan(40)
    expect(error.trace.length).toBeGreaterThan(5)
    expect(error.trace[0]).toMatchObject({ kind: "beta", name: "x" })
  })

  it("the doubling term of the issue stops at the memory budget instead of crashing the process", async () => {
    const dbl = JSON.stringify({ lam: "x", body: { app: { func: { self: true }, arg: { concat: [{ var: "x" }, { var: "x" }] } } } })
    const r = await runCli(["eval", dbl, "--as", "dbl", "--input", "[1,2]", "--format", "json"])
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stderr).error).toMatchObject({ kind: "BudgetExceeded", budget: "memory" })
  })

  it("Ctrl+C stops a long evaluation while it computes (exit 130)", async () => {
    const child = spawn(process.execPath, [cliPath, "eval", omega, "--fuel", "9000000000"], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    // evaluating once the process has spent a second of CPU (start-up takes a fraction of that)
    await untilCpuSeconds(child.pid!, 1)
    child.kill("SIGINT")
    expect(await exited).toBe(130)
    expect(stdout).toBe("")
    expect(stderr).toContain("[interrupted]")
  })
})

/** Resolves once process `pid` has used `seconds` of CPU time (user + system). */
const untilCpuSeconds = async (pid: number, seconds: number): Promise<void> => {
  const ticksPerSecond = 100
  for (;;) {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    if ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond >= seconds) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
