/**
 * The lean program behind `lambdagent compile | lint | migrate | lambda`. The build bundles it with the YAML
 * plugin and just the parts of the core those commands use, so checking a config does not pay for
 * loading the agent runtime, its providers and Effect's full module graph.
 */
import * as z from "zod"
import { runProgram } from "./shell.ts"
import { yamlCommands } from "./yaml.ts"

// The bundle has its own copy of zod and validates a handful of configs per process: compiling
// specialised parsers first (zod's default) costs more than it saves (~5 ms per lint).
z.config({ jitless: true })

export const main = (argv: ReadonlyArray<string>): Promise<void> => runProgram(argv, [yamlCommands()])
