#!/usr/bin/env node
/**
 * The `lambdagent` launcher. It names the built programs next to it (see tsup.config.ts): the full
 * CLI; the lean program of `compile | lint | migrate | lambda` (and `version`), which checks configs
 * without loading the runtime, its providers or Effect's full module graph; and the lean program of
 * `mcp` serving pure tools (see leanMcp.ts), which starts an MCP server without them either. The
 * plain version questions (`version`, `-v`, `--version`) it answers itself, loading no program.
 */
import { fileURLToPath } from "node:url"
import { exitOnUnsupportedNode } from "lambdagent/node-version"
import { enableCompileCache } from "./compileCache.ts"
import { servesPureTools } from "./leanMcp.ts"
import { loadProgram } from "./programCache.ts"
import { plainVersionAnswer } from "./version.ts"

exitOnUnsupportedNode()

type Program = { readonly main: (argv: ReadonlyArray<string>) => Promise<void> }

/** The full CLI (plugins/cli/program.ts as built), an ES module outside this directory's CommonJS scope. */
const FULL_PROGRAM: string = "../cli-program.js"

const leanCommands = new Set(["compile", "lint", "migrate", "lambda", "version", "-v", "--version"])

// One CommonJS bundle each: `require` loads it without the ESM loader's extra passes over a large
// file (export detection, module facades for every Node built-in); with a cache directory, through
// a V8 code cache made after the command has run (see programCache.ts).
const leanProgram = (file: string, cacheDirectory: string | undefined): Program =>
  loadProgram(fileURLToPath(new URL(file, import.meta.url)), process.argv[2] ?? "", cacheDirectory) as Program

const startProgram = (): Promise<Program> => {
  // Much of a command's start-up is compiling modules: keep their bytecode between runs.
  const cacheDirectory = enableCompileCache()
  // compile --dry-run builds each agent's runtime to reach its tools: the full program does that
  const lean = leanCommands.has(process.argv[2] ?? "") && !(process.argv[2] === "compile" && process.argv.includes("--dry-run"))
  if (lean) return Promise.resolve().then(() => leanProgram("./yaml-main.cjs", cacheDirectory))
  if (servesPureTools(process.argv, process.env)) return Promise.resolve().then(() => leanProgram("./mcp-main.cjs", cacheDirectory))
  return import(FULL_PROGRAM) as Promise<typeof import("./program.ts")>
}

const versionAnswer = plainVersionAnswer(process.argv)
if (versionAnswer === undefined) void startProgram().then(({ main }) => main(process.argv))
else process.stdout.write(versionAnswer)
