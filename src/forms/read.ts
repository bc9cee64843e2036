/**
 * Reading a term straight from JSON text, without building the JSON tree first: the forms of the
 * pure calculus are read as the text goes, each node built from its sub-terms as soon as the text
 * closes it, so that a term nested a million levels deep costs its own size and a small stack.
 *
 * An agent form is read as its JSON, except that every term inside it is read whole first and
 * stands in that JSON as a {@link ReadTerm}; the general parser then parses the form from that
 * small JSON as soon as the text closes it. Text that is not a valid term is reported by
 * {@link readTerm}'s caller reading it again the general way, so that every error (which one
 * comes first, its path and its wording) is exactly the general parser's.
 */
import { TermParseError } from "../Errors.ts"
import { IntStack } from "../internal/intStack.ts"
import { JsonCursor, setKey } from "../internal/json.ts"
import { noteNesting } from "../internal/nesting.ts"
import type * as Term from "../Term.ts"
import { conditional } from "./conditional.ts"
import { app, lam, variable } from "./lambda.ts"
import { cons, fold, list } from "./lists.ts"
import { parseScalar } from "./literal.ts"
import { codeOf, continueWith, evaluate, quote } from "./meta.ts"
import { binary, binaryOps, unary, unaryOps } from "./operators.ts"
import { pair } from "./pair.ts"
import { Parser } from "./parse.ts"
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

const LIST_NUMBER = OPEN_NUMBERS.get(LIST)!
const LAM_NUMBER = OPEN_NUMBERS.get(LAM)!

/** An array of an agent form's JSON (the kinds of open JSON are numbered after the shapes). */
const JSON_ARRAY = OPEN_SHAPES.length
/** An object where a term stands: it is parsed as a term once the text closes it. */
const TERM_OBJECT = JSON_ARRAY + 1
/** An object of an agent form's JSON: parsed as a term once closed if it has a form key, else kept as JSON. */
const JSON_OBJECT = JSON_ARRAY + 2

/** How many terms one reading stood in for their JSON, and how many of those the parser took as terms. */
interface Tally {
  made: number
  taken: number
}

/**
 * A term read whole, standing in an agent form's JSON where the term's own JSON was: the general
 * parser takes it as that term. The reading counts how many it made and how many were taken, so a
 * form that kept one as data instead (where the JSON itself belonged) is noticed, and the text is
 * read the general way. It has no enumerable keys: to anything that looks at it as JSON it is an
 * empty object.
 */
export class ReadTerm {
  readonly #term: Term.Term
  readonly #tally: Tally

  constructor(term: Term.Term, tally: Tally) {
    this.#term = term
    this.#tally = tally
    tally.made++
  }

  /** The term, counted as taken. */
  take(): Term.Term {
    this.#tally.taken++
    return this.#term
  }
}

/** What {@link readTerm} needs from the general parser. */
export interface ReadContext {
  /** Parse a JSON value of another form into a term (a {@link ReadTerm} in it stands for its term). */
  readonly parse: (json: unknown) => Term.Term
  /** Whether a key introduces a form. */
  readonly isFormKey: (key: string) => boolean
  /** Called once every `every` nodes, and once at the end, to look at the clock. */
  readonly tick: () => void
  readonly every: number
}

/**
 * Read JSON text as a term without building its JSON. The pure forms are built as the text
 * closes them; an agent form's JSON is read as JSON except for the terms in it, each read whole
 * (pure forms as above, agent forms parsed as soon as the text closes them) and standing there
 * as a {@link ReadTerm}, so a deep nest of agent forms never exists as one JSON tree either.
 * Throws {@link NotRead} (or the JSON or term error it met) where the text is not a term read
 * here, for the general path to take over.
 */
export const readTerm = (text: string, context: ReadContext): Term.Term => {
  const cursor = new JsonCursor(text)
  const parser = new Parser()
  // the forms and agent forms' JSON containers open around the position being read, and for each
  // how many sub-terms (items, members) it has read (a `fields` form also packs which field each
  // was, two bits apiece)
  const opens = new IntStack()
  const counts = new IntStack()
  const orders = new IntStack()
  // the sub-terms read so far of the open forms (a lambda's parameter name among them), the items
  // of the open JSON arrays and the keys and values of the open JSON objects
  const values: Array<unknown> = []
  // the keys of agent forms' JSON, one string each however often the text repeats them
  const keyStrings = new Map<string, string>()
  const key = (): string => {
    const read = cursor.key()
    const known = keyStrings.get(read)
    if (known !== undefined) return known
    if (keyStrings.size < SHARED_LITERALS) keyStrings.set(read, read)
    return read
  }
  const tally: Tally = { made: 0, taken: 0 }
  // a literal's node is the same wherever it stands (it never fails, so nothing names its place),
  // and terms repeat a few literals many times
  const literals = new Map<unknown, Term.Term>()
  let nodes = 0
  // how deep terms nest around the position (JSON arrays are not a level), and the deepest so far
  let depth = 0
  let deepest = 0
  const open = (kind: number, order = 0) => {
    opens.push(kind)
    if (kind !== JSON_ARRAY && ++depth > deepest) deepest = depth
    counts.push(0)
    orders.push(order)
  }
  const close = () => {
    if (opens.get(opens.length - 1) !== JSON_ARRAY) depth--
    opens.pop()
    counts.pop()
    orders.pop()
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
    // read a value: a term where a term stands, JSON inside an agent form's JSON; a leaf is
    // finished here, anything else is opened and its first part read next
    const inJson = opens.length > 0 && opens.get(opens.length - 1) >= JSON_ARRAY
    let value: unknown
    let isTerm = !inJson
    const c = cursor.peek()
    if (c === OPEN_OBJECT) {
      cursor.at++
      if (cursor.peek() !== QUOTE) {
        if (!inJson) return notRead()
        cursor.expect(CLOSE_OBJECT)
        value = {}
      } else {
        const first = key()
        const shape = SHAPES.get(first)
        if (shape === undefined) {
          values.push(first)
          open(inJson ? JSON_OBJECT : TERM_OBJECT)
          continue
        }
        isTerm = true
        if (shape.kind === "name") {
          if (cursor.peek() !== QUOTE) return notRead()
          value = shape.build(cursor.string())
          cursor.expect(CLOSE_OBJECT)
        } else if (shape.kind === "lam") {
          if (cursor.peek() !== QUOTE) return notRead()
          values.push(cursor.string())
          cursor.expect(COMMA)
          if (cursor.key() !== "body") return notRead()
          open(LAM_NUMBER)
          continue
        } else {
          if (shape.kind === "tuple") cursor.expect(OPEN_ARRAY)
          else if (shape.kind === "fields") cursor.expect(OPEN_OBJECT)
          open(OPEN_NUMBERS.get(shape)!, shape.kind === "fields" ? field(shape.names, 0, 0) : 0)
          continue
        }
      }
    } else if (c === OPEN_ARRAY) {
      cursor.at++
      if (!cursor.accept(CLOSE_ARRAY)) {
        open(inJson ? JSON_ARRAY : LIST_NUMBER)
        continue
      }
      value = inJson ? [] : list([])
    } else {
      const json = cursor.scalar()
      if (inJson) value = json
      else {
        let term = literals.get(json)
        if (term === undefined) {
          term = parseScalar(parser, { json, key: undefined, parent: undefined })
          if (literals.size < SHARED_LITERALS) literals.set(json, term)
        }
        value = term
      }
    }
    // hand the value to what is open around it; finish everything the text closes
    for (;;) {
      const top = opens.length - 1
      if (top < 0) {
        if (!cursor.atEnd()) cursor.fail()
        context.tick()
        // a term read whole that a form kept as data: its JSON belonged there, read the general way
        if (tally.taken !== tally.made) notRead()
        noteNesting(value as Term.Term, deepest)
        return value as Term.Term
      }
      const kind = opens.get(top)
      if (kind >= JSON_ARRAY) {
        values.push(isTerm ? new ReadTerm(value as Term.Term, tally) : value)
        const count = counts.get(top) + 1
        counts.set(top, count)
        const isArray = kind === JSON_ARRAY
        if (cursor.accept(COMMA)) {
          if (!isArray) values.push(key())
          break
        }
        cursor.expect(isArray ? CLOSE_ARRAY : CLOSE_OBJECT)
        close()
        if (isArray) {
          value = values.splice(values.length - count)
          isTerm = false
          continue
        }
        const members = values.splice(values.length - 2 * count)
        const object: Record<string, unknown> = {}
        let formKey = kind === TERM_OBJECT
        for (let i = 0; i < members.length; i += 2) {
          const name = members[i] as string
          setKey(object, name, members[i + 1])
          if (!formKey && context.isFormKey(name)) formKey = true
        }
        isTerm = formKey
        value = object
        if (kind === TERM_OBJECT) value = context.parse(object)
        else if (formKey) {
          // JSON with a form key in an agent form's JSON is most often a term; when it does not
          // parse as one it is the form's data (a group chat's `{"llm": agent}` scheduler), and the
          // terms read in it stand there untaken again
          const taken = tally.taken
          try {
            value = context.parse(object)
          } catch (error) {
            if (!(error instanceof TermParseError)) throw error
            tally.taken = taken
            isTerm = false
          }
        }
        continue
      }
      values.push(value as Term.Term)
      const shape = OPEN_SHAPES[kind]!
      const count = counts.get(top) + 1
      counts.set(top, count)
      if (shape.kind === "list") {
        if (cursor.accept(COMMA)) break
        cursor.expect(CLOSE_ARRAY)
        value = list(values.splice(values.length - count) as Array<Term.Term>)
      } else if (shape.kind === "lam") {
        cursor.expect(CLOSE_OBJECT)
        const body = values.pop() as Term.Term
        value = lam(values.pop() as string, body)
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
          value = shape.build(inOrder)
        } else value = shape.build(kids)
      }
      isTerm = true
      close()
    }
  }
}
