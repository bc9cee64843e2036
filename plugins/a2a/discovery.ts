/**
 * Finding a remote A2A agent: fetch its card, check that it is one, and read what it offers.
 *
 * A client's `url` is the agent's base URL (its card is at `<url>/.well-known/agent-card.json`) or
 * the card's own URL (ending in `.json`). The card must be JSON with a `name` and at least one
 * endpoint: `supportedInterfaces` (A2A 1.0) or `url` (A2A 0.3), with an `http(s)` URL and a
 * binding this client speaks (JSON-RPC or HTTP+JSON). A card that fails is a `MalformedCard`
 * error; a card whose endpoint does not answer as A2A is found out at the first call.
 *
 * @since 0.2.0
 * @module
 */
import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER, AGENT_CARD_PATH, type AgentCard } from "@a2a-js/sdk"
import { DefaultAgentCardResolver } from "@a2a-js/sdk/client"
import * as z from "zod"
import { A2AClientError } from "./errors.ts"

/**
 * What a remote agent's card says, in short.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { RemoteCard } from "lambdagent/a2a"
 * const line = (c: RemoteCard) => `${c.name}: ${c.skills.map((s) => s.name).join(", ")}`
 * ```
 */
export interface RemoteCard {
  /** Where the card was fetched. */
  readonly cardUrl: string
  readonly name: string
  readonly description: string
  readonly skills: ReadonlyArray<{ readonly id: string; readonly name: string; readonly description: string; readonly tags: ReadonlyArray<string> }>
  readonly streaming: boolean
  /** The endpoint a client will call (the first interface it speaks). */
  readonly endpoint: string
  /** The card, as the SDK's client takes it. */
  readonly card: AgentCard
}

/** Largest card read, in bytes. */
const maxCardBytes = 1024 * 1024

/** The transports a client built by this plugin speaks. */
const spokenBindings: ReadonlySet<string> = new Set(["JSONRPC", "HTTP+JSON"])

const httpUrl = z.string().refine((u) => {
  try {
    const { protocol } = new URL(u)
    return protocol === "http:" || protocol === "https:"
  } catch {
    return false
  }
}, "an http:// or https:// URL")

const skill = z.looseObject({
  id: z.string().optional(),
  name: z.string().optional(),
  description: z.string().optional(),
  tags: z.array(z.string()).optional()
})

const CardShape = z.looseObject({
  name: z.string().min(1, "a name"),
  description: z.string().optional(),
  supportedInterfaces: z.array(z.looseObject({ url: httpUrl, protocolBinding: z.string(), protocolVersion: z.string().optional() })).optional(),
  url: httpUrl.optional(),
  preferredTransport: z.string().optional(),
  capabilities: z.looseObject({ streaming: z.boolean().optional() }).optional(),
  skills: z.array(skill).optional()
})

/**
 * The URL of an agent's card: the `url` itself when it ends in `.json`, else
 * `<url>/.well-known/agent-card.json`.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { cardUrlOf } from "lambdagent/a2a"
 * cardUrlOf("http://127.0.0.1:8000") // "http://127.0.0.1:8000/.well-known/agent-card.json"
 * cardUrlOf("https://agents.example.com/planner/card.json") // unchanged
 * ```
 */
export const cardUrlOf = (url: string): string => (/\.json$/i.test(new URL(url).pathname) ? url : `${url.replace(/\/+$/, "")}/${AGENT_CARD_PATH}`)

/**
 * What a failed `fetch` says: `ECONNREFUSED`, `ENOTFOUND`, … or its message.
 *
 * @since 0.2.0
 * @category errors
 * @example
 * ```ts
 * import { networkDetail } from "lambdagent/a2a"
 * await fetch("http://127.0.0.1:9/").catch((e) => networkDetail(e)) // "ECONNREFUSED"
 * ```
 */
export const networkDetail = (error: unknown): string => {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause
  if (typeof cause?.code === "string") return cause.code
  if (typeof cause?.message === "string") return cause.message
  return error instanceof Error ? error.message : String(error)
}

/**
 * Read a card (any JSON value) as the card of `cardUrl`: check it (see the module documentation)
 * and normalise it with the SDK's resolver (A2A 0.3 cards become 1.0 cards).
 *
 * @since 0.2.0
 * @category parsing
 * @example
 * ```ts
 * import { readCard } from "lambdagent/a2a"
 * const card = readCard("planner", "http://127.0.0.1:8000/.well-known/agent-card.json", {
 *   name: "planner", url: "http://127.0.0.1:8000/", preferredTransport: "JSONRPC", protocolVersion: "0.3", skills: []
 * })
 * console.log(card.endpoint) // "http://127.0.0.1:8000/"
 * ```
 */
export const readCard = (agent: string, cardUrl: string, json: unknown): RemoteCard => {
  const malformed = (why: string) => new A2AClientError({ agent, reason: "MalformedCard", message: `the agent card at ${cardUrl} ${why}` })
  const parsed = CardShape.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw malformed(`is not an agent card: ${issue.path.length > 0 ? `${issue.path.join(".")}: ` : ""}${issue.message}`)
  }
  const raw = parsed.data
  const interfaces = raw.supportedInterfaces ?? (raw.url !== undefined ? [{ url: raw.url, protocolBinding: raw.preferredTransport ?? "JSONRPC" }] : [])
  if (interfaces.length === 0) throw malformed("names no endpoint (neither supportedInterfaces nor url)")
  const spoken = interfaces.find((i) => spokenBindings.has(i.protocolBinding))
  if (spoken === undefined) {
    throw malformed(`offers only ${[...new Set(interfaces.map((i) => i.protocolBinding))].join(", ")}; this client speaks JSONRPC and HTTP+JSON`)
  }
  let card: AgentCard
  try {
    card = new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }).normalizeAgentCard(json)
  } catch (error) {
    throw malformed(`cannot be read: ${error instanceof Error ? error.message : String(error)}`)
  }
  return {
    cardUrl,
    name: raw.name,
    description: raw.description ?? "",
    skills: (raw.skills ?? []).map((s, i) => ({
      id: s.id ?? `skill-${i + 1}`,
      name: s.name ?? s.id ?? `skill ${i + 1}`,
      description: s.description ?? "",
      tags: s.tags ?? []
    })),
    streaming: raw.capabilities?.streaming === true,
    endpoint: spoken.url,
    card
  }
}

/**
 * Options of {@link fetchCard}.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { FetchCardOptions } from "lambdagent/a2a"
 * const o: FetchCardOptions = { headers: { Authorization: "Bearer s3cret" }, timeoutMs: 2000 }
 * ```
 */
export interface FetchCardOptions {
  readonly headers?: Readonly<Record<string, string>>
  /** Milliseconds to wait for the card; default 10 000. */
  readonly timeoutMs?: number
  readonly signal?: AbortSignal
  /** The name to report errors under; default the URL. */
  readonly agent?: string
  /** The `fetch` to send requests with; default the global one. */
  readonly fetch?: typeof fetch
}

/**
 * Fetch and read the card of the agent at `url` (announcing A2A 1.0). Throws an
 * `A2AClientError`: `Timeout`, `Unreachable`, `HttpStatus` or `MalformedCard`.
 *
 * @since 0.2.0
 * @category client
 * @example
 * ```ts
 * import { fetchCard } from "lambdagent/a2a"
 * const card = await fetchCard("http://127.0.0.1:8000", { timeoutMs: 2000 })
 * console.log(card.name, card.skills.length)
 * ```
 */
export const fetchCard = async (url: string, options: FetchCardOptions = {}): Promise<RemoteCard> => {
  const agent = options.agent ?? url
  const cardUrl = cardUrlOf(url)
  const timeoutMs = options.timeoutMs ?? 10_000
  const timeout = AbortSignal.timeout(timeoutMs)
  const signal = options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout])
  let response: Response
  try {
    response = await (options.fetch ?? fetch)(cardUrl, {
      headers: { Accept: "application/json", ...options.headers, [A2A_VERSION_HEADER]: A2A_PROTOCOL_VERSION },
      signal,
      redirect: "follow"
    })
  } catch (error) {
    if (options.signal?.aborted === true) throw options.signal.reason
    if (timeout.aborted) throw new A2AClientError({ agent, reason: "Timeout", message: `no agent card from ${cardUrl} in ${timeoutMs / 1000}s` })
    throw new A2AClientError({ agent, reason: "Unreachable", message: `cannot fetch the agent card ${cardUrl}: ${networkDetail(error)}`, cause: error })
  }
  if (Number(response.headers.get("content-length")) > maxCardBytes) {
    await response.body?.cancel().catch(() => undefined)
    throw new A2AClientError({ agent, reason: "MalformedCard", message: `the agent card at ${cardUrl} is larger than ${maxCardBytes} bytes` })
  }
  let text: string
  try {
    text = await response.text()
  } catch (error) {
    if (timeout.aborted) throw new A2AClientError({ agent, reason: "Timeout", message: `no agent card from ${cardUrl} in ${timeoutMs / 1000}s` })
    throw new A2AClientError({ agent, reason: "Unreachable", message: `the agent card ${cardUrl} was cut off: ${networkDetail(error)}`, cause: error })
  }
  if (!response.ok) {
    throw new A2AClientError({ agent, reason: "HttpStatus", status: response.status, message: `the agent card ${cardUrl} answered HTTP ${response.status}` })
  }
  if (Buffer.byteLength(text) > maxCardBytes) {
    throw new A2AClientError({ agent, reason: "MalformedCard", message: `the agent card at ${cardUrl} is larger than ${maxCardBytes} bytes` })
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new A2AClientError({ agent, reason: "MalformedCard", message: `the agent card at ${cardUrl} is not JSON (${JSON.stringify(text.slice(0, 60))})` })
  }
  return readCard(agent, cardUrl, json)
}
