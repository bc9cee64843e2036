/**
 * Native tool calling: the tool definitions a model is sent for a ReAct step's tool names, the
 * names they go by on the wire, and a call's arguments object as the tool's input.
 */
import type * as LanguageModel from "../LanguageModel.ts"
import type * as Tools from "../Tools.ts"
import { zodToJsonSchema } from "./structured.ts"

type JsonSchema = Readonly<Record<string, unknown>>

const textOf = (description: string): JsonSchema => ({
  type: "object",
  properties: { input: { type: "string", description } },
  required: ["input"],
  additionalProperties: false
})

const TERMINATE: LanguageModel.ToolSpec = {
  name: "terminate",
  description: "Finish: give your final answer.",
  parameters: { type: "object", properties: { answer: { type: "string", description: "The final answer" } }, required: ["answer"] }
}

/** A name a tool goes by on the wire: providers accept letters, digits, `_` and `-`, at most 64. */
const wireNameOf = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64)

const isObjectSchema = (schema: JsonSchema): boolean => schema.type === "object"

/**
 * The arguments schema a tool is offered with: its JSON Schema (MCP tools), the JSON Schema of
 * its zod input when that is an object, else a text or value wrapped as the `input` property.
 */
const parametersOf = (tool: Tools.ToolDefinition | undefined, name: string): { readonly schema: JsonSchema; readonly wrapped: boolean } => {
  if (tool === undefined) {
    // an agent term called as a tool (a sub-agent, a skill): it takes a task
    return {
      schema: { type: "object", properties: { task: { type: "string", description: `The task for ${name}` } }, required: ["task"] },
      wrapped: false
    }
  }
  if (tool.parameters !== undefined) return { schema: tool.parameters, wrapped: !isObjectSchema(tool.parameters) }
  if (tool.input === undefined) return { schema: textOf("The tool's input text"), wrapped: true }
  const schema = zodToJsonSchema(tool.input)
  if (isObjectSchema(schema)) return { schema, wrapped: false }
  return { schema: { type: "object", properties: { input: schema }, required: ["input"] }, wrapped: true }
}

/** What a model is told of a step's tools, and how to read its calls back. */
export interface NativeTools {
  readonly specs: ReadonlyArray<LanguageModel.ToolSpec>
  /** The tool a wire name stands for. */
  readonly nameOf: (wire: string) => string
  /** The wire name of a tool. */
  readonly wireOf: (name: string) => string
  /** Whether every tool goes by its own name on the wire. */
  readonly sameNames: boolean
}

const cache = new WeakMap<Tools.ToolsShape, WeakMap<ReadonlyArray<string>, NativeTools>>()

/**
 * The native tool definitions of a step's tool names, kept per registry and names list (a ReAct
 * term's list is the same array at every step; schemas cost).
 */
export const nativeTools = (names: ReadonlyArray<string>, tools: Tools.ToolsShape): NativeTools => {
  let byNames = cache.get(tools)
  if (byNames === undefined) cache.set(tools, (byNames = new WeakMap()))
  let found = byNames.get(names)
  if (found === undefined) byNames.set(names, (found = build(names, tools)))
  return found
}

const build = (names: ReadonlyArray<string>, tools: Tools.ToolsShape): NativeTools => {
  const toName = new Map<string, string>()
  const toWire = new Map<string, string>()
  const specs = names.map((name): LanguageModel.ToolSpec => {
    let wire = wireNameOf(name)
    // two names that read the same on the wire: number the later one
    for (let n = 2; toName.has(wire); n++) wire = `${wireNameOf(name).slice(0, 60)}_${n}`
    toName.set(wire, name)
    toWire.set(name, wire)
    if (name === "terminate") return TERMINATE
    const tool = tools.get(name)
    return { name: wire, description: tool?.description ?? `Hand a task to ${name}`, parameters: parametersOf(tool, name).schema }
  })
  const sameNames = names.every((name) => toWire.get(name) === name)
  return { specs, nameOf: (wire) => toName.get(wire) ?? wire, wireOf: (name) => toWire.get(name) ?? name, sameNames }
}

const wrappedTools = new WeakMap<Tools.ToolDefinition, boolean>()

/** What is wrong with a native call's arguments, for the model. */
export class InputProblem {
  constructor(readonly message: string) {}
}

/** Check the `index`th call of an answer that may make `most` calls: the ones past that are refused, not made. */
export const checkCallOf = (call: LanguageModel.ToolCall, tools: ReadonlyArray<string>, index: number, most: number): Record<string, unknown> | InputProblem =>
  index < most ? checkCall(call, tools) : new InputProblem(`too many calls in one answer: at most ${most} are made`)

/**
 * A native call's arguments object as the tool's input: the `input` property for a tool offered
 * wrapped (a text tool, a non-object schema), else the object itself. A wrapped tool's arguments
 * without `input` are an {@link InputProblem}.
 */
export const nativeInput = (tool: Tools.ToolDefinition, args: unknown): unknown => {
  let wrapped = wrappedTools.get(tool)
  if (wrapped === undefined) wrappedTools.set(tool, (wrapped = parametersOf(tool, tool.name).wrapped))
  if (!wrapped) return args
  const input = typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>).input : undefined
  if (input === undefined) return new InputProblem('expected the arguments {"input": …}')
  if (tool.input === undefined && tool.parameters === undefined && typeof input !== "string") return new InputProblem("input: expected a string")
  return input
}

const clipped = (text: string) => (text.length <= 200 ? text : `${text.slice(0, 200)}…`)

/** Whether a call's arguments text is blank (no arguments: `{}`). */
const isBlank = (text: string): boolean => text.length === 0 || (text.length < 64 && text.trim() === "")

/**
 * A native call's arguments, checked: the call names one of `tools`, and its arguments are a JSON
 * object (blank arguments are `{}`). Otherwise an {@link InputProblem} telling the model what was
 * wrong. Runs at every native call: no closures, no allocation on success besides the parse.
 */
export const checkCall = (call: LanguageModel.ToolCall, tools: ReadonlyArray<string>): Record<string, unknown> | InputProblem => {
  if (!tools.includes(call.name)) return new InputProblem(`unknown tool ${JSON.stringify(call.name)}; available: ${tools.join(", ")}`)
  let args: unknown
  try {
    args = isBlank(call.arguments) ? {} : JSON.parse(call.arguments)
  } catch (error) {
    return new InputProblem(
      `${call.name}: the arguments are not valid JSON (${error instanceof Error ? error.message : String(error)}): ${clipped(call.arguments)}`
    )
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return new InputProblem(`${call.name}: the arguments must be a JSON object, not ${clipped(call.arguments)}`)
  }
  return args as Record<string, unknown>
}
