/**
 * The spans a run opens on Effect's tracer when its trace sink asks for them (`TraceSink.spans`),
 * named and attributed after the OpenTelemetry semantic conventions for generative AI
 * (`gen_ai.*`). Every wrapper here is applied only when spans are on: a run without them pays
 * nothing. Reductions get no span of their own (see docs/observability.md): the run span carries
 * the step count, each call the step it was made at.
 */
import * as Effect from "effect/Effect"
import type * as LanguageModel from "../LanguageModel.ts"

/** The attributes of a run's root span, known before it starts. */
export interface RunInfo {
  readonly runId: string
  readonly session: string
  /** The kind of the term run (`react`, `par`, `llm`, …). */
  readonly term: string
  readonly resumed: boolean
}

/** What a run counted by the time it ended, added to its span. */
export interface RunCounts {
  readonly steps: number
  readonly llmCalls: number
  readonly toolCalls: number
  readonly tokens: number
}

/** The span of a whole run (`lambdagent.run`): a root, or a child of the host's current span. */
export const run = <A, E, R>(effect: Effect.Effect<A, E, R>, info: RunInfo, counts: () => RunCounts): Effect.Effect<A, E, R> =>
  Effect.withSpan(
    Effect.ensuring(
      effect,
      Effect.suspend(() => {
        const c = counts()
        return Effect.annotateCurrentSpan({
          "lambdagent.steps": c.steps,
          "lambdagent.llm_calls": c.llmCalls,
          "lambdagent.tool_calls": c.toolCalls,
          "gen_ai.usage.total_tokens": c.tokens
        })
      })
    ),
    "lambdagent.run",
    {
      kind: "internal",
      captureStackTrace: false,
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "lambdagent.run.id": info.runId,
        "lambdagent.session": info.session,
        "lambdagent.term": info.term,
        "lambdagent.resumed": info.resumed
      }
    }
  )

/** What an LLM span says of the call before it is made. */
export interface LlmInfo {
  /** The `llm` term's name (`llm` when it has none). */
  readonly name: string
  /** The provider (`LanguageModelShape.name`: `openai`, `anthropic`, `scripted`, …). */
  readonly provider: string
  readonly request: LanguageModel.ChatRequest
  readonly step: number
}

/** The span of one LLM call: `chat <model>`, a client span with the `gen_ai.*` request and usage attributes. */
export const llm = <E, R>(effect: Effect.Effect<LanguageModel.ChatResponse, E, R>, info: LlmInfo): Effect.Effect<LanguageModel.ChatResponse, E, R> => {
  const request = info.request
  const attributes: Record<string, unknown> = {
    "gen_ai.operation.name": "chat",
    "gen_ai.system": info.provider,
    "gen_ai.provider.name": info.provider,
    "lambdagent.llm.name": info.name,
    "lambdagent.step": info.step,
    "gen_ai.request.message_count": request.messages.length
  }
  if (request.model !== undefined) attributes["gen_ai.request.model"] = request.model
  if (request.temperature !== undefined) attributes["gen_ai.request.temperature"] = request.temperature
  if (request.maxTokens !== undefined) attributes["gen_ai.request.max_tokens"] = request.maxTokens
  if (request.topP !== undefined) attributes["gen_ai.request.top_p"] = request.topP
  if (request.stop !== undefined) attributes["gen_ai.request.stop_sequences"] = request.stop
  return Effect.withSpan(
    Effect.tap(effect, (response) =>
      Effect.annotateCurrentSpan({
        "gen_ai.usage.input_tokens": response.usage?.inputTokens ?? 0,
        "gen_ai.usage.output_tokens": response.usage?.outputTokens ?? 0,
        // the provider's own reason, read from its response; none is invented for a model that gives none
        ...(response.finishReason !== undefined ? { "gen_ai.response.finish_reasons": [response.finishReason] } : {}),
        ...(response.model !== undefined ? { "gen_ai.response.model": response.model } : {}),
        ...(response.toolCalls !== undefined && response.toolCalls.length > 0 ? { "lambdagent.llm.tool_calls": response.toolCalls.length } : {})
      })
    ),
    `chat ${request.model ?? info.provider}`,
    { kind: "client", captureStackTrace: false, attributes }
  )
}

/** What a tool span says of the call. */
export interface ToolInfo {
  readonly name: string
  readonly description: string
  /** The tool's kind (`host`, `shell`, `mcp`, …). */
  readonly kind: string
  readonly step: number
}

/** The semantic conventions' tool type: host functions and terms are functions, retrieval a datastore. */
const toolType = (kind: string): string => (kind === "host" || kind === "term" ? "function" : kind === "rag" ? "datastore" : "extension")

/** The span of one tool call: `execute_tool <name>`; a failure the run observes sets `error.type`. */
export const tool = <A, E, R>(effect: Effect.Effect<A, E, R>, info: ToolInfo): Effect.Effect<A, E, R> =>
  Effect.withSpan(
    Effect.tap(effect, (output) =>
      typeof output === "string" && output.startsWith("[TOOL_ERROR]")
        ? Effect.annotateCurrentSpan({ "error.type": "tool_error", "lambdagent.tool.error": output.slice(0, 500) })
        : Effect.void
    ),
    `execute_tool ${info.name}`,
    {
      kind: "internal",
      captureStackTrace: false,
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": info.name,
        "gen_ai.tool.description": info.description,
        "gen_ai.tool.type": toolType(info.kind),
        "lambdagent.tool.kind": info.kind,
        "lambdagent.step": info.step
      }
    }
  )

/** The span of one memory access: `lambdagent.memory read` or `… write`, with the namespace. */
export const memory = <A, E, R>(effect: Effect.Effect<A, E, R>, operation: "read" | "write", namespace: string, step: number): Effect.Effect<A, E, R> =>
  Effect.withSpan(effect, `lambdagent.memory ${operation}`, {
    kind: "internal",
    captureStackTrace: false,
    attributes: { "lambdagent.memory.operation": operation, "lambdagent.memory.namespace": namespace, "lambdagent.step": step }
  })

/** The span of a `par` (`lambdagent.par`), parent of one span per branch. */
export const par = <A, E, R>(effect: Effect.Effect<A, E, R>, branches: number, step: number): Effect.Effect<A, E, R> =>
  Effect.withSpan(effect, "lambdagent.par", {
    kind: "internal",
    captureStackTrace: false,
    attributes: { "lambdagent.par.branches": branches, "lambdagent.step": step }
  })

/** The span of one branch of a `par` (`lambdagent.par.branch`), with its index and path. */
export const branch = <A, E, R>(effect: Effect.Effect<A, E, R>, index: number, path: string | undefined): Effect.Effect<A, E, R> =>
  Effect.withSpan(effect, "lambdagent.par.branch", {
    kind: "internal",
    captureStackTrace: false,
    attributes: { "lambdagent.par.branch": index, ...(path !== undefined ? { "lambdagent.branch.path": path } : {}) }
  })

/** The span of a `channels` scope (`lambdagent.channels`). */
export const channels = <A, E, R>(effect: Effect.Effect<A, E, R>, declared: ReadonlyArray<string>): Effect.Effect<A, E, R> =>
  Effect.withSpan(effect, "lambdagent.channels", {
    kind: "internal",
    captureStackTrace: false,
    attributes: { "lambdagent.channels": declared }
  })
