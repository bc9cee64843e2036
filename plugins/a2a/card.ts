/**
 * The agent card a lambdagent A2A server publishes at `/.well-known/agent-card.json`: who the agent
 * is, what it can do (its skills), what it reads and writes, where its JSON-RPC endpoint is and
 * how to authenticate.
 *
 * The card is served in two shapes of the same content: A2A 1.0 (the protocol version of the SDK,
 * `supportedInterfaces` with one JSON-RPC entry per protocol version) to clients that announce
 * `A2A-Version: 1.0`, and A2A 0.3 (`url`, `preferredTransport`) to clients that announce 0.3 or
 * nothing, as the specification says an absent version means 0.3.
 *
 * @since 0.2.0
 * @module
 */
import { AgentCard as AgentCardCodec } from "@a2a-js/sdk"
import type { AgentCard, AgentSkill } from "@a2a-js/sdk"
import { duplicateInterfacesForLegacy } from "@a2a-js/sdk/compat/v0_3"
import { mediaTypes } from "./parts.ts"

/**
 * One skill the card lists: a focused thing the agent does well.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { SkillSpec } from "lambdagent/a2a"
 * const s: SkillSpec = { name: "Plan a trip", description: "Day-by-day plans", tags: ["travel"], examples: ["3 days in Rome"] }
 * ```
 */
export interface SkillSpec {
  /** Stable identifier; default the name in lower case, non-alphanumerics as `-`. */
  readonly id?: string | undefined
  readonly name: string
  readonly description?: string | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  /** Example requests. */
  readonly examples?: ReadonlyArray<string> | undefined
}

/**
 * What a card says, before it is put in either protocol version's shape.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CardSpec } from "lambdagent/a2a"
 * const c: CardSpec = { name: "planner", description: "Plans trips.", url: "http://127.0.0.1:8000/", bearer: true }
 * ```
 */
export interface CardSpec {
  readonly name: string
  readonly description?: string
  /** The agent's version; default `1.0.0`. */
  readonly version?: string
  /** The JSON-RPC endpoint. */
  readonly url: string
  /** Default one skill: the agent itself. */
  readonly skills?: ReadonlyArray<SkillSpec>
  /** Whether requests need `Authorization: Bearer <token>`. */
  readonly bearer?: boolean
}

/** The card key of the bearer security scheme. */
const BEARER = "bearer"

const skillId = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "") || "agent"

const descriptionOf = (spec: CardSpec): string => spec.description ?? `The lambdagent agent ${spec.name}.`

/** The skills with their defaults: the spec's, or one skill that is the agent itself. */
const skillsOf = (spec: CardSpec): Array<{ id: string; name: string; description: string; tags: Array<string>; examples: Array<string> }> =>
  (spec.skills !== undefined && spec.skills.length > 0 ? spec.skills : [{ name: spec.name, description: descriptionOf(spec) }]).map((s) => ({
    id: s.id ?? skillId(s.name),
    name: s.name,
    description: s.description ?? s.name,
    tags: [...(s.tags ?? [])],
    examples: [...(s.examples ?? [])]
  }))

const bearerDescription = "Authorization: Bearer <token>"

/**
 * The card in A2A 1.0 form, as the SDK's request handler takes it. Its JSON-RPC endpoint is listed
 * for protocol versions 1.0 and 0.3.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { agentCard } from "lambdagent/a2a"
 * const card = agentCard({ name: "planner", url: "http://127.0.0.1:8000/" })
 * card.supportedInterfaces.map((i) => i.protocolVersion) // ["1.0", "0.3"]
 * ```
 */
export const agentCard = (spec: CardSpec): AgentCard => ({
  name: spec.name,
  description: descriptionOf(spec),
  version: spec.version ?? "1.0.0",
  supportedInterfaces: duplicateInterfacesForLegacy([{ url: spec.url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }], ["JSONRPC"]),
  provider: undefined,
  capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes:
    spec.bearer === true
      ? { [BEARER]: { scheme: { $case: "httpAuthSecurityScheme", value: { description: bearerDescription, scheme: "Bearer", bearerFormat: "" } } } }
      : {},
  securityRequirements: spec.bearer === true ? [{ schemes: { [BEARER]: { list: [] } } }] : [],
  defaultInputModes: [...mediaTypes],
  defaultOutputModes: [...mediaTypes],
  skills: skillsOf(spec).map((s): AgentSkill => ({ ...s, inputModes: [], outputModes: [], securityRequirements: [] })),
  signatures: []
})

/**
 * The card as A2A 1.0 JSON (what `GET /.well-known/agent-card.json` answers with `A2A-Version: 1.0`).
 *
 * @since 0.2.0
 * @category encoding
 * @example
 * ```ts
 * import { agentCardJson } from "lambdagent/a2a"
 * const json = agentCardJson({ name: "planner", url: "http://127.0.0.1:8000/" }) as { name: string }
 * console.log(json.name) // "planner"
 * ```
 */
export const agentCardJson = (spec: CardSpec): unknown => AgentCardCodec.toJSON(agentCard(spec))

/**
 * The card as A2A 0.3 JSON, for clients of that version: the endpoint as `url` with
 * `preferredTransport: "JSONRPC"`, and the 1.0 `supportedInterfaces` beside it for clients that
 * read both.
 *
 * @since 0.2.0
 * @category encoding
 * @example
 * ```ts
 * import { legacyAgentCardJson } from "lambdagent/a2a"
 * const json = legacyAgentCardJson({ name: "planner", url: "http://127.0.0.1:8000/" })
 * console.log(json.url, json.protocolVersion) // "http://127.0.0.1:8000/" "0.3"
 * ```
 */
export const legacyAgentCardJson = (spec: CardSpec): Record<string, unknown> => ({
  name: spec.name,
  description: descriptionOf(spec),
  version: spec.version ?? "1.0.0",
  url: spec.url,
  preferredTransport: "JSONRPC",
  protocolVersion: "0.3",
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: [...mediaTypes],
  defaultOutputModes: [...mediaTypes],
  skills: skillsOf(spec).map(({ examples, ...s }) => ({ ...s, ...(examples.length > 0 ? { examples } : {}) })),
  supportsAuthenticatedExtendedCard: false,
  ...(spec.bearer === true
    ? {
        securitySchemes: { [BEARER]: { type: "http", scheme: "Bearer", description: bearerDescription } },
        security: [{ [BEARER]: [] }]
      }
    : {}),
  supportedInterfaces: agentCard(spec).supportedInterfaces.map((i) => ({ ...i }))
})
