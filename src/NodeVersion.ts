/**
 * The oldest Node.js lambdagent runs on, and the one-line refusal on an older one. Every entry
 * point (the core, the testing kits, the CLI launcher) calls {@link exitOnUnsupportedNode} before
 * doing anything else; plugins load the core first. The check is a string split: nothing to
 * measure at start-up. Also exported alone as `lambdagent/node-version`, for launchers that check
 * before they load anything else.
 *
 * @since 0.2.0
 * @module
 */

/**
 * The `engines.node` minimum of package.json.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { NodeVersion } from "lambdagent"
 * console.log(NodeVersion.minimumNodeVersion) // "22.13.0"
 * ```
 */
export const minimumNodeVersion = "22.13.0"

const [minimumMajor, minimumMinor] = minimumNodeVersion.split(".").map(Number) as [number, number]

/**
 * Why Node.js `version` (`process.versions.node`, e.g. `"20.20.2"`) cannot run lambdagent, as one
 * line; `undefined` when it can.
 *
 * @since 0.2.0
 * @category guards
 * @example
 * ```ts
 * import { NodeVersion } from "lambdagent"
 * NodeVersion.unsupportedNodeReason("24.1.0") // undefined
 * ```
 */
export const unsupportedNodeReason = (version: string): string | undefined => {
  const [major = 0, minor = 0] = version.split(".").map(Number)
  if (major > minimumMajor || (major === minimumMajor && minor >= minimumMinor)) return undefined
  return (
    `lambdagent needs Node.js ${minimumNodeVersion} or newer, and this is Node.js ${version}: ` +
    "older versions read JSON integers above 2^53 inexactly, cannot require() ES modules, and have no node:sqlite without a flag"
  )
}

/**
 * On an unsupported Node.js, say why on stderr (one line) and exit with code 1.
 *
 * @since 0.2.0
 * @category guards
 * @example
 * ```ts
 * import { NodeVersion } from "lambdagent"
 * NodeVersion.exitOnUnsupportedNode()
 * ```
 */
export const exitOnUnsupportedNode = (): void => {
  const version = globalThis.process?.versions?.node
  const reason = version === undefined ? undefined : unsupportedNodeReason(version)
  if (reason === undefined) return
  process.stderr.write(`${reason}\n`)
  process.exit(1)
}
