/**
 * A Redis URL fit for messages and logs: its password, if any, shown as `***`.
 *
 * @since 0.1.0
 * @category utils
 * @example
 * ```ts
 * import { redactUrl } from "lambdagent/redis"
 * console.log(redactUrl("redis://app:s3cret@cache:6379")) // "redis://app:***@cache:6379"
 * ```
 */
export const redactUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    return u.toString().replace(/\/$/, "")
  } catch {
    return url
  }
}
