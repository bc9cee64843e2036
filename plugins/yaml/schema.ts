/**
 * The shape of an agent file as zod 4 schemas, the types they produce, and the JSON Schema that
 * editors use for completion and checking (`plugins/yaml/schema.json`, generated from
 * {@link AgentFileSchema} by `npm run yaml:schema`).
 *
 * Objects are strict: an unknown key is an error (usually a typo; the error suggests the nearest
 * valid key). Defaults are not filled in here: the compiler applies them, so that every field of
 * the parsed value is one the file wrote, at the same path.
 *
 * @since 0.1.0
 * @module
 */
import * as z from "zod"

const text = z.string()
const name = z.string().min(1)
const count = z.number().int().min(0)
const positive = z.number().int().min(1)
const seconds = z.number().positive()

/**
 * The agent types the compiler knows.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { agentTypes } from "lambdagent/yaml"
 * console.log(agentTypes.join(", ")) // "simple, react, chain, router, parallel, groupchat, handoff, skill"
 * ```
 */
export const agentTypes = ["simple", "react", "chain", "router", "parallel", "groupchat", "handoff", "skill"] as const

/**
 * One of {@link agentTypes}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { AgentType } from "lambdagent/yaml"
 * const t: AgentType = "react"
 * ```
 */
export type AgentType = (typeof agentTypes)[number]

/**
 * The model providers the core can build (see `Providers.providerNames`) plus `custom` (an
 * OpenAI-compatible endpoint given by `baseUrl`). Runtimes can add more through the `providers`
 * override.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { knownProviders } from "lambdagent/yaml"
 * console.log(knownProviders.includes("anthropic")) // true
 * ```
 */
export const knownProviders = [
  "anthropic",
  "openai",
  "openai-compatible",
  "ollama",
  "ollama-native",
  "deepseek",
  "moonshot",
  "zhipu",
  "dashscope",
  "claude-code",
  "claude-code+session",
  "scripted",
  "custom"
] as const

const TypeSchema = z
  .enum(agentTypes)
  .describe(
    "What the agent is: simple (one LLM call), react (think/act loop), chain (pipeline), router (classify, then dispatch), parallel (branches, then merge), groupchat (agents take turns on a shared transcript), handoff (a selector delegates; delegates may hand off again) or skill (run a skill of the file, picked by description or tag)."
  )

/**
 * `model:` — the LLM settings. Sub-agents, chain steps and the classifier inherit the settings of
 * the agent around them, field by field.
 *
 * @since 0.1.0
 * @category schemas
 * @example
 * ```ts
 * import { ModelSchema } from "lambdagent/yaml"
 * ModelSchema.parse({ provider: "openai", name: "gpt-4o-mini", temperature: 0.2 })
 * ```
 */
export const ModelSchema = z
  .strictObject({
    provider: name
      .describe(
        "Provider: anthropic, openai, openai-compatible, ollama (its OpenAI-compatible /v1 endpoint), ollama-native (its native /api/chat), deepseek, moonshot, zhipu, dashscope, claude-code, claude-code+session (claude-code with session: true), scripted, custom."
      )
      .meta({ examples: [...knownProviders] })
      .optional(),
    name: name.describe("Model name, for example gpt-4o-mini or claude-sonnet-4-20250514.").optional(),
    temperature: z.number().min(0).max(2).describe("Sampling temperature, 0 to 2 (runtime default 0.3).").optional(),
    maxTokens: positive.describe("Most tokens in one answer (runtime default 4096).").optional(),
    topP: z.number().min(0).max(1).describe("Nucleus sampling, 0 to 1.").optional(),
    stopSequences: z.array(text).describe("Texts that end the answer.").optional(),
    baseUrl: z.url().describe("API endpoint, for self-hosted or compatible servers.").optional(),
    conversation: z.boolean().describe("Keep the conversation across calls (default true) or call statelessly.").optional(),
    maxHistoryTokens: positive.describe("Most tokens of history kept in a conversation.").optional(),
    contextWindow: positive.describe("The model's context window; without maxHistoryTokens, history is capped at min(contextWindow / 2, 80000).").optional(),
    timeout: seconds.describe("Seconds before one call is abandoned (runtime default 600).").optional(),
    session: z
      .boolean()
      .describe(
        "Session mode of claude-code: each conversation (a repl, a serve session) resumes its own Claude Code session with --resume instead of resending its history."
      )
      .optional()
  })
  .meta({ id: "Model", title: "Model settings" })

/**
 * The parsed `model:` block.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ModelConfig } from "lambdagent/yaml"
 * const m: ModelConfig = { provider: "anthropic", name: "claude-sonnet-4-20250514" }
 * ```
 */
export type ModelConfig = z.output<typeof ModelSchema>

/**
 * `guard:` — validate an output with an expression over `x`, retry, then fall back.
 *
 * @since 0.1.0
 * @category schemas
 * @example
 * ```ts
 * import { GuardSchema } from "lambdagent/yaml"
 * GuardSchema.parse({ validator: "len(x) > 100", retry: 2, fallback: "last" })
 * ```
 */
export const GuardSchema = z
  .strictObject({
    validator: text
      .describe(
        "An expression over the output x that must be true: len(x) > 100, 'error' not in x, x.startswith('{'), is_json(x), int(x) > 5, float(x) <= 0.5 …; one that raises counts as false."
      )
      .optional(),
    retry: count.describe("How many times to run the agent again after an invalid output (default 0).").optional(),
    fallback: z
      .union([
        text,
        z.strictObject({
          value: z
            .union([text, z.number().int(), z.boolean(), z.null()])
            .describe("The value to answer, written out (use this form to answer the text error, empty or last).")
        })
      ])
      .describe(
        'After the last invalid output: error (fail, default), empty (""), last (the last output), any other text (that text; lint L052, as the Python reference fails on it), or {value: …}.'
      )
      .optional(),
    maxOutputLength: positive.describe("Outputs longer than this many characters are invalid.").optional()
  })
  .meta({ id: "Guard", title: "Output guard" })

/**
 * The parsed `guard:` block.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { GuardConfig } from "lambdagent/yaml"
 * const g: GuardConfig = { validator: "'error' not in x", retry: 1 }
 * ```
 */
export type GuardConfig = z.output<typeof GuardSchema>

/**
 * `output:` — structured output: the agent's answer is one JSON value matching a JSON Schema.
 *
 * @since 0.2.0
 * @category schemas
 * @example
 * ```ts
 * import { OutputSchema } from "lambdagent/yaml"
 * OutputSchema.parse({ name: "city", schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } })
 * ```
 */
export const OutputSchema = z
  .strictObject({
    schema: z
      .record(z.string(), z.unknown())
      .describe("The JSON Schema the answer must match; sent as the provider's structured output (else in the prompt), and checked."),
    name: name.describe("What the value is, for the model (default output).").optional(),
    description: text.describe("What the value means, for the model.").optional(),
    strict: z.boolean().describe("Ask for the provider's strict schema adherence (default: when the schema allows it).").optional(),
    retries: count.describe("How many times an answer that does not match is sent back to be repaired (default 2).").optional()
  })
  .meta({ id: "Output", title: "Structured output" })

/**
 * The parsed `output:` block.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { OutputConfig } from "lambdagent/yaml"
 * const o: OutputConfig = { schema: { type: "array", items: { type: "string" } }, retries: 1 }
 * ```
 */
export type OutputConfig = z.output<typeof OutputSchema>

const ReactSchema = z
  .strictObject({
    maxSteps: count.describe("Most think/act rounds (default 10); the bound of the loop Y_n.").optional(),
    observationEnabled: z.boolean().describe("Append each tool result to the state (default true).").optional(),
    toolTimeout: count.describe("Seconds before a tool call becomes a timeout observation (default 30).").optional(),
    verbose: z.boolean().describe("Runtime display option: print the intermediate steps. No effect on the term.").optional(),
    earlyStop: text
      .describe("A validator expression over x, each step's observation (the tool's result): when it holds, the loop ends with that observation as its answer.")
      .optional(),
    thinkPrompt: text.describe("The system prompt of the think step, instead of systemPrompt.").optional(),
    toolCalling: z
      .enum(["native", "text", "auto"])
      .describe(
        "How the think step calls tools: native (the provider's tool calling), text (a call written in the answer; the default) or auto (native where the model supports it)."
      )
      .optional(),
    maxToolCalls: positive
      .describe("With native tool calling: the most tool calls one answer makes (default 8); the calls after them are answered with an error, not made.")
      .optional()
  })
  .meta({ id: "React", title: "ReAct settings" })

const StepSchema = z
  .strictObject({
    name: name.describe("The step's name in traces (default step<i>).").optional(),
    prompt: text.describe("The step's system prompt (an LLM step).").optional(),
    tool: name.describe("Run this tool instead of an LLM (a tool step).").optional(),
    ask: text
      .describe(
        "Ask a person this question about the step's input instead (an ask step): the run pauses as a checkpoint until it is resumed with the answer, which is the step's output."
      )
      .optional(),
    model: ModelSchema.describe("The step's model settings, merged over the agent's field by field.").optional(),
    output: OutputSchema.describe("For an LLM step: its answer is one JSON value matching output.schema.").optional(),
    outputParser: z
      .enum(["text", "json", "number", "boolean"])
      .describe("Parse the output: text (as is), json (canonical JSON text), number (an integer), boolean.")
      .optional(),
    guard: GuardSchema.describe("Validate the step's output (and its parser's) before the next step.").optional()
  })
  .meta({ id: "ChainStep", title: "Chain step" })

const ChainSchema = z
  .strictObject({ steps: z.array(StepSchema).describe("The stages, run left to right: λx. sₙ(…s₂(s₁(x)))") })
  .meta({ id: "Chain", title: "Chain" })

const McpSchema = z
  .strictObject({
    onlineTool: z.record(name, z.array(name)).describe("MCP servers and the tools used from each: {server: [tool, …]}.").optional(),
    localTools: z.array(name).describe("Tools the runtime provides; terminate is the identity λx.x, the loop's base case.").optional(),
    policy: z
      .strictObject({
        mode: z.enum(["auto", "force", "intelligence", "disable"]).describe("disable keeps only terminate; the others leave the tools as listed.").optional(),
        maxConcurrent: positive.describe("Most tool calls at once (runtime).").optional(),
        retryOnFail: count.describe("Retries of a failed tool call (runtime).").optional()
      })
      .describe("How the MCP tools are offered and called.")
      .optional()
  })
  .meta({ id: "Mcp", title: "Tools" })

const MemorySchema = z
  .strictObject({
    enabled: z.boolean().describe("Wrap the agent in memory (default true when the block is present).").optional(),
    strategy: z.enum(["local", "redis", "sqlite", "custom"]).describe("The store (default local).").optional(),
    size: count.describe("Entries read into each call (default 10).").optional(),
    ttl: count.describe("Seconds an entry lives; 0 = forever (default 0).").optional(),
    scope: z.enum(["session", "user", "global"]).describe("Whose memory (default session).").optional(),
    customStore: name
      .describe(
        "For strategy custom: a module (./my-store.js#MyStore relative to the config, or package#Export) exporting a store class, factory or object, or the name of a store a plugin registers."
      )
      .optional()
  })
  .meta({ id: "Memory", title: "Memory" })

const SharedMemorySchema = z
  .strictObject({
    enabled: z.boolean().describe("Share the memory (default true when the block is present).").optional(),
    strategy: z
      .enum(["local", "redis", "sqlite", "custom"])
      .describe("The store: local (this process), redis or sqlite (shared by every process that uses the same server or file), custom (default local).")
      .optional(),
    namespace: name.describe("The store namespace of the bindings; configs that name the same store and namespace share them (default shared).").optional(),
    appendOnly: z.boolean().describe("Σ' ⊇ Σ: a bound key is never rebound or dropped; shared_append adds versions (default false).").optional(),
    store: z
      .record(z.string(), z.union([text, z.number(), z.boolean()]))
      .describe("Initial bindings, written where a key has no value yet.")
      .optional(),
    size: positive.describe("Most entries kept; append-only memory refuses a write past it instead of dropping one (default 1000).").optional(),
    inject: z.boolean().describe("Show the bindings before the input of every simple, react and chain agent (default true).").optional(),
    publish: z.boolean().describe("Record every agent's answer under its name (default false).").optional(),
    path: name.describe("For strategy sqlite: the database file, relative to the agent file (default .lambdagent/shared-memory.db).").optional(),
    url: z
      .string()
      .regex(/^rediss?:\/\//, "a redis:// or rediss:// URL")
      .describe("For strategy redis: the server (default LAMBDAGENT_REDIS_URL, else redis://127.0.0.1:6379).")
      .optional(),
    customStore: name.describe("For strategy custom: the name of the store the runtime provides.").optional()
  })
  .meta({ id: "SharedMemory", title: "Shared memory" })

/**
 * The parsed `sharedMemory:` block.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { SharedMemoryConfig } from "lambdagent/yaml"
 * const s: SharedMemoryConfig = { strategy: "sqlite", appendOnly: true, store: { goal: "a report" } }
 * ```
 */
export type SharedMemoryConfig = z.output<typeof SharedMemorySchema>

const RagSchema = z
  .strictObject({
    enabled: z.boolean().describe("Give the agent retrieval (default true when the block is present).").optional(),
    source: z
      .union([name, z.array(name).min(1)])
      .describe("Files or directories to index, relative to the agent file.")
      .optional(),
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, "an index name: letters, digits, '.', '_' or '-'")
      .describe("Index name (default default).")
      .optional(),
    topK: z.number().int().min(1).max(100).describe("Passages per retrieval (default 3).").optional(),
    chunkSize: z.number().int().min(20).describe("Characters per chunk at most (default 1000).").optional(),
    chunkOverlap: count.describe("Characters shared by consecutive chunks.").optional(),
    backend: z.enum(["simple", "chroma"]).describe("simple (embedded BM25 and vectors, default) or chroma.").optional(),
    mode: z
      .enum(["bm25", "vector", "hybrid"])
      .describe("How passages are ranked: hybrid (BM25 and vectors fused; default for simple), vector (default and only mode for chroma) or bm25.")
      .optional(),
    minScore: z.number().describe("Lowest score kept (default 0).").optional(),
    format: z.enum(["numbered", "plain", "json"]).describe("How passages are shown (default numbered).").optional(),
    agentic: z.boolean().describe("true: the react agent gets a rag_retrieve tool; false: context is retrieved before every call.").optional(),
    persistDirectory: name.describe("Where the index lives.").optional(),
    embeddings: z
      .strictObject({
        provider: z
          .enum(["local", "hashing", "openai"])
          .describe(
            "local (offline word vectors shipped with lambdagent, default), hashing (offline, word matching only) or openai (any OpenAI-compatible /embeddings endpoint)."
          )
          .optional(),
        model: name.describe("Embedding model, for openai.").optional(),
        baseUrl: z.url().describe("Embeddings endpoint, for openai.").optional(),
        apiKeyEnv: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name")
          .describe("The environment variable holding the API key (default OPENAI_API_KEY); keys are never written in the file.")
          .optional(),
        dimensions: z.number().int().min(2).max(65_536).describe("Vector length (for openai, and for hashing: default 384).").optional(),
        timeoutMs: positive.describe("Milliseconds per embeddings request, for openai.").optional()
      })
      .describe("How passages are embedded for vector and hybrid retrieval.")
      .optional(),
    chromaUrl: z.url().describe("A running Chroma server (default the CHROMA_URL variable; absent with a persistDirectory, one is started).").optional(),
    maxFileBytes: positive.describe("Larger source files are refused (default 10 MiB).").optional()
  })
  .meta({ id: "Rag", title: "Retrieval" })

const agentFields = {
  agentId: name.describe("Identifier (metadata; also the name when name is absent).").optional(),
  name: name.describe("Display name, used to name the LLM calls in traces.").optional(),
  description: text.describe("Metadata.").optional(),
  systemPrompt: text.describe("The λ body: the system prompt of a simple agent or of a react agent's think step.").optional(),
  model: ModelSchema.describe(
    "The settings of every LLM call of the agent; sub-agents, steps, the classifier and the merge inherit them field by field."
  ).optional(),
  react: ReactSchema.describe("For type react: the think/act loop.").optional(),
  chain: ChainSchema.describe("For type chain: the steps.").optional(),
  mcp: McpSchema.describe("The tools a react agent may call, and those chain tool steps use.").optional(),
  memory: MemorySchema.describe("Memory(agent, Γ ∪ store): recent exchanges are read into each call; outermost.").optional(),
  output: OutputSchema.describe(
    "Structured output: the answer is one JSON value matching output.schema (a simple agent's LLM answers it; any other agent's answer is given to one more LLM call that does)."
  ).optional(),
  guard: GuardSchema.describe("{x : T | P(x)}: validate the agent's output, retry, then fall back; around the core.").optional(),
  rag: RagSchema.describe("Retrieval: a rag_retrieve tool (agentic react) or context retrieved before every call.").optional(),
  receive: name
    .describe(
      "A channel of the file's channels: block: before the agent runs, its input is received from it (the input it was given is ignored; waits for a message)."
    )
    .optional(),
  send: name
    .describe(
      "A channel of the file's channels: block: after the agent runs, its answer is sent on it (waits while the channel is full); the answer is still the agent's result."
    )
    .optional()
}

/**
 * A sub-agent (router route, parallel branch) and the common part of an agent file. `type`
 * defaults to `simple` in sub-agents.
 *
 * @since 0.1.0
 * @category schemas
 * @example
 * ```ts
 * import { AgentSchema } from "lambdagent/yaml"
 * AgentSchema.parse({ systemPrompt: "You are a coder." })
 * ```
 */
export const AgentSchema = z
  .strictObject({
    type: TypeSchema.optional(),
    ...agentFields,
    get router() {
      return RouterSchema.describe("For type router: the classifier and the routes.").optional()
    },
    get parallel() {
      return ParallelSchema.describe("For type parallel: the branches and the merge.").optional()
    },
    get groupchat() {
      return GroupChatSchema.describe("For type groupchat: the participants, the scheduler and when the chat ends.").optional()
    },
    get handoff() {
      return HandoffSchema.describe("For type handoff: the selector, the registry of delegates and the fallback.").optional()
    },
    skill: z
      .strictObject({
        select: z
          .enum(["description", "tag"])
          .describe("description (an LLM classifier picks among the candidates by their descriptions, default) or tag (the first candidate, in file order)."),
        tags: z.array(name).describe("The candidates are the skills with one of these tags (default every skill of the file).").optional(),
        prompt: text.describe("For select description: the classifier's instruction (the candidates' names and descriptions are appended).").optional(),
        model: ModelSchema.describe("For select description: the classifier's model settings, merged over the agent's.").optional()
      })
      .describe("For type skill: which skill of the file's skills: runs.")
      .optional()
  })
  .meta({ id: "Agent", title: "Agent" })

/**
 * A parsed sub-agent.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { AgentConfig } from "lambdagent/yaml"
 * const a: AgentConfig = { type: "simple", systemPrompt: "Summarize." }
 * ```
 */
export type AgentConfig = z.output<typeof AgentSchema>

const AgentOrAnswer = z.union([text, AgentSchema]).meta({ id: "AgentOrAnswer" })

const RouterSchema = z
  .strictObject({
    classifier: z
      .strictObject({
        prompt: text.describe("The classifier's system prompt."),
        model: ModelSchema.describe(
          "The classifier's model settings, merged over the agent's (it is stateless unless they say conversation: true)."
        ).optional(),
        categories: z.array(name).describe("The labels the classifier answers with (default: the route labels).").optional()
      })
      .describe("The LLM that labels each input."),
    get routes() {
      return z.record(z.string(), AgentOrAnswer).describe("Label → sub-agent, or label → a fixed answer (a string).").optional()
    },
    get default() {
      return AgentOrAnswer.describe("For labels with no route: a sub-agent or a fixed answer.").optional()
    }
  })
  .meta({ id: "Router", title: "Router" })

const ParallelSchema = z
  .strictObject({
    get agents() {
      return z.array(AgentSchema).min(1).describe("The branches, all run on the same input.")
    },
    merge: z
      .enum(["tuple", "concat", "custom"])
      .describe("tuple (a pair or list, default), concat (texts joined by a blank line) or custom (an LLM with mergePrompt).")
      .optional(),
    mergePrompt: text.describe("The merge LLM's system prompt, for merge: custom.").optional()
  })
  .meta({ id: "Parallel", title: "Parallel" })

const GroupChatSchema = z
  .strictObject({
    get agents() {
      return z
        .array(AgentSchema)
        .min(1)
        .describe("The participants, in speaking order for round_robin; each has a name (default agent<i>) and any agent config (simple by default).")
    },
    maxRounds: positive.describe("Most rounds (default 10); a round is one turn per participant, so a chat has at most maxRounds × agents turns.").optional(),
    scheduler: z
      .enum(["round_robin", "random", "llm"])
      .describe(
        "Who speaks next: round_robin (in order, default), random (a seeded draw, never the same speaker twice in a row) or llm (an LLM with schedulerPrompt names the speaker; an unknown name falls back to round robin)."
      )
      .optional(),
    seed: count.describe("The random scheduler's seed (default 0): the same seed gives the same order.").optional(),
    schedulerPrompt: text.describe("For scheduler llm: the system prompt of the LLM that names the next speaker.").optional(),
    schedulerModel: ModelSchema.describe("For scheduler llm: the scheduler's model settings, merged over the agent's.").optional(),
    termination: z
      .strictObject({
        keywords: z.array(name).describe("A message containing one of these ends the chat (default CONSENSUS, DONE; [] for none).").optional(),
        custom: text.describe("A guard-validator expression over the last message x; when true, the chat ends: 'agreed' in x, len(x) < 20 …").optional()
      })
      .describe("When the chat ends before maxRounds.")
      .optional(),
    get summaryAgent() {
      return AgentSchema.describe("Applied to the transcript at the end; its answer is the chat's (default: the last message).").optional()
    }
  })
  .meta({ id: "GroupChat", title: "Group chat" })

const HandoffSchema = z
  .strictObject({
    selector: z
      .strictObject({
        prompt: text.describe("The selector's system prompt; the registry names are appended as the answers it may give."),
        model: ModelSchema.describe("The selector's model settings, merged over the agent's (stateless unless they say conversation: true).").optional(),
        targets: z.array(name).describe("The registry entries the selector may name (default all of them); others are reached only by a hand-off.").optional()
      })
      .describe("The LLM that names the first delegate."),
    get registry() {
      return z
        .record(name, AgentSchema)
        .describe(
          "Name → delegate (any agent config). A delegate hands off by answering HANDOFF <name> on its first line, optionally followed by a message for the next delegate."
        )
    },
    get fallback() {
      return AgentSchema.describe("For a name that is not in the registry: this agent answers (without it, an unknown name is a RouteError).").optional()
    },
    maxDepth: count.describe("Most hand-offs after the first delegation (default 3); one more is a budget error.").optional()
  })
  .meta({ id: "Handoff", title: "Handoff" })

const ChannelSchema = z
  .strictObject({
    name: name.describe("The channel's name, as agents' send and receive give it."),
    capacity: count.describe("How many messages it holds before a sender waits (default 0: a rendezvous, each send waits for a receiver).").optional()
  })
  .meta({ id: "Channel", title: "Channel" })

const SubAgentSchema = z
  .strictObject({
    get inline() {
      return AgentSchema.describe("The sub-agent's config, written here.").optional()
    },
    config: name.describe("Or: the path of its agent file, relative to this file (compiled once, when an agent uses it).").optional(),
    tool: name.describe("The tool name agents call it by (default call_<name>, without a trailing -agent).").optional(),
    description: text.describe("What it does, shown to the agents that may call it.").optional(),
    tags: z.array(name).describe("Labels, for listing.").optional()
  })
  .meta({ id: "SubAgent", title: "Sub-agent" })

const SkillSchema = z
  .strictObject({
    name: name.describe("The skill's name: the tool name agents call it by."),
    description: text.describe("What it does: shown to agents that may call it, and what a select: description classifier reads.").optional(),
    tags: z.array(name).describe("Labels a type: skill agent selects by.").optional(),
    inputType: text.describe("What it takes, in words (default Str).").optional(),
    outputType: text.describe("What it gives, in words (default Str).").optional(),
    get agent() {
      return AgentSchema.describe("The skill's implementation: any agent config.")
    },
    examples: z
      .array(z.strictObject({ input: text.describe("An example input."), output: text.describe("What the skill answers to it.") }))
      .describe("Examples, shown with the description.")
      .optional()
  })
  .meta({ id: "Skill", title: "Skill" })

const McpNodeSchema = z.strictObject({
  url: z.url().describe("Base URL of the MCP server."),
  endpoint: text.describe("Path appended to url.").optional(),
  headers: z.record(z.string(), z.string()).describe("HTTP headers; ${VAR} is left for the runtime to expand.").optional(),
  timeout: seconds.describe("Seconds per call.").optional(),
  protocol: z
    .enum(["mcp", "http", "auto"])
    .describe(
      "mcp (Streamable HTTP MCP, the default), http (the plain tool protocol: POST {tool, input} answers {output}) or auto (MCP when the server speaks it, else plain HTTP)."
    )
    .optional()
})

const McpServerSchema = z
  .strictObject({
    name: name.describe("The server's name."),
    transport: z.enum(["http", "stdio"]).describe("http (needs url) or stdio (needs command)."),
    url: z.url().describe("For http: the server's URL.").optional(),
    command: name.describe("For stdio: the program to start, in the agent file's directory.").optional(),
    args: z.array(text).describe("For stdio: the program's arguments.").optional(),
    env: z.record(z.string(), z.string()).describe("For stdio: extra environment variables of the program.").optional(),
    headers: z.record(z.string(), z.string()).describe("For http: headers of every request; ${VAR} is left for the runtime to expand.").optional(),
    timeout: seconds.describe("Seconds per call (default 30).").optional(),
    tools: z.array(name).describe("The tools used from this server; they join the react tool list.").optional()
  })
  .meta({ id: "McpServer", title: "MCP server" })

const CliAgentSchema = z.strictObject({
  command: name.describe("Shell command: the input goes to stdin, the answer comes from stdout."),
  format: z.enum(["text", "json", "jsonl"]).describe("How the answer is read (default text).").optional(),
  timeout: seconds.describe("Seconds per call (default 60).").optional(),
  retry: count.describe("Retries after a failure (default 0).").optional(),
  description: text.describe("What the agent does, shown to the model.").optional()
})

const CliPipelineSchema = z
  .strictObject({
    steps: z.array(name).min(1).describe("The programs of cli.agents (or other tools) it runs, in order: steps [a, b] is a >> b."),
    parallel: z.boolean().describe("Run every step on the same input and join their answers, instead of one after another (default false).").optional(),
    description: text.describe("What the pipeline does, shown to the model.").optional()
  })
  .meta({ id: "CliPipeline", title: "CLI pipeline" })

const SandboxSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .describe("Run every tool that starts a process (cli.agents, shell tools) in the sandbox (default true when the block is present).")
      .optional(),
    policy: z
      .enum(["strict", "default", "permissive"])
      .describe("The preset the other fields override (default default): strict, default or permissive.")
      .optional(),
    timeout: count
      .describe(
        "CPU seconds of each process (RLIMIT_CPU; preset 5 / 30 / 300). A process that waits uses none: the wall-clock limit is the tool's own timeout."
      )
      .optional(),
    memory_mb: count
      .describe("Address space of each process in MB (RLIMIT_AS; preset 64 / 256 / 2048). Node.js and the JVM need about 1024 to start.")
      .optional(),
    network: z.boolean().describe("Allow the network (preset false / false / true); without it a command runs in a network namespace of its own.").optional(),
    allow_subprocess: z
      .boolean()
      .describe("false: at most 16 processes and threads at once, enough for a pipeline; true: 256 (preset false / false / true).")
      .optional(),
    max_output_bytes: count.describe("Bytes of output kept; past them the command is stopped and the cut marked (preset 4096 / 65536 / 1048576).").optional(),
    max_fds: count.describe("Open file descriptors of each process (RLIMIT_NOFILE; preset 8 / 64 / 256).").optional(),
    work_dir: name.describe("The one writable directory, where commands start, relative to the agent file (default: where lambdagent runs).").optional()
  })
  .meta({ id: "Sandbox", title: "Sandbox" })

const A2ASkillSchema = z
  .strictObject({
    id: name.describe("Stable identifier (default the name in lower case, non-alphanumerics as -).").optional(),
    name: name.describe("The skill's name."),
    description: text.describe("What the skill does.").optional(),
    tags: z.array(name).describe("Keywords.").optional(),
    examples: z.array(text).describe("Example requests.").optional()
  })
  .meta({ id: "A2ASkill", title: "A2A skill" })

const A2AServerSchema = z
  .strictObject({
    port: z.number().int().min(0).max(65_535).describe("The port to listen on (default 8000; 0 picks a free one; --port wins).").optional(),
    host: name.describe("The address to listen on (default 127.0.0.1; --host wins).").optional(),
    url: z
      .url()
      .describe("The endpoint URL the agent card advertises, when clients reach the server by another name (a proxy); default http://<host>:<port>/.")
      .optional(),
    version: name.describe("The agent's version in its card (default 1.0.0).").optional(),
    skills: z.array(A2ASkillSchema).describe("The skills the card lists (default one skill: the agent, with its name and description).").optional(),
    maxTasks: positive.describe("Tasks kept in memory; past it the oldest finished ones are dropped (default 1000).").optional()
  })
  .meta({ id: "A2AServer", title: "A2A server" })

const A2AClientSchema = z
  .strictObject({
    name: name.describe("The tool's name, as the model calls it."),
    url: z.url().describe("The remote agent's base URL (its card is at <url>/.well-known/agent-card.json) or its card's URL."),
    timeout: seconds.describe("Seconds per attempt, card included (default 60).").optional(),
    headers: z
      .record(z.string(), z.string())
      .describe("HTTP headers of every request, such as Authorization; ${VAR} is replaced by the environment variable VAR at call time.")
      .optional(),
    retryOnFail: count.describe("Retries of an attempt that timed out, found no server or got HTTP 5xx/429, with exponential backoff (default 0).").optional(),
    description: text.describe("What the model is told the tool does (default a sentence naming the agent and its URL).").optional()
  })
  .meta({ id: "A2AClient", title: "A2A client" })

/**
 * The parsed `sandbox:` block.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { SandboxConfig } from "lambdagent/yaml"
 * const s: SandboxConfig = { policy: "strict", network: true, memory_mb: 128 }
 * ```
 */
export type SandboxConfig = z.output<typeof SandboxSchema>

/**
 * One parsed entry of `a2a.clients`.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { A2AClientConfig } from "lambdagent/yaml"
 * const c: A2AClientConfig = { name: "planner", url: "http://127.0.0.1:8000", timeout: 30, retryOnFail: 1 }
 * ```
 */
export type A2AClientConfig = z.output<typeof A2AClientSchema>

/**
 * The parsed `a2a.server` block.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { A2AServerConfig } from "lambdagent/yaml"
 * const s: A2AServerConfig = { port: 8000, skills: [{ name: "Plan a trip" }] }
 * ```
 */
export type A2AServerConfig = z.output<typeof A2AServerSchema>

const RuntimeSchema = z
  .strictObject({
    engine: z
      .enum(["recursive", "cek", "adaptive"])
      .describe("recursive (the default), cek or adaptive: recorded and printed by compile; every engine runs on the one explicit-stack machine.")
      .optional(),
    maxSteps: positive.describe("Evaluator step budget.").optional(),
    timeout: seconds.describe("Seconds for a whole run.").optional(),
    maxLlmCalls: positive.describe("Most LLM calls in one run.").optional(),
    maxToolCalls: positive.describe("Most tool calls in one run.").optional(),
    maxTokens: positive.describe("Most tokens in one run.").optional(),
    maxDepth: positive.describe("Deepest the evaluator's continuation stack may grow (non-tail recursion), in frames.").optional(),
    maxEvalDepth: positive.describe("Deepest eval may nest.").optional(),
    maxMemoryMb: positive.describe("Largest value (string, list) a run may build, in MiB.").optional(),
    maxInputBytes: positive.describe("Largest input or term text a run accepts, in bytes.").optional(),
    otel: z
      .strictObject({
        url: z.url({ protocol: /^https?$/ }).describe("The OTLP/HTTP endpoint: a base URL (http://collector:4318; /v1/traces is added) or a full traces URL."),
        serviceName: name.describe("The service.name of the spans (default lambdagent).").optional(),
        headers: z
          .record(z.string(), z.string())
          .describe("HTTP headers sent with every export (an API key header: prefer OTEL_EXPORTER_OTLP_HEADERS, kept out of the file).")
          .optional()
      })
      .describe("Export the spans of every run over OTLP/HTTP (OpenTelemetry); --otel and the OTEL_EXPORTER_OTLP_* variables win over it.")
      .optional()
  })
  .meta({ id: "Runtime", title: "Runtime budget and tracing" })

/**
 * A whole agent file: an agent (with `type` required) plus the top-level-only blocks that
 * describe the world around it (`runtime`, `app`, `mcpServers`, `sharedMemory`, `channels`, `cli`, `a2a`,
 * `checkpoint`, `demo`, `sandbox`).
 *
 * @since 0.1.0
 * @category schemas
 * @example
 * ```ts
 * import { AgentFileSchema } from "lambdagent/yaml"
 * AgentFileSchema.parse({ type: "simple", systemPrompt: "Hi", runtime: { maxLlmCalls: 5 } })
 * ```
 */
export const AgentFileSchema = AgentSchema.extend({
  type: TypeSchema,
  runtime: RuntimeSchema.describe("The run's budget (CompiledAgent.budget).").optional(),
  app: z
    .strictObject({
      mcp: z
        .strictObject({
          custom: z
            .strictObject({ nodes: z.record(name, McpNodeSchema).describe("Connection of each onlineTool server.") })
            .describe("MCP servers reached over HTTP.")
        })
        .describe("MCP connections.")
        .optional()
    })
    .describe("External services.")
    .optional(),
  mcpServers: z.array(McpServerSchema).describe("MCP servers (http or stdio) and the tools used from each.").optional(),
  sharedMemory: SharedMemorySchema.describe("Bindings shared by every agent of the file (and by other processes, with redis or sqlite).").optional(),
  channels: z
    .array(ChannelSchema)
    .min(1)
    .describe(
      "Named channels the file's agents pass messages on (send, receive), typically between parallel branches; a run where every agent that can use them waits on one ends with a Deadlock error."
    )
    .optional(),
  subAgents: z
    .record(name, SubAgentSchema)
    .describe("Agents called as tools: the top-level react agent gets every one; any react agent gets those its mcp.localTools names.")
    .optional(),
  skills: z.array(SkillSchema).describe("Named reusable agents: react agents call those their mcp.localTools names; a type: skill agent picks one.").optional(),
  cli: z
    .strictObject({
      server: z
        .strictObject({
          enabled: z.boolean().describe("Whether to serve.").optional(),
          mode: z.enum(["pipe", "socket", "tcp"]).describe("How to serve: pipe (stdin/stdout), socket (a Unix socket) or tcp.").optional(),
          format: z
            .enum(["text", "json", "jsonl"])
            .describe("How requests and answers are written: text lines, or one JSON value a line ({input} in, {result} or {error} out) for json and jsonl.")
            .optional(),
          socketPath: name.describe("For mode socket: the socket's path, relative to the agent file.").optional(),
          port: z.number().int().min(0).max(65_535).describe("For mode tcp: the port.").optional()
        })
        .describe(
          "Serving this agent over the command line, one request per line: lambdagent serve does so when enabled is true (or with --cli); kept in CompiledAgent.runtime.cliServer."
        )
        .optional(),
      agents: z.record(name, CliAgentSchema).describe("Other programs called as tools: λx. exec(command, x).").optional(),
      pipelines: z.record(name, CliPipelineSchema).describe("Named compositions of programs, called as tools: steps [a, b] is λx. b(a(x)).").optional()
    })
    .describe("Command-line programs: serving this agent, and other programs called as tools.")
    .optional(),
  a2a: z
    .strictObject({
      server: A2AServerSchema.describe(
        "Serving this agent to A2A clients (lambdagent serve): its card and where it listens; not compiled, kept in CompiledAgent.runtime.a2aServer for the runtime."
      ).optional(),
      clients: z.array(A2AClientSchema).describe("Remote A2A agents, called as tools (and usable as chain tool steps, in router routes too).").optional()
    })
    .describe("Agent-to-agent connections (the A2A protocol).")
    .optional(),
  checkpoint: z
    .strictObject({
      enabled: z.boolean().describe("Whether to take snapshots.").optional(),
      directory: name.describe("Where snapshots are written (relative to the file).").optional(),
      store: name
        .describe(
          "Keep the checkpoints in a store instead of a directory: redis://HOST[:PORT][/DB][?prefix=KEYPREFIX] (or redis: for LAMBDAGENT_REDIS_URL), or sqlite:PATH (relative to the file)."
        )
        .optional(),
      maxCheckpoints: positive.describe("Most snapshots kept (the newest, with the whole checkpoint they extend).").optional(),
      fsync: z
        .boolean()
        .describe(
          "A directory: fsync each checkpoint before the call it precedes (default true: it survives a crash of the machine); false: it survives a crash of the process, at a fraction of the cost."
        )
        .optional(),
      autoSaveSteps: count
        .describe(
          "Also save a checkpoint during long pure evaluation: at the first time slice (about 10 ms) after every this many steps; 0 or unset: only before each oracle call."
        )
        .optional()
    })
    .describe("Checkpoints of the run (lambdagent run, resume): one before every oracle call when enabled; kept in CompiledAgent.runtime.checkpoint.")
    .optional(),
  demo: z
    .strictObject({
      input: name.describe("The input the plan answers (compared without case and extra spaces); any other input gets the offline model that echoes."),
      plan: z
        .array(name)
        .min(1)
        .describe(
          "The demo model's replies in order, as a real model gave them; {{observation}} in a reply stands for the last tool result the model was shown."
        )
    })
    .describe(
      "A scripted demo model for running with no provider reachable: `lambdagent run` replays this recorded plan (the tools run for real) and says so on stderr. Not compiled."
    )
    .optional(),
  sandbox: SandboxSchema.describe(
    "OS-enforced limits for every tool that runs a process; the term does not change, the policy is kept in CompiledAgent.runtime.sandbox."
  ).optional()
}).meta({ title: "lambdagent agent file" })

/**
 * A parsed agent file.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { AgentFile } from "lambdagent/yaml"
 * const f: AgentFile = { type: "simple", systemPrompt: "Summarize text.", model: { name: "gpt-4o-mini" } }
 * ```
 */
export type AgentFile = z.output<typeof AgentFileSchema>

/**
 * The parsed `router:` block.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { RouterConfig } from "lambdagent/yaml"
 * const r: RouterConfig = { classifier: { prompt: "code or math?" }, routes: { code: { systemPrompt: "Code." } } }
 * ```
 */
export type RouterConfig = z.output<typeof RouterSchema>

/**
 * The parsed `parallel:` block.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ParallelConfig } from "lambdagent/yaml"
 * const p: ParallelConfig = { agents: [{ systemPrompt: "A" }, { systemPrompt: "B" }], merge: "concat" }
 * ```
 */
export type ParallelConfig = z.output<typeof ParallelSchema>

/**
 * The parsed `groupchat:` block.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { GroupChatConfig } from "lambdagent/yaml"
 * const g: GroupChatConfig = { agents: [{ name: "writer", systemPrompt: "Write." }, { name: "critic", systemPrompt: "Criticize." }], maxRounds: 3 }
 * ```
 */
export type GroupChatConfig = z.output<typeof GroupChatSchema>

/**
 * One parsed entry of `subAgents`.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { SubAgentConfig } from "lambdagent/yaml"
 * const s: SubAgentConfig = { inline: { systemPrompt: "Translate to French." }, description: "Translates." }
 * ```
 */
export type SubAgentConfig = z.output<typeof SubAgentSchema>

/**
 * One parsed entry of `skills`.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { SkillConfig } from "lambdagent/yaml"
 * const s: SkillConfig = { name: "summarize", description: "Summarizes text.", tags: ["text"], agent: { systemPrompt: "Summarize." } }
 * ```
 */
export type SkillConfig = z.output<typeof SkillSchema>

/**
 * The parsed `handoff:` block.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { HandoffConfig } from "lambdagent/yaml"
 * const h: HandoffConfig = { selector: { prompt: "Who handles this?" }, registry: { billing: { systemPrompt: "Billing." } } }
 * ```
 */
export type HandoffConfig = z.output<typeof HandoffSchema>

/**
 * One parsed chain step.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { StepConfig } from "lambdagent/yaml"
 * const s: StepConfig = { name: "extract", prompt: "Extract key facts." }
 * ```
 */
export type StepConfig = z.output<typeof StepSchema>

/**
 * Keys that exist only at the top level of a file.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { topLevelOnlyKeys } from "lambdagent/yaml"
 * console.log(topLevelOnlyKeys.includes("runtime")) // true
 * ```
 */
export const topLevelOnlyKeys = [
  "runtime",
  "app",
  "mcpServers",
  "sharedMemory",
  "channels",
  "subAgents",
  "skills",
  "cli",
  "a2a",
  "checkpoint",
  "demo",
  "sandbox"
] as const

/**
 * Names this compiler deliberately does not support, with why: given as an agent `type`
 * (`type: hooks`) or as a key, they are schema errors that say so. The fields of the Python
 * reference's format that have no meaning here are not among them: those are accepted and dropped
 * (see `referenceFields`).
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { unsupportedKeys } from "lambdagent/yaml"
 * console.log(unsupportedKeys.hooks) // "hooks are registered in code, not in agent files"
 * ```
 */
export const unsupportedKeys: Readonly<Record<string, string>> = {
  hooks: "hooks are registered in code, not in agent files"
}

/**
 * The JSON Schema (draft 2020-12) of agent files, as shipped in `plugins/yaml/schema.json`.
 *
 * @since 0.1.0
 * @category schemas
 * @example
 * ```ts
 * import { jsonSchema } from "lambdagent/yaml"
 * const schema = jsonSchema()
 * console.log(schema.title) // "lambdagent agent file"
 * ```
 */
export const jsonSchema = (): Record<string, unknown> => {
  return z.toJSONSchema(AgentFileSchema, { io: "input", target: "draft-2020-12" }) as Record<string, unknown>
}

/**
 * The parsed `mcp:` block.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { McpConfig } from "lambdagent/yaml"
 * const m: McpConfig = { onlineTool: { search: ["web_search"] }, localTools: ["terminate"] }
 * ```
 */
export type McpConfig = z.output<typeof McpSchema>

/**
 * One parsed entry of `cli.agents`.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { CliAgentConfig } from "lambdagent/yaml"
 * const c: CliAgentConfig = { command: "lambdagent run summarizer.yml --quiet -", format: "text", timeout: 60 }
 * ```
 */
export type CliAgentConfig = z.output<typeof CliAgentSchema>

/**
 * One parsed entry of `cli.pipelines`: a named composition of tools, called as one tool.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { CliPipelineConfig } from "lambdagent/yaml"
 * const p: CliPipelineConfig = { steps: ["summarizer", "translator"], parallel: false }
 * ```
 */
export type CliPipelineConfig = z.output<typeof CliPipelineSchema>
