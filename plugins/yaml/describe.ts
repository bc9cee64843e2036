/**
 * Showing a compiled agent: {@link describe} (the structure, the constructs it uses, its worst
 * case), {@link toLambdaExpr} (the term in lambda notation or JSON) and {@link desugar} (the
 * combinators that have a pure-λ meaning, rewritten into `lam`/`app`/`if`/`pair`).
 *
 * @since 0.1.0
 * @module
 */
import { SharedMemory, Term } from "lambdagent"
import { type Bounds, bounds } from "./bounds.ts"
import { type CompiledAgent, type ConfigInput, loadConfig, type Overrides, type ToolReference } from "./compile.ts"
import { formatFieldPath } from "./errors.ts"

// ---------------------------------------------------------------------------------------------
// Structure
// ---------------------------------------------------------------------------------------------

const SUBSCRIPT = "₀₁₂₃₄₅₆₇₈₉"
const sub = (n: number) => String(n).replace(/\d/g, (d) => SUBSCRIPT[Number(d)]!)

const indent = (lines: ReadonlyArray<string>, by = "  ") => lines.map((l) => by + l)

/** Append `suffix` to the last line. */
const withSuffix = (lines: ReadonlyArray<string>, suffix: string): Array<string> =>
  lines.length === 0 ? [suffix] : [...lines.slice(0, -1), lines[lines.length - 1]! + suffix]

const toolLabel = (name: string, refs: ReadonlyMap<string, ToolReference>): string => {
  const ref = refs.get(name)
  switch (ref?.kind) {
    case "mcp":
      return `Tool_MCP(${ref.server ?? "?"}/${name})`
    case "cli":
      return `Tool_CLI(${name})`
    case "a2a":
      return `Tool_A2A(${name})`
    case "terminate":
      return "λx. x"
    case "shared":
      return `Tool_Σ(${name})`
    default:
      return `Tool(${name})`
  }
}

/** The name a shared-memory publishing stage records its input under (`λy. (λ_. y) (shared_publish [name, y])`). */
const publishedName = (t: Term.Term): string | undefined => {
  if (t._tag !== "Lam" || t.body._tag !== "App" || t.body.arg._tag !== "App") return undefined
  const call = t.body.arg
  if (call.func._tag !== "Tool" || call.func.name !== SharedMemory.toolNames.publish || call.arg._tag !== "List") return undefined
  const first = call.arg.items[0]
  return first?._tag === "Lit" && typeof first.value === "string" ? first.value : undefined
}

/** The agent forms as an indented tree; pure parts and single calls on one line. */
const structure = (t: Term.Term, agent: CompiledAgent, refs: ReadonlyMap<string, ToolReference>): Array<string> => {
  const recur = (x: Term.Term) => structure(x, agent, refs)
  const published = publishedName(t)
  if (published !== undefined) return [`λy. Σ ∪ {${JSON.stringify(published)} ↦ y}; y`]
  switch (t._tag) {
    case "Tool":
      return [toolLabel(t.name, refs)]
    case "Compose":
      return t.stages.flatMap((stage, i) => {
        const lines = recur(stage)
        return i === 0 ? lines : [`>> ${lines[0]}`, ...indent(lines.slice(1), "   ")]
      })
    case "Loop":
      return [
        `Y${sub(t.max)}(`,
        ...indent(t.until === undefined ? recur(t.body) : [...withSuffix(recur(t.body), ","), ...withSuffix(["until"], ` ${Term.pretty(t.until)}`)]),
        ")"
      ]
    case "Route": {
      const cases = t.routes.map(([label, a], i) => {
        const lines = recur(a)
        const last = i === t.routes.length - 1 && t.default === undefined
        return withSuffix([`(${JSON.stringify(label)}, ${lines[0]}`, ...indent(lines.slice(1))], last ? ")" : "),")
      })
      if (t.default !== undefined) {
        const lines = recur(t.default)
        cases.push(withSuffix([`(_, ${lines[0]}`, ...indent(lines.slice(1))], ")"))
      }
      const classify = recur(t.classify)
      return [`CASE (${classify.join(" ")}) [`, ...indent(cases.flat()), "]"]
    }
    case "Par": {
      const head = t.branches.length === 2 ? "PAIR" : "PAR"
      const branches = t.branches.map((b, i) => withSuffix(recur(b), i < t.branches.length - 1 ? "," : ""))
      const merge =
        t.merge === "tuple"
          ? []
          : t.merge === "concat"
            ? [">> concat"]
            : (() => {
                const lines = recur(t.merge)
                return [`>> ${lines[0]}`, ...indent(lines.slice(1), "   ")]
              })()
      return [`${head}(`, ...indent(branches.flat()), ")", ...merge]
    }
    case "Guard": {
      const fallback = typeof t.fallback === "string" ? t.fallback : Term.pretty(t.fallback.value)
      return ["Guard(", ...indent(withSuffix(recur(t.agent), ",")), `  P = ${Term.pretty(t.validate)},`, `  retry=${t.retry}, fallback=${fallback}`, ")"]
    }
    case "Memory": {
      const path = agent.origins.get(t)
      const requirement = agent.memory.find((m) => path !== undefined && m.path === formatFieldPath(path))
      const store = requirement?.strategy ?? "store"
      return ["Memory(", ...indent(withSuffix(recur(t.agent), ",")), `  Γ ∪ ${store}{size=${t.size}, ttl=${t.ttl}, scope=${t.scope}}`, ")"]
    }
    case "React": {
      const cases = [...t.tools.filter((n) => n !== "terminate").map((n) => `(${n}, ${toolLabel(n, refs)})`), "(terminate, λx. x)"]
      return [
        `Y${sub(t.maxSteps)}(λself. λstate.`,
        `  let t = ${recur(t.think).join(" ")}(state) in`,
        `  CASE t [${cases.join(", ")}]`,
        `  >> IF is_terminate THEN t ELSE self(state ⊕ obs)`,
        ")"
      ]
    }
    default:
      return [Term.pretty(t)]
  }
}

const CONSTRUCTS = ["Llm", "Tool", "Compose", "Loop", "Route", "Par", "Guard", "Memory", "React", "Lam"] as const

/** How many nodes of each agent form (and λ) the term has; react tool lists count as tools. */
const constructs = (term: Term.Term): Record<string, number> => {
  const counts: Record<string, number> = {}
  const stack = [term]
  while (stack.length > 0) {
    const t = stack.pop()!
    if ((CONSTRUCTS as ReadonlyArray<string>).includes(t._tag)) counts[t._tag] = (counts[t._tag] ?? 0) + 1
    if (t._tag === "React") counts.Tool = (counts.Tool ?? 0) + t.tools.length
    stack.push(...Term.children(t))
  }
  return Object.fromEntries(CONSTRUCTS.filter((c) => counts[c] !== undefined).map((c) => [c, counts[c]!]))
}

/**
 * What {@link description} reports about an agent.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { description } from "lambdagent/yaml"
 * const d = description("examples/agents/react.yml")
 * console.log(d.bounds.llmCalls, d.maxSteps) // 12 [12]
 * ```
 */
export interface Description {
  readonly name: string
  readonly type: string
  /** The multi-line structure, as `compile` prints it. */
  readonly structure: string
  /** The term in one line of lambda notation. */
  readonly lambda: string
  /** Agent forms used, by tag (`Tool` counts tool references). */
  readonly constructs: Readonly<Record<string, number>>
  readonly bounds: Bounds
  /** The bounds of the ReAct loops, outermost first. */
  readonly maxSteps: ReadonlyArray<number>
  /** Whether a ReAct loop has the terminate base case. */
  readonly baseCase: boolean
  readonly tools: ReadonlyArray<{ readonly name: string; readonly kind: string; readonly server?: string }>
  readonly memory: CompiledAgent["memory"]
  /** The shared memory, when the file enables one. */
  readonly sharedMemory?: CompiledAgent["sharedMemory"]
  /** `runtime.engine`, when the file chooses one (every choice runs on the one machine). */
  readonly engine?: string
}

const compiledOf = (input: CompiledAgent | ConfigInput, overrides: Overrides): CompiledAgent =>
  typeof input === "object" && "term" in input ? input : loadConfig(input, overrides)

/**
 * The facts about a compiled agent: structure, constructs, worst case, tools, memory.
 *
 * @since 0.1.0
 * @category describing
 * @example
 * ```ts
 * import { description } from "lambdagent/yaml"
 * description("examples/agents/chain.yml").constructs // { Llm: 3, Compose: 1, Guard: 1, Lam: 1 }
 * ```
 */
export const description = (input: CompiledAgent | ConfigInput, overrides: Overrides = {}): Description => {
  const agent = compiledOf(input, overrides)
  const refs = new Map(agent.tools.map((t) => [t.name, t]))
  const reacts: Array<Term.Of<"React">> = []
  const stack = [agent.term]
  while (stack.length > 0) {
    const t = stack.pop()!
    if (t._tag === "React") reacts.push(t)
    const kids = Term.children(t)
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!)
  }
  const counted = constructs(agent.term)
  const toolCount = agent.tools.length
  return {
    name: agent.name,
    type: agent.type,
    structure: structure(agent.term, agent, refs).join("\n"),
    lambda: Term.pretty(agent.term),
    constructs: { ...counted, ...(toolCount > 0 ? { Tool: toolCount } : {}) },
    bounds: bounds(agent.term),
    maxSteps: reacts.map((r) => r.maxSteps),
    baseCase: reacts.some((r) => r.tools.includes("terminate")),
    tools: agent.tools.map((t) => ({ name: t.name, kind: t.kind, ...(t.server !== undefined ? { server: t.server } : {}) })),
    memory: agent.memory,
    ...(agent.sharedMemory !== undefined ? { sharedMemory: agent.sharedMemory } : {}),
    ...(agent.runtime.engine !== undefined ? { engine: agent.runtime.engine } : {})
  }
}

/** What `runtime.engine` changes here: nothing but the record, since there is one machine. */
const ENGINE_NOTE = "recorded; every engine runs on the one explicit-stack machine, with the same results and no JS stack limit"

const count = (n: number) => (n === Infinity ? "unbounded" : String(n))

/**
 * The `compile` command's text: the agent's structure, the constructs it uses, its worst case,
 * its loop bounds and tools.
 *
 * @since 0.1.0
 * @category describing
 * @example
 * ```ts
 * import { describe } from "lambdagent/yaml"
 * console.log(describe("examples/agents/simple.yml"))
 * // Summarizer =
 * //   Summarizer:LLM_{anthropic/claude-sonnet-4-20250514, θ=0.3}("Summarize the text you are given in three sentence…")
 * //
 * // Constructs used: Llm
 * // Worst case: 1 LLM call, 0 tool calls per input
 * ```
 */
export const describe = (input: CompiledAgent | ConfigInput, overrides: Overrides = {}): string => {
  const d = description(input, overrides)
  const used = Object.entries(d.constructs)
    .map(([tag, n]) => (n > 1 ? `${tag}(×${n})` : tag))
    .join(", ")
  const lines = [
    `${d.name} =`,
    ...indent(d.structure.split("\n")),
    "",
    `Constructs used: ${used}`,
    `Worst case: ${count(d.bounds.llmCalls)} LLM call${d.bounds.llmCalls === 1 ? "" : "s"}, ${count(d.bounds.toolCalls)} tool call${d.bounds.toolCalls === 1 ? "" : "s"} per input`
  ]
  if (d.maxSteps.length > 0)
    lines.push(
      `β-reduction bound: react loop${d.maxSteps.length > 1 ? "s" : ""} of at most ${d.maxSteps.join(", ")} step${d.maxSteps.length === 1 && d.maxSteps[0] === 1 ? "" : "s"}`
    )
  if (d.baseCase) lines.push("Base case: terminate = λx.x")
  if (d.tools.length > 0) {
    lines.push(`Tools: ${d.tools.map((t) => `${t.name} (${t.kind}${t.server !== undefined ? ` ${t.server}` : ""})`).join(", ")}`)
  }
  for (const m of d.memory) lines.push(`Memory: ${m.path} → ${m.strategy} store, size=${m.size}, ttl=${m.ttl}s, scope=${m.scope}`)
  const s = d.sharedMemory
  if (s !== undefined) {
    const where =
      s.strategy === "sqlite"
        ? ` ${s.path}`
        : s.strategy === "redis"
          ? ` ${s.url ?? "$LAMBDAGENT_REDIS_URL"}`
          : s.strategy === "custom"
            ? ` ${s.customStore ?? "(overrides)"}`
            : ""
    lines.push(`Shared memory: ${s.strategy} store${where}, namespace=${s.namespace}, ${s.appendOnly ? "append-only" : "rebindable"}, size=${s.size}`)
  }
  if (d.engine !== undefined) lines.push(`Engine: ${d.engine} (${ENGINE_NOTE})`)
  return lines.join("\n")
}

// ---------------------------------------------------------------------------------------------
// Desugaring
// ---------------------------------------------------------------------------------------------

/**
 * Rewrite the combinators that have a pure-λ meaning into `lam`, `app`, `if`, `pair` and a
 * fixed-point combinator: `compose` into nested applications, `loop` (unless it fails on
 * exhaustion) and `guard` (unless its fallback is `error`) into recursion over a counter. LLM
 * calls, tools, routes, parallel branches, memory and ReAct loops are oracles or need string
 * primitives, so they stay; their sub-terms are desugared. The result evaluates to the same
 * values.
 *
 * @since 0.1.0
 * @category describing
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { desugar } from "lambdagent/yaml"
 * const inc = Term.lam("n", Term.add(Term.var("n"), Term.lit(1)))
 * Term.pretty(desugar(Term.compose([inc, inc]))) // "λ_x1. (λn. n + 1) ((λn. n + 1) _x1)"
 * ```
 */
export const desugar = (term: Term.Term): Term.Term => {
  const taken = new Set<string>()
  const stack = [term]
  while (stack.length > 0) {
    const t = stack.pop()!
    if (t._tag === "Lam") taken.add(t.param)
    if (t._tag === "Var") taken.add(t.name)
    stack.push(...Term.children(t))
  }
  let counter = 0
  const fresh = (base: string) => {
    let name: string
    do name = `_${base}${++counter}`
    while (taken.has(name))
    taken.add(name)
    return name
  }
  const { app, lam, lit } = Term
  const v = Term.var
  /** Z = λf. (λw. f (λa. w w a)) (λw. f (λa. w w a)) — a call-by-value fixed point. */
  const fix = (): Term.Term => {
    const f = fresh("f")
    const w = fresh("w")
    const a = fresh("a")
    const half = lam(w, app(v(f), lam(a, app(app(v(w), v(w)), v(a)))))
    return lam(f, app(half, half))
  }

  const rewrite = (t: Term.Term): Term.Term => {
    const kids = Term.children(t).map(rewrite)
    const node = kids.length === 0 ? t : Term.withChildren(t, kids)
    switch (node._tag) {
      case "Compose": {
        const x = fresh("x")
        return lam(
          x,
          node.stages.reduce<Term.Term>((acc, stage) => app(stage, acc), v(x))
        )
      }
      case "Loop": {
        if (node.failOnExhaustion === true) return node
        const x = fresh("x")
        const self = fresh("self")
        const p = fresh("p")
        const r = fresh("r")
        const next = app(v(self), Term.pair(Term.add(Term.fst(v(p)), lit(1)), v(r)))
        const afterBody = node.until === undefined ? next : Term.if(app(node.until, v(r)), v(r), next)
        const step = lam(self, lam(p, Term.if(Term.gte(Term.fst(v(p)), lit(node.max)), Term.snd(v(p)), app(lam(r, afterBody), app(node.body, Term.snd(v(p)))))))
        return lam(x, app(app(fix(), step), Term.pair(lit(0), v(x))))
      }
      case "Guard": {
        if (node.fallback === "error") return node
        const x = fresh("x")
        const self = fresh("self")
        const n = fresh("n")
        const r = fresh("r")
        const fallback = node.fallback === "empty" ? lit("") : node.fallback === "last" ? v(r) : node.fallback.value
        const attempt = lam(
          r,
          Term.if(app(node.validate, v(r)), v(r), Term.if(Term.gte(v(n), lit(node.retry)), fallback, app(v(self), Term.add(v(n), lit(1)))))
        )
        const step = lam(self, lam(n, app(attempt, app(node.agent, v(x)))))
        return lam(x, app(app(fix(), step), lit(0)))
      }
      default:
        return node
    }
  }
  return rewrite(term)
}

// ---------------------------------------------------------------------------------------------
// Lambda export
// ---------------------------------------------------------------------------------------------

/**
 * Options of {@link toLambdaExpr}.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { LambdaExprOptions } from "lambdagent/yaml"
 * const o: LambdaExprOptions = { format: "formal", desugar: true }
 * ```
 */
export interface LambdaExprOptions {
  /** `human` (infix, default), `formal` (prefix, fully parenthesised) or `json`. */
  readonly format?: "human" | "formal" | "json"
  /** Rewrite the combinators with a pure-λ meaning first (see {@link desugar}). */
  readonly desugar?: boolean
  readonly overrides?: Overrides
}

const toolLambda = (t: ToolReference): string => {
  switch (t.kind) {
    case "mcp":
      return `λx. MCP(${JSON.stringify(t.server ?? "")}, ${JSON.stringify(t.name)}, x)`
    case "cli":
      return `λx. exec(${JSON.stringify(t.cli?.command ?? t.name)}, x)`
    case "a2a":
      return `λx. A2A(${JSON.stringify(t.a2a?.url ?? t.name)}, x)`
    case "terminate":
      return "λx. x"
    case "rag":
      return t.name === "rag_retrieve" ? "λq. Retrieve(q)" : "λx. Retrieve(x) ++ x"
    case "builtin":
      return `λx. ${t.name.replace(/^__builtin_/, "")}(x)`
    default:
      return `λx. Tool(${JSON.stringify(t.name)}, x)`
  }
}

const jsonText = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? (JSON as unknown as { rawJSON: (s: string) => unknown }).rawJSON(v.toString()) : v), 2)

/**
 * The agent as a lambda expression: `Name = <term>` in human or formal notation (see
 * `Term.pretty`), or JSON `{name, type, lambda, term, tools}` where `term` is the term's canonical
 * JSON and each tool has a lambda reading.
 *
 * @since 0.1.0
 * @category describing
 * @example
 * ```ts
 * import { toLambdaExpr } from "lambdagent/yaml"
 * toLambdaExpr("type: simple\nname: S\nsystemPrompt: Summarize.\n", { format: "formal" })
 * // 'S = (λx. LLM("Summarize.")(x))'
 * ```
 */
export const toLambdaExpr = (input: CompiledAgent | ConfigInput, options: LambdaExprOptions = {}): string => {
  const agent = compiledOf(input, options.overrides ?? {})
  const term = options.desugar === true ? desugar(agent.term) : agent.term
  const format = options.format ?? "human"
  if (format === "json") {
    return jsonText({
      name: agent.name,
      type: agent.type,
      lambda: Term.pretty(term),
      term: Term.encode(term),
      tools: agent.tools.map((t) => ({ name: t.name, kind: t.kind, lambda: toolLambda(t) }))
    })
  }
  return `${agent.name} = ${Term.pretty(term, format)}`
}
