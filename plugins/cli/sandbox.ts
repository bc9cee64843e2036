/**
 * `--sandbox strict|default|permissive|off` and the config's `sandbox:` block: the policy every
 * tool that runs a process (shell tools, CLI agents) is put under before a run. A policy this
 * machine cannot enforce stops the command before the run starts (exit code 1).
 */
import { Sandbox, type Tools } from "lambdagent"
import { CliError, ExitCode } from "./io.ts"
import { usageError } from "./options.ts"

/** What `--sandbox` asked for: a preset's policy, `off`, or nothing (the config decides). */
export type SandboxChoice = Sandbox.Policy | "off" | undefined

export const SANDBOX_FLAGS = "--sandbox <policy>"
export const SANDBOX_HELP = "run every tool that starts a process in the sandbox: strict, default, permissive, or off (overrides the config's sandbox:)"

export const parseSandboxFlag = (value: string | undefined): SandboxChoice => {
  if (value === undefined) return undefined
  if (value === "off") return "off"
  const preset = Sandbox.presetNames.find((name) => name === value)
  if (preset === undefined) {
    throw usageError(`--sandbox expects ${Sandbox.presetNames.join(", ")} or off, got ${JSON.stringify(value)}`)
  }
  return Sandbox.presets[preset]
}

/**
 * The runtime's tools under the effective policy: `--sandbox`'s preset (keeping the config's
 * `work_dir`), else the config's. Says on `notices` which tools it covers.
 */
export const applySandbox = async (
  tools: ReadonlyArray<Tools.ToolDefinition>,
  choice: SandboxChoice,
  configured: Sandbox.Policy | undefined,
  notices: Array<string>
): Promise<Array<Tools.ToolDefinition>> => {
  const policy =
    choice === "off"
      ? undefined
      : choice !== undefined
        ? { ...choice, ...(configured?.workDir !== undefined ? { workDir: configured.workDir } : {}) }
        : configured
  const covered = tools.filter(Sandbox.runsProcess)
  if (policy === undefined || covered.length === 0) return [...tools]
  try {
    await Sandbox.ensure(policy)
  } catch (error) {
    if (error instanceof Sandbox.SandboxUnavailable) {
      throw new CliError(
        `${error.message.replace(/^\[SANDBOX:unavailable\] /, "")}; run with --sandbox off to run the tools without it`,
        ExitCode.failed,
        "SandboxUnavailable"
      )
    }
    throw error
  }
  notices.push(`[sandbox ${Sandbox.describe(policy)} — for ${covered.map((t) => t.name).join(", ")}]`)
  return Sandbox.wrapAll(tools, policy)
}
