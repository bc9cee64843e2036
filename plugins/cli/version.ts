/**
 * The version the CLI reports, from package.json at build time: by the `version` command and
 * `-v`/`--version` of every program, and by the launcher, which answers the plain forms itself.
 */
import manifest from "../../package.json" with { type: "json" }

/** The package's version. */
export const VERSION: string = manifest.version

/** What `lambdagent version` prints: lambdagent's and Node.js's versions, as text lines or one JSON object. */
export const versionReport = (format: "text" | "json"): string =>
  format === "json" ? `${JSON.stringify({ lambdagent: VERSION, node: process.version })}\n` : `lambdagent ${VERSION}\nnode ${process.version}\n`

/**
 * The launcher's answer to `argv` (`node`, the script, then the arguments) when it asks for the
 * version and nothing else (`version`, `-v`, `--version`); `undefined` for any other command line,
 * which a program then parses.
 */
export const plainVersionAnswer = (argv: ReadonlyArray<string>): string | undefined => {
  if (argv.length !== 3) return undefined
  if (argv[2] === "version") return versionReport("text")
  if (argv[2] === "-v" || argv[2] === "--version") return `${VERSION}\n`
  return undefined
}
