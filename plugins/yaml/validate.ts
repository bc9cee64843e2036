/**
 * Checking a parsed YAML value against the agent-file schema and turning every problem into an
 * {@link Issue} with the field path, the line and column, what was expected, what was found and,
 * for typos, the nearest valid key or value.
 *
 * @since 0.1.0
 * @module
 */
import { type FieldPath, formatFieldPath, type Issue, schemaError } from "./errors.ts"
import {
  type AgentConfig,
  type AgentFile,
  AgentFileSchema,
  type GuardConfig,
  knownProviders,
  type ModelConfig,
  topLevelOnlyKeys,
  unsupportedKeys
} from "./schema.ts"
import { applyFixes, referenceFields } from "./reference.ts"
import type { Source } from "./source.ts"
import { nearest } from "./suggest.ts"
import { parseValidator, compileValidatorExpr, ValidatorSyntaxError, validatorIssue } from "./validators.ts"

// ---------------------------------------------------------------------------------------------
// Describing values
// ---------------------------------------------------------------------------------------------

const clip = (s: string, max = 40) => (s.length <= max ? s : `${s.slice(0, max)}…`)

/** What a YAML value is, for "got …" in messages. */
const describeValue = (v: unknown): string => {
  if (v === undefined) return "nothing"
  if (v === null) return "null (an empty value)"
  if (typeof v === "string") return `the string ${JSON.stringify(clip(v))}`
  if (typeof v === "number") return `the number ${v}`
  if (typeof v === "boolean") return `${v}`
  if (Array.isArray(v)) return `a list of ${v.length} item${v.length === 1 ? "" : "s"}`
  return "a mapping"
}

const valueAt = (root: unknown, path: FieldPath): unknown => {
  let v = root
  for (const segment of path) {
    if (typeof v !== "object" || v === null) return undefined
    v = (v as Record<string | number, unknown>)[segment]
  }
  return v
}

const EXPECTED_TYPE: Readonly<Record<string, string>> = {
  number: "a number",
  int: "an integer",
  string: "a string",
  boolean: "true or false",
  array: "a list",
  object: "a mapping",
  record: "a mapping",
  null: "null"
}

// ---------------------------------------------------------------------------------------------
// Walking the zod schema, for the keys allowed at a path
// ---------------------------------------------------------------------------------------------

interface ZodDef {
  readonly type: string
  readonly shape?: Record<string, unknown>
  readonly innerType?: unknown
  readonly valueType?: unknown
  readonly element?: unknown
  readonly options?: ReadonlyArray<unknown>
  readonly in?: unknown
  readonly getter?: () => unknown
}

const defOf = (schema: unknown): ZodDef => (schema as { _zod: { def: ZodDef } })._zod.def

const unwrap = (schema: unknown): unknown => {
  for (;;) {
    const def = defOf(schema)
    if (["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"].includes(def.type)) schema = def.innerType
    else if (def.type === "lazy") schema = def.getter!()
    else if (def.type === "pipe") schema = def.in
    else return schema
  }
}

/** The object schema that validates the mapping at `path`, if any. */
const objectSchemaAt = (path: FieldPath, root: unknown): unknown => {
  let schema = unwrap(AgentFileSchema)
  for (let i = 0; i <= path.length; i++) {
    const def = defOf(schema)
    if (def.type === "union") {
      const value = valueAt(root, path.slice(0, i))
      const isMapping = typeof value === "object" && value !== null && !Array.isArray(value)
      const option = def.options!.map(unwrap).find((o) => {
        const t = defOf(o).type
        return isMapping ? t === "object" || t === "record" : Array.isArray(value) ? t === "array" : t !== "object"
      })
      if (option === undefined) return undefined
      schema = option
    }
    if (i === path.length) return defOf(schema).type === "object" ? schema : undefined
    const segment = path[i]!
    const current = defOf(schema)
    if (current.type === "object") {
      const next = current.shape![String(segment)]
      if (next === undefined) return undefined
      schema = unwrap(next)
    } else if (current.type === "record") schema = unwrap(current.valueType)
    else if (current.type === "array") schema = unwrap(current.element)
    else return undefined
  }
  return undefined
}

const keysAt = (path: FieldPath, root: unknown): ReadonlyArray<string> => {
  const schema = objectSchemaAt(path, root)
  return schema === undefined ? [] : Object.keys(defOf(schema).shape!)
}

// ---------------------------------------------------------------------------------------------
// zod issues → Issues
// ---------------------------------------------------------------------------------------------

interface ZodIssue {
  readonly code: string
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
  readonly expected?: string
  readonly values?: ReadonlyArray<unknown>
  readonly keys?: ReadonlyArray<string>
  readonly origin?: string
  readonly minimum?: number | bigint
  readonly maximum?: number | bigint
  readonly inclusive?: boolean
  readonly format?: string
  readonly errors?: ReadonlyArray<ReadonlyArray<ZodIssue>>
}

const plainPath = (path: ReadonlyArray<PropertyKey>): Array<string | number> => path.map((p) => (typeof p === "symbol" ? String(p) : p))

class IssueBuilder {
  readonly issues: Array<Issue> = []

  constructor(private readonly source: Source) {}

  add(
    path: FieldPath,
    message: string,
    extra: { readonly [K in "expected" | "actual" | "suggestion" | "rule"]?: string | undefined } = {},
    part: "key" | "value" = "value"
  ): void {
    const pos = this.source.locate(path, part)
    this.issues.push({
      path,
      field: formatFieldPath(path),
      ...(pos !== undefined ? { line: pos.line, column: pos.column } : {}),
      message,
      ...Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== undefined))
    })
  }

  fromZod(issue: ZodIssue, prefix: FieldPath = []): void {
    const path = [...prefix, ...plainPath(issue.path)]
    const actualValue = valueAt(this.source.value, path)
    const actual = describeValue(actualValue)
    switch (issue.code) {
      case "invalid_type": {
        const expected = EXPECTED_TYPE[issue.expected ?? ""] ?? issue.expected ?? "a value"
        if (actualValue === undefined) {
          this.add(path, `missing required field ${JSON.stringify(String(path[path.length - 1]))} (${expected})`, { expected, actual: "missing" })
          return
        }
        let suggestion: string | undefined
        if (issue.expected === "boolean" && typeof actualValue === "string") {
          const lower = actualValue.toLowerCase()
          if (["yes", "y", "on", "true"].includes(lower)) suggestion = "true"
          if (["no", "n", "off", "false"].includes(lower)) suggestion = "false"
        }
        if (
          (issue.expected === "number" || issue.expected === "int") &&
          typeof actualValue === "string" &&
          actualValue.trim() !== "" &&
          Number.isFinite(Number(actualValue))
        ) {
          suggestion = actualValue.trim()
        }
        const hint = suggestion === undefined ? "" : ` (did you mean ${suggestion}, without quotes?)`
        this.add(path, `expected ${expected}, got ${actual}${hint}`, { expected, actual, suggestion })
        return
      }
      case "invalid_value": {
        const values = (issue.values ?? []).map(String)
        const expected = values.length === 1 ? JSON.stringify(values[0]) : `one of ${values.join(", ")}`
        if (actualValue === undefined) {
          this.add(path, `missing required field ${JSON.stringify(String(path[path.length - 1]))} (${expected})`, { expected, actual: "missing" })
          return
        }
        const suggestion = typeof actualValue === "string" ? nearest(actualValue, values) : undefined
        const unsupported =
          path[path.length - 1] === "type" && typeof actualValue === "string" && Object.hasOwn(unsupportedKeys, actualValue)
            ? ` (${unsupportedKeys[actualValue as string]})`
            : ""
        const hint = suggestion === undefined ? unsupported : ` (did you mean ${JSON.stringify(suggestion)}?)`
        this.add(path, `expected ${expected}, got ${actual}${hint}`, { expected, actual, suggestion })
        return
      }
      case "unrecognized_keys": {
        const allowed = keysAt(path, this.source.value)
        for (const key of issue.keys ?? []) {
          const at = [...path, key]
          if (Object.hasOwn(unsupportedKeys, key)) {
            this.add(at, `${JSON.stringify(key)} is not supported: ${unsupportedKeys[key]}`, { expected: "a supported key", actual: key }, "key")
          } else if ((topLevelOnlyKeys as ReadonlyArray<string>).includes(key) && path.length > 0) {
            this.add(
              at,
              `${JSON.stringify(key)} is only allowed at the top level of the file`,
              { expected: `one of ${allowed.join(", ")}`, actual: key },
              "key"
            )
          } else {
            const suggestion = nearest(key, allowed)
            const hint = suggestion === undefined ? "" : ` (did you mean ${JSON.stringify(suggestion)}?)`
            this.add(at, `unknown key ${JSON.stringify(key)}${hint}`, { expected: `one of ${allowed.join(", ")}`, actual: key, suggestion }, "key")
          }
        }
        return
      }
      case "too_small":
      case "too_big": {
        const small = issue.code === "too_small"
        const bound = String(small ? issue.minimum : issue.maximum)
        let expected: string
        if (issue.origin === "array") expected = small ? `at least ${bound} item${bound === "1" ? "" : "s"}` : `at most ${bound} items`
        else if (issue.origin === "string") expected = small && bound === "1" ? "a non-empty string" : `${small ? "at least" : "at most"} ${bound} characters`
        else {
          const what = issue.origin === "int" ? "an integer" : "a number"
          expected = `${what} ${small ? (issue.inclusive === false ? ">" : "≥") : issue.inclusive === false ? "<" : "≤"} ${bound}`
        }
        this.add(path, `expected ${expected}, got ${actual}`, { expected, actual })
        return
      }
      case "invalid_format": {
        const expected = issue.format === "url" ? "a URL (https://…)" : issue.format === "regex" ? issue.message : `a ${issue.format ?? "well-formed"} string`
        this.add(path, `expected ${expected}, got ${actual}`, { expected, actual })
        return
      }
      case "invalid_union": {
        // Report the branch that matches the kind of value written (a mapping → the sub-agent).
        const branches = issue.errors ?? []
        const relevant = branches.find((b) => !b.some((i) => i.code === "invalid_type" && i.path.length === 0))
        if (relevant !== undefined) {
          for (const inner of relevant) this.fromZod(inner, path)
          return
        }
        const expected = branches
          .map((b) => b.find((i) => i.code === "invalid_type" && i.path.length === 0)?.expected)
          .filter((e): e is string => e !== undefined)
          .map((e) => EXPECTED_TYPE[e] ?? e)
          .join(" or ")
        this.add(path, `expected ${expected}, got ${actual}`, { expected, actual })
        return
      }
      default:
        this.add(path, issue.message, { actual })
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Walking agents
// ---------------------------------------------------------------------------------------------

/**
 * An agent of the file with its path: the top level first, then sub-agents depth first in file
 * order.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { agentsOf, type AgentAt } from "lambdagent/yaml"
 * const all: ReadonlyArray<AgentAt> = agentsOf({ type: "simple", systemPrompt: "Hi" })
 * ```
 */
export interface AgentAt {
  readonly agent: AgentConfig
  readonly path: FieldPath
  readonly type: AgentConfig["type"] & string
  /** The agent's display name (its `name`, `agentId`, or where it sits). */
  readonly name: string
}

/**
 * Every agent of a file: the top level, then router routes, the router default and parallel
 * branches, depth first in file order. For a file `validateConfig` returned the list is made once
 * and kept (such a file is read, never changed); any other file is walked at every call.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { agentsOf } from "lambdagent/yaml"
 * agentsOf({ type: "router", router: { classifier: { prompt: "?" }, routes: { a: { systemPrompt: "A" } } } }).length // 2
 * ```
 */
export const agentsOf = (file: AgentConfig): ReadonlyArray<AgentAt> => {
  // Validation, lint and compile each walk the agents of a file validateConfig made: a router
  // with many routes is listed once. Files built elsewhere may be changed between calls.
  if (!validatedFiles.has(file)) return listAgents(file)
  let found = agentsCache.get(file)
  if (found === undefined) {
    found = listAgents(file)
    agentsCache.set(file, found)
  }
  return found
}

/** The files validateConfig returned: objects of its own that nothing changes afterwards. */
const validatedFiles = new WeakSet<AgentConfig>()
const agentsCache = new WeakMap<AgentConfig, ReadonlyArray<AgentAt>>()

const listAgents = (file: AgentConfig): ReadonlyArray<AgentAt> => {
  const out: Array<AgentAt> = []
  const stack: Array<{ agent: AgentConfig; path: FieldPath; fallbackName: string }> = [{ agent: file, path: [], fallbackName: "agent" }]
  while (stack.length > 0) {
    const { agent, fallbackName, path } = stack.pop()!
    out.push({ agent, path, type: agent.type ?? "simple", name: agent.name ?? agent.agentId ?? fallbackName })
    const children: Array<{ agent: AgentConfig; path: FieldPath; fallbackName: string }> = []
    for (const [label, route] of Object.entries(agent.router?.routes ?? {})) {
      if (typeof route === "object") children.push({ agent: route, path: [...path, "router", "routes", label], fallbackName: label })
    }
    if (typeof agent.router?.default === "object") {
      children.push({ agent: agent.router.default, path: [...path, "router", "default"], fallbackName: "default" })
    }
    agent.parallel?.agents.forEach((a, i) => children.push({ agent: a, path: [...path, "parallel", "agents", i], fallbackName: `agent${i + 1}` }))
    agent.groupchat?.agents.forEach((a, i) => children.push({ agent: a, path: [...path, "groupchat", "agents", i], fallbackName: `agent${i + 1}` }))
    if (agent.groupchat?.summaryAgent !== undefined) {
      children.push({ agent: agent.groupchat.summaryAgent, path: [...path, "groupchat", "summaryAgent"], fallbackName: "summary" })
    }
    for (const [label, a] of Object.entries(agent.handoff?.registry ?? {}))
      children.push({ agent: a, path: [...path, "handoff", "registry", label], fallbackName: label })
    if (agent.handoff?.fallback !== undefined)
      children.push({ agent: agent.handoff.fallback, path: [...path, "handoff", "fallback"], fallbackName: "fallback" })
    if (path.length === 0) {
      const top = agent as AgentFile
      for (const [name, sub] of Object.entries(top.subAgents ?? {})) {
        if (sub.inline !== undefined) children.push({ agent: sub.inline, path: ["subAgents", name, "inline"], fallbackName: name })
      }
      top.skills?.forEach((skill, i) => children.push({ agent: skill.agent, path: ["skills", i, "agent"], fallbackName: skill.name }))
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
  }
  return out
}

/**
 * Every `model:` block of an agent (its own, each chain step's, the classifier's) with its path.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { modelsOf } from "lambdagent/yaml"
 * modelsOf({ model: { temperature: 2 } }, []).map((m) => m.path.join(".")) // ["model"]
 * ```
 */
export const modelsOf = (agent: AgentConfig, path: FieldPath): ReadonlyArray<{ readonly model: ModelConfig; readonly path: FieldPath }> => {
  const out: Array<{ model: ModelConfig; path: FieldPath }> = []
  if (agent.model !== undefined) out.push({ model: agent.model, path: [...path, "model"] })
  agent.chain?.steps.forEach((s, i) => {
    if (s.model !== undefined) out.push({ model: s.model, path: [...path, "chain", "steps", i, "model"] })
  })
  if (agent.router?.classifier.model !== undefined) out.push({ model: agent.router.classifier.model, path: [...path, "router", "classifier", "model"] })
  return out
}

/**
 * Every `guard:` block of an agent (its own and each chain step's) with its path.
 *
 * @since 0.1.0
 * @category analyses
 * @example
 * ```ts
 * import { guardsOf } from "lambdagent/yaml"
 * guardsOf({ guard: { validator: "len(x) > 0" } }, []).length // 1
 * ```
 */
export const guardsOf = (agent: AgentConfig, path: FieldPath): ReadonlyArray<{ readonly guard: GuardConfig; readonly path: FieldPath }> => {
  const out: Array<{ guard: GuardConfig; path: FieldPath }> = []
  if (agent.guard !== undefined) out.push({ guard: agent.guard, path: [...path, "guard"] })
  agent.chain?.steps.forEach((s, i) => {
    if (s.guard !== undefined) out.push({ guard: s.guard, path: [...path, "chain", "steps", i, "guard"] })
  })
  return out
}

// ---------------------------------------------------------------------------------------------
// Checks beyond the schema
// ---------------------------------------------------------------------------------------------

const structureIssues = (file: AgentFile, source: Source, issues: IssueBuilder, providers: ReadonlySet<string>): void => {
  const checkExpression = (expression: string, at: FieldPath) => {
    try {
      compileValidatorExpr(parseValidator(expression))
    } catch (e) {
      if (!(e instanceof ValidatorSyntaxError)) throw e
      issues.issues.push(validatorIssue(e, expression, { path: at, locate: (offset) => source.locateInString(at, offset) }))
    }
  }
  for (const { agent, path, type } of agentsOf(file)) {
    const block =
      type === "chain"
        ? agent.chain
        : type === "router"
          ? agent.router
          : type === "parallel"
            ? agent.parallel
            : type === "groupchat"
              ? agent.groupchat
              : type === "handoff"
                ? agent.handoff
                : type === "skill"
                  ? agent.skill
                  : true
    if (block === undefined) {
      const typePath = agent.type === undefined ? path : [...path, "type"]
      issues.add(typePath, `type ${type} needs a ${type}: block`, { expected: `a ${type}: block`, actual: "missing" })
    }
    agent.chain?.steps.forEach((step, i) => {
      const at = [...path, "chain", "steps", i]
      const kinds = (["prompt", "tool", "ask"] as const).filter((k) => step[k] !== undefined)
      if (kinds.length > 1) {
        issues.add([...at, kinds[1]!], `a step is one of an LLM step (prompt), a tool step (tool) or an ask step (ask), not ${kinds.join(" and ")}`, {
          expected: "prompt, tool or ask",
          actual: kinds.join(" and ")
        })
      } else if (kinds.length === 0) {
        issues.add(at, "a step needs a prompt (an LLM step), a tool (a tool step) or an ask (a question to a person)", {
          expected: "prompt, tool or ask",
          actual: "none"
        })
      }
    })
    if (agent.parallel?.merge === "custom" && agent.parallel.mergePrompt === undefined) {
      issues.add([...path, "parallel", "merge"], "merge: custom needs a mergePrompt for the merging LLM", { expected: "a mergePrompt", actual: "missing" })
    }
    for (const label of Object.keys(agent.router?.routes ?? {})) {
      if (label === "__proto__") issues.add([...path, "router", "routes", label], '"__proto__" cannot be a route label', { actual: label }, "key")
    }
    for (const { guard, path: at } of guardsOf(agent, path)) {
      if (guard.validator === undefined && guard.maxOutputLength === undefined) {
        issues.add(at, "a guard needs a validator or maxOutputLength", { expected: "validator or maxOutputLength", actual: "neither" })
      }
      if (guard.validator !== undefined) checkExpression(guard.validator, [...at, "validator"])
    }
    if (agent.react?.earlyStop !== undefined) checkExpression(agent.react.earlyStop, [...path, "react", "earlyStop"])
    const custom = agent.groupchat?.termination?.custom
    if (custom !== undefined) checkExpression(custom, [...path, "groupchat", "termination", "custom"])
    if (agent.groupchat?.scheduler === "llm" && agent.groupchat.schedulerPrompt !== undefined && agent.groupchat.schedulerPrompt.trim() === "") {
      issues.add([...path, "groupchat", "schedulerPrompt"], "the schedulerPrompt is empty", { expected: "a non-empty prompt", actual: "an empty string" })
    }
    for (const label of Object.keys(agent.handoff?.registry ?? {})) {
      if (/\s/.test(label) || label === "__proto__") {
        issues.add(
          [...path, "handoff", "registry", label],
          `${JSON.stringify(label)} cannot name a delegate (a hand-off names it in one word)`,
          { expected: "a name without spaces", actual: label },
          "key"
        )
      }
    }
    if (type === "skill" && agent.skill !== undefined) {
      const tags = agent.skill.tags
      const candidates = (file.skills ?? []).filter((s) => tags === undefined || s.tags?.some((t) => tags.includes(t)))
      if (candidates.length === 0) {
        issues.add(
          [...path, "skill", ...(tags !== undefined ? ["tags"] : [])],
          tags === undefined ? "type skill needs skills: in the file" : `no skill has a tag among ${tags.join(", ")}`,
          { expected: "at least one skill to select", actual: "none" }
        )
      }
    }
    agent.handoff?.selector.targets?.forEach((target, i) => {
      if (!Object.hasOwn(agent.handoff!.registry, target)) {
        issues.add([...path, "handoff", "selector", "targets", i], `target ${JSON.stringify(target)} is not in the registry`, {
          expected: `one of ${Object.keys(agent.handoff!.registry).join(", ")}`,
          actual: target
        })
      }
    })
    for (const { model, path: at } of modelsOf(agent, path)) {
      if (model.provider !== undefined && !providers.has(model.provider)) {
        const suggestion = nearest(model.provider, providers)
        const hint = suggestion === undefined ? "" : ` (did you mean ${JSON.stringify(suggestion)}?)`
        issues.add([...at, "provider"], `unknown provider ${JSON.stringify(model.provider)}${hint}`, {
          expected: `one of ${[...providers].join(", ")}`,
          actual: model.provider,
          suggestion
        })
      }
    }
  }
  for (const [name, sub] of Object.entries(file.subAgents ?? {})) {
    if ((sub.inline === undefined) === (sub.config === undefined)) {
      issues.add(["subAgents", name], "a sub-agent needs inline (its config) or config (the path of its file), not both", {
        expected: "inline or config",
        actual: sub.inline === undefined ? "neither" : "both"
      })
    }
  }
  const skillNames = new Set<string>()
  file.skills?.forEach((skill, i) => {
    if (skillNames.has(skill.name))
      issues.add(["skills", i, "name"], `a second skill named ${JSON.stringify(skill.name)}`, { expected: "a unique name", actual: skill.name })
    skillNames.add(skill.name)
  })
  const servers = new Map<string, number>()
  file.mcpServers?.forEach((server, i) => {
    const at = ["mcpServers", i]
    if (server.transport === "http" && server.url === undefined) {
      issues.add([...at, "transport"], "transport http needs a url", { expected: "a url", actual: "missing" })
    }
    if (server.transport === "stdio" && server.command === undefined) {
      issues.add([...at, "transport"], "transport stdio needs a command", { expected: "a command", actual: "missing" })
    }
    const previous = servers.get(server.name)
    if (previous !== undefined) {
      issues.add([...at, "name"], `a second server named ${JSON.stringify(server.name)} (the first is mcpServers[${previous}])`, {
        expected: "a unique name",
        actual: server.name
      })
    } else servers.set(server.name, i)
  })
  const clients = new Set<string>()
  file.a2a?.clients?.forEach((client, i) => {
    if (clients.has(client.name)) {
      issues.add(["a2a", "clients", i, "name"], `a second A2A client named ${JSON.stringify(client.name)}`, { expected: "a unique name", actual: client.name })
    }
    clients.add(client.name)
  })
}

/**
 * Options of {@link validateConfig}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ValidateOptions } from "lambdagent/yaml"
 * const o: ValidateOptions = { providers: ["my-gateway"] }
 * ```
 */
export interface ValidateOptions {
  /** Provider names accepted besides {@link knownProviders} (those a runtime adds). */
  readonly providers?: Iterable<string>
}

/**
 * Check a parsed document: the schema, then what the schema cannot say (the block a type needs,
 * step kinds, validator expressions, provider names, MCP server transports). Throws a
 * `SchemaError` listing every problem, each with its position.
 *
 * @since 0.1.0
 * @category validation
 * @example
 * ```ts
 * import { parseSource, validateConfig } from "lambdagent/yaml"
 * const file = validateConfig(parseSource("type: simple\nsystemPrompt: Hi\n"))
 * console.log(file.type) // "simple"
 * ```
 */
export const validateConfig = (source: Source, options: ValidateOptions = {}): AgentFile => {
  const issues = new IssueBuilder(source)
  const value = source.value
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const actual = describeValue(value)
    issues.add(
      [],
      value === null || value === undefined
        ? "the file is empty: expected a mapping with at least type (and systemPrompt for simple and react agents)"
        : `expected a mapping of agent fields, got ${actual}`,
      { expected: "a mapping", actual }
    )
    throw schemaError(issues.issues, source.file)
  }
  // Fields of the Python reference's format with no meaning here are read as `lambdagent migrate` would rewrite them (lint L051 names each).
  const parsed = AgentFileSchema.safeParse(
    applyFixes(
      value,
      referenceFields(value).map((f) => f.fix)
    )
  )
  if (!parsed.success) {
    for (const issue of parsed.error.issues) issues.fromZod(issue as unknown as ZodIssue)
    throw schemaError(dedupe(issues.issues), source.file)
  }
  const providers = new Set<string>([...knownProviders, ...(options.providers ?? [])])
  validatedFiles.add(parsed.data)
  structureIssues(parsed.data, source, issues, providers)
  if (issues.issues.length > 0) throw schemaError(dedupe(issues.issues), source.file)
  const file = withBareCliNames(parsed.data)
  validatedFiles.add(file)
  return file
}

/**
 * The file with every reference to a program of `cli.agents` written `cli:NAME` (the seed's name
 * for it) turned into `NAME`, the name the tool has: models see it, and providers allow no `:` in
 * a tool's name. References are the entries of `localTools`, the `tool` of chain steps and the
 * steps of `cli.pipelines`; a `cli:NAME` with no program `NAME` is left as written (and
 * reported as an unknown tool).
 */
const withBareCliNames = (file: AgentFile): AgentFile => {
  const programs = new Set(Object.keys(file.cli?.agents ?? {}))
  if (programs.size === 0) return file
  const bare = (name: unknown) => (typeof name === "string" && name.startsWith("cli:") && programs.has(name.slice(4)) ? name.slice(4) : name)
  const walk = (value: unknown, key: string | undefined): unknown => {
    if (Array.isArray(value)) {
      if (key === "localTools") return value.map(bare)
      if (key === "steps")
        return value.map((step) =>
          typeof step === "string"
            ? bare(step)
            : walk(typeof step === "object" && step !== null && "tool" in step ? { ...step, tool: bare(step.tool) } : step, undefined)
        )
      return value.map((v) => walk(v, undefined))
    }
    if (typeof value !== "object" || value === null) return value
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = walk(v, k)
    return out
  }
  return walk(file, undefined) as AgentFile
}

const dedupe = (issues: ReadonlyArray<Issue>): ReadonlyArray<Issue> => {
  const seen = new Set<string>()
  return issues.filter((i) => {
    const key = `${i.field}\u0000${i.message}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
