import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { cliPath, runCli } from "./helpers.ts"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-cli-server-"))
const write = (name: string, text: string) => {
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}
const agent = (server: string) => write(`${server.replace(/\W/g, "")}.yml`, `type: simple\nsystemPrompt: Echo.\ncli:\n  server: ${server}\n`)

let child: ChildProcess | undefined
afterEach(() => {
  child?.kill("SIGTERM")
  child = undefined
})

/** Start `serve`, wait for its "listening on ADDRESS" line, return the address. */
const start = (config: string, ...args: ReadonlyArray<string>): Promise<string> =>
  new Promise((resolve, reject) => {
    child = spawn(process.execPath, [cliPath, "serve", config, "--model", "scripted:echo", ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    child.stderr!.on("data", (d) => {
      stderr += d
      const found = /listening on (\S+)/.exec(stderr)
      if (found !== null) resolve(found[1]!)
    })
    child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${stderr}`)))
  })

/** Send lines on one connection; collect one answer line per request line. */
const exchange = (target: { path: string } | { host: string; port: number }, lines: ReadonlyArray<string>): Promise<Array<string>> =>
  new Promise((resolve, reject) => {
    const socket = connect(target as never)
    let received = ""
    socket.on("data", (d) => {
      received += d
      const answers = received.split("\n").filter((l) => l !== "")
      if (answers.length === lines.length) {
        socket.end()
        resolve(answers)
      }
    })
    socket.on("error", reject)
    socket.write(lines.map((l) => `${l}\n`).join(""))
  })

describe("serve with cli.server (seed §17.3)", () => {
  it("mode pipe answers each stdin line on stdout, in order, until stdin ends", async () => {
    const r = await runCli(["serve", agent("{enabled: true, mode: pipe, format: text}"), "--model", "scripted:echo"], { stdin: "one\ntwo\n" })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe("one\ntwo\n")
  })

  it("format json reads {input} or a JSON string and answers {result}, or {error} for a bad line", async () => {
    const r = await runCli(["serve", agent("{enabled: true, format: jsonl}"), "--model", "scripted:echo"], { stdin: '{"input": "a"}\n"b"\nnot json\n' })
    expect(r.code, r.stderr).toBe(0)
    expect(
      r.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
    ).toEqual([{ result: "a" }, { result: "b" }, { error: { kind: "BadRequest", message: 'a request line must be JSON: {"input": …} or a JSON string' } }])
  })

  it("mode socket serves each connection on a Unix socket", async () => {
    const path = await start(agent(`{enabled: true, mode: socket, format: json, socketPath: ${join(dir, "agent.sock")}}`))
    expect(path).toBe(join(dir, "agent.sock"))
    expect(await exchange({ path }, ['{"input": "hello"}', '"again"'])).toEqual(['{"result":"hello"}', '{"result":"again"}'])
  })

  it("mode tcp serves on a port (0: any free one); --cli serves a config whose block is not enabled", async () => {
    const tcp = await start(agent("{mode: tcp, port: 0, format: text}"), "--cli")
    const [host, port] = [tcp.slice(0, tcp.lastIndexOf(":")), Number(tcp.slice(tcp.lastIndexOf(":") + 1))]
    expect(await exchange({ host, port }, ["over tcp"])).toEqual(["over tcp"])
  })

  it("refuses --cli with --mcp, --a2a or --ws", async () => {
    const r = await runCli(["serve", agent("{mode: pipe}"), "--cli", "--ws"])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("--ws applies to plain serve only")
  })
})
