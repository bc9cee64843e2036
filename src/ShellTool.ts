/**
 * Shell commands as tools (`lambdagent run --tool NAME=CMD`).
 *
 * The input never becomes shell syntax. With `{}` placeholders the input reaches the command in
 * the environment variable `LAMBDAGENT_INPUT`, and each `{}` is rewritten, by the quoting context
 * it sits in, into an expansion of that variable (bare: `"$LAMBDAGENT_INPUT"`, inside `"…"`:
 * `${LAMBDAGENT_INPUT}`, inside `'…'`: the quote is closed around `"$LAMBDAGENT_INPUT"`); the shell
 * never parses an expanded value again. Placements where the command itself would run its argument
 * as code (the program of `sh -c` or `python -c`, `eval`, `awk` and `sed` scripts, the program
 * name, a here-document, …) are refused when the tool is defined, with {@link UnsafePlaceholder}.
 * Without `{}` the input goes to the command's standard input.
 *
 * A denylist of destructive commands (recursive `rm`, `dd`, `mkfs`, …) is checked when a tool is
 * defined, as an early warning about the command text only: it is not a security boundary. What
 * a command may do is enforced by the sandbox (`options.sandbox`, see the `Sandbox` module).
 *
 * @since 0.1.0
 * @module
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./Errors.ts"
import { sandboxable } from "./internal/processTools.ts"
import { compileTemplate, INPUT_VARIABLE } from "./internal/shellTemplate.ts"
import { runToolProgram } from "./internal/toolProcess.ts"
import type * as Sandbox from "./Sandbox.ts"
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
export class DangerousCommand extends TaggedError<DangerousCommand>()("DangerousCommand", {
  command: Schema.String,
  rule: Schema.String,
  message: Schema.String
}) {}

/**
 * A `{}` placed where the command would read the input as code, or where its quoting is not
 * certain: the message says why and what to write instead.
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { ShellTool } from "lambdagent"
 * try { ShellTool.make("run", "sh -c 'echo {}'") } catch (e) { console.log((e as ShellTool.UnsafePlaceholder).message) }
 * ```
 */
export class UnsafePlaceholder extends TaggedError<UnsafePlaceholder>()("UnsafePlaceholder", {
  command: Schema.String,
  /** Offset of the `{}` (or of the construct) in the command. */
  offset: Schema.Number,
  reason: Schema.String,
  message: Schema.String
}) {}

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
export class InvalidToolSpec extends TaggedError<InvalidToolSpec>()("InvalidToolSpec", { message: Schema.String }) {}

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
 * The denylist rule a command breaks, or `undefined` when it breaks none. An early warning about
 * obviously destructive command text, not a security boundary: a command can do the same things
 * in ways no pattern sees; the sandbox is what limits it.
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
export const dangerousRule = (command: string): string | undefined => DANGEROUS.find(([, pattern]) => pattern.test(command))?.[0]

/**
 * The environment variable that carries the input to a command with `{}` placeholders; a command
 * may also read it directly.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { ShellTool } from "lambdagent"
 * console.log(ShellTool.inputVariable) // "LAMBDAGENT_INPUT"
 * ```
 */
export const inputVariable: string = INPUT_VARIABLE

/**
 * A command template, checked: the program `/bin/sh -c` runs and how many placeholders it expands.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { ShellTool } from "lambdagent"
 * const c: ShellTool.CompiledCommand = ShellTool.compileCommand("grep -rn {} src/")
 * ```
 */
export interface CompiledCommand {
  readonly command: string
  readonly program: string
  /** `0`: the input goes to standard input. */
  readonly placeholders: number
}

/**
 * Check a command template and rewrite its `{}` placeholders into expansions of
 * {@link inputVariable}. Throws {@link UnsafePlaceholder} for a placement the input could escape
 * or run from. A `{}` after a backslash, in a comment, or in `find … -exec … ;` or `xargs -I {}`
 * belongs to the command and is left alone.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { ShellTool } from "lambdagent"
 * ShellTool.compileCommand(`grep -r "{}" src/`).program // 'grep -r "${LAMBDAGENT_INPUT}" src/'
 * ShellTool.compileCommand("echo '{}'").program // "echo ''\"$LAMBDAGENT_INPUT\"''"
 * ```
 */
export const compileCommand = (command: string): CompiledCommand => {
  const template = compileTemplate(command)
  if (!template.ok) {
    const { offset, message: reason } = template.refusal
    throw new UnsafePlaceholder({ command, offset, reason, message: `unsafe {} in ${JSON.stringify(command)} at column ${offset + 1}: ${reason}` })
  }
  return { command, program: template.program, placeholders: template.placeholders }
}

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
    throw new InvalidToolSpec({ message: `invalid tool spec ${JSON.stringify(spec)}: expected NAME=COMMAND (a name of letters, digits, _ . -)` })
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
  /** Wall-clock limit of one call; default 30 seconds. */
  readonly timeoutMs?: number
  readonly description?: string
  readonly env?: NodeJS.ProcessEnv
  /** Where the command runs (and, sandboxed, the one writable directory); default the process's. */
  readonly cwd?: string
  /** Run every call in the sandbox under this policy (see `Sandbox.resolvePolicy`). */
  readonly sandbox?: Sandbox.Policy
}

/** Linux holds an environment string (`NAME=value` and its NUL) in at most 32 pages. */
const MAX_VARIABLE_BYTES = 32 * 4096 - INPUT_VARIABLE.length - 2

/** The input as an environment value, or why it cannot be one. */
const checkInput = (input: string): string => {
  if (input.includes("\0")) {
    throw new Error("the input holds a NUL byte, which no command argument can carry; a command without {} receives the input on standard input instead")
  }
  const bytes = Buffer.byteLength(input, "utf8")
  if (bytes > MAX_VARIABLE_BYTES) {
    throw new Error(
      `the input is ${bytes} bytes, more than the ${MAX_VARIABLE_BYTES} a command argument can hold; a command without {} receives any input on standard input`
    )
  }
  return input
}

const describeCommand = (compiled: CompiledCommand): string =>
  `Run \`${compiled.command}\`${compiled.placeholders > 0 ? " with {} replaced by the input" : " with the input on stdin"}.`

/**
 * A tool that runs a shell command. Throws {@link DangerousCommand} for a command on the denylist
 * and {@link UnsafePlaceholder} for an unsafe `{}`. The tool's output is the command's standard
 * output; a failing command gives `[EXIT n] <stderr>` and a slow one `[TIMEOUT after Ns]`, as text
 * the agent can read. With `options.sandbox`, a call a limit stops fails with the
 * `Sandbox.SandboxViolation` (`[SANDBOX:memory] …`), which the agent observes.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Sandbox, ShellTool } from "lambdagent"
 * const search = ShellTool.make("search", "grep -rn -- {} src/")
 * const python = ShellTool.make("python", "python3", { sandbox: Sandbox.presets.strict })
 * ```
 */
export const make = (name: string, command: string, options: Options = {}): Tools.ToolDefinition<string> => {
  const rule = dangerousRule(command)
  if (rule !== undefined) throw new DangerousCommand({ command, rule, message: `dangerous command refused (${rule}): ${command}` })
  const compiled = compileCommand(command)
  const timeoutMs = options.timeoutMs ?? Tools.defaultTimeoutMs
  const tool: Tools.ToolDefinition<string> = {
    name,
    kind: "shell",
    description: options.description ?? describeCommand(compiled),
    source: command,
    // the process enforces the timeout itself (it kills the process group); the outer one is a backstop
    timeoutMs: timeoutMs + 5_000,
    run: async (input: string, { signal }) => {
      const env = compiled.placeholders > 0 ? { ...(options.env ?? process.env), [INPUT_VARIABLE]: checkInput(input) } : options.env
      const result = await runToolProgram(compiled.program, {
        ...(compiled.placeholders > 0 ? {} : { stdin: input }),
        timeoutMs,
        signal,
        ...(env !== undefined ? { env } : {}),
        ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
        ...(options.sandbox !== undefined ? { sandbox: options.sandbox } : {})
      })
      if (result.timedOut) return `[TIMEOUT after ${timeoutMs / 1000}s]`
      if (result.truncated) return `${result.stdout}\n[OUTPUT truncated: the command wrote more than 10 MB and was stopped]`
      if (result.exitCode !== 0) return `[EXIT ${result.exitCode}] ${(result.stderr || result.stdout).trim()}`
      return result.stdout.replace(/\n$/, "")
    }
  }
  return sandboxable(tool, (sandbox) => make(name, command, { ...options, sandbox }))
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
