#!/usr/bin/env node
/**
 * The `lambdagent` launcher. It names the built programs next to it (see tsup.config.ts): the full
 * CLI; the lean program of `compile | lint | migrate | lambda` (and `version`), which checks configs
 * without loading the runtime, its providers or Effect's full module graph; and the lean program of
 * `mcp` serving pure tools (see leanMcp.ts), which starts an MCP server without them either.
 */
import * as nodeModule from "node:module"
import { setFlagsFromString } from "node:v8"
import { exitOnUnsupportedNode } from "lambdagent/node-version"
import { servesPureTools } from "./leanMcp.ts"

exitOnUnsupportedNode()

// Cache compiled bytecode between runs (Node ≥ 22.1): much of a command's start-up is compiling modules.
;(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.()

type Program = { readonly main: (argv: ReadonlyArray<string>) => Promise<void> }

const leanCommands = new Set(["compile", "lint", "migrate", "lambda", "version", "-v", "--version"])

// One CommonJS bundle each: `require` loads it without the ESM loader's extra passes over a large
// file (export detection, module facades for every Node built-in).
const requireProgram = (file: string): Program => nodeModule.createRequire(import.meta.url)(file) as Program

const loadLeanProgram = (): Program => {
  // Compile the bundle's functions up front rather than on first call: the compile cache then
  // holds them all, and later runs skip compiling whatever a lint calls (~20 ms of ~90; the
  // first run pays ~25 ms once).
  setFlagsFromString("--no-lazy")
  return requireProgram("./yaml-main.cjs")
}

// compile --dry-run builds each agent's runtime to reach its tools: the full program does that
const lean = leanCommands.has(process.argv[2] ?? "") && !(process.argv[2] === "compile" && process.argv.includes("--dry-run"))
const program: Promise<Program> = lean
  ? Promise.resolve().then(loadLeanProgram)
  : servesPureTools(process.argv, process.env)
    ? Promise.resolve().then(() => requireProgram("./mcp-main.cjs"))
    : import("./program.js")

void program.then(({ main }) => main(process.argv))
