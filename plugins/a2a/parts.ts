/**
 * A2A message parts and lambdagent values, both ways: what input a message gives an agent, the
 * parts a result becomes, and the text of the parts, messages and artifacts a remote agent answers
 * with.
 *
 * Text parts are text; a data part is a JSON value; file parts (`raw` bytes or a `url`) have no
 * meaning for an agent that reads text and JSON, so a message carrying one is refused.
 *
 * @since 0.2.0
 * @module
 */
import { randomUUID } from "node:crypto"
import type { Artifact, Message, Part } from "@a2a-js/sdk"
import { Role } from "@a2a-js/sdk"
import { type Term, Value } from "lambdagent"

/**
 * The media types a lambdagent agent reads and writes: text, and JSON data.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { mediaTypes } from "lambdagent/a2a"
 * console.log(mediaTypes.join(", ")) // "text/plain, application/json"
 * ```
 */
export const mediaTypes: ReadonlyArray<string> = ["text/plain", "application/json"]

/**
 * A text part.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { textPart } from "lambdagent/a2a"
 * textPart("hello").content // { $case: "text", value: "hello" }
 * ```
 */
export const textPart = (text: string): Part => ({
  content: { $case: "text", value: text },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain"
})

/**
 * A data part holding a JSON value.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { dataPart } from "lambdagent/a2a"
 * dataPart({ city: "Paris" }).mediaType // "application/json"
 * ```
 */
export const dataPart = (value: unknown): Part => ({
  content: { $case: "data", value },
  metadata: undefined,
  filename: "",
  mediaType: "application/json"
})

/**
 * A message of the given role (the server's messages are `agent`, the client's `user`).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { message, textPart } from "lambdagent/a2a"
 * const m = message("user", [textPart("plan a trip")])
 * ```
 */
export const message = (
  role: "user" | "agent",
  parts: ReadonlyArray<Part>,
  ids: { readonly taskId?: string; readonly contextId?: string; readonly metadata?: Record<string, unknown> } = {}
): Message => ({
  messageId: randomUUID(),
  contextId: ids.contextId ?? "",
  taskId: ids.taskId ?? "",
  role: role === "user" ? Role.ROLE_USER : Role.ROLE_AGENT,
  parts: [...parts],
  metadata: ids.metadata,
  extensions: [],
  referenceTaskIds: []
})

/**
 * What a message gives an agent: `{ input }`, or `{ refused }` saying why it cannot.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { MessageInput } from "lambdagent/a2a"
 * const show = (m: MessageInput) => ("refused" in m ? m.refused : JSON.stringify(m.input))
 * ```
 */
export type MessageInput = { readonly input: unknown } | { readonly refused: string }

/**
 * The input of a message: its text parts joined by newlines; a message of one data part gives that
 * JSON value; data parts beside text are appended to it as JSON. File parts are refused.
 *
 * @since 0.2.0
 * @category parsing
 * @example
 * ```ts
 * import { dataPart, inputOf, message, textPart } from "lambdagent/a2a"
 * inputOf(message("user", [textPart("hello")])) // { input: "hello" }
 * inputOf(message("user", [dataPart({ n: 2 })])) // { input: { n: 2 } }
 * ```
 */
export const inputOf = (m: Message): MessageInput => {
  const parts = m.parts ?? []
  const file = parts.find((p) => p.content?.$case === "raw" || p.content?.$case === "url")
  if (file !== undefined) {
    const what = file.content?.$case === "url" ? `a file part (${file.content.value})` : `a file part${file.filename !== "" ? ` (${file.filename})` : ""}`
    return { refused: `this agent reads text and JSON data parts; the message has ${what}` }
  }
  const content = parts.flatMap((p) => (p.content === undefined ? [] : [p.content]))
  if (content.length === 0) return { refused: "the message has no text or data part" }
  if (content.length === 1 && content[0]!.$case === "data") return { input: content[0]!.value ?? null }
  return { input: content.map((c) => (c.$case === "text" ? c.value : JSON.stringify(c.value ?? null))).join("\n") }
}

/**
 * The parts of a result: a text value as one text part; any other value as its text and its JSON
 * (a data part), so that clients reading only text still see it.
 *
 * @since 0.2.0
 * @category encoding
 * @example
 * ```ts
 * import { resultParts } from "lambdagent/a2a"
 * resultParts("Paris", "Paris").length // 1
 * resultParts(42, 42).length // 2: "42" and the data 42
 * ```
 */
export const resultParts = (value: Value.Value, json: Term.Json): Array<Part> =>
  typeof value === "string" ? [textPart(value)] : [textPart(Value.toText(value)), dataPart(json)]

/**
 * The text of parts: text parts as they are, data parts as JSON, files as a placeholder; a data
 * part that repeats the text before it (as {@link resultParts} writes) is not repeated.
 *
 * @since 0.2.0
 * @category decoding
 * @example
 * ```ts
 * import { dataPart, partsText, textPart } from "lambdagent/a2a"
 * partsText([textPart("a"), dataPart({ b: 1 })]) // 'a\n{"b":1}'
 * ```
 */
export const partsText = (parts: ReadonlyArray<Part>): string => {
  const out: Array<string> = []
  let previousText: string | undefined
  for (const part of parts) {
    const c = part.content
    if (c === undefined) continue
    switch (c.$case) {
      case "text":
        out.push(c.value)
        previousText = c.value
        continue
      case "data": {
        const json = JSON.stringify(c.value ?? null)
        if (previousText === undefined || !sameValue(previousText, c.value)) out.push(json)
        break
      }
      case "url":
        out.push(`[file ${c.value}]`)
        break
      case "raw":
        out.push(`[file ${part.filename !== "" ? part.filename : part.mediaType}]`)
        break
    }
    previousText = undefined
  }
  return out.join("\n")
}

/** Whether a text part already shows a data value (its JSON, or the value's text form). */
const sameValue = (text: string, value: unknown): boolean => {
  if (text === JSON.stringify(value ?? null)) return true
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value ?? null)
  } catch {
    return false
  }
}

/**
 * The metadata key that marks an artifact a lambdagent server wrote: `"result"` for the answer,
 * `"tokens"` for the text an LLM call streamed on the way.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { artifactRoleKey } from "lambdagent/a2a"
 * console.log(artifactRoleKey) // "lambdagent.role"
 * ```
 */
export const artifactRoleKey = "lambdagent.role"

/**
 * The text of a task's answer: its artifacts' text in order, leaving out artifacts marked as
 * streamed tokens (they repeat steps on the way to the answer, not the answer).
 *
 * @since 0.2.0
 * @category decoding
 * @example
 * ```ts
 * import type { Artifact } from "@a2a-js/sdk"
 * import { artifactsText } from "lambdagent/a2a"
 * const answer = (artifacts: Array<Artifact>) => artifactsText(artifacts)
 * ```
 */
export const artifactsText = (artifacts: ReadonlyArray<Artifact>): string =>
  artifacts
    .filter((a) => a.metadata?.[artifactRoleKey] !== "tokens")
    .map((a) => partsText(a.parts ?? []))
    .filter((text) => text !== "")
    .join("\n")
