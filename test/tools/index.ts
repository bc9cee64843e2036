/**
 * The heavy development tools of `test/tools/package.json` (the Chroma server, the MCP inspector
 * and conformance suite, typedoc, Biome, the AI SDK the agents benchmark compares with), which
 * `npm install` leaves out: together they weigh more than the rest of the development install.
 * They are installed on demand into `test/tools/node_modules` (git-ignored) by the tests' global
 * setup, `npm run typecheck`, `npm run docs`, the RAG and agents benchmarks and `.ci/run`, once per
 * version of the lock file.
 */
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** The folder of the tools' package.json. */
export const toolsDir = fileURLToPath(new URL(".", import.meta.url))

/** Where the tools are installed. */
export const toolsModules = join(toolsDir, "node_modules")

const stampFile = join(toolsModules, ".installed-from")

/** What the installed tree was made from: the manifest and the lock file. */
const wanted = (): string =>
  createHash("sha256")
    .update(readFileSync(join(toolsDir, "package.json")))
    .update(readFileSync(join(toolsDir, "package-lock.json")))
    .digest("hex")

/** Whether the tools are installed, from the current manifest and lock file. */
export const toolsInstalled = (): boolean => existsSync(stampFile) && readFileSync(stampFile, "utf8") === wanted()

/**
 * Install the tools unless they are installed already (`npm ci` in `test/tools`). Throws when npm
 * fails, with its exit status: nothing that needs the tools is skipped silently.
 */
export const ensureTools = (): void => {
  if (toolsInstalled()) return
  process.stderr.write("Installing the development tools of test/tools (Chroma, the MCP inspector and conformance suite, typedoc); once per lock file…\n")
  const result = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: toolsDir, stdio: ["ignore", "inherit", "inherit"] })
  if (result.status !== 0) {
    throw new Error(`npm ci in test/tools failed (${result.error?.message ?? `exit status ${result.status ?? result.signal}`})`)
  }
  writeFileSync(stampFile, wanted())
}

/** Resolve a module of the tools (`chromadb`, `@modelcontextprotocol/conformance/package.json`, …). */
export const resolveTool = (specifier: string): string => createRequire(join(toolsDir, "package.json")).resolve(specifier)

/** The script of a tool's command (one of test/tools/package.json's dependencies), as its package.json `bin` names it. */
export const toolBin = (pkg: string, command: string): string => {
  const manifestPath = join(toolsModules, pkg, "package.json")
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { bin?: string | Record<string, string> }
  const bin = typeof manifest.bin === "string" ? manifest.bin : manifest.bin?.[command]
  if (bin === undefined) throw new Error(`${pkg} has no command ${command}`)
  return join(dirname(manifestPath), bin)
}
