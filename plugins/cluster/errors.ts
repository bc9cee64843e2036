import * as Schema from "effect/Schema"
import { Errors } from "lambdagent"

/**
 * A cluster operation that failed: PostgreSQL unreachable (`Unavailable`, naming the URL with its
 * password hidden), a runner that cannot listen on its address (`Listen`), a table written by another schema version (`SchemaVersion`), an unknown run
 * (`NotFound`), a submission refused before it was stored (`Invalid`), a wait that ran out
 * (`Timeout`), a run that has no question to answer (`NotWaiting`).
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { ClusterError } from "lambdagent/cluster"
 * const e = new ClusterError({ reason: "NotFound", message: "no run with id r1" })
 * console.log(e.reason) // "NotFound"
 * ```
 */
export class ClusterError extends Errors.TaggedError<ClusterError>()("ClusterError", {
  reason: Schema.Literals(["Unavailable", "Listen", "SchemaVersion", "NotFound", "Invalid", "Timeout", "NotWaiting"]),
  message: Schema.String
}) {}

/**
 * A PostgreSQL URL fit for messages and logs: its password, if any, shown as `***`.
 *
 * @since 0.2.0
 * @category utils
 * @example
 * ```ts
 * import { redactPgUrl } from "lambdagent/cluster"
 * console.log(redactPgUrl("postgres://app:s3cret@db:5432/runs")) // "postgres://app:***@db:5432/runs"
 * ```
 */
export const redactPgUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password === "") return url
    parsed.password = "***"
    return parsed.toString()
  } catch {
    // not a URL: nothing in it can be told from a password, so none of it is shown
    return "<unparsable PostgreSQL URL>"
  }
}
