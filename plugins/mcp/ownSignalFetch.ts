/**
 * A `fetch` for the MCP SDK's Streamable HTTP client transport that gives every request an
 * AbortSignal of its own.
 *
 * The transport sends each request with its one long-lived AbortSignal, and `fetch` adds an abort
 * listener to that signal per request which only garbage collection removes: a long-running client
 * passes Node's limit of listeners and prints MaxListenersExceededWarning. Here a request's own
 * signal follows the transport's until its response body has been read, and then lets go of it.
 *
 * @since 0.2.0
 */

// responses that may not carry a body: they cannot be rebuilt with one
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304])

/**
 * `fetch` with a per-request AbortSignal tied to the caller's until the response has been read.
 *
 * @since 0.2.0
 * @example
 * import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
 * import { fetchWithOwnSignal } from "./ownSignalFetch.ts"
 *
 * const transport = new StreamableHTTPClientTransport(new URL("http://127.0.0.1:3000/mcp"), { fetch: fetchWithOwnSignal })
 */
export const fetchWithOwnSignal = async (url: string | URL, init?: RequestInit): Promise<Response> => {
  const outer = init?.signal
  if (outer === undefined || outer === null) return fetch(url, init)
  const own = new AbortController()
  const abort = () => own.abort(outer.reason)
  if (outer.aborted) abort()
  else outer.addEventListener("abort", abort, { once: true })
  const release = () => outer.removeEventListener("abort", abort)
  try {
    const response = await fetch(url, { ...init, signal: own.signal })
    if (response.body === null || NULL_BODY_STATUSES.has(response.status)) {
      release()
      return response
    }
    const body = response.body.pipeThrough(new TransformStream({ flush: release, cancel: release }))
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
  } catch (error) {
    release()
    throw error
  }
}
