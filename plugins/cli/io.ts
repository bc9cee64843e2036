/**
 * Command-line plumbing shared by every command: reading arguments that may be literal text, a
 * file or standard input, exit codes, and one-line error reports.
 */
import { readFile } from "node:fs/promises"
import { Errors } from "lambdagent"

/** Exit codes of the `lambdagent` binary. */
export const ExitCode = {
  ok: 0,
  failed: 1,
  compile: 2,
  /** A bad option, option value or argument: the same code as commander's own usage errors. */
  usage: 2,
  lint: 3,
  notFound: 4,
  /** The run paused at an `ask`: its checkpoint waits for `lambdagent resume FILE --answer …`. */
  paused: 5,
  /** A replay whose run asked what its recording does not have (`lambdagent replay`). */
  diverged: 6,
  interrupted: 130
} as const

/** An error the CLI reports as one line and an exit code, never a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly kind = "CliError"
  ) {
    super(message)
  }
}

/** The end of a command that has said all it has to say: only its exit code is left. */
export class Reported extends CliError {
  constructor(exitCode: number) {
    super("", exitCode, "Reported")
  }
}

/**
 * The bearer token an HTTP server requires: `--token`, else `$LAMBDAGENT_TOKEN` (unset or empty:
 * none). The same for `serve`, `serve --mcp --http` and `mcp --http`.
 */
export const bearerToken = (flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  if (flag !== undefined) {
    if (flag === "") throw new CliError('--token expects a non-empty token, got ""', ExitCode.usage, "UsageError")
    return flag
  }
  const fromEnv = env.LAMBDAGENT_TOKEN
  return fromEnv === undefined || fromEnv === "" ? undefined : fromEnv
}

/** The description of every `--token` option. */
export const TOKEN_OPTION_HELP = "require Authorization: Bearer <token> (default $LAMBDAGENT_TOKEN)"

/**
 * Text from bytes that must be UTF-8: a leading byte-order mark is dropped, and invalid bytes are
 * an error naming where they came from and the first bad byte's offset, never decoded lossily.
 */
export const decodeUtf8 = (bytes: Uint8Array, source: string): string => {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    // one byte at a time through a streaming decoder: the byte it fails on
    const decoder = new TextDecoder("utf-8", { fatal: true })
    let offset = 0
    try {
      for (; offset < bytes.length; offset++) decoder.decode(bytes.subarray(offset, offset + 1), { stream: true })
      decoder.decode()
    } catch {
      // offset is where decoding failed
    }
    throw new CliError(`${source} is not valid UTF-8 (invalid byte at offset ${offset}); save it as UTF-8`, ExitCode.failed, "EncodingError")
  }
}

export const readStdin = async (): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return decodeUtf8(Buffer.concat(chunks), "standard input")
}

const looksLikeJson = (text: string) => /^\s*([[{"]|-?\d|true\b|false\b|null\b)/.test(text)

/**
 * An argument that is JSON text, `-` (standard input) or a file path. Literal JSON is recognised by
 * its first character; anything else must be a readable file.
 */
export const readJsonArgument = async (arg: string, what: string): Promise<string> => {
  if (arg === "-") return readStdin()
  if (looksLikeJson(arg)) return arg
  return readTextFile(arg, what)
}

export const readTextFile = async (path: string, what: string): Promise<string> => {
  try {
    return decodeUtf8(await readFile(path), `${what} file ${path}`)
  } catch (cause) {
    if (cause instanceof CliError) throw cause
    const code = (cause as NodeJS.ErrnoException).code
    if (code === "ENOENT") throw new CliError(`${what} file not found: ${path}`, ExitCode.notFound, "FileNotFound")
    if (code === "EISDIR") throw new CliError(`${what} is a directory, not a file: ${path}`, ExitCode.notFound, "FileNotFound")
    throw new CliError(`cannot read ${what} file ${path}: ${(cause as Error).message}`, ExitCode.failed, "FileError")
  }
}

/** The structured form of any error, for `--format json` and one-line messages. */
export const describeError = (error: unknown): { kind: string; message: string; path?: ReadonlyArray<string | number> } => {
  if (Errors.isLambdaError(error)) return Errors.toJson(error)
  if (error instanceof CliError) return { kind: error.kind, message: error.message }
  if (typeof error === "object" && error !== null && "_tag" in error && "message" in error) {
    return { kind: String(error._tag), message: String(error.message) }
  }
  return { kind: "InternalError", message: error instanceof Error ? error.message : String(error) }
}

export const exitCodeOf = (error: unknown): number =>
  error instanceof CliError ? error.exitCode : error instanceof Errors.CheckpointError && error.reason === "missing" ? ExitCode.notFound : ExitCode.failed

/** Report an error on stderr as one line (text) or one JSON object. */
export const reportError = (error: unknown, format: "text" | "json"): void => {
  if (error instanceof Reported) return
  const described = describeError(error)
  if (format === "json") process.stderr.write(JSON.stringify({ error: described }) + "\n")
  else {
    const where = described.path !== undefined && described.path.length > 0 && !described.message.startsWith("$") ? ` (at ${formatPath(described.path)})` : ""
    process.stderr.write(`error: ${described.kind}: ${described.message.replace(/\s*\n\s*/g, " ")}${where}\n`)
  }
}

const formatPath = (path: ReadonlyArray<string | number>) => "$" + path.map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("")

let interruptHandler: (() => void) | undefined

/**
 * What Ctrl+C does while a command runs: by default the process exits with 130; a command that
 * can stop cleanly (cancel a run, close a server) installs its own handler.
 */
export const onInterrupt = (handler: (() => void) | undefined): void => {
  interruptHandler = handler
  // a new handler starts afresh: a second Ctrl+C before the next onInterrupt call exits at once
  interrupted = false
}

let interrupted = false

export const installInterrupt = (): void => {
  process.on("SIGINT", () => {
    if (interruptHandler !== undefined && !interrupted) {
      interrupted = true
      interruptHandler()
      return
    }
    process.stderr.write("\n[interrupted]\n")
    process.exit(ExitCode.interrupted)
  })
}
