/**
 * What a term form is: everything the core knows about one construct of the language, in one
 * place. Each module of `src/forms/` defines one form (or a small group of pure operators) as a
 * {@link Form} value, and `src/forms/index.ts` lists them all in a typed registry. The parser,
 * the encoder, the pretty printer, the analyses, the compiler and the machine all go through the
 * registry, so a form missing a piece is a type error, not a silent `default:`.
 *
 * Pure forms keep their reduction rules in the machine's own dispatch (the fast path); agent forms
 * carry theirs here as an {@link AgentStep}.
 */
import type { EvalError } from "../Errors.ts"
import type { Code, Scope } from "../internal/code.ts"
import type * as Term from "../Term.ts"
import type * as Value from "../Value.ts"
import type { Bounds, CapabilityBuilder, Cost, CostContext } from "./analysis.ts"
import type { Parser, ParseNode, Plan } from "./parse.ts"
import type { AgentMachine, OracleRequest } from "./step.ts"

/** JSON path segments from a node to one of its children. */
export type Segments = ReadonlyArray<string | number>

/** How {@link Form.value} classifies what a term evaluates to. */
export type ValueKind = "function" | "data" | "unknown"

/**
 * How a form reads JSON: `keys` are the object keys that introduce it (tried in registry order;
 * the first key present wins); `siblings` other keys allowed next to the form key.
 */
export interface Syntax<N extends Term.Term> {
  readonly tag: N["_tag"]
  readonly keys: ReadonlyArray<string>
  readonly siblings?: ReadonlyArray<string>
  /** Check the shape under `key`; return the finished term (a leaf) or how to build it from sub-terms. */
  readonly parse: (p: Parser, node: ParseNode, key: string, obj: Readonly<Record<string, unknown>>) => Term.Term | Plan
  /** The direct sub-terms, in evaluation order (quoted code counts). */
  readonly children: (t: N) => ReadonlyArray<Term.Term>
  /** The same node with new sub-terms, in {@link children} order. */
  readonly withChildren: (t: N, kids: ReadonlyArray<Term.Term>) => N
  /** The JSON path from this node to each child, in {@link children} order. */
  readonly segments: (t: N) => ReadonlyArray<Segments>
  /** Canonical JSON, given the children's JSON. */
  readonly encode: (t: N, kids: ReadonlyArray<Term.Json>) => Term.Json
}

/**
 * Lambda notation: `kids` are the children already printed, `operand(i)` is child `i` with
 * parentheses where the human style needs them.
 */
export interface Printing<N extends Term.Term> {
  readonly pretty: (t: N, kids: ReadonlyArray<string>, formal: boolean, operand: (i: number) => string) => string
  /** Printed without parentheses as an operand (a name, a literal, a bracketed form). */
  readonly atomic: boolean
}

/** What the analyses need from a form. */
export interface Analysis<N extends Term.Term> {
  /** The variable this form binds around child `i` (a `lam`'s parameter around its body). */
  readonly binds?: (t: N, i: number) => string | undefined
  /** Record what the node itself may do (children are visited separately). */
  readonly capabilities?: (t: N, into: CapabilityBuilder) => void
  /** Worst-case oracle calls of evaluating the node and of applying its value, from its children's. */
  readonly cost: (t: N, kids: ReadonlyArray<Cost>, context: CostContext) => Cost
  /** What the node evaluates to, as far as its syntax tells. */
  readonly value: (t: N) => ValueKind
}

/** How a form compiles to machine code. */
export interface Compilation<N extends Term.Term> {
  /** The sub-terms compiled with the node (default: all of {@link Syntax.children}). */
  readonly compiled?: (t: N) => ReadonlyArray<Term.Term>
  readonly compile: (t: N, kids: ReadonlyArray<Code>, scope: Scope | undefined) => Code
}

/**
 * The reduction rules of an agent form. Its value is a function; applying it runs {@link apply}.
 * A step either continues the machine (push a frame, evaluate a child, return a value) and
 * returns `undefined`, or returns an oracle request: the machine suspends, and the answer is
 * returned to the top frame when it resumes. A frame pushed with {@link AgentMachine.push} gets
 * the value returned to it through {@link resume}.
 */
export interface AgentStep<N extends Term.Term = Term.Term> {
  readonly apply: (m: AgentMachine, code: Code, fn: Value.Closure, arg: Value.Value) => OracleRequest | undefined
  readonly resume?: (m: AgentMachine, code: Code, state: any, value: Value.Value) => OracleRequest | undefined
  /** For a form that pushes catching frames: an error raised above such a frame, in place of the value. */
  readonly raised?: (m: AgentMachine, code: Code, state: any, error: EvalError) => OracleRequest | undefined
  /** Only for type inference of the node. */
  readonly _node?: N
}

/**
 * One form of the language.
 *
 * `events` names the trace event kinds the form records (beyond `beta`, `llm`, `tool`).
 */
export interface Form<N extends Term.Term, E extends string = never> extends Syntax<N>, Printing<N>, Analysis<N>, Compilation<N> {
  readonly events: ReadonlyArray<E>
  readonly agent?: AgentStep<N>
}

/** The trace event kinds of a form. */
export type EventsOf<F> = F extends Form<any, infer E> ? E : never

export type { Bounds }
