/**
 * Reading a term straight from JSON text, without building the JSON tree first: the forms of the
 * pure calculus are read as the text goes, each node built from its sub-terms as soon as the text
 * closes it, so that a term nested a million levels deep costs its own size and a small stack.
 *
 * Any other form is read as JSON and handed to the general parser. Text that is not a valid term
 * is reported by {@link readTerm}'s caller reading it again the general way, so that every error
 * (which one comes first, its path and its wording) is exactly the general parser's.
 */
import { IntStack } from "../internal/intStack.ts"
import { JsonCursor } from "../internal/json.ts"
import { noteNesting } from "../internal/nesting.ts"
import type * as Term from "../Term.ts"
import { conditional } from "./conditional.ts"
import { app, lam, variable } from "./lambda.ts"
import { cons, fold, list } from "./lists.ts"
import { parseScalar } from "./literal.ts"
import { codeOf, continueWith, evaluate, quote } from "./meta.ts"
import { binary, binaryOps, unary, unaryOps } from "./operators.ts"
import { pair } from "./pair.ts"
import { Parser, parseJsonText } from "./parse.ts"
import { tool } from "./tool.ts"

const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const COMMA = 0x2c
const QUOTE = 0x22

/** How many distinct literals one reading shares the nodes of. */
const SHARED_LITERALS = 1024

/** Thrown where the text is not a term of the shapes read here: the general path takes over. */
export class NotRead extends Error {}

const notRead = (): never => {
  throw new NotRead()
}

/**
 * How the value under a form's key is spelled: `name` a string, `term` one sub-term, `tuple` an
 * array of `arity` sub-terms, `fields` an object of the sub-terms `names` (any order), `lam` a
 * parameter name with a `"body"` next to it.
 */
type Shape =
  | { readonly kind: "name"; readonly build: (name: string) => Term.Term }
  | {
      readonly kind: "term" | "tuple" | "fields"
      readonly arity: number
      readonly names: ReadonlyArray<string>
      readonly build: (kids: ReadonlyArray<Term.Term>) => Term.Term
    }
  | { readonly kind: "lam" }

const name = (build: (name: string) => Term.Term): Shape => ({ kind: "name", build })
const one = (build: (t: Term.Term) => Term.Term): Shape => ({ kind: "term", arity: 1, names: [], build: ([t]) => build(t!) })
const tuple = (arity: number, build: (kids: ReadonlyArray<Term.Term>) => Term.Term): Shape => ({ kind: "tuple", arity, names: [], build })
const fields = (names: ReadonlyArray<string>, build: (kids: ReadonlyArray<Term.Term>) => Term.Term): Shape => ({
  kind: "fields",
  arity: names.length,
  names,
  build
})

/** The forms read here, by key: the pure calculus (the others are read as JSON first). */
const SHAPES: ReadonlyMap<string, Shape> = new Map<string, Shape>([
  ["var", name(variable)],
  ["tool", name(tool)],
  ["code_of", name(codeOf)],
  ["lam", { kind: "lam" }],
  ["app", fields(["func", "arg"], ([f, a]) => app(f!, a!))],
  ["if", fields(["cond", "then", "else"], ([c, t, e]) => conditional(c!, t!, e!))],
  ["cons", fields(["head", "tail"], ([h, t]) => cons(h!, t!))],
  ["continue", fields(["input"], ([i]) => continueWith(i!))],
  ["pair", tuple(2, ([a, b]) => pair(a!, b!))],
  ["fold", tuple(3, ([f, i, l]) => fold(f!, i!, l!))],
  ["quote", one(quote)],
  ["eval", one(evaluate)],
  ...binaryOps.map((op) => [op, tuple(2, ([l, r]) => binary(op, l!, r!))] as const),
  ...unaryOps.map((op) => [op, one((a) => unary(op, a))] as const)
])

/** A list's sub-terms (how far a list has got is the number of its items on the value stack). */
const LIST = { kind: "list" } as const
/** A lambda's body. */
const LAM = { kind: "lam" } as const

type Open = Exclude<Shape, { readonly kind: "name" | "lam" }> | typeof LIST | typeof LAM

/** The shapes a form can be open in, numbered: the stack of open forms holds their numbers. */
const OPEN_SHAPES: ReadonlyArray<Open> = [LIST, LAM, ...[...SHAPES.values()].flatMap((s) => (s.kind === "name" || s.kind === "lam" ? [] : [s]))]
const OPEN_NUMBERS: ReadonlyMap<Open, number> = new Map(OPEN_SHAPES.map((shape, i) => [shape, i]))

/** What {@link readTerm} needs from the general parser. */
export interface ReadContext {
  /** Parse a JSON value of another form into a term. */
  readonly parse: (json: unknown) => Term.Term
  /** Called once every `every` nodes, and once at the end, to look at the clock. */
  readonly tick: () => void
  readonly every: number
}

/** The end of the JSON value starting at `at` (strings skipped whole); the value is checked when it is read. */
const endOfValue = (text: string, at: number): number => {
  let depth = 0
  for (;;) {
    const c = text.charCodeAt(at)
    if (Number.isNaN(c)) return at
    if (c === QUOTE) {
      for (at++; at < text.length && text.charCodeAt(at) !== QUOTE; at++) if (text.charCodeAt(at) === 0x5c) at++
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++
    else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (--depth === 0) return at + 1
    }
    at++
  }
}

/**
 * Read JSON text as a term without building its JSON. Throws {@link NotRead} (or the JSON or
 * term error it met) where the text is not a term read here, for the general path to take over.
 */
export const readTerm = (text: string, context: ReadContext): Term.Term => {
  const cursor = new JsonCursor(text)
  const parser = new Parser()
  // the forms open around the position being read, and for each how many sub-terms it has read
  // (a `fields` form also packs which field each was, two bits apiece)
  const opens = new IntStack()
  const counts = new IntStack()
  const orders = new IntStack()
  // the sub-terms read so far of the open forms (a lambda's parameter name among them)
  const values: Array<Term.Term | string> = []
  // a literal's node is the same wherever it stands (it never fails, so nothing names its place),
  // and terms repeat a few literals many times
  const literals = new Map<unknown, Term.Term>()
  let nodes = 0
  let deepest = 0
  const open = (shape: Open, order = 0) => {
    opens.push(OPEN_NUMBERS.get(shape)!)
    if (opens.length > deepest) deepest = opens.length
    counts.push(0)
    orders.push(order)
  }
  const field = (names: ReadonlyArray<string>, order: number, count: number): number => {
    const slot = names.indexOf(cursor.key())
    for (let i = 0; i < count; i++) if (((order >> (2 * i)) & 3) === slot) notRead()
    return slot < 0 ? notRead() : order | (slot << (2 * count))
  }
  for (;;) {
    if (++nodes === context.every) {
      nodes = 0
      context.tick()
    }
    // read a term: a leaf is finished here, a form is opened and its first sub-term read next
    let term: Term.Term
    const c = cursor.peek()
    if (c === OPEN_OBJECT) {
      const from = cursor.at
      cursor.at++
      if (cursor.peek() !== QUOTE) return notRead()
      const key = cursor.key()
      const shape = SHAPES.get(key)
      if (shape === undefined) {
        // another form: read its JSON, and parse that
        const end = endOfValue(text, from)
        term = context.parse(parseJsonText(text.slice(from, end)))
        cursor.at = end
      } else if (shape.kind === "name") {
        if (cursor.peek() !== QUOTE) return notRead()
        term = shape.build(cursor.string())
        cursor.expect(CLOSE_OBJECT)
      } else if (shape.kind === "lam") {
        if (cursor.peek() !== QUOTE) return notRead()
        values.push(cursor.string())
        cursor.expect(COMMA)
        if (cursor.key() !== "body") return notRead()
        open(LAM)
        continue
      } else if (shape.kind === "term") {
        open(shape)
        continue
      } else if (shape.kind === "tuple") {
        cursor.expect(OPEN_ARRAY)
        open(shape)
        continue
      } else {
        cursor.expect(OPEN_OBJECT)
        open(shape, field(shape.names, 0, 0))
        continue
      }
    } else if (c === OPEN_ARRAY) {
      cursor.at++
      if (!cursor.accept(CLOSE_ARRAY)) {
        open(LIST)
        continue
      }
      term = list([])
    } else {
      const json = cursor.scalar()
      const shared = literals.get(json)
      if (shared !== undefined) term = shared
      else {
        term = parseScalar(parser, { json, key: undefined, parent: undefined })
        if (literals.size < SHARED_LITERALS) literals.set(json, term)
      }
    }
    // hand the term to the form around it; finish every form the text closes
    for (;;) {
      const top = opens.length - 1
      if (top < 0) {
        if (!cursor.atEnd()) cursor.fail()
        context.tick()
        noteNesting(term, deepest)
        return term
      }
      values.push(term)
      const shape = OPEN_SHAPES[opens.get(top)]!
      const count = counts.get(top) + 1
      counts.set(top, count)
      if (shape.kind === "list") {
        if (cursor.accept(COMMA)) break
        cursor.expect(CLOSE_ARRAY)
        term = list(values.splice(values.length - count) as Array<Term.Term>)
      } else if (shape.kind === "lam") {
        cursor.expect(CLOSE_OBJECT)
        const body = values.pop() as Term.Term
        term = lam(values.pop() as string, body)
      } else if (count < shape.arity) {
        cursor.expect(COMMA)
        if (shape.kind === "fields") orders.set(top, field(shape.names, orders.get(top), count))
        break
      } else {
        if (shape.kind !== "term") cursor.expect(shape.kind === "tuple" ? CLOSE_ARRAY : CLOSE_OBJECT)
        cursor.expect(CLOSE_OBJECT)
        const kids = values.splice(values.length - count) as Array<Term.Term>
        if (shape.kind === "fields") {
          // the fields in the order the form names them, not the order of the text
          const order = orders.get(top)
          const inOrder = kids.slice()
          for (let i = 0; i < count; i++) inOrder[(order >> (2 * i)) & 3] = kids[i]!
          term = shape.build(inOrder)
        } else term = shape.build(kids)
      }
      opens.pop()
      counts.pop()
      orders.pop()
    }
  }
}
