/**
 * The MCP Inspector's command-line mode against the built `lambdagent mcp`, as a user runs it:
 * `npx @modelcontextprotocol/inspector --cli node dist/cli/main.js mcp --store :memory: --method …`
 * (its command from test/tools, where the test suite's global setup installs it). Offline (the
 * inspector needs no network), with a home directory of its own, and with an `xdg-open` on the
 * PATH that records any attempt to open a browser.
 */
import { spawn } from "node:child_process"
import { chmod, mkdir, readdir, writeFile } from "node:fs/promises"
import { existsSync } from "node:fs"
import { delimiter, dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { toolBin } from "../../test/tools/index.ts"
import { cliPath, type HttpProcess, root, spawnHttpServer, tempDir } from "./test-support.ts"

interface Result {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly json: any
}

let home: Awaited<ReturnType<typeof tempDir>>
let env: Record<string, string>
const browserMarker = () => join(home.path, "browser-opened")

/** `mcp-inspector --cli ARGS`, its exit code and its output (JSON on stdout). */
const inspector = (args: ReadonlyArray<string>): Promise<Result> =>
  new Promise((resolve, reject) => {
    const bin = toolBin("@modelcontextprotocol/inspector", "mcp-inspector")
    const child = spawn(process.execPath, [bin, "--cli", ...args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      let json: unknown
      try {
        json = JSON.parse(stdout)
      } catch {
        json = undefined
      }
      resolve({ code, stdout, stderr, json })
    })
  })

/** The inspector against the stdio server, started by the inspector. */
const stdio = (args: ReadonlyArray<string>) => inspector(["node", "dist/cli/main.js", "mcp", "--store", ":memory:", ...args])

beforeAll(async () => {
  if (!existsSync(cliPath)) throw new Error("dist/cli/main.js is missing: run `npx tsup` first")
  home = await tempDir()
  const bin = join(home.path, "bin")
  await mkdir(bin)
  // A browser opener that only leaves a mark.
  await writeFile(join(bin, "xdg-open"), `#!/bin/sh\necho "$@" >> "${browserMarker()}"\n`)
  await chmod(join(bin, "xdg-open"), 0o755)
  env = {
    ...(process.env as Record<string, string>),
    HOME: home.path,
    // `node` is the Node.js running the tests; xdg-open is the recorder
    PATH: [bin, dirname(process.execPath), process.env.PATH ?? ""].join(delimiter),
    npm_config_update_notifier: "false",
    npm_config_offline: "true"
  }
})

afterAll(async () => {
  await home?.remove()
})

describe("the MCP Inspector CLI against lambdagent mcp over stdio", () => {
  it("tools/list shows the four system tools with their input schemas", async () => {
    const r = await stdio(["--method", "tools/list"])
    expect(r.code, r.stderr).toBe(0)
    const tools = r.json.tools as Array<{ name: string; description: string; inputSchema: { type: string; required?: Array<string> } }>
    expect(tools.map((t) => t.name)).toEqual(["evolve", "run", "list", "help"])
    for (const tool of tools) {
      expect(tool.description.length).toBeGreaterThan(20)
      expect(tool.inputSchema.type).toBe("object")
    }
    // run takes its code inline or a tool by name, so only the input is always required
    expect(tools[1]!.inputSchema.required).toEqual(["input"])
    expect(Object.keys((tools[1]!.inputSchema as { properties?: object }).properties ?? {})).toEqual(expect.arrayContaining(["code", "tool", "input"]))
    expect(r.stderr).toContain("[lambdagent mcp] serving stdio")
  })

  it("tools/call of run returns the value as text and structured content", async () => {
    const r = await stdio(["--method", "tools/call", "--tool-name", "run", "--tool-arg", 'code={"add":[40,2]}', "--tool-arg", "input=null"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toEqual({ content: [{ type: "text", text: "42" }], structuredContent: { value: 42, steps: 3 } })
  })

  it("tools/call of evolve registers a tool and reports its analysis", async () => {
    const r = await stdio([
      "--method",
      "tools/call",
      "--tool-name",
      "evolve",
      "--tool-arg",
      "name=square",
      "--tool-arg",
      "description=Squares a number",
      "--tool-arg",
      'code={"lam":"x","body":{"mul":[{"var":"x"},{"var":"x"}]}}'
    ])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.structuredContent).toMatchObject({ name: "square", version: 1, forms: ["lam", "mul"], isFunction: true, recursive: false })
    expect(JSON.parse(r.json.content[0].text)).toEqual(r.json.structuredContent)
  })

  it("an isError result is printed and gives exit code 5", async () => {
    const r = await stdio(["--method", "tools/call", "--tool-name", "run", "--tool-arg", 'code={"div":[1,0]}', "--tool-arg", "input=null"])
    expect(r.code).toBe(5)
    expect(r.json).toMatchObject({ isError: true, structuredContent: { kind: "DivisionByZero" } })
  })

  it("resources/list, resources/templates/list, prompts/list and logging/setLevel", async () => {
    const resources = await stdio(["--method", "resources/list"])
    expect(resources.code, resources.stderr).toBe(0)
    expect(resources.json.resources).toEqual([expect.objectContaining({ uri: "lambda://reference", mimeType: "text/markdown" })])
    const templates = await stdio(["--method", "resources/templates/list"])
    expect(templates.json.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate)).toEqual([
      "lambda://tools/{name}",
      "lambda://tools/{name}/versions/{version}"
    ])
    const prompts = await stdio(["--method", "prompts/list"])
    expect(prompts.json.prompts.map((p: { name: string }) => p.name)).toEqual(["lambda-tutor"])
    const level = await stdio(["--method", "logging/setLevel", "--log-level", "debug"])
    expect(level.code, level.stderr).toBe(0)
    expect(level.json).toEqual({})
  })
})

describe("the MCP Inspector CLI against lambdagent mcp --http with a token", () => {
  let server: HttpProcess

  beforeAll(async () => {
    server = await spawnHttpServer([cliPath, "mcp", "--http", "0", "--store", ":memory:", "--token", "inspector-token"])
  })

  afterAll(async () => {
    expect(await server?.stop()).toBe(0)
  })

  it("works with the Authorization header; tools evolved in one session are listed in the next", async () => {
    const header = ["--header", "Authorization: Bearer inspector-token"]
    const evolved = await inspector([
      server.url,
      ...header,
      "--method",
      "tools/call",
      "--tool-name",
      "evolve",
      "--tool-arg",
      "name=inc",
      "--tool-arg",
      "description=adds one",
      "--tool-arg",
      'code={"lam":"x","body":{"add":[{"var":"x"},1]}}'
    ])
    expect(evolved.code, evolved.stderr).toBe(0)
    expect(evolved.json.structuredContent).toMatchObject({ name: "inc", version: 1 })
    const listed = await inspector([server.url, ...header, "--method", "tools/list"])
    expect(listed.json.tools.map((t: { name: string }) => t.name)).toEqual(["evolve", "run", "list", "help", "inc"])
    const called = await inspector([server.url, ...header, "--method", "tools/call", "--tool-name", "inc", "--tool-arg", "input=41"])
    expect(called.json.content).toEqual([{ type: "text", text: "42" }])
  })

  it("without the token it stops with an authorization error and opens no browser", async () => {
    const r = await inspector([server.url, "--method", "tools/list"])
    expect(r.code).not.toBe(0)
    expect(`${r.stdout}${r.stderr}`).toMatch(/auth/i)
    expect(existsSync(browserMarker())).toBe(false)
  })
})

describe("the inspector's footprint", () => {
  it("opened no browser and wrote no file into the home directory (it only makes an empty ~/.mcp-inspector/storage)", async () => {
    expect(existsSync(browserMarker())).toBe(false)
    const entries = await readdir(home.path, { recursive: true, withFileTypes: true })
    const files = entries
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(home.path.length + 1))
      // lambdagent's own compile cache (docs/cli.md) is the server's, not the inspector's
      .filter((path) => !path.startsWith("bin") && !path.startsWith(".npm") && !path.startsWith(".cache/lambdagent/compile-cache/"))
    expect(files).toEqual([])
  })
})
