import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { delimiter, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { minimumNodeVersion, unsupportedNodeReason } from "../src/NodeVersion.ts"

const root = fileURLToPath(new URL("..", import.meta.url))

describe("the supported Node.js versions", () => {
  it("refuses versions before the minimum, with the versions and the reasons in one line", () => {
    for (const version of ["18.20.4", "20.20.2", "21.7.3", "22.0.0", "22.12.0"]) {
      const reason = unsupportedNodeReason(version)
      expect(reason, version).toBe(
        `lambdagent needs Node.js 22.13.0 or newer, and this is Node.js ${version}: older versions read JSON integers above 2^53 inexactly, cannot require() ES modules, and have no node:sqlite without a flag`
      )
    }
    for (const version of ["22.13.0", "22.23.3", "23.0.0", "24.1.0", "26.10.0"]) expect(unsupportedNodeReason(version), version).toBeUndefined()
  })

  it("is the minimum package.json declares", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { engines: { node: string } }
    expect(pkg.engines.node).toBe(`>=${minimumNodeVersion}`)
  })
})

/** A `node` on the PATH that is older than the minimum (the system's, outside node_modules/.bin), if any. */
const oldNode = ((): { path: string; version: string } | undefined => {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "node")
    if (dir.includes("node_modules") || !existsSync(candidate)) continue
    const version = spawnSync(candidate, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout?.trim()
    if (version !== undefined && version !== "" && unsupportedNodeReason(version) !== undefined) return { path: candidate, version }
  }
  return undefined
})()
if (oldNode === undefined) console.warn("[supportedNode] no Node.js older than the minimum on the PATH: the refusal is not run for real here")

describe.skipIf(oldNode === undefined)("on an unsupported Node.js", () => {
  const expected = () => `${unsupportedNodeReason(oldNode!.version)}\n`

  it("the CLI prints one line and exits with 1, whatever the command", () => {
    for (const args of [["version"], ["eval", '{"add":[9007199254740993,0]}'], ["lint", "examples/agents"]]) {
      const r = spawnSync(oldNode!.path, [join(root, "dist/cli/main.js"), ...args], { cwd: root, encoding: "utf8" })
      expect({ args, status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ args, status: 1, stdout: "", stderr: expected() })
    }
  })

  it("importing the core or any plugin prints one line and exits with 1", () => {
    for (const specifier of [
      "lambdagent",
      "lambdagent/testing",
      "lambdagent/yaml",
      "lambdagent/mcp",
      "lambdagent/http",
      "lambdagent/redis",
      "lambdagent/sqlite",
      "lambdagent/rag"
    ]) {
      const r = spawnSync(oldNode!.path, ["--input-type=module", "-e", `import ${JSON.stringify(specifier)}`], { cwd: root, encoding: "utf8" })
      expect({ specifier, status: r.status, stderr: r.stderr }).toEqual({ specifier, status: 1, stderr: expected() })
    }
  })
})
