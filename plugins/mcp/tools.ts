/**
 * The tool-evolving tools: `evolve`, `run`, `list` and `help`, and one MCP tool per evolved
 * tool. Names and arguments follow the reference server (MCP-PIF); results are JSON, errors are
 * `isError` results with `{kind, message, path?}`.
 *
 * @since 0.1.0
 * @module
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Errors, Evaluator, Term, Value } from "lambdagent"
import * as z from "zod"
import { type AgentPolicy, analyzeTerm, type Capabilities, policyViolations, recursionOf } from "./analysis.ts"
import { type AnswerOracle, execute } from "./execute.ts"
import { defineTool, type LogMessage, type ServerModule, type ToolCallContext, type ToolSpec } from "./module.ts"
import { helpText, HELP_CATEGORIES } from "./reference.ts"
import { type RegisteredTool, TOOL_NAME_PATTERN, type ToolRegistry, type ToolVersion } from "./registry.ts"
import { errorInfo, errorResult, type ErrorInfo, valueResult } from "./results.ts"
import { TermCache } from "./termCache.ts"

/**
 * The names of the system tools, which evolved tools may not take.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { SYSTEM_TOOLS } from "lambdagent/mcp"
 * SYSTEM_TOOLS.includes("evolve") // true
 * ```
 */
export const SYSTEM_TOOLS: ReadonlyArray<string> = ["evolve", "run", "list", "help"]

/**
 * Limits of every evaluation the server runs.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { EvaluationLimits } from "lambdagent/mcp"
 * const limits: EvaluationLimits = { defaultFuel: 1_000_000, maxFuel: 10_000_000, timeoutMs: 10_000, maxTermSize: 100_000 }
 * ```
 */
export interface EvaluationLimits {
  /** Steps a call may take when it does not say (`fuel`). */
  readonly defaultFuel: number
  /** The largest `fuel` a call may ask for. */
  readonly maxFuel: number
  /** Wall time of one call, in milliseconds. */
  readonly timeoutMs: number
  /** The largest term (in nodes) `evolve` accepts. */
  readonly maxTermSize: number
}

/**
 * What the lambda tools module needs: the registry, the limits, the capability policy, the
 * oracle for agent forms, the names other modules already use, and a logger.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LambdaToolsContext } from "lambdagent/mcp"
 * const policyOf = (c: LambdaToolsContext) => c.policy
 * ```
 */
export interface LambdaToolsContext {
  readonly registry: ToolRegistry
  readonly limits: EvaluationLimits
  readonly policy: AgentPolicy
  readonly oracle?: AnswerOracle
  /** Tool names taken by other modules (evolved tools may not shadow them). */
  readonly reservedNames: () => ReadonlySet<string>
  /** Diagnostics for the server's operator (standard error). */
  readonly log: (line: string) => void
  /** Log messages for every connected client: an evolved tool (`info`), a failed save (`error`). */
  readonly broadcast?: (message: LogMessage) => void
}

const fuelSchema = (limits: EvaluationLimits) =>
  z
    .int()
    .min(1)
    .max(limits.maxFuel)
    .optional()
    .describe(`Step budget of this call (default ${limits.defaultFuel}, at most ${limits.maxFuel}); every reduction is one step.`)

/** Any JSON value, said explicitly (a bare `{}` schema is flagged by schema linters); published as `anyOf`. */
const anyJson = () => z.unknown().meta({ type: ["object", "array", "string", "number", "boolean", "null"] })

const stepSchema = z
  .int()
  .min(0)
  .optional()
  .describe("The step of the continuation being answered (copy it from the continuation); 0 or absent for a first call.")

/**
 * The path to the first number in `json` that is an integer beyond 2^53: the MCP SDK reads
 * messages with `JSON.parse`, so such a number has already lost digits and must not be taken as
 * the integer the client wrote. (Inside a string of JSON text, integers stay exact.)
 */
const inexactInteger = (json: unknown): { path: Array<string | number>; value: number } | undefined =>
  hasInexactInteger(json) ? inexactIntegerPath(json) : undefined

/** Whether `json` holds such a number: one pass without bookkeeping, for the usual answer, no. */
const hasInexactInteger = (json: unknown): boolean => {
  const stack: Array<unknown> = [json]
  while (stack.length > 0) {
    const value = stack.pop()
    if (typeof value === "number") {
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) return true
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) stack.push(value[i])
    } else if (typeof value === "object" && value !== null) {
      for (const key of Object.keys(value)) stack.push((value as Record<string, unknown>)[key])
    }
  }
  return false
}

/** The first such number, in document order, and its path. */
const inexactIntegerPath = (json: unknown): { path: Array<string | number>; value: number } | undefined => {
  interface Node {
    readonly value: unknown
    readonly key: string | number | undefined
    readonly parent: Node | undefined
  }
  const stack: Array<Node> = [{ value: json, key: undefined, parent: undefined }]
  while (stack.length > 0) {
    const node = stack.pop()!
    const value = node.value
    if (typeof value === "number") {
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        const path: Array<string | number> = []
        for (let n: Node | undefined = node; n?.key !== undefined; n = n.parent) path.unshift(n.key)
        return { path, value }
      }
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: i, parent: node })
    } else if (typeof value === "object" && value !== null) {
      const entries = Object.entries(value)
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], key: entries[i]![0], parent: node })
    }
  }
  return undefined
}

const checkExact = (json: unknown, argument: string): ErrorInfo | undefined => {
  const found = inexactInteger(json)
  if (found === undefined) return undefined
  return {
    kind: "InexactInteger",
    message:
      `the ${argument} holds the number ${found.value}, beyond 2^53: as a JSON number it cannot be received exactly; ` +
      `send the ${argument} as JSON text (a string) to keep every digit`,
    path: found.path,
    argument
  }
}

/** Read a `code` argument: a term as JSON, or a string of JSON text. */
const codeJson = (code: unknown): { json: unknown } | { error: ErrorInfo } => {
  if (typeof code !== "string") {
    const inexact = checkExact(code, "code")
    return inexact !== undefined ? { error: inexact } : { json: code }
  }
  try {
    return { json: Term.parseJsonText(code) }
  } catch (error) {
    const trimmed = code.trim()
    if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
      return { error: { kind: "TermParseError", message: `code is not valid JSON text: ${errorInfo(error).message}`, path: [], argument: "code" } }
    }
    // Any other string is a string literal, as in the reference.
    return { json: code }
  }
}

/** How many inline terms of `run` a server keeps read, and the longest JSON text of one it keeps. */
const INLINE_TERMS_KEPT = 256
const INLINE_TERM_TEXT_KEPT = 16 * 1024

const parseCode = (json: unknown, options: Term.ParseOptions = {}): { term: Term.Term } | { error: ErrorInfo } => {
  try {
    return { term: Term.parse(json, options) }
  } catch (error) {
    return { error: { ...errorInfo(error), argument: "code" } }
  }
}

/**
 * Free variables of code for `evolve`. A body that is not a function and uses exactly one unbound
 * variable (the reference's `{"mul": [{"var": "x"}, 2]}`) is taken as a function of that variable.
 * A `lam` with an unbound variable inside is refused: there the variable is most likely a typo,
 * and making it a second parameter would change how the tool is called.
 */
const implicitParameter = (json: unknown, term: Term.Term): { term: Term.Term; parameter?: string } | { error: ErrorInfo } => {
  const { freeVariablePath, freeVariables } = analyzeTerm(term)
  if (freeVariables.length === 0) return { term }
  if (freeVariables.length === 1 && term._tag !== "Lam") {
    const parameter = freeVariables[0]!
    return { term: Term.parse({ lam: parameter, body: json }), parameter }
  }
  const names = freeVariables.map((v) => JSON.stringify(v)).join(", ")
  const hint =
    term._tag === "Lam"
      ? `bind it with another {"lam": …} around the code, or fix the name`
      : `a tool takes one input: write {"lam": ${JSON.stringify(freeVariables[0])}, "body": <code>} and reach the other values through it (e.g. a pair)`
  return {
    error: {
      kind: "FreeVariable",
      message: `unbound variable${freeVariables.length > 1 ? "s" : ""} ${names}: every {"var": x} must be inside a {"lam": x, …}; ${hint}`,
      path: [...(freeVariablePath ?? [])],
      argument: "code",
      variables: [...freeVariables]
    }
  }
}

const capabilitySummary = (c: Capabilities) => ({
  self: c.self,
  eval: c.eval,
  quote: c.quote,
  continue: c.continue,
  codeOf: [...c.codeOf],
  ...(c.llm ? { llm: true } : {}),
  ...(c.tools.size > 0 ? { tools: [...c.tools] } : {}),
  ...(c.memory ? { memory: true } : {}),
  ...(c.parallel ? { par: true } : {})
})

const jsonResult = (json: Record<string, unknown>): CallToolResult => ({
  content: [{ type: "text", text: Term.stringify(json as Term.Json) }],
  structuredContent: json
})

const runnable = (name: string, version: ToolVersion): { term: Term.Term } | { error: ErrorInfo } =>
  version.term !== undefined
    ? { term: version.term }
    : { error: { kind: "StoredCodeError", message: `${name} version ${version.version}: ${version.problem ?? "no code"}` } }

/**
 * The lambda tools as a {@link ServerModule}: the four system tools, then one tool per evolved
 * tool (sorted by name), with list changes announced when a tool is evolved.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { lambdaToolsModule, ToolRegistry } from "lambdagent/mcp"
 * const registry = await ToolRegistry.open()
 * const module = lambdaToolsModule({
 *   registry,
 *   limits: { defaultFuel: 1_000_000, maxFuel: 10_000_000, timeoutMs: 10_000, maxTermSize: 100_000 },
 *   policy: {},
 *   reservedNames: () => new Set(),
 *   log: console.error
 * })
 * console.log(module.tools!().map((t) => t.name)) // ["evolve", "run", "list", "help"]
 * ```
 */
export const lambdaToolsModule = (context: LambdaToolsContext): ServerModule => {
  const { limits, policy, registry } = context
  const budgetOf = (fuel: number | undefined) => ({ steps: fuel ?? limits.defaultFuel, timeMs: limits.timeoutMs })
  const pure = policy.llm !== true && policy.memory !== true && policy.tools === undefined

  /** An inline term of `run`, parsed, and what it uses that the policy does not allow. */
  const readInline = (json: unknown, startedAt: number): { term: Term.Term; violations: ReadonlyArray<string> } | { error: ErrorInfo } => {
    const parsed = parseCode(json, { deadline: startedAt + limits.timeoutMs, timeMs: limits.timeoutMs })
    if ("error" in parsed) return parsed
    return { term: parsed.term, violations: policyViolations(analyzeTerm(parsed.term).capabilities, policy) }
  }
  const inlineTerms = new TermCache<ReturnType<typeof readInline>>(INLINE_TERMS_KEPT, INLINE_TERM_TEXT_KEPT)

  const evaluate = async (
    options: {
      readonly term: Term.Term
      readonly input: unknown
      readonly tool?: string
      readonly version?: number
      readonly step: number | undefined
      readonly fuel: number | undefined
      readonly via: "run" | "tool"
      /** When the call began: reading its code counts against the time budget. */
      readonly startedAt?: number
    },
    call: ToolCallContext
  ): Promise<CallToolResult> => {
    const inexact = checkExact(options.input, "input")
    if (inexact !== undefined) return errorResult(inexact)
    const tools = options.tool !== undefined ? registry.codeWith(options.tool, options.term) : registry.code()
    try {
      const { steps, value } = await execute({
        code: options.term,
        input: options.input,
        ...(options.tool !== undefined ? { tool: options.tool } : {}),
        ...(options.step !== undefined ? { step: options.step } : {}),
        tools,
        budget: budgetOf(options.fuel),
        ...(options.startedAt !== undefined ? { startedAt: options.startedAt } : {}),
        policy,
        ...(context.oracle !== undefined ? { oracle: context.oracle } : {}),
        signal: call.signal
      })
      return valueResult(value, steps, { via: options.via, ...(options.version !== undefined ? { version: options.version } : {}) })
    } catch (error) {
      const info = errorInfo(error)
      if (info.kind === "InternalError") context.log(`internal error while running ${options.tool ?? "inline code"}: ${info.message}`)
      // The code is parsed before the run starts, so a parse error here is the input's.
      return errorResult(error instanceof Errors.TermParseError ? { ...info, argument: "input" } : info)
    }
  }

  const evolve = defineTool({
    name: "evolve",
    title: "Evolve a tool",
    description:
      "Create or update a named tool from a JSON lambda-calculus term. The term is checked first (parse errors with " +
      "their JSON path, free variables, capabilities); the result reports the forms and capabilities used, the size, " +
      "whether the tool can recurse, and its version. Evolving an existing name adds a version. The tool then appears " +
      "as its own MCP tool and in run/list. See help for the language.",
    input: z.object({
      name: z.string().describe("Tool name: 1-128 characters from A-Z a-z 0-9 _ - ."),
      description: z.string().max(4096).describe("What the tool does (shown to clients)."),
      code: anyJson().describe('The term, as JSON (e.g. {"lam": "x", "body": {"mul": [{"var": "x"}, {"var": "x"}]}}) or as JSON text.')
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: async (args) => {
      const { description, name } = args
      if (!TOOL_NAME_PATTERN.test(name)) {
        return errorResult({
          kind: "InvalidToolName",
          message: `tool name ${JSON.stringify(name)} must be 1-128 characters from A-Z a-z 0-9 _ - .`,
          path: ["name"]
        })
      }
      if (SYSTEM_TOOLS.includes(name) || context.reservedNames().has(name)) {
        return errorResult({ kind: "InvalidToolName", message: `${JSON.stringify(name)} is the name of a built-in tool`, path: ["name"] })
      }
      const json = codeJson(args.code)
      if ("error" in json) return errorResult(json.error)
      const parsed = parseCode(json.json)
      if ("error" in parsed) return errorResult(parsed.error)
      const implicit = implicitParameter(json.json, parsed.term)
      if ("error" in implicit) return errorResult(implicit.error)
      const term = implicit.term
      const size = Term.size(term)
      if (size > limits.maxTermSize) {
        return errorResult({ kind: "TermTooLarge", message: `the term has ${size} nodes; this server accepts at most ${limits.maxTermSize}`, argument: "code" })
      }
      const analysis = analyzeTerm(term)
      const violations = policyViolations(analysis.capabilities, policy)
      if (violations.length > 0) {
        return errorResult({
          kind: "CapabilityDenied",
          message: `this server runs pure tools only; the term uses ${violations.join("; ")}`,
          argument: "code"
        })
      }
      const warnings = [
        ...(implicit.parameter !== undefined
          ? [
              `the code uses one unbound variable, ${JSON.stringify(implicit.parameter)}: it was taken as the tool's parameter ` +
                `and stored as {"lam": ${JSON.stringify(implicit.parameter)}, "body": <code>}`
            ]
          : []),
        ...[...analysis.capabilities.codeOf]
          .filter((target) => target !== name && registry.get(target) === undefined)
          .map((target) => `code_of ${JSON.stringify(target)}: no tool of that name yet; evolve it before this tool reaches it`)
      ]
      let version: ToolVersion
      try {
        version = await registry.add(name, description, term)
      } catch (error) {
        const reason = errorInfo(error).message
        context.log(`could not save tool ${name}: ${reason}`)
        context.broadcast?.({
          level: "error",
          data: { message: `could not save tool ${name} to ${registry.store.description}: ${reason}`, tool: name, store: registry.store.description }
        })
        return errorResult({ kind: "StoreError", message: `the tool was not saved: ${reason}` })
      }
      context.broadcast?.({
        level: "info",
        data: { message: `tool ${name} evolved to version ${version.version}`, tool: name, version: version.version, description }
      })
      const recursion = recursionOf(name, analysis.capabilities, (n) => registry.references(n))
      return jsonResult({
        name,
        version: version.version,
        description,
        forms: analysis.forms,
        capabilities: capabilitySummary(analysis.capabilities),
        size,
        isFunction: analysis.isFunction ?? "unknown",
        ...(implicit.parameter !== undefined ? { parameter: implicit.parameter } : {}),
        recursive: recursion.length > 0,
        recursion,
        warnings
      })
    }
  })

  const run = defineTool({
    name: "run",
    title: "Run a tool or a term",
    description:
      "Run an evolved tool by name, or an inline term, on an input. If the code is a function it is applied to the input; " +
      "otherwise its value is returned. Name the tool with tool (or code); version picks an older version. The result " +
      "text is the value as JSON. A tool that uses continue returns a continuation {type, message, tool, next_input, step}: " +
      "call run again with input = next_input and the same step.",
    input: z.object({
      code: anyJson().optional().describe("A tool name, or a term (JSON or JSON text). Give this or tool."),
      tool: z.string().optional().describe("The name of an evolved tool to run (the same as code with a tool name). Give this or code."),
      input: anyJson().describe("The input (a term: JSON values are data; JSON text in a string is parsed). Use null when the code is not a function."),
      step: stepSchema,
      fuel: fuelSchema(limits),
      version: z.int().min(1).optional().describe("Run this version of the named tool instead of the current one.")
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: pure, openWorldHint: !pure },
    run: async (args, call) => {
      if (args.tool !== undefined && args.code !== undefined) {
        return errorResult({ kind: "InvalidArguments", message: "give either tool (a tool name) or code (a tool name or a term), not both", path: ["tool"] })
      }
      if (args.tool === undefined && args.code === undefined) {
        return errorResult({ kind: "InvalidArguments", message: "run needs tool (an evolved tool's name) or code (a tool name or a term)", path: ["code"] })
      }
      if (args.tool !== undefined && registry.get(args.tool) === undefined) return errorResult(unknownTool(args.tool, ["tool"], ""))
      const named = args.tool ?? (typeof args.code === "string" && registry.get(args.code) !== undefined ? args.code : undefined)
      if (named !== undefined) {
        const name = named
        const version = registry.version(name, args.version)
        if (version === undefined) {
          const known = registry
            .get(name)!
            .versions.map((v) => v.version)
            .join(", ")
          return errorResult({ kind: "UnknownVersion", message: `${name} has no version ${args.version} (versions: ${known})`, path: ["version"] })
        }
        const code = runnable(name, version)
        if ("error" in code) return errorResult(code.error)
        return evaluate(
          {
            term: code.term,
            input: args.input,
            tool: name,
            ...(args.version !== undefined ? { version: version.version } : {}),
            step: args.step,
            fuel: args.fuel,
            via: "run"
          },
          call
        )
      }
      if (args.version !== undefined) {
        return errorResult({ kind: "InvalidArguments", message: "version needs code to name an evolved tool", path: ["version"] })
      }
      if (typeof args.code === "string") {
        try {
          Term.parseJsonText(args.code)
        } catch {
          return errorResult(unknownTool(args.code, ["code"], ", and the text is not a JSON term"))
        }
      }
      const json = codeJson(args.code)
      if ("error" in json) return errorResult(json.error)
      const startedAt = Date.now()
      const read = inlineTerms.get(
        json.json,
        () => readInline(json.json, startedAt),
        (r) => !("error" in r)
      )
      if ("error" in read) return errorResult(read.error)
      if (read.violations.length > 0) {
        return errorResult({ kind: "CapabilityDenied", message: `the term uses ${read.violations.join("; ")}`, argument: "code" })
      }
      return evaluate({ term: read.term, input: args.input, step: args.step, fuel: args.fuel, via: "run", startedAt }, call)
    }
  })

  const unknownTool = (name: string, path: ReadonlyArray<string>, why: string): ErrorInfo => {
    const known = registry.list().map((t) => t.name)
    return {
      kind: "UnknownTool",
      message: `no tool named ${JSON.stringify(name)}${why}` + (known.length > 0 ? ` (tools: ${known.join(", ")})` : " (no tools are registered yet)"),
      path: [...path]
    }
  }

  const list = defineTool({
    name: "list",
    title: "List evolved tools",
    description: "Every evolved tool with its description, current version, all versions, forms and capabilities.",
    input: z.object({}),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: () =>
      jsonResult({
        tools: registry.list().map((tool) => {
          const analysis = tool.current.analysis
          const recursion = analysis === undefined ? [] : recursionOf(tool.name, analysis.capabilities, (n) => registry.references(n))
          return {
            name: tool.name,
            description: tool.current.description,
            version: tool.current.version,
            versions: tool.versions.map((v) => ({ version: v.version, description: v.description, createdAt: v.createdAt })),
            ...(analysis !== undefined
              ? { forms: analysis.forms, capabilities: capabilitySummary(analysis.capabilities), size: analysis.size, recursive: recursion.length > 0 }
              : { problem: tool.current.problem })
          }
        })
      })
  })

  const help = defineTool({
    name: "help",
    title: "Language help",
    description: `Documentation of the term language and of this server's tools. Categories: ${HELP_CATEGORIES.join(", ")}; ` + "without one, an overview.",
    input: z.object({
      category: z
        .string()
        .optional()
        .describe(`One of: ${HELP_CATEGORIES.join(", ")}.`)
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (args) => ({ content: [{ type: "text", text: helpText(args.category) }] })
  })

  const evolvedInput = z.object({
    input: anyJson().describe("The input (a term: JSON values are data; JSON text in a string is parsed)."),
    step: stepSchema,
    fuel: fuelSchema(limits)
  })

  const specs = new Map<string, { readonly version: number; readonly spec: ToolSpec }>()
  const evolvedTool = (tool: RegisteredTool): ToolSpec => {
    const cached = specs.get(tool.name)
    if (cached !== undefined && cached.version === tool.current.version) return cached.spec
    const spec = makeEvolvedTool(tool)
    specs.set(tool.name, { version: tool.current.version, spec })
    return spec
  }

  const makeEvolvedTool = (tool: RegisteredTool): ToolSpec => {
    const current = tool.current
    const caps = current.analysis?.capabilities
    const effectful = caps !== undefined && (caps.llm || caps.tools.size > 0 || caps.memory)
    return defineTool({
      name: tool.name,
      description:
        `${current.description}\n\n(Evolved lambda tool, version ${current.version}. Input: any JSON value or term. ` +
        "Returns the value as JSON" +
        (caps?.continue === true ? ", or a continuation to send back with its step" : "") +
        ".)",
      input: evolvedInput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: !effectful, openWorldHint: effectful },
      run: async (args, call) => {
        // Always run the version current at call time (the listing may be older).
        const latest = registry.version(tool.name)!
        const code = runnable(tool.name, latest)
        if ("error" in code) return errorResult(code.error)
        const notFunction = await notAFunction(tool.name, code.term, latest.analysis?.isFunction, budgetOf(args.fuel))
        if (notFunction !== undefined) return errorResult(notFunction)
        return evaluate({ term: code.term, input: args.input, tool: tool.name, step: args.step, fuel: args.fuel, via: "tool" }, call)
      }
    })
  }

  /** A direct call needs a function (as in the reference); `run` returns a non-function's value. */
  const notAFunction = async (
    name: string,
    term: Term.Term,
    isFunction: boolean | undefined,
    budget: { steps: number; timeMs: number }
  ): Promise<ErrorInfo | undefined> => {
    if (isFunction === true) return undefined
    let value: Value.Value
    try {
      const step = Evaluator.start(term, { tools: registry.code(), budget }).next()
      if (step._tag !== "Done") return undefined
      value = step.value
    } catch {
      return undefined // the run reports the error itself
    }
    if (value instanceof Value.Closure) return undefined
    return {
      kind: "TypeError",
      message: `tool ${JSON.stringify(name)} is not a function (its value is ${Value.typeName(value)}); call run with {"code": ${JSON.stringify(
        name
      )}, "input": null} to get its value`
    }
  }

  const system = [evolve, run, list, help]
  // A stored tool whose name is now taken by a built-in or another module's tool stays
  // reachable through run, but is not published under that name.
  const published = (name: string, reserved: ReadonlySet<string>) => TOOL_NAME_PATTERN.test(name) && !SYSTEM_TOOLS.includes(name) && !reserved.has(name)
  return {
    name: "lambda",
    tools: () => {
      const reserved = context.reservedNames()
      return [
        ...system,
        ...registry
          .list()
          .filter((t) => published(t.name, reserved))
          .map(evolvedTool)
      ]
    },
    tool: (name) => {
      const builtIn = system.find((t) => t.name === name)
      if (builtIn !== undefined) return builtIn
      const tool = registry.get(name)
      return tool !== undefined && published(name, context.reservedNames()) ? evolvedTool(tool) : undefined
    },
    subscribe: (onChange) => registry.subscribe(() => onChange({ tools: true }))
  }
}
