/**
 * Shell commands as tools (`lambdagent run --tool NAME=CMD`).
 *
 * `{}` in the command is replaced by the agent's input, quoted for the shell, so no input can
 * inject a command; without `{}` the input goes to the command's standard input. Commands that
 * could destroy data or the machine are refused when the tool is defined.
 *
 * @since 0.1.0
 * @module
 */
import { runShell } from "./internal/process.ts"
import * as Tools from "./Tools.ts"

/**
 * A command refused as dangerous, with the rule it broke.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { ShellTool } from "lambdagent"
 * try { ShellTool.make("wipe", "rm -rf /") } catch (e) { console.log((e as ShellTool.DangerousCommand).rule) }
 * ```
 */
export class DangerousCommand extends Error {
  readonly _tag = "DangerousCommand"
  constructor(
    readonly command: string,
    readonly rule: string
  ) {
    super(`dangerous command refused (${rule}): ${command}`)
  }
}

/**
 * A `--tool` specification that is not `NAME=COMMAND`.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { ShellTool } from "lambdagent"
 * try { ShellTool.parseSpec("nocommand") } catch (e) { console.log((e as Error).message) }
 * ```
 */
export class InvalidToolSpec extends Error {
  readonly _tag = "InvalidToolSpec"
}

const DANGEROUS: ReadonlyArray<readonly [rule: string, pattern: RegExp]> = [
  ["recursive delete", /\brm\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\b|\brm\s+--recursive\b/],
  ["raw disk write (dd)", /\bdd\s+[^|;&]*\b(if|of)=/],
  ["filesystem creation (mkfs)", /\bmkfs(\.\w+)?\b/],
  ["write to a block device", />\s*\/dev\/(sd|hd|nvme|vd|xvd|mmcblk|disk)/],
  ["fork bomb", /:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:/],
  ["recursive permission change on /", /\bch(mod|own)\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*R[a-zA-Z]*\s+\S*\s+\/(\s|$)/],
  ["downloaded script piped to a shell", /\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b/],
  ["power off or reboot", /\b(shutdown|reboot|halt|poweroff)\b/],
  ["wipe or format a device", /\b(wipefs|shred|fdisk|parted|mkswap)\b/],
  ["delete via find", /\bfind\b[^|;&]*\s-delete\b/]
]

/**
 * The rule a command breaks, or `undefined` when it is allowed.
 *
 * @since 0.1.0
 * @category guards
 * @example
 * ```ts
 * import { ShellTool } from "lambdagent"
 * ShellTool.dangerousRule("grep -c ERROR app.log") // undefined
 * ShellTool.dangerousRule("dd if=/dev/zero of=/dev/sda") // "raw disk write (dd)"
 * ```
 */
export const dangerousRule = (command: string): string | undefined =>
  DANGEROUS.find(([, pattern]) => pattern.test(command))?.[0]

/**
 * Quote a string for a POSIX shell (single quotes; nothing inside is interpreted).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { ShellTool } from "lambdagent"
 * ShellTool.quote("it's; rm -rf ~") // "'it'\\''s; rm -rf ~'"
 * ```
 */
export const quote = (text: string): string => `'${text.replace(/'/g, "'\\''")}'`

/**
 * Split `NAME=COMMAND` (surrounding quotes on the command are removed).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { ShellTool } from "lambdagent"
 * ShellTool.parseSpec("count=wc -l") // { name: "count", command: "wc -l" }
 * ```
 */
export const parseSpec = (spec: string): { name: string; command: string } => {
  const eq = spec.indexOf("=")
  const name = eq > 0 ? spec.slice(0, eq).trim() : ""
  let command = eq > 0 ? spec.slice(eq + 1).trim() : ""
  if (/^(["']).*\1$/s.test(command)) command = command.slice(1, -1)
  if (!/^[A-Za-z_][\w.-]*$/.test(name) || command === "") {
    throw new InvalidToolSpec(`invalid tool spec ${JSON.stringify(spec)}: expected NAME=COMMAND (a name of letters, digits, _ . -)`)
  }
  return { name, command }
}

/**
 * Options of a shell tool.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ShellTool } from "lambdagent"
 * const o: ShellTool.Options = { timeoutMs: 10_000, description: "Count errors" }
 * ```
 */
export interface Options {
  /** Default 30 seconds. */
  readonly timeoutMs?: number
  readonly description?: string
  readonly env?: NodeJS.ProcessEnv
}

/**
 * A tool that runs a shell command. Throws {@link DangerousCommand} for a refused command. The
 * tool's output is the command's standard output; a failing command gives
 * `[EXIT n] <stderr>` and a slow one `[TIMEOUT after Ns]`, as text the agent can read.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { ShellTool } from "lambdagent"
 * const search = ShellTool.make("search", "grep -rn {} src/")
 * ```
 */
export const make = (name: string, command: string, options: Options = {}): Tools.ToolDefinition<string> => {
  const rule = dangerousRule(command)
  if (rule !== undefined) throw new DangerousCommand(command, rule)
  const timeoutMs = options.timeoutMs ?? Tools.defaultTimeoutMs
  const placeholder = command.includes("{}")
  return {
    name,
    kind: "shell",
    description: options.description ?? `Run \`${command}\`${placeholder ? " with {} replaced by the input" : " with the input on stdin"}.`,
    source: command,
    // the process enforces the timeout itself (it kills the process group); the outer one is a backstop
    timeoutMs: timeoutMs + 5_000,
    run: async (input: string, { signal }) => {
      const line = placeholder ? command.split("{}").join(quote(input)) : command
      const result = await runShell(line, {
        ...(placeholder ? {} : { stdin: input }),
        timeoutMs,
        signal,
        ...(options.env !== undefined ? { env: options.env } : {})
      })
      if (result.timedOut) return `[TIMEOUT after ${timeoutMs / 1000}s]`
      if (result.code !== 0) return `[EXIT ${result.code}] ${(result.stderr || result.stdout).trim()}`
      return result.stdout.replace(/\n$/, "")
    }
  }
}

/**
 * A tool from a `NAME=COMMAND` spec (see {@link parseSpec} and {@link make}).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { ShellTool } from "lambdagent"
 * const tool = ShellTool.fromSpec("lines=wc -l", { timeoutMs: 5_000 })
 * ```
 */
export const fromSpec = (spec: string, options: Options = {}): Tools.ToolDefinition<string> => {
  const { command, name } = parseSpec(spec)
  return make(name, command, options)
}
