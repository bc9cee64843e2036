/**
 * Which `Host` and `Origin` headers a local HTTP server answers: the protection against DNS
 * rebinding, where a web page the user visits resolves its own name to 127.0.0.1 and talks to a
 * server on this machine (with the user's API keys) as if it were the page's origin. Every server
 * of lambdagent's (HTTP, MCP over HTTP, A2A) checks requests with {@link hostGuard}.
 *
 * @since 0.2.0
 * @module
 */

/**
 * The `Host` names and `Origin`s a server accepts beyond its own loopback names.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { HostGuard } from "lambdagent"
 * const policy: HostGuard.HostPolicy = { allowedHosts: ["agents.internal"], allowedOrigins: ["http://localhost:5173"] }
 * ```
 */
export interface HostPolicy {
  /**
   * More accepted `Host` values: `name` (any port), `name:port` (that port only), IPv6 addresses
   * in brackets (`[fd00::1]`). `"*"` accepts any host: only for servers behind a proxy that checks it.
   */
  readonly allowedHosts?: ReadonlyArray<string>
  /** More accepted `Origin` values (`http://localhost:6274`); `"*"` accepts any origin. */
  readonly allowedOrigins?: ReadonlyArray<string>
}

/**
 * Says why a request with these `Host` and `Origin` headers is refused, or `undefined` to let it in.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { HostGuard } from "lambdagent"
 * const openDoor: HostGuard.HostCheck = () => undefined
 * ```
 */
export type HostCheck = (host: string | undefined, origin: string | undefined) => string | undefined

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"])
const WILDCARD = new Set(["0.0.0.0", "::", "[::]"])

/**
 * Whether an address to listen on accepts connections from this machine only.
 *
 * @since 0.1.0
 * @category security
 * @example
 * ```ts
 * import { HostGuard } from "lambdagent"
 * HostGuard.isLoopbackAddress("127.0.0.1") // true
 * HostGuard.isLoopbackAddress("0.0.0.0") // false
 * ```
 */
export const isLoopbackAddress = (host: string): boolean => LOOPBACK.has(host) || host.startsWith("127.")

/**
 * Whether an address to listen on means every interface (`0.0.0.0`, `::`).
 *
 * @since 0.1.0
 * @category security
 * @example
 * ```ts
 * import { HostGuard } from "lambdagent"
 * HostGuard.isWildcardAddress("0.0.0.0") // true
 * ```
 */
export const isWildcardAddress = (host: string): boolean => WILDCARD.has(host)

/** An address as it appears in a `Host` header or URL: IPv6 in brackets. */
const bracketedHost = (host: string): string => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host)

/**
 * The host to put in a URL for clients on this machine: a wildcard address (`0.0.0.0`, `::`) is
 * no `Host` a guarded server accepts, so its loopback stands in.
 *
 * @since 0.1.0
 * @category security
 * @example
 * ```ts
 * import { HostGuard } from "lambdagent"
 * HostGuard.localUrlHost("0.0.0.0") // "127.0.0.1"
 * HostGuard.localUrlHost("::") // "[::1]"
 * ```
 */
export const localUrlHost = (host: string): string => (host === "0.0.0.0" ? "127.0.0.1" : isWildcardAddress(host) ? "[::1]" : bracketedHost(host))

/**
 * The `Host`/`Origin` check of a server listening on `bound`. Accepted hosts: `127.0.0.1:PORT`,
 * `localhost:PORT`, `[::1]:PORT` (PORT the bound port), the bound address itself when it is a
 * specific one, and `policy.allowedHosts`. A request with an `Origin` must come from one of those
 * hosts (any scheme) or from `policy.allowedOrigins`; requests without one (not from a browser)
 * are judged by `Host` alone. Checks the policy at once (a `RangeError` for an entry that is no
 * host or origin) and returns the check for the port the server got.
 *
 * @since 0.1.0
 * @category security
 * @example
 * ```ts
 * import { HostGuard } from "lambdagent"
 * const check = HostGuard.hostGuard("127.0.0.1", {})(8080)
 * check("localhost:8080", undefined) // undefined: allowed
 * check("evil.example:8080", "http://evil.example:8080") // "Forbidden: Host …"
 * ```
 */
export const hostGuard = (bound: string, policy: HostPolicy): ((port: number) => HostCheck) => {
  const anyHost = policy.allowedHosts?.includes("*") === true
  const anyOrigin = policy.allowedOrigins?.includes("*") === true
  const withPort: Array<string> = []
  const anyPort = new Set<string>()
  for (const entry of policy.allowedHosts ?? []) {
    if (entry === "*") continue
    const value = entry.trim().toLowerCase()
    if (value === "" || /[\s/@]/.test(value)) throw new RangeError(`allowed host ${JSON.stringify(entry)} is not a host name or address`)
    if (/^(\[[^\]]*\]|[^:]+):\d+$/.test(value)) withPort.push(value)
    else anyPort.add(bracketedHost(value))
  }
  const origins = new Set<string>()
  for (const entry of policy.allowedOrigins ?? []) {
    if (entry === "*") continue
    try {
      origins.add(new URL(entry).origin)
    } catch {
      throw new RangeError(`allowed origin ${JSON.stringify(entry)} is not an origin such as http://localhost:6274`)
    }
  }
  return (port) => {
    const exact = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, ...withPort])
    if (!LOOPBACK.has(bound) && !WILDCARD.has(bound)) exact.add(`${bracketedHost(bound).toLowerCase()}:${port}`)
    const hostAllowed = (value: string) => {
      const host = value.toLowerCase()
      return anyHost || exact.has(host) || anyPort.has(host.replace(/:\d+$/, ""))
    }
    const shown = [...exact, ...anyPort].join(", ")
    return (host, origin) => {
      if (!hostAllowed(host ?? "")) {
        return (
          `Forbidden: Host ${JSON.stringify(host ?? "")} is not allowed; this server answers to ${shown} ` +
          "(protection against DNS rebinding; allow more with --allow-host or allowedHosts)"
        )
      }
      if (origin === undefined || anyOrigin) return undefined
      let url: URL | undefined
      try {
        url = new URL(origin)
      } catch {
        url = undefined
      }
      const web = url !== undefined && (url.protocol === "http:" || url.protocol === "https:")
      if (web && (origins.has(url!.origin) || hostAllowed(url!.host))) return undefined
      return `Forbidden: Origin ${JSON.stringify(origin)} is not allowed (protection against DNS rebinding; allow more with --allow-origin or allowedOrigins)`
    }
  }
}
