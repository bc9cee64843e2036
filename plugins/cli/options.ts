/**
 * Parsers of option values, for commander's `.option(flags, description, parser)`: each returns
 * the value or throws a usage error (exit code 2) that names the option, what it accepts and what
 * it got. The same parsers read the environment variables that stand for options.
 */
import { CliError, ExitCode } from "./io.ts"

/** A usage error: a bad option, value or argument, reported with exit code 2. */
export const usageError = (message: string): CliError => new CliError(message, ExitCode.usage, "UsageError")

/** `a`, `a or b`, `a, b or c`. */
const alternatives = (values: ReadonlyArray<string>): string =>
  values.length <= 1 ? values.join("") : `${values.slice(0, -1).join(", ")} or ${values[values.length - 1]}`

const refuse = (flag: string, expected: string, text: string): CliError => usageError(`${flag} expects ${expected}, got ${JSON.stringify(text)}`)

/** One of a fixed set of words (`--format text|json`). */
export const oneOf =
  <const T extends string>(flag: string, allowed: ReadonlyArray<T>) =>
  (text: string): T => {
    if ((allowed as ReadonlyArray<string>).includes(text)) return text as T
    throw refuse(flag, alternatives(allowed), text)
  }

/** The `--format` option of a command that prints text or JSON. */
export const textOrJson = oneOf("--format", ["text", "json"])

const numeric = (text: string): number => (text.trim() === "" ? Number.NaN : Number(text))

/** An integer from `min` (and up to `max`, when given). */
export const integer = (flag: string, min: number, max?: number) => {
  const expected =
    max !== undefined
      ? `an integer from ${min} to ${max}`
      : min === 1
        ? "a positive integer"
        : min === 0
          ? "a non-negative integer"
          : `an integer of at least ${min}`
  return (text: string): number => {
    const n = numeric(text)
    if (!Number.isSafeInteger(n) || n < min || (max !== undefined && n > max)) throw refuse(flag, expected, text)
    return n
  }
}

/** A TCP port; 0 asks the system for a free one. */
export const port = (flag: string) => {
  const check = integer(flag, 0, 65535)
  return (text: string): number => {
    try {
      return check(text)
    } catch {
      throw refuse(flag, "a port number from 0 to 65535", text)
    }
  }
}

/** A number from `min` to `max` (inclusive). */
export const numberFrom =
  (flag: string, min: number, max: number) =>
  (text: string): number => {
    const n = numeric(text)
    if (!Number.isFinite(n) || n < min || n > max) throw refuse(flag, `a number from ${min} to ${max}`, text)
    return n
  }

/** A number greater than 0, of `unit` (`seconds`). */
export const positive =
  (flag: string, unit?: string) =>
  (text: string): number => {
    const n = numeric(text)
    if (!Number.isFinite(n) || n <= 0) throw refuse(flag, `a positive number${unit === undefined ? "" : ` of ${unit}`}`, text)
    return n
  }

/** Any finite number. */
export const finite =
  (flag: string) =>
  (text: string): number => {
    const n = numeric(text)
    if (!Number.isFinite(n)) throw refuse(flag, "a number", text)
    return n
  }

/** The temperature of LLM calls (`--temperature`, `LAMBDAGENT_TEMPERATURE`, the REPL's `:temp`). */
export const temperature = (flag: string) => numberFrom(flag, 0, 2)

/** `--otel URL` (see `otel.ts`, which reads it; kept here so that declaring the option loads no telemetry). */
export const OTEL_FLAGS = "--otel <url>"
export const OTEL_HELP = "export the run's spans over OTLP/HTTP to an OpenTelemetry collector (http://host:4318, or a full /v1/traces URL)"
