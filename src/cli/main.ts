#!/usr/bin/env node
import * as nodeModule from "node:module"

// Cache compiled bytecode between runs (Node ≥ 22.1): much of a command's start-up is compiling modules.
;(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.()

void import("./program.ts").then(({ main }) => main(process.argv))
