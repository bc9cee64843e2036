/**
 * Reading requests: the bearer token (compared in constant time), the body (with a size limit and
 * UTF-8 check) and the client's wish for an event stream.
 *
 * @since 0.1.0
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto"
import type { IncomingMessage } from "node:http"
import { HttpFailure, RunAborted } from "../protocol.ts"

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

const challenge = (error?: string) => ({
  "WWW-Authenticate": `Bearer realm="lambdagent"${error === undefined ? "" : `, error="${error}"`}`
})

/**
 * A check of `Authorization: Bearer <token>` headers against one token. Both sides are hashed
 * first, so the comparison takes the same time whatever the length or content of the guess.
 * The check fails with a 401 `Unauthorized` {@link HttpFailure} carrying a `WWW-Authenticate`
 * challenge. `serve`'s `token` option uses it; `lambdagent mcp --token` gives it to the MCP HTTP
 * transport as its `authorize` option. A token that is not a non-empty string (say, an environment
 * variable that is not set) throws a `TypeError` at once, rather than a server that no token opens.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { bearerCheck } from "lambdagent/http"
 * const check = bearerCheck("s3cret")
 * check("Bearer s3cret") // passes
 * // check("Bearer guess") throws HttpFailure(401, "Unauthorized", …)
 * ```
 */
export const bearerCheck = (token: string): ((header: string | undefined) => void) => {
  if (typeof token !== "string" || token === "") {
    throw new TypeError(
      `bearerCheck needs a non-empty token, got ${token === "" ? "an empty string" : String(token)}: is the variable that should hold it set?`
    )
  }
  const expected = digest(token)
  return (header) => {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "")
    if (match === null) {
      throw new HttpFailure({
        status: 401,
        kind: "Unauthorized",
        message: 'this server requires an "Authorization: Bearer <token>" header',
        headers: challenge()
      })
    }
    if (!timingSafeEqual(digest(match[1]!), expected)) {
      throw new HttpFailure({ status: 401, kind: "Unauthorized", message: "the bearer token is not valid", headers: challenge("invalid_token") })
    }
  }
}

const tooLarge = (limit: number) =>
  new HttpFailure({ status: 413, kind: "PayloadTooLarge", message: `the body is larger than ${limit} bytes`, details: { limit } })

const decoder = new TextDecoder("utf-8", { fatal: true })

/**
 * Read a request body as UTF-8 text of at most `limit` bytes. A declared `Content-Length` above
 * the limit fails before anything is read; a body that grows past it fails as soon as it does
 * (413 `PayloadTooLarge`). Invalid UTF-8 fails with 400 `InvalidJson`; a client that goes away
 * mid-body rejects with {@link RunAborted} `ClientClosed`. Exported for the other HTTP servers
 * (the A2A plugin reads its JSON-RPC requests with it).
 *
 * @since 0.2.0
 * @category parsing
 * @example
 * ```ts
 * import { createServer } from "node:http"
 * import { readBody } from "lambdagent/http"
 * createServer(async (req, res) => res.end(await readBody(req, 1024)))
 * ```
 */
export const readBody = (req: IncomingMessage, limit: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"])
    if (Number.isFinite(declared) && declared > limit) {
      reject(tooLarge(limit))
      return
    }
    const chunks: Array<Buffer> = []
    let size = 0
    let settled = false
    const settle = (f: () => void) => {
      if (settled) return
      settled = true
      f()
    }
    req.on("data", (chunk: Buffer) => {
      if (settled) return
      size += chunk.length
      if (size > limit) {
        chunks.length = 0
        settle(() => reject(tooLarge(limit)))
      } else chunks.push(chunk)
    })
    req.on("end", () =>
      settle(() => {
        try {
          resolve(decoder.decode(Buffer.concat(chunks, size)))
        } catch {
          reject(new HttpFailure({ status: 400, kind: "InvalidJson", message: "the body is not valid UTF-8" }))
        }
      })
    )
    req.on("error", () => settle(() => reject(new RunAborted({ reason: "ClientClosed", message: "the client went away while sending the body" }))))
    req.on("close", () => {
      if (!req.complete) settle(() => reject(new RunAborted({ reason: "ClientClosed", message: "the client went away while sending the body" })))
    })
  })

/**
 * Whether the client asked for an event stream (`Accept: text/event-stream`).
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import type { IncomingMessage } from "node:http"
 * import { wantsEventStream } from "./request.ts"
 * wantsEventStream({ headers: { accept: "text/event-stream" } } as IncomingMessage) // true
 * ```
 */
export const wantsEventStream = (req: IncomingMessage): boolean =>
  (req.headers.accept ?? "").split(",").some((part) => part.split(";")[0]!.trim().toLowerCase() === "text/event-stream")
