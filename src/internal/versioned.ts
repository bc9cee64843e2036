/**
 * Reading a versioned JSON document (a checkpoint, a checkpoint delta, a recording): its format
 * name, then its version, then its fields against its schema, each failure a short reason and a
 * one-line message.
 */
import * as Schema from "effect/Schema"

/** What a versioned document is: its format name and version, its schema, and what to call it. */
export interface Versioned<S extends Schema.Top> {
  readonly format: string
  readonly version: number
  readonly schema: S
  /** What it is, for messages: `checkpoint`, `recording`. */
  readonly noun: string
  /** What it is not, when `format` is not its format: `a lambdagent checkpoint`. */
  readonly kind: string
}

const describeVersion = (v: unknown) => (typeof v === "number" || typeof v === "string" ? `format version ${v}` : "no format version")

/** `json` decoded as the document `what` describes, or `fail` called with the reason and message. */
export const decodeVersioned = <S extends Schema.Top>(
  json: unknown,
  what: Versioned<S>,
  fail: (reason: "format" | "version", message: string) => never
): S["Type"] => {
  if (typeof json !== "object" || json === null || (json as { format?: unknown }).format !== what.format) return fail("format", `not ${what.kind}`)
  const v = (json as { version?: unknown }).version
  if (v !== what.version) return fail("version", `a ${what.noun} of ${describeVersion(v)}; this lambdagent reads format version ${what.version}`)
  const decoded = Schema.decodeUnknownExit(what.schema as unknown as Schema.Codec<S["Type"]>)(json)
  if (decoded._tag === "Failure") return fail("format", `a malformed ${what.noun} (its fields are not the ${what.noun} format's)`)
  return decoded.value
}
