/**
 * Guard validators: a small, Python-looking expression language over the agent's output `x`
 * (`len(x) > 100 and 'error' not in x`), parsed by a recursive-descent parser and compiled to a
 * term `λx. …` that returns a boolean. Nothing is ever handed to a host `eval`.
 *
 * Integers, floats (`0.5`, `1e3`: compared, never computed with), strings, `True`/`False`/`None`, list and tuple literals (a tuple is a list),
 * `and`/`or`/`not`, comparisons (chained as in Python), `in`/`not in`, `is`/`is not`,
 * `+ - * // %`, `a if c else b`, the functions `len`, `is_json`, `bool`, `abs`, `min`, `max`,
 * `sum`, `all`, `any` (of a list), `str`, `int` and `float` (of text too, by Python's rules:
 * `int(x) > 5`, `float(x) <= 0.5`; text that is no number raises, and a guard counts that as invalid),
 * `isinstance`, list comprehensions and generator expressions with one `for` clause, and the
 * string methods `startswith`, `endswith`, `strip`, `lstrip`, `rstrip`, `lower`, `upper`. Everything compiles to pure forms of the core (the string
 * methods, `in` on strings and `is_json` to its string primitives), so a validator is a pure term
 * any evaluator can run. See `docs/yaml.md#validators`.
 *
 * @since 0.1.0
 * @module
 */
import * as Schema from "effect/Schema"
import { Errors, Term } from "lambdagent"
import { formatFieldPath, type Issue, schemaError, type FieldPath, type Position } from "./errors.ts"

// ---------------------------------------------------------------------------------------------
// Syntax
// ---------------------------------------------------------------------------------------------

/**
 * A parsed validator expression. `start` is the character offset of the node in the source.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { parseValidator } from "lambdagent/yaml"
 * const e = parseValidator("len(x) > 3")
 * console.log(e.kind) // "compare"
 * ```
 */
export type ValidatorExpr =
  | { readonly kind: "int"; readonly start: number; readonly value: number | bigint }
  /** A fractional or exponent literal (`0.5`, `1e3`), as its text without `_`. */
  | { readonly kind: "float"; readonly start: number; readonly value: string }
  | { readonly kind: "str"; readonly start: number; readonly value: string }
  | { readonly kind: "bool"; readonly start: number; readonly value: boolean }
  | { readonly kind: "none"; readonly start: number }
  | { readonly kind: "x"; readonly start: number }
  | { readonly kind: "var"; readonly start: number; readonly name: string }
  | { readonly kind: "type"; readonly start: number; readonly name: PythonType }
  | {
      readonly kind: "comprehension"
      readonly start: number
      readonly element: ValidatorExpr
      readonly name: string
      readonly iterable: ValidatorExpr
      readonly conditions: ReadonlyArray<ValidatorExpr>
    }
  | { readonly kind: "list"; readonly start: number; readonly items: ReadonlyArray<ValidatorExpr> }
  | { readonly kind: "not"; readonly start: number; readonly arg: ValidatorExpr }
  | { readonly kind: "neg"; readonly start: number; readonly arg: ValidatorExpr }
  | { readonly kind: "logic"; readonly start: number; readonly op: "and" | "or"; readonly left: ValidatorExpr; readonly right: ValidatorExpr }
  | {
      readonly kind: "compare"
      readonly start: number
      readonly ops: ReadonlyArray<CompareOp>
      readonly operands: ReadonlyArray<ValidatorExpr>
    }
  | { readonly kind: "arith"; readonly start: number; readonly op: ArithOp; readonly left: ValidatorExpr; readonly right: ValidatorExpr }
  | { readonly kind: "cond"; readonly start: number; readonly cond: ValidatorExpr; readonly then: ValidatorExpr; readonly else: ValidatorExpr }
  | { readonly kind: "call"; readonly start: number; readonly name: string; readonly args: ReadonlyArray<ValidatorExpr> }
  | {
      readonly kind: "method"
      readonly start: number
      readonly target: ValidatorExpr
      readonly name: string
      readonly args: ReadonlyArray<ValidatorExpr>
    }

/**
 * The Python types a validator's `isinstance(v, t)` can test.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { PythonType } from "lambdagent/yaml"
 * const t: PythonType = "str"
 * ```
 */
export type PythonType = "str" | "int" | "float" | "bool" | "list" | "tuple" | "dict"

/** The type names (`Term.typeName`) of the values `isinstance(v, t)` accepts for each Python type. */
const TYPE_NAMES: Readonly<Record<PythonType, ReadonlyArray<string>>> = {
  str: ["string"],
  // as in Python, a boolean is an int
  int: ["integer", "boolean"],
  // values are never fractional: float() gives text, which validators type statically
  float: [],
  bool: ["boolean"],
  list: ["list"],
  // a tuple is a list or a pair here
  tuple: ["list", "pair"],
  // a JSON object is text here
  dict: []
}

type CompareOp = "==" | "!=" | "<" | ">" | "<=" | ">=" | "in" | "not in" | "is" | "is not"
type ArithOp = "+" | "-" | "*" | "//" | "%"

/**
 * A validator expression that does not parse or does not make sense (`offset` is where, in the
 * expression). {@link compileValidator} turns it into a `SchemaError` with the YAML position.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { parseValidator, ValidatorSyntaxError } from "lambdagent/yaml"
 * try { parseValidator("__import__('os')") } catch (e) {
 *   if (e instanceof ValidatorSyntaxError) console.log(e.offset, e.message) // 0 "__import__ is not allowed: …"
 * }
 * ```
 */
export class ValidatorSyntaxError extends Errors.TaggedError<ValidatorSyntaxError>()("ValidatorSyntaxError", {
  message: Schema.String,
  /** Character offset in the expression. */
  offset: Schema.Number,
  expected: Schema.optional(Schema.String),
  actual: Schema.optional(Schema.String)
}) {}

const syntaxError = (message: string, offset: number, expected?: string, actual?: string): ValidatorSyntaxError =>
  new ValidatorSyntaxError({
    message,
    offset,
    ...(expected !== undefined ? { expected } : {}),
    ...(actual !== undefined ? { actual } : {})
  })

/** The functions a validator may call. */
const FUNCTIONS = ["len", "is_json", "bool", "abs", "min", "max", "sum", "all", "any", "str", "int", "float", "isinstance"] as const
/** The string methods a validator may call. */
const METHODS = ["startswith", "endswith", "strip", "lstrip", "rstrip", "lower", "upper"] as const
/** Python builtins people reach for that would run host code; named in the error. */
const FORBIDDEN = new Set([
  "__import__",
  "eval",
  "exec",
  "compile",
  "open",
  "getattr",
  "setattr",
  "delattr",
  "globals",
  "locals",
  "vars",
  "input",
  "breakpoint",
  "type",
  "object",
  "dir",
  "help",
  "exit",
  "quit",
  "__builtins__"
])

/** Longest expression accepted. */
const MAX_LENGTH = 10_000
/** Deepest nesting of parentheses and operators accepted. */
const MAX_DEPTH = 200

interface Token {
  readonly kind: "int" | "float" | "str" | "name" | "op" | "end"
  readonly text: string
  readonly start: number
  readonly value?: string | number | bigint
}

const OPERATORS = ["==", "!=", "<=", ">=", "//", "**", "<", ">", "+", "-", "*", "/", "%", "(", ")", "[", "]", ",", ".", ":", "="]

const tokenize = (source: string): Array<Token> => {
  const tokens: Array<Token> = []
  let i = 0
  while (i < source.length) {
    const ch = source[i]!
    if (/\s/.test(ch)) {
      i++
      continue
    }
    const start = i
    if (/\d/.test(ch)) {
      let j = i
      while (j < source.length && /[\d_]/.test(source[j]!)) j++
      let k = j
      if (source[k] === ".") {
        k++
        while (k < source.length && /[\d_]/.test(source[k]!)) k++
      }
      if ((source[k] === "e" || source[k] === "E") && /^[+-]?\d/.test(source.slice(k + 1, k + 3))) {
        k += /[+-]/.test(source[k + 1]!) ? 2 : 1
        while (k < source.length && /[\d_]/.test(source[k]!)) k++
      }
      if (k > j) {
        const text = source.slice(start, k)
        if (/__|_$|_\.|\._|_[eE]|[eE][+-]?_/.test(text) || /[A-Za-z_]/.test(source[k] ?? ""))
          throw syntaxError(`malformed number ${JSON.stringify(source.slice(start, k + 1))}`, start)
        tokens.push({ kind: "float", text, start, value: text.replace(/_/g, "") })
        i = k
        continue
      }
      if (/[A-Za-z]/.test(source[j] ?? "")) throw syntaxError(`malformed number ${JSON.stringify(source.slice(start, j + 1))}`, start)
      const text = source.slice(start, j)
      if (/__|_$/.test(text) || (text.length > 1 && text.startsWith("0") && /[1-9]/.test(text))) {
        throw syntaxError(`malformed number ${JSON.stringify(text)}`, start)
      }
      const n = BigInt(text.replace(/_/g, ""))
      if (n >= 2n ** 63n) throw syntaxError(`${text} does not fit in a 64-bit integer`, start)
      tokens.push({ kind: "int", text, start, value: n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n })
      i = j
      continue
    }
    if (/[A-Za-z_]/.test(ch)) {
      let j = i
      while (j < source.length && /\w/.test(source[j]!)) j++
      const text = source.slice(start, j)
      if ((source[j] === "'" || source[j] === '"') && /^[rRbBfFuU]{1,2}$/.test(text)) {
        throw syntaxError(`string prefixes (${text}'…') are not supported; write a plain '…' string`, start)
      }
      tokens.push({ kind: "name", text, start })
      i = j
      continue
    }
    if (ch === "'" || ch === '"') {
      const { end, value } = readString(source, i)
      tokens.push({ kind: "str", text: source.slice(start, end), start, value })
      i = end
      continue
    }
    const op = OPERATORS.find((o) => source.startsWith(o, i))
    if (op === undefined) throw syntaxError(`unexpected character ${JSON.stringify(ch)}`, start)
    if (op === "**") throw syntaxError("** (power) is not supported", start)
    if (op === "/") throw syntaxError("/ (true division) is not supported: integers only; use // for floor division", start, "//", "/")
    if (op === "=") throw syntaxError("= is assignment; compare with ==", start, "==", "=")
    tokens.push({ kind: "op", text: op, start })
    i += op.length
  }
  tokens.push({ kind: "end", text: "", start: source.length })
  return tokens
}

const ESCAPES: Readonly<Record<string, string>> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0" }

const readString = (source: string, start: number): { end: number; value: string } => {
  const quote = source[start]!
  if (source.startsWith(quote.repeat(3), start)) throw syntaxError("triple-quoted strings are not supported", start)
  let value = ""
  let i = start + 1
  while (i < source.length) {
    const ch = source[i]!
    if (ch === quote) return { end: i + 1, value }
    if (ch === "\n") break
    if (ch === "\\") {
      const next = source[i + 1]
      if (next === "u" && /^[0-9a-fA-F]{4}$/.test(source.slice(i + 2, i + 6))) {
        value += String.fromCharCode(parseInt(source.slice(i + 2, i + 6), 16))
        i += 6
        continue
      }
      if (next !== undefined && Object.hasOwn(ESCAPES, next)) {
        value += ESCAPES[next]
        i += 2
        continue
      }
      throw syntaxError(`unknown escape \\${next ?? ""}`, i)
    }
    value += ch
    i++
  }
  throw syntaxError("unterminated string", start, `a closing ${quote}`, "the end of the expression")
}

const KEYWORDS = new Set(["and", "or", "not", "in", "is", "if", "else", "True", "False", "None", "lambda", "for"])

class Parser {
  private index = 0
  private depth = 0
  /** The variables of the comprehensions around the current position, innermost last. */
  private readonly bound: Array<string> = []

  constructor(private readonly tokens: ReadonlyArray<Token>) {}

  private get token(): Token {
    return this.tokens[this.index]!
  }

  private isOp(text: string): boolean {
    return this.token.kind === "op" && this.token.text === text
  }

  private isName(text: string): boolean {
    return this.token.kind === "name" && this.token.text === text
  }

  private atEnd(): boolean {
    return this.token.kind === "end"
  }

  private next(): Token {
    return this.tokens[this.index++]!
  }

  private expectOp(text: string, what: string): Token {
    if (!this.isOp(text)) throw this.unexpected(what)
    return this.next()
  }

  private unexpected(expected: string): ValidatorSyntaxError {
    const t = this.token
    const actual = t.kind === "end" ? "the end of the expression" : JSON.stringify(t.text)
    return syntaxError(`expected ${expected}, found ${actual}`, t.start, expected, actual)
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) throw syntaxError(`the expression nests deeper than ${MAX_DEPTH} levels`, this.token.start)
  }

  parse(): ValidatorExpr {
    if (this.token.kind === "end") throw this.unexpected("an expression")
    const e = this.expression()
    if (!this.atEnd()) throw this.unexpected("an operator or the end of the expression")
    return e
  }

  private expression(): ValidatorExpr {
    this.enter()
    if (this.isName("lambda")) throw syntaxError("lambda is not supported: the validator is already a function of x", this.token.start)
    const start = this.token.start
    const value = this.or()
    if (this.isName("if")) {
      this.next()
      const cond = this.or()
      if (!this.isName("else")) throw this.unexpected("else")
      this.next()
      const otherwise = this.expression()
      this.depth--
      return { kind: "cond", start, cond, then: value, else: otherwise }
    }
    this.depth--
    return value
  }

  /** Parse a left-associative chain; every operator in it counts as one level of nesting. */
  private chain(
    operand: () => ValidatorExpr,
    operator: () => boolean,
    build: (left: ValidatorExpr, right: ValidatorExpr, op: string) => ValidatorExpr
  ): ValidatorExpr {
    const depth = this.depth
    let left = operand()
    while (operator()) {
      const op = this.next().text
      this.enter()
      left = build(left, operand(), op)
    }
    this.depth = depth
    return left
  }

  private or(): ValidatorExpr {
    return this.chain(
      () => this.and(),
      () => this.isName("or"),
      (left, right) => ({ kind: "logic", start: left.start, op: "or", left, right })
    )
  }

  private and(): ValidatorExpr {
    return this.chain(
      () => this.not(),
      () => this.isName("and"),
      (left, right) => ({ kind: "logic", start: left.start, op: "and", left, right })
    )
  }

  private not(): ValidatorExpr {
    if (this.isName("not")) {
      const start = this.next().start
      this.enter()
      const arg = this.not()
      this.depth--
      return { kind: "not", start, arg }
    }
    return this.comparison()
  }

  private compareOp(): CompareOp | undefined {
    const t = this.token
    if (t.kind === "op" && ["==", "!=", "<", ">", "<=", ">="].includes(t.text)) {
      this.next()
      return t.text as CompareOp
    }
    if (this.isName("in")) {
      this.next()
      return "in"
    }
    if (this.isName("not") && this.tokens[this.index + 1]?.kind === "name" && this.tokens[this.index + 1]?.text === "in") {
      this.index += 2
      return "not in"
    }
    if (this.isName("is")) {
      this.next()
      if (this.isName("not")) {
        this.next()
        return "is not"
      }
      return "is"
    }
    return undefined
  }

  private comparison(): ValidatorExpr {
    const first = this.sum()
    const ops: Array<CompareOp> = []
    const operands: Array<ValidatorExpr> = [first]
    const depth = this.depth
    for (let op = this.compareOp(); op !== undefined; op = this.compareOp()) {
      this.enter()
      ops.push(op)
      operands.push(this.sum())
    }
    this.depth = depth
    return ops.length === 0 ? first : { kind: "compare", start: first.start, ops, operands }
  }

  private sum(): ValidatorExpr {
    return this.chain(
      () => this.product(),
      () => this.isOp("+") || this.isOp("-"),
      (left, right, op) => ({ kind: "arith", start: left.start, op: op as ArithOp, left, right })
    )
  }

  private product(): ValidatorExpr {
    return this.chain(
      () => this.unary(),
      () => this.isOp("*") || this.isOp("//") || this.isOp("%"),
      (left, right, op) => ({ kind: "arith", start: left.start, op: op as ArithOp, left, right })
    )
  }

  private unary(): ValidatorExpr {
    if (this.isOp("-")) {
      const start = this.next().start
      this.enter()
      const arg = this.unary()
      this.depth--
      if (arg.kind === "int" && arg.start === start + 1) return { kind: "int", start, value: typeof arg.value === "bigint" ? -arg.value : -arg.value }
      if (arg.kind === "float" && arg.start === start + 1) return { kind: "float", start, value: `-${arg.value}` }
      return { kind: "neg", start, arg }
    }
    if (this.isOp("+")) {
      this.next()
      return this.unary()
    }
    return this.postfix()
  }

  private postfix(): ValidatorExpr {
    let e = this.primary()
    for (;;) {
      if (this.isOp(".")) {
        this.next()
        const nameToken = this.token
        if (nameToken.kind !== "name") throw this.unexpected('a method name after "."')
        this.next()
        if (!this.isOp("(")) {
          throw syntaxError(`attribute access (.${nameToken.text}) is not allowed; only the methods ${METHODS.join(", ")} can be called`, nameToken.start)
        }
        if (!(METHODS as ReadonlyArray<string>).includes(nameToken.text)) {
          throw syntaxError(
            `unknown method .${nameToken.text}(); available: ${METHODS.map((m) => `.${m}()`).join(", ")}`,
            nameToken.start,
            `one of ${METHODS.join(", ")}`,
            nameToken.text
          )
        }
        e = { kind: "method", start: e.start, target: e, name: nameToken.text, args: this.arguments() }
      } else if (this.isOp("[")) {
        throw syntaxError(
          "indexing and slicing (x[…]) are not supported: the term language has no string slicing; use startswith, endswith or in",
          this.token.start
        )
      } else if (this.isOp("(")) {
        throw syntaxError("only named functions can be called", this.token.start)
      } else {
        return e
      }
    }
  }

  /** An expression, or a comprehension when it is the first in its brackets and `for` follows it. */
  private element(start: number, first: boolean): ValidatorExpr {
    const variable = first ? this.comprehensionVariable() : undefined
    if (variable === undefined) return this.expression()
    this.bound.push(variable)
    const element = this.expression()
    this.bound.pop()
    return this.comprehension(start, element, variable)
  }

  /** The variable of a `for` clause ahead at this bracket level, before the closing bracket or a ",". */
  private comprehensionVariable(): string | undefined {
    let depth = 0
    for (let i = this.index; i < this.tokens.length; i++) {
      const t = this.tokens[i]!
      if (t.kind === "end") return undefined
      if (t.kind === "op" && (t.text === "(" || t.text === "[")) depth++
      else if (t.kind === "op" && (t.text === ")" || t.text === "]")) {
        if (depth === 0) return undefined
        depth--
      } else if (depth === 0 && t.kind === "op" && t.text === ",") return undefined
      else if (depth === 0 && t.kind === "name" && t.text === "for") {
        const target = this.tokens[i + 1]!
        return target.kind === "name" && !KEYWORDS.has(target.text) ? target.text : undefined
      }
    }
    return undefined
  }

  /** `element for name in iterable [if condition]…`, the element already parsed. */
  private comprehension(start: number, element: ValidatorExpr, name: string): ValidatorExpr {
    if (!this.isName("for")) throw this.unexpected("for")
    this.next()
    this.enter()
    this.next() // the variable, read by comprehensionVariable
    if (this.isOp(",")) throw syntaxError("unpacking several variables in a comprehension is not supported: iterate with one name", this.token.start)
    if (!this.isName("in")) throw this.unexpected("in")
    this.next()
    const iterable = this.or()
    const conditions: Array<ValidatorExpr> = []
    this.bound.push(name)
    while (this.isName("if")) {
      this.next()
      conditions.push(this.or())
    }
    this.bound.pop()
    if (this.isName("for")) throw syntaxError("a comprehension with several for clauses is not supported: use one for clause", this.token.start)
    this.depth--
    return { kind: "comprehension", start, element, name, iterable, conditions }
  }

  private arguments(): Array<ValidatorExpr> {
    this.expectOp("(", "(")
    const args: Array<ValidatorExpr> = []
    while (!this.isOp(")")) {
      if (this.token.kind === "name" && this.tokens[this.index + 1]?.text === "=") {
        throw syntaxError("keyword arguments are not supported", this.token.start)
      }
      args.push(this.element(this.token.start, args.length === 0))
      if (!this.isOp(",")) break
      this.next()
    }
    this.expectOp(")", '"," or ")"')
    return args
  }

  private primary(): ValidatorExpr {
    const t = this.token
    switch (t.kind) {
      case "int":
        this.next()
        return { kind: "int", start: t.start, value: t.value as number | bigint }
      case "float":
        this.next()
        return { kind: "float", start: t.start, value: t.value as string }
      case "str": {
        this.next()
        let value = t.value as string
        // Adjacent string literals concatenate, as in Python.
        while (this.token.kind === "str") value += this.next().value as string
        return { kind: "str", start: t.start, value }
      }
      case "name":
        return this.name(t)
      case "op":
        if (t.text === "(") {
          this.next()
          // A tuple — (), (a,), (a, b) — is a list: validators only read it.
          if (this.isOp(")")) {
            this.next()
            return { kind: "list", start: t.start, items: [] }
          }
          const e = this.element(t.start, true)
          if (!this.isOp(",")) {
            this.expectOp(")", '")"')
            return e
          }
          const items: Array<ValidatorExpr> = [e]
          while (this.isOp(",")) {
            this.next()
            if (this.isOp(")")) break
            items.push(this.expression())
          }
          this.expectOp(")", '"," or ")"')
          return { kind: "list", start: t.start, items }
        }
        if (t.text === "[") {
          this.next()
          const items: Array<ValidatorExpr> = []
          while (!this.isOp("]")) {
            items.push(this.element(t.start, items.length === 0))
            if (items[0]!.kind === "comprehension" && items.length === 1 && !this.isOp(",")) {
              this.expectOp("]", '"]"')
              return items[0]!
            }
            if (!this.isOp(",")) break
            this.next()
          }
          this.expectOp("]", '"," or "]"')
          return { kind: "list", start: t.start, items }
        }
        throw this.unexpected("a value")
      case "end":
        throw this.unexpected("a value")
    }
  }

  private name(t: Token): ValidatorExpr {
    this.next()
    if (this.bound.includes(t.text)) {
      if (this.isOp("(")) throw syntaxError(`${t.text} is a comprehension variable, not a function`, t.start)
      return { kind: "var", start: t.start, name: t.text }
    }
    if (Object.hasOwn(TYPE_NAMES, t.text) && !this.isOp("(")) return { kind: "type", start: t.start, name: t.text as PythonType }
    switch (t.text) {
      case "x":
        if (this.isOp("(")) throw syntaxError("x is the output, not a function", t.start)
        return { kind: "x", start: t.start }
      case "True":
      case "False":
        return { kind: "bool", start: t.start, value: t.text === "True" }
      case "None":
        return { kind: "none", start: t.start }
      case "true":
      case "false":
      case "null":
        throw syntaxError(
          `unknown name ${t.text}; write ${t.text === "null" ? "None" : t.text === "true" ? "True" : "False"}`,
          t.start,
          t.text === "null" ? "None" : t.text === "true" ? "True" : "False",
          t.text
        )
    }
    if (FORBIDDEN.has(t.text) || t.text.startsWith("__")) {
      throw syntaxError(
        `${t.text} is not allowed: validators are pure expressions over x; available functions: ${FUNCTIONS.join(", ")}`,
        t.start,
        `one of ${FUNCTIONS.join(", ")}`,
        t.text
      )
    }
    if (KEYWORDS.has(t.text)) throw syntaxError(`unexpected keyword ${t.text}`, t.start, "a value", t.text)
    if (this.isOp("(")) {
      if (!(FUNCTIONS as ReadonlyArray<string>).includes(t.text)) {
        throw syntaxError(`unknown function ${t.text}(); available: ${FUNCTIONS.join(", ")}`, t.start, `one of ${FUNCTIONS.join(", ")}`, t.text)
      }
      return { kind: "call", start: t.start, name: t.text, args: this.arguments() }
    }
    throw syntaxError(`unknown name ${t.text}: the output is x`, t.start, "x", t.text)
  }
}

/**
 * Parse a validator expression. Throws {@link ValidatorSyntaxError} with the offset of the
 * problem.
 *
 * @since 0.1.0
 * @category parsing
 * @example
 * ```ts
 * import { parseValidator } from "lambdagent/yaml"
 * parseValidator("x.startswith('{') and len(x) < 1000").kind // "logic"
 * ```
 */
export const parseValidator = (source: string): ValidatorExpr => {
  if (source.length > MAX_LENGTH) throw syntaxError(`the expression is longer than ${MAX_LENGTH} characters`, 0)
  const tokens = tokenize(source)
  const loop = tokens.find((t) => t.kind === "name" && t.text === "while")
  if (loop !== undefined) throw syntaxError("loops are not supported: write a comprehension, as in all(w not in x for w in ['error', 'sorry'])", loop.start)
  return new Parser(tokens).parse()
}

// ---------------------------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------------------------

/**
 * The tools a validator calls for operations the core language lacks, by validator operation.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { builtinToolNames } from "lambdagent/yaml"
 * console.log(builtinToolNames.contains) // "__builtin_contains"
 * ```
 */
export const builtinToolNames = {
  contains: "__builtin_contains",
  startswith: "__builtin_startswith",
  endswith: "__builtin_endswith",
  strip: "__builtin_strip",
  lstrip: "__builtin_lstrip",
  rstrip: "__builtin_rstrip",
  lower: "__builtin_lower",
  upper: "__builtin_upper",
  is_json: "__builtin_is_json"
} as const

/** Static types; a `float` is carried as its canonical text (`Term.toFloat`) and compared with `Term.compareNumbers`. */
type Ty = "int" | "float" | "str" | "bool" | "none" | "list" | "any"

interface Typed {
  readonly term: Term.Term
  readonly ty: Ty
}

const tyName: Readonly<Record<Ty, string>> = {
  int: "an integer",
  float: "a float",
  str: "a string",
  bool: "a boolean",
  none: "None",
  list: "a list",
  any: "a value"
}

/** Python's string methods as the core's pure string primitives. */
const STRING_METHODS = {
  strip: Term.trim,
  lstrip: Term.trimStart,
  rstrip: Term.trimEnd,
  lower: Term.lower,
  upper: Term.upper
} as const

class Compiler {
  private fresh = 0
  /** The comprehension variables in scope, innermost last. */
  private readonly scope: Array<{ readonly name: string; readonly value: Typed }> = []

  /** `let v = value in body(v)`: evaluate once, use several times. */
  private bind(value: Term.Term, body: (v: Term.Term) => Term.Term): Term.Term {
    if (value._tag === "Var" || value._tag === "Lit") return body(value)
    const name = `_v${++this.fresh}`
    return Term.app(Term.lam(name, body(Term.var(name))), value)
  }

  private fail(e: ValidatorExpr, message: string, expected?: string, actual?: Ty): never {
    throw syntaxError(message, e.start, expected, actual === undefined ? undefined : tyName[actual])
  }

  private need(e: ValidatorExpr, typed: Typed, allowed: ReadonlyArray<Ty>, what: string): Typed {
    if (typed.ty === "any" || allowed.includes(typed.ty)) return typed
    return this.fail(
      e,
      `${what} needs ${allowed.map((t) => tyName[t]).join(" or ")}, not ${tyName[typed.ty]}`,
      allowed.map((t) => tyName[t]).join(" or "),
      typed.ty
    )
  }

  /** Python truthiness as a boolean term. */
  truth(e: ValidatorExpr): Term.Term {
    const { term, ty } = this.value(e)
    return ty === "any" ? this.bind(term, (v) => this.truthOf(v, ty)) : this.truthOf(term, ty)
  }

  value(e: ValidatorExpr): Typed {
    switch (e.kind) {
      case "int":
        return { term: Term.lit(e.value), ty: "int" }
      case "float":
        return { term: Term.toFloat(Term.lit(e.value)), ty: "float" }
      case "str":
        return { term: Term.lit(e.value), ty: "str" }
      case "bool":
        return { term: Term.lit(e.value), ty: "bool" }
      case "none":
        return { term: Term.lit(null), ty: "none" }
      case "x":
        return { term: Term.var("x"), ty: "any" }
      case "var":
        return this.scope.findLast((v) => v.name === e.name)!.value
      case "type":
        return this.fail(e, `${e.name} is a type: use it as isinstance(value, ${e.name})`)
      case "comprehension":
        return this.comprehension(e)
      case "list":
        return { term: Term.list(e.items.map((i) => this.value(i).term)), ty: "list" }
      case "not":
        return { term: Term.not(this.truth(e.arg)), ty: "bool" }
      case "neg": {
        const arg = this.need(e.arg, this.value(e.arg), ["int"], "unary -")
        return { term: Term.sub(Term.lit(0), arg.term), ty: "int" }
      }
      case "logic":
        return this.logic(e)
      case "compare": {
        const parts = e.ops.map((op, i) => this.compare(e, op, e.operands[i]!, e.operands[i + 1]!))
        return { term: parts.reduce((a, b) => Term.and(a, b)), ty: "bool" }
      }
      case "arith":
        return this.arith(e)
      case "cond": {
        const then = this.value(e.then)
        const otherwise = this.value(e.else)
        return { term: Term.if(this.truth(e.cond), then.term, otherwise.term), ty: then.ty === otherwise.ty ? then.ty : "any" }
      }
      case "call":
        return this.call(e)
      case "method":
        return this.method(e)
    }
  }

  private logic(e: Extract<ValidatorExpr, { kind: "logic" }>): Typed {
    const left = this.value(e.left)
    const right = this.value(e.right)
    if (left.ty === "bool" && right.ty === "bool") {
      return { term: e.op === "and" ? Term.and(left.term, right.term) : Term.or(left.term, right.term), ty: "bool" }
    }
    // Python's `a or b` is a if a is truthy else b; `a and b` is b if a is truthy else a.
    const ty = left.ty === right.ty ? left.ty : "any"
    const term = this.bind(left.term, (v) => {
      const truthy = this.truthOf(v, left.ty)
      return e.op === "or" ? Term.if(truthy, v, right.term) : Term.if(truthy, right.term, v)
    })
    return { term, ty }
  }

  truthOf(term: Term.Term, ty: Ty): Term.Term {
    switch (ty) {
      case "bool":
        return term
      case "str":
        return Term.not(Term.eq(term, Term.lit("")))
      case "int":
        return Term.not(Term.eq(term, Term.lit(0)))
      case "float":
        // NaN is truthy: its comparison is null, not 0
        return Term.not(Term.eq(Term.compareNumbers(term, Term.lit(0)), Term.lit(0)))
      case "none":
        return Term.lit(false)
      case "list":
        return Term.not(Term.eq(term, Term.list([])))
      case "any":
        return Term.not(
          [Term.lit(""), Term.lit(0), Term.lit(false), Term.lit(null), Term.list([])].map((falsy) => Term.eq(term, falsy)).reduce((a, b) => Term.or(a, b))
        )
    }
  }

  private compare(whole: ValidatorExpr, op: CompareOp, l: ValidatorExpr, r: ValidatorExpr): Term.Term {
    const left = this.value(l)
    const right = this.value(r)
    if ((left.ty === "float" || right.ty === "float") && op !== "in" && op !== "not in") return this.compareFloats(whole, op, l, left, r, right)
    switch (op) {
      case "==":
      case "!=":
      case "is":
      case "is not": {
        if (left.ty !== "any" && right.ty !== "any" && left.ty !== right.ty) {
          this.fail(whole, `${op} between ${tyName[left.ty]} and ${tyName[right.ty]} is always ${op === "==" || op === "is" ? "False" : "True"}`)
        }
        const eq = Term.eq(left.term, right.term)
        return op === "==" || op === "is" ? eq : Term.not(eq)
      }
      case "<":
      case ">":
      case "<=":
      case ">=": {
        this.need(l, left, ["int", "str"], op)
        this.need(r, right, ["int", "str"], op)
        if (left.ty !== "any" && right.ty !== "any" && left.ty !== right.ty) {
          this.fail(whole, `cannot order ${tyName[left.ty]} against ${tyName[right.ty]}`)
        }
        const build = { "<": Term.lt, ">": Term.gt, "<=": Term.lte, ">=": Term.gte }[op]
        return build(left.term, right.term)
      }
      case "in":
      case "not in": {
        let test: Term.Term
        if (r.kind === "list") {
          test =
            r.items.length === 0
              ? Term.lit(false)
              : this.bind(left.term, (v) => r.items.map((item) => Term.eq(v, this.value(item).term)).reduce((a, b) => Term.or(a, b)))
        } else {
          this.need(r, right, ["str", "list"], "in")
          if (right.ty === "str") this.need(l, left, ["str"], "the left side of in a string")
          test = Term.contains(right.term, left.term)
        }
        return op === "in" ? test : Term.not(test)
      }
    }
  }

  /**
   * A comparison with a float (`float(x) <= 0.5`, `float(x) == 1`): `compareNumbers` of the two, as
   * doubles and exactly against integers. NaN compares null: unequal to everything, never ordered.
   */
  private compareFloats(whole: ValidatorExpr, op: CompareOp, l: ValidatorExpr, left: Typed, r: ValidatorExpr, right: Typed): Term.Term {
    for (const [e, typed] of [
      [l, left],
      [r, right]
    ] as const) {
      if (typed.ty === "any") {
        this.fail(e, `comparing ${e.kind === "x" ? "the output" : "a value"} with a float: the output is text, write float(x) to read a number out of it`)
      }
      if (typed.ty !== "float" && typed.ty !== "int" && typed.ty !== "bool") {
        if (op === "==" || op === "!=" || op === "is" || op === "is not") {
          this.fail(whole, `${op} between ${tyName[left.ty]} and ${tyName[right.ty]} is always ${op === "==" || op === "is" ? "False" : "True"}`)
        }
        this.fail(whole, `cannot order ${tyName[left.ty]} against ${tyName[right.ty]}`)
      }
    }
    const order = Term.compareNumbers(left.term, right.term)
    const is = (n: number) => Term.eq(order, Term.lit(n))
    switch (op) {
      case "==":
      case "is":
        return is(0)
      case "!=":
      case "is not":
        return Term.not(is(0))
      case "<":
        return is(-1)
      case ">":
        return is(1)
      default:
        return this.bind(order, (c) => Term.or(Term.eq(c, Term.lit(op === "<=" ? -1 : 1)), Term.eq(c, Term.lit(0))))
    }
  }

  private arith(e: Extract<ValidatorExpr, { kind: "arith" }>): Typed {
    const left = this.value(e.left)
    const right = this.value(e.right)
    if (left.ty === "float" || right.ty === "float") {
      this.fail(e, `${e.op} on floats is not supported (values are never fractional): compare the float itself, as in float(x) <= 0.5`)
    }
    if (e.op === "+") {
      const kinds = new Set([left.ty, right.ty])
      kinds.delete("any")
      if (kinds.size > 1) this.fail(e, `+ cannot combine ${tyName[left.ty]} and ${tyName[right.ty]}`)
      const [ty] = [...kinds]
      if (ty === undefined) this.fail(e, "+ on x alone is ambiguous (numbers or strings?): combine x with a literal, as in x + ''")
      if (ty === "str" || ty === "list") return { term: Term.concat(left.term, right.term), ty }
      if (ty !== "int") this.fail(e, `+ needs integers, strings or lists, not ${tyName[ty]}`)
      return { term: Term.add(left.term, right.term), ty: "int" }
    }
    this.need(e.left, left, ["int"], e.op)
    this.need(e.right, right, ["int"], e.op)
    const build = { "-": Term.sub, "*": Term.mul, "//": Term.div, "%": Term.mod }[e.op]
    return { term: build(left.term, right.term), ty: "int" }
  }

  /** `[element for name in iterable if …]` as a left fold that appends each kept element. */
  private comprehension(e: Extract<ValidatorExpr, { kind: "comprehension" }>): Typed {
    const iterable = this.value(e.iterable)
    if (iterable.ty === "str") {
      this.fail(e.iterable, "iterating over the characters of a string is not supported: test the string itself (in, startswith, len)")
    }
    this.need(e.iterable, iterable, ["list"], "for … in")
    const items = e.iterable.kind === "list" ? e.iterable.items.map((i) => this.value(i).ty) : []
    const itemTy: Ty = items.length > 0 && items.every((t) => t === items[0]) ? items[0]! : "any"
    const pair = `_p${++this.fresh}`
    const item = `_i${++this.fresh}`
    this.scope.push({ name: e.name, value: { term: Term.var(item), ty: itemTy } })
    try {
      const element = this.value(e.element)
      const keep = e.conditions.map((c) => this.truth(c))
      const acc = Term.fst(Term.var(pair))
      const appended = Term.concat(acc, Term.list([element.term]))
      const body =
        keep.length === 0
          ? appended
          : Term.if(
              keep.reduce((a, b) => Term.and(a, b)),
              appended,
              acc
            )
      const step = Term.lam(pair, Term.app(Term.lam(item, body), Term.snd(Term.var(pair))))
      return { term: Term.fold(step, Term.list([]), iterable.term), ty: "list" }
    } finally {
      this.scope.pop()
    }
  }

  private arity(e: { readonly start: number; readonly args: ReadonlyArray<ValidatorExpr> }, name: string, min: number, max: number): void {
    if (e.args.length < min || e.args.length > max) {
      const wanted = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`
      throw syntaxError(`${name} takes ${wanted} argument${max === 1 ? "" : "s"}, got ${e.args.length}`, e.start)
    }
  }

  private call(e: Extract<ValidatorExpr, { kind: "call" }>): Typed {
    switch (e.name) {
      case "len": {
        this.arity(e, "len()", 1, 1)
        const arg = this.need(e.args[0]!, this.value(e.args[0]!), ["str", "list"], "len()")
        return { term: Term.length(arg.term), ty: "int" }
      }
      case "is_json": {
        this.arity(e, "is_json()", 1, 1)
        const arg = this.need(e.args[0]!, this.value(e.args[0]!), ["str"], "is_json()")
        return { term: Term.isJson(arg.term), ty: "bool" }
      }
      case "bool":
        this.arity(e, "bool()", 1, 1)
        return { term: this.truth(e.args[0]!), ty: "bool" }
      case "abs": {
        this.arity(e, "abs()", 1, 1)
        const arg = this.need(e.args[0]!, this.value(e.args[0]!), ["int"], "abs()")
        return { term: this.bind(arg.term, (v) => Term.if(Term.lt(v, Term.lit(0)), Term.sub(Term.lit(0), v), v)), ty: "int" }
      }
      case "sum": {
        this.arity(e, "sum()", 1, 1)
        const list = this.need(e.args[0]!, this.value(e.args[0]!), ["list"], "sum()")
        const p = Term.var("_p")
        return { term: Term.fold(Term.lam("_p", Term.add(Term.fst(p), Term.snd(p))), Term.lit(0), list.term), ty: "int" }
      }
      case "all":
      case "any": {
        this.arity(e, `${e.name}()`, 1, 1)
        const list = this.need(e.args[0]!, this.value(e.args[0]!), ["list"], `${e.name}()`)
        const p = Term.var("_p")
        const step = e.name === "all" ? Term.and : Term.or
        return { term: Term.fold(Term.lam("_p", step(Term.fst(p), this.truthOf(Term.snd(p), "any"))), Term.lit(e.name === "all"), list.term), ty: "bool" }
      }
      case "str": {
        this.arity(e, "str()", 1, 1)
        const arg = e.args[0]!
        if (arg.kind === "bool") return { term: Term.lit(arg.value ? "True" : "False"), ty: "str" }
        if (arg.kind === "none") return { term: Term.lit("None"), ty: "str" }
        const typed = this.value(arg)
        return typed.ty === "str" ? typed : { term: Term.toText(typed.term), ty: "str" }
      }
      case "int": {
        // int(text) reads the integer out of it, raising (so judging the output invalid) when there is none
        this.arity(e, "int()", 1, 1)
        const typed = this.need(e.args[0]!, this.value(e.args[0]!), ["int", "bool", "str"], "int()")
        if (typed.ty === "int") return typed
        if (typed.ty === "bool") return { term: Term.if(typed.term, Term.lit(1), Term.lit(0)), ty: "int" }
        return { term: Term.toInt(typed.term), ty: "int" }
      }
      case "float": {
        this.arity(e, "float()", 1, 1)
        const typed = this.need(e.args[0]!, this.value(e.args[0]!), ["float", "int", "bool", "str"], "float()")
        return typed.ty === "float" ? typed : { term: Term.toFloat(typed.term), ty: "float" }
      }
      case "isinstance":
        return this.isinstance(e)
      default: {
        // min / max of two or more integers or strings
        this.arity(e, `${e.name}()`, 2, Infinity)
        const args = e.args.map((a) => this.need(a, this.value(a), ["int", "str"], `${e.name}()`))
        const tys = new Set(args.map((a) => a.ty).filter((t) => t !== "any"))
        if (tys.size > 1) this.fail(e, `${e.name}() cannot compare integers with strings`)
        const pick = e.name === "min" ? Term.lt : Term.gt
        const term = args.map((a) => a.term).reduce((acc, next) => this.bind(acc, (a) => this.bind(next, (b) => Term.if(pick(b, a), b, a))))
        return { term, ty: [...tys][0] ?? "any" }
      }
    }
  }

  private isinstance(e: Extract<ValidatorExpr, { kind: "call" }>): Typed {
    this.arity(e, "isinstance()", 2, 2)
    const [value, types] = e.args as [ValidatorExpr, ValidatorExpr]
    const listed = types.kind === "list" ? types.items : [types]
    const names = listed.flatMap((t) => {
      if (t.kind !== "type") this.fail(t, `isinstance() takes a type or a tuple of types: ${Object.keys(TYPE_NAMES).join(", ")}`)
      return TYPE_NAMES[t.name]
    })
    const typed = this.value(value)
    if (typed.ty === "float") return { term: Term.lit(listed.some((t) => t.kind === "type" && t.name === "float")), ty: "bool" }
    const staticName: Partial<Record<Ty, string>> = { str: "string", int: "integer", bool: "boolean", none: "null", list: "list" }
    const known = staticName[typed.ty]
    if (known !== undefined) return { term: Term.lit(names.includes(known)), ty: "bool" }
    if (names.length === 0) return { term: Term.lit(false), ty: "bool" }
    const term = this.bind(Term.typeName(typed.term), (name) => names.map((n) => Term.eq(name, Term.lit(n))).reduce((a, b) => Term.or(a, b)))
    return { term, ty: "bool" }
  }

  private method(e: Extract<ValidatorExpr, { kind: "method" }>): Typed {
    const target = this.need(e.target, this.value(e.target), ["str"], `.${e.name}()`)
    switch (e.name) {
      case "startswith":
      case "endswith": {
        this.arity(e, `.${e.name}()`, 1, 1)
        const arg = this.need(e.args[0]!, this.value(e.args[0]!), ["str"], `.${e.name}()`)
        return { term: (e.name === "startswith" ? Term.startsWith : Term.endsWith)(target.term, arg.term), ty: "bool" }
      }
      default: {
        this.arity(e, `.${e.name}()`, 0, 0)
        return { term: STRING_METHODS[e.name as keyof typeof STRING_METHODS](target.term), ty: "str" }
      }
    }
  }
}

/**
 * Compile a parsed validator to `λx. <boolean>`: the result is Python's truthiness of the
 * expression. Throws {@link ValidatorSyntaxError} for ill-typed expressions (`len(x) > 'a'`).
 *
 * @since 0.1.0
 * @category compiling
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { compileValidatorExpr, parseValidator } from "lambdagent/yaml"
 * Term.pretty(compileValidatorExpr(parseValidator("len(x) > 3"))) // "λx. (length(x)) > 3"
 * ```
 */
export const compileValidatorExpr = (expr: ValidatorExpr): Term.Term => Term.lam("x", new Compiler().truth(expr))

/**
 * Where a validator comes from, for error positions.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ValidatorLocation } from "lambdagent/yaml"
 * const at: ValidatorLocation = { path: ["guard", "validator"], locate: () => ({ line: 7, column: 14 }) }
 * ```
 */
export interface ValidatorLocation {
  readonly path: FieldPath
  /** The position of an offset inside the expression's YAML scalar. */
  readonly locate?: (offset: number) => Position | undefined
  readonly file?: string
}

/**
 * Parse and compile a validator expression to a term `λx. …` returning a boolean. Throws a
 * `SchemaError` naming the field, the line and column (when `at` can locate them) and what was
 * expected.
 *
 * @since 0.1.0
 * @category compiling
 * @example
 * ```ts
 * import { Evaluator, Term } from "lambdagent"
 * import { compileValidator } from "lambdagent/yaml"
 * const v = compileValidator("len(x) > 3 and x != 'none'")
 * Evaluator.evaluate(Term.app(v, Term.lit("hello"))) // true
 * ```
 */
export const compileValidator = (source: string, at: ValidatorLocation = { path: [] }): Term.Term => {
  try {
    return compileValidatorExpr(parseValidator(source))
  } catch (e) {
    if (!(e instanceof ValidatorSyntaxError)) throw e
    throw validatorIssueError(e, source, at)
  }
}

/**
 * The `SchemaError` for a validator problem at `at`.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { ValidatorSyntaxError, validatorIssueError } from "lambdagent/yaml"
 * const e = validatorIssueError(new ValidatorSyntaxError({ message: "unexpected character \"$\"", offset: 4 }), "len($)", { path: ["guard", "validator"] })
 * e.field // "guard.validator"
 * ```
 */
export const validatorIssueError = (e: ValidatorSyntaxError, source: string, at: ValidatorLocation) => schemaError([validatorIssue(e, source, at)], at.file)

/**
 * The issue for a validator problem: the message quotes the expression with a caret under the
 * offending character.
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { ValidatorSyntaxError, validatorIssue } from "lambdagent/yaml"
 * validatorIssue(new ValidatorSyntaxError({ message: "unknown name y: the output is x", offset: 4 }), "len(y)", { path: ["guard", "validator"] }).message
 * ```
 */
export const validatorIssue = (e: ValidatorSyntaxError, source: string, at: ValidatorLocation): Issue => {
  const pos = at.locate?.(e.offset) ?? (at.path.length === 0 ? { line: 1, column: e.offset + 1 } : undefined)
  const line = source.split("\n")[0]!
  const excerpt = e.offset <= line.length && line.length <= 120 ? `\n    ${line}\n    ${" ".repeat(e.offset)}^` : ""
  return {
    path: at.path,
    field: formatFieldPath(at.path),
    ...(pos !== undefined ? { line: pos.line, column: pos.column } : {}),
    message: `invalid validator at character ${e.offset + 1}: ${e.message}${excerpt}`,
    expected: e.expected ?? "a validator expression over x (see docs/yaml.md#validators)",
    ...(e.actual !== undefined ? { actual: e.actual } : {})
  }
}
