/**
 * The lean program behind `lambdagent compile | lint | lambda`. The build bundles it with the YAML
 * plugin and just the parts of the core those commands use, so checking a config does not pay for
 * loading the agent runtime, its providers and Effect's full module graph.
 */
import { runProgram } from "./shell.ts"
import { registerYaml } from "./yaml.ts"

export const main = (argv: ReadonlyArray<string>): Promise<void> => runProgram(argv, [registerYaml])
