/**
 * The package as a consumer gets it. A release candidate (a copy of the checkout after
 * `changeset version`, as a release makes it) is packed by npm, checked by publint and
 * arethetypeswrong, and installed from the tarball into fresh hosts: ESM with moduleResolution
 * node16, nodenext and bundler, CommonJS with node16 and nodenext. Each host is typechecked and
 * compiled by tsc, then run. Slow (a full build and an npm install): `npm run test:package`.
 */
import { spawn, type SpawnSyncReturns, spawnSync } from "node:child_process"
import { closeSync, cpSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { toolBin } from "../tools/index.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))
const work = mkdtempSync(join(tmpdir(), "lambdagent-package-"))
const rc = join(work, "release-candidate")
const hosts = join(work, "hosts")
afterAll(() => rmSync(work, { recursive: true, force: true }))

const run = (command: string, args: ReadonlyArray<string>, cwd: string): SpawnSyncReturns<string> => {
  const r = spawnSync(command, args, { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  if (r.error !== undefined) throw r.error
  return r
}
const succeed = (command: string, args: ReadonlyArray<string>, cwd: string): SpawnSyncReturns<string> => {
  const r = run(command, args, cwd)
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${r.status}:\n${r.stdout}\n${r.stderr}`)
  return r
}
const node = (args: ReadonlyArray<string>, cwd: string) => succeed(process.execPath, args, cwd)

let tarball = ""
let packed: { version: string; files: ReadonlyArray<string> } = { version: "", files: [] }
let install = { stdout: "", stderr: "" }

beforeAll(() => {
  // the checkout's files (committed or not, as git would add them), without its build or installs
  const files = succeed("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], root)
    .stdout.split("\0")
    .filter((f) => f !== "")
  for (const file of files) cpSync(join(root, file), join(rc, file), { recursive: true })
  symlinkSync(join(root, "node_modules"), join(rc, "node_modules"))
  node([join(root, "node_modules/@changesets/cli/bin.js"), "version"], rc)
  const pack = succeed("npm", ["pack", "--json", "--pack-destination", work], rc)
  const [info] = JSON.parse(pack.stdout) as Array<{ filename: string; version: string; files: Array<{ path: string }> }>
  tarball = join(work, info!.filename)
  packed = { version: info!.version, files: info!.files.map((f) => f.path) }

  mkdirSync(hosts)
  const devTypes = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies as Record<string, string>
  writeFileSync(
    join(hosts, "package.json"),
    JSON.stringify({
      name: "hosts",
      private: true,
      dependencies: { lambdagent: `file:${tarball}`, typescript: devTypes["typescript"], "@types/node": devTypes["@types/node"] }
    })
  )
  const installed = succeed("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], hosts)
  install = { stdout: installed.stdout, stderr: installed.stderr }
})

describe("the tarball", () => {
  it("ships the build, the license, the changelog of the release, the YAML schema and the word vectors; no sources, no CommonJS build", () => {
    for (const file of [
      "LICENSE",
      "CHANGELOG.md",
      "README.md",
      "package.json",
      "dist/plugins/yaml/schema.json",
      "dist/plugins/rag/word-vectors.bin",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/cli/main.js"
    ]) {
      expect(packed.files, file).toContain(file)
    }
    expect(packed.files.filter((f) => !/^(dist\/|LICENSE$|CHANGELOG\.md$|README\.md$|package\.json$)/.test(f))).toEqual([])
    // the lean programs of the command (lint and friends, mcp of pure tools) are CommonJS bundles on purpose
    const leanPrograms = new Set(["dist/cli/yaml-main.cjs", "dist/cli/mcp-main.cjs"])
    expect(packed.files.filter((f) => /\.(cjs|d\.cts)$/.test(f) && !leanPrograms.has(f))).toEqual([])
    for (const program of leanPrograms) expect(packed.files).toContain(program)
    const changelog = readFileSync(join(rc, "CHANGELOG.md"), "utf8")
    expect(changelog.startsWith(`# lambdagent\n\n## ${packed.version}\n`)).toBe(true)
    expect(readFileSync(join(rc, "LICENSE"), "utf8")).toMatch(/^MIT License\n/)
    const manifest = JSON.parse(readFileSync(join(rc, "package.json"), "utf8"))
    expect(manifest.license).toBe("MIT")
    expect(manifest.scripts.prepare).toBeUndefined()
  })

  it("passes publint, warnings included", () => {
    const r = run(process.execPath, [toolBin("publint", "publint"), "run", tarball, "--strict"], work)
    expect({ status: r.status, out: r.stdout + r.stderr }).toMatchObject({ status: 0, out: expect.stringContaining("All good!") })
  })

  it("passes arethetypeswrong as an ESM-only package: nothing to report but the resolutions ESM-only excludes", () => {
    const attw = toolBin("@arethetypeswrong/cli", "attw")
    const r = run(process.execPath, [attw, tarball, "--profile", "esm-only", "--no-color", "--no-emoji"], work)
    expect({ status: r.status, out: r.stdout }).toMatchObject({ status: 0 })
    // node10 cannot read `exports`; node16's CommonJS model predates require(esm) (Node ≥ 22.12).
    // attw exits before a pipe drains: its JSON goes to a file.
    const report = join(work, "attw.json")
    const fd = openSync(report, "w")
    spawnSync(process.execPath, [attw, tarball, "--format", "json"], { cwd: work, stdio: ["ignore", fd, "ignore"] })
    closeSync(fd)
    const json = JSON.parse(readFileSync(report, "utf8")) as { problems: Record<string, Array<{ resolutionKind?: string }>> }
    const kinds = new Set(
      Object.values(json.problems)
        .flat()
        .map((p) => p.resolutionKind)
    )
    expect([...kinds].filter((k) => k !== "node10" && k !== "node16-cjs")).toEqual([])
  })

  it("installs from a file with no warning about install scripts", () => {
    expect(install.stderr).not.toMatch(/install-scripts|prepare/)
  })
})

interface Host {
  readonly name: string
  readonly type: "module" | "commonjs"
  readonly compilerOptions: Record<string, string | boolean>
  readonly source: string
}

const esmSource = (withJson: boolean) =>
  [
    `import { Evaluator, Term, Value } from "lambdagent"`,
    `import { loadConfig } from "lambdagent/yaml"`,
    `import { defaultPath } from "lambdagent/sqlite"`,
    withJson ? `import schema from "lambdagent/yaml/schema.json" with { type: "json" }` : `const schema = { title: "lambdagent agent file" }`,
    `const exact: Value.Value = Evaluator.evaluate(Term.parseText('{"add":[9007199254740993,0]}'))`,
    `const agent = loadConfig("type: simple\\nsystemPrompt: Say hi.\\n")`,
    `console.log(Value.toJsonText(exact), agent.type, schema.title, defaultPath)`
  ].join("\n") + "\n"

const expectedOutput = "9007199254740993 simple lambdagent agent file lambdagent-memory.sqlite\n"

const hostMatrix: ReadonlyArray<Host> = [
  { name: "esm-nodenext", type: "module", compilerOptions: { module: "nodenext", moduleResolution: "nodenext" }, source: esmSource(true) },
  { name: "esm-node16", type: "module", compilerOptions: { module: "node16", moduleResolution: "node16" }, source: esmSource(false) },
  { name: "esm-bundler", type: "module", compilerOptions: { module: "preserve", moduleResolution: "bundler" }, source: esmSource(true) },
  {
    name: "cjs-nodenext",
    type: "commonjs",
    compilerOptions: { module: "nodenext", moduleResolution: "nodenext" },
    // compiled to require(): Node ≥ 22.12 loads the ES modules
    source: esmSource(false)
  },
  {
    name: "cjs-node16",
    type: "commonjs",
    compilerOptions: { module: "node16", moduleResolution: "node16" },
    // TypeScript's node16 predates require(esm): a CommonJS file there imports the package dynamically
    source:
      [
        `async function main(): Promise<void> {`,
        `  const { Evaluator, Term, Value } = await import("lambdagent")`,
        `  const { loadConfig } = await import("lambdagent/yaml")`,
        `  const { defaultPath } = await import("lambdagent/sqlite")`,
        `  const exact: import("lambdagent", { with: { "resolution-mode": "import" } }).Value.Value = Evaluator.evaluate(Term.parseText('{"add":[9007199254740993,0]}'))`,
        `  const agent = loadConfig("type: simple\\nsystemPrompt: Say hi.\\n")`,
        `  console.log(Value.toJsonText(exact), agent.type, "lambdagent agent file", defaultPath)`,
        `}`,
        `void main()`
      ].join("\n") + "\n"
  }
]

interface HostResult {
  readonly tsc: { readonly status: number | null; readonly output: string }
  readonly run?: { readonly status: number | null; readonly stdout: string; readonly stderr: string }
}

const spawnAsync = (args: ReadonlyArray<string>, cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })

/** Write a host, typecheck and compile it with tsc, and run what tsc wrote. */
const buildAndRun = async (host: Host): Promise<HostResult> => {
  const dir = join(hosts, host.name)
  mkdirSync(dir)
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: host.name, private: true, type: host.type }))
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { target: "es2023", strict: true, types: ["node"], resolveJsonModule: true, outDir: "out", ...host.compilerOptions },
      files: ["index.ts"]
    })
  )
  writeFileSync(join(dir, "index.ts"), host.source)
  const tsc = await spawnAsync([join(hosts, "node_modules/typescript/bin/tsc"), "-p", dir], dir)
  const compiled = { status: tsc.status, output: tsc.stdout + tsc.stderr }
  if (tsc.status !== 0) return { tsc: compiled }
  return { tsc: compiled, run: await spawnAsync([join(dir, "out/index.js")], dir) }
}

// the hosts build side by side: each tsc run checks the package's declarations in full (no skipLibCheck)
const results = new Map<string, Promise<HostResult>>()
const resultOf = (host: Host): Promise<HostResult> => {
  if (results.size === 0) for (const h of hostMatrix) results.set(h.name, buildAndRun(h))
  return results.get(host.name)!
}

describe.each(hostMatrix)("a fresh $name host", (host) => {
  it("typechecks, compiles and runs", async () => {
    const { run: ran, tsc } = await resultOf(host)
    expect(tsc).toEqual({ status: 0, output: "" })
    expect(ran).toEqual({ status: 0, stdout: expectedOutput, stderr: "" })
  })
})

describe("the installed command", () => {
  it("runs from node_modules/.bin: version, and exact integers", () => {
    const cli = join(hosts, "node_modules/lambdagent/dist/cli/main.js")
    expect(node([cli, "version"], hosts).stdout).toBe(`lambdagent ${packed.version}\nnode ${process.version}\n`)
    expect(node([cli, "eval", '{"add":[9007199254740993,0]}'], hosts).stdout).toBe("9007199254740993\n")
    expect(readFileSync(join(hosts, "node_modules/.bin/lambdagent"), "utf8")).toMatch(/^#!\/usr\/bin\/env node\n/)
  })

  it("finds a paraphrase offline with the word vectors it ships (hybrid, the default)", () => {
    const cli = join(hosts, "node_modules/lambdagent/dist/cli/main.js")
    const docs = join(hosts, "docs")
    mkdirSync(docs)
    writeFileSync(join(docs, "refunds.md"), "# Refunds for annual subscriptions\n\nAnnual subscriptions are refunded in full within 30 days of the charge.\n")
    writeFileSync(join(docs, "tides.md"), "# Spring tides\n\nSpring tides, with the largest range, happen at new and full moon.\n")
    writeFileSync(join(docs, "bikes.md"), "# Chain care\n\nLubricate the bicycle chain every few hundred kilometres.\n")
    expect(node([cli, "rag", "index", "docs"], hosts).stdout).toMatch(/^Indexed 3 chunks from 3 files/)
    const query = node([cli, "rag", "query", "how do I get my money back for a yearly plan", "--top-k", "1", "--format", "json"], hosts)
    expect(JSON.parse(query.stdout).results.map((r: { source: string }) => r.source)).toEqual(["docs/refunds.md"])
  })
})
