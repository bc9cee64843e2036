/**
 * The vocabulary forms describe their analyses in: worst-case oracle calls ({@link Cost}) and the
 * capabilities a node uses ({@link CapabilityBuilder}). `src/Analysis.ts` runs the analyses over
 * whole terms.
 */

/**
 * Worst-case numbers of LLM calls and tool calls. `Infinity` means no static bound.
 */
export interface Bounds {
  readonly llmCalls: number
  readonly toolCalls: number
}

/**
 * The calls made by evaluating a node (`eval`), and by applying its value once when it is a
 * function (`call`).
 */
export interface Cost {
  readonly eval: Bounds
  readonly call: Bounds
}

/** What a form's cost depends on besides its children. */
export interface CostContext {
  /** Applying a function that is not known statically: at most the costliest function of the term. */
  readonly unknown: Bounds
  /** Recursion through `self`: unbounded where the term can call oracles. */
  readonly recursion: Bounds
  /** How many attempts a guard with `retry` retries counts: `retry + 1`, or 1 for the logical bound. */
  readonly attempts: (retry: number) => number
}

/** What the nodes of a term may do, collected node by node. */
export interface CapabilityBuilder {
  llm: boolean
  memory: boolean
  parallel: boolean
  self: boolean
  eval: boolean
  quote: boolean
  continue: boolean
  react: boolean
  /** An `ask` form: the run may wait for a person's answer. */
  ask: boolean
  /** Tools named by `tool` forms and ReAct tool lists (`terminate` is not a tool call), in order of first use. */
  readonly tools: Set<string>
  /** Tools whose code is read with `code_of` (`self` excluded), in order of first use. */
  readonly codeOf: Set<string>
}

export const ZERO: Bounds = { llmCalls: 0, toolCalls: 0 }
export const ONE_LLM: Bounds = { llmCalls: 1, toolCalls: 0 }
export const ONE_TOOL: Bounds = { llmCalls: 0, toolCalls: 1 }
export const UNBOUNDED: Bounds = { llmCalls: Infinity, toolCalls: Infinity }

export const plus = (...bs: ReadonlyArray<Bounds>): Bounds => {
  let llmCalls = 0
  let toolCalls = 0
  for (const b of bs) {
    llmCalls += b.llmCalls
    toolCalls += b.toolCalls
  }
  return { llmCalls, toolCalls }
}

/** `n` times `b` (0 × ∞ is 0: nothing repeated costs nothing). */
export const times = (n: number, b: Bounds): Bounds => ({
  llmCalls: b.llmCalls === 0 || n === 0 ? 0 : n * b.llmCalls,
  toolCalls: b.toolCalls === 0 || n === 0 ? 0 : n * b.toolCalls
})

export const max = (...bs: ReadonlyArray<Bounds>): Bounds => {
  let llmCalls = 0
  let toolCalls = 0
  for (const b of bs) {
    if (b.llmCalls > llmCalls) llmCalls = b.llmCalls
    if (b.toolCalls > toolCalls) toolCalls = b.toolCalls
  }
  return { llmCalls, toolCalls }
}

/** The calls of evaluating a node and then applying its value once. */
export const applied = (c: Cost): Bounds => plus(c.eval, c.call)

/** The calls of evaluating every child. */
export const evalAll = (kids: ReadonlyArray<Cost>): Bounds => plus(...kids.map((k) => k.eval))

/** A node that evaluates its children and yields data. */
export const dataCost = (_: unknown, kids: ReadonlyArray<Cost>): Cost => ({ eval: evalAll(kids), call: ZERO })

/** A node that evaluates its children and yields a value that may be any function. */
export const unknownCost = (_: unknown, kids: ReadonlyArray<Cost>, context: CostContext): Cost => ({ eval: evalAll(kids), call: context.unknown })

/** An agent form: building it costs nothing; applying it costs `call`. */
export const agentCost = (call: Bounds): Cost => ({ eval: ZERO, call })
