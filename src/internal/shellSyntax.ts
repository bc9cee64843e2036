/**
 * A small lexer for POSIX sh programs, enough to place a shell tool's `{}` placeholders: it splits
 * a program into commands (the token runs between `;`, `&`, `|`, `&&`, `||`, parentheses and
 * newlines, at every nesting level: `$(…)` bodies are lexed as programs of their own) and words,
 * and records for every `{}` the quoting context it sits in. A `{}` inside a construct whose text
 * the shell reads again (`${…}`, `$((…))`, `$[…]`, backquotes, here-documents) is a hazard, and so
 * is every `$'…'`: dash reads it as a `$` and a single-quoted string, bash as an escaped string,
 * so the quoting around it is not certain.
 *
 * It follows the POSIX grammar for quoting and expansions and evaluates nothing.
 */

/** Where a `{}` sits: outside quotes, inside `'…'`, or inside `"…"`. */
export type QuoteContext = "bare" | "single" | "double"

/** One `{}` in a word. */
export interface Placeholder {
  /** Offset of its `{` in the program. */
  readonly offset: number
  readonly context: QuoteContext
}

/** A shell word (a command name, an argument, an assignment, a redirection target). */
export interface Word {
  readonly start: number
  readonly end: number
  /** The word with its quotes removed, or `undefined` when it holds an expansion (`$x`, `$(…)`, `` `…` ``). */
  readonly literal: string | undefined
  /** Whether any part of it was quoted or escaped. */
  readonly quoted: boolean
  readonly placeholders: ReadonlyArray<Placeholder>
}

/** A word, or an operator that is not a command separator (a redirection such as `>`, `2>&`, `<<`). */
export type Token = { readonly type: "word"; readonly word: Word } | { readonly type: "redirect"; readonly op: string; readonly offset: number }

/** Why a `{}` sits where its text would be read again as shell syntax. */
export type HazardKind = "parameter" | "arithmetic" | "backquote" | "heredoc" | "ansi-c"

/** A `{}` inside a construct whose text the shell reads again. */
export interface Hazard {
  readonly offset: number
  readonly kind: HazardKind
}

/** The program, lexed. */
export interface Lexed {
  /** Every command (a run of tokens between separators), outer ones before the `$(…)` bodies they contain end. */
  readonly commands: ReadonlyArray<ReadonlyArray<Token>>
  readonly hazards: ReadonlyArray<Hazard>
}

/** A program the lexer cannot read (an unterminated quote, `$(`, `${`, backquote or here-document). */
export class ShellSyntaxError extends Error {
  constructor(
    readonly offset: number,
    message: string
  ) {
    super(message)
  }
}

const SEPARATORS = [";;&", ";;", ";&", "&&", "||", "|&", ";", "&", "|", "(", ")"] as const
const REDIRECTS = ["&>>", "&>", "<<<", "<<-", "<<", ">>", "<&", ">&", "<>", ">|", "<", ">"] as const
const BLANK = /[ \t]/
const WORD_END = /[ \t\n;&|<>()]/
const NAME_START = /[A-Za-z_]/

interface Heredoc {
  readonly delimiter: string
  readonly stripTabs: boolean
}

class Lexer {
  readonly commands: Array<ReadonlyArray<Token>> = []
  readonly hazards: Array<Hazard> = []
  private i = 0
  private pending: Array<Heredoc> = []
  private expectDelimiter: boolean | "strip" = false

  constructor(private readonly src: string) {}

  private at(text: string): boolean {
    return this.src.startsWith(text, this.i)
  }

  private fail(offset: number, message: string): never {
    throw new ShellSyntaxError(offset, message)
  }

  /** Commands until the end of the program, or until the `)` that closes a `$(` at this level. */
  list(closer: boolean): void {
    const src = this.src
    let current: Array<Token> = []
    let parens = 0
    let cases = 0
    // inside bash's [[ … ]], && || ( ) < > are part of the expression
    let test = false
    const flush = () => {
      if (current.length > 0) this.commands.push(current)
      current = []
    }
    const words = () => current.filter((t) => t.type === "word").map((t) => (t as { word: Word }).word)
    const opened = this.i
    for (;;) {
      while (this.i < src.length && (BLANK.test(src[this.i]!) || this.at("\\\n"))) this.i += src[this.i] === "\\" ? 2 : 1
      if (this.i >= src.length) {
        if (closer) this.fail(opened - 2, "a $( is never closed")
        flush()
        return
      }
      const c = src[this.i]!
      if (c === "\n") {
        this.i++
        flush()
        this.heredocBodies()
        continue
      }
      if (c === "#") {
        while (this.i < src.length && src[this.i] !== "\n") this.i++
        continue
      }
      if (c === ")" && parens === 0 && cases === 0 && closer && !test) {
        this.i++
        flush()
        return
      }
      const before = words()
      if (this.at("((") && (before.length === 0 || (before.length === 1 && before[0]!.literal === "for"))) {
        // bash's arithmetic command ((…)) and for ((…)) loop
        this.arithmetic(2)
        continue
      }
      if (test) {
        const operator = ["&&", "||", "(", ")", "<", ">", "!"].find((o) => this.at(o))
        if (operator !== undefined) {
          current.push({ type: "word", word: { start: this.i, end: this.i + operator.length, literal: operator, quoted: false, placeholders: [] } })
          this.i += operator.length
          continue
        }
      }
      const separator = SEPARATORS.find((s) => this.at(s))
      if (separator !== undefined) {
        if (separator === "(") parens++
        else if (separator === ")" && parens > 0) parens--
        this.i += separator.length
        flush()
        continue
      }
      const redirect = REDIRECTS.find((r) => this.at(r))
      if (redirect !== undefined) {
        current.push({ type: "redirect", op: redirect, offset: this.i })
        if (redirect === "<<" || redirect === "<<-") this.expectDelimiter = redirect === "<<-" ? "strip" : true
        this.i += redirect.length
        continue
      }
      const io = /^\d+(?=[<>])/.exec(src.slice(this.i, this.i + 12))
      if (io !== null) {
        const op = REDIRECTS.find((r) => src.startsWith(r, this.i + io[0].length))!
        current.push({ type: "redirect", op: io[0] + op, offset: this.i })
        if (op === "<<" || op === "<<-") this.expectDelimiter = op === "<<-" ? "strip" : true
        this.i += io[0].length + op.length
        continue
      }
      const word = this.word()
      if (this.expectDelimiter !== false) {
        this.pending.push({ delimiter: word.literal ?? src.slice(word.start, word.end), stripTabs: this.expectDelimiter === "strip" })
        this.expectDelimiter = false
      }
      const first = current.every((t) => t.type === "redirect")
      if (first && word.literal === "case" && !word.quoted) cases++
      if (first && word.literal === "esac" && !word.quoted && cases > 0) cases--
      if (first && word.literal === "[[" && !word.quoted) test = true
      if (word.literal === "]]" && !word.quoted) test = false
      current.push({ type: "word", word })
    }
  }

  /** The bodies of the here-documents whose operators were on the line that just ended. */
  private heredocBodies(): void {
    const src = this.src
    for (const doc of this.pending) {
      const started = this.i
      for (;;) {
        if (this.i >= src.length) this.fail(started, `a here-document is never ended by a line ${JSON.stringify(doc.delimiter)}`)
        const eol = src.indexOf("\n", this.i)
        const end = eol < 0 ? src.length : eol
        const line = src.slice(this.i, end)
        const brace = line.indexOf("{}")
        if (brace >= 0) this.hazards.push({ offset: this.i + brace, kind: "heredoc" })
        this.i = eol < 0 ? src.length : eol + 1
        if ((doc.stripTabs ? line.replace(/^\t+/, "") : line) === doc.delimiter) break
      }
    }
    this.pending = []
  }

  private word(): Word {
    const src = this.src
    const start = this.i
    const placeholders: Array<Placeholder> = []
    let literal: string | undefined = ""
    let quoted = false
    const add = (text: string) => {
      if (literal !== undefined) literal += text
    }
    while (this.i < src.length && !WORD_END.test(src[this.i]!)) {
      const c = src[this.i]!
      if (c === "\\") {
        quoted = true
        if (src[this.i + 1] !== "\n") add(src[this.i + 1] ?? "")
        this.i += 2
      } else if (c === "'") {
        quoted = true
        add(this.single(placeholders))
      } else if (c === '"') {
        quoted = true
        const inside = this.double(placeholders)
        if (inside === undefined) literal = undefined
        else add(inside)
      } else if (c === "$" && src[this.i + 1] === "'") {
        this.hazards.push({ offset: this.i, kind: "ansi-c" })
        this.i++
        quoted = true
        add(this.single(placeholders))
      } else if (c === "$" || c === "`") {
        if (this.expansion()) literal = undefined
        else add("$")
      } else if (this.at("{}")) {
        placeholders.push({ offset: this.i, context: "bare" })
        add("{}")
        this.i += 2
      } else {
        add(c)
        this.i++
      }
    }
    return { start, end: this.i, literal, quoted, placeholders }
  }

  /** `'…'` at `this.i`; returns the text inside. */
  private single(placeholders: Array<Placeholder>): string {
    const open = this.i
    const close = this.src.indexOf("'", open + 1)
    if (close < 0) this.fail(open, "a ' quote is never closed")
    const body = this.src.slice(open + 1, close)
    for (let k = body.indexOf("{}"); k >= 0; k = body.indexOf("{}", k + 2)) placeholders.push({ offset: open + 1 + k, context: "single" })
    this.i = close + 1
    return body
  }

  /** `"…"` at `this.i`; returns the text inside, or `undefined` when it holds an expansion. */
  private double(placeholders: Array<Placeholder>): string | undefined {
    const src = this.src
    const open = this.i
    this.i++
    let plain = true
    let text = ""
    for (;;) {
      if (this.i >= src.length) this.fail(open, 'a " quote is never closed')
      const c = src[this.i]!
      if (c === '"') {
        this.i++
        return plain ? text : undefined
      }
      if (c === "\\") {
        const next = src[this.i + 1] ?? ""
        if (next !== "\n") text += '$`"\\'.includes(next) ? next : `\\${next}`
        this.i += 2
      } else if (c === "$" || c === "`") {
        if (this.expansion()) plain = false
        else text += "$"
      } else if (this.at("{}")) {
        placeholders.push({ offset: this.i, context: "double" })
        text += "{}"
        this.i += 2
      } else {
        text += c
        this.i++
      }
    }
  }

  /** An expansion at `this.i` (`$name`, `${…}`, `$(…)`, `$((…))`, `` `…` ``); false for a lone `$`. */
  private expansion(): boolean {
    const src = this.src
    const c = src[this.i]
    if (c === "`") {
      this.backquote()
      return true
    }
    const next = src[this.i + 1] ?? ""
    if (this.at("$((")) {
      this.i++
      this.arithmetic(2)
      return true
    }
    if (this.at("$(")) {
      this.i += 2
      this.list(true)
      return true
    }
    if (this.at("$[")) {
      this.bracketed("$[", "]", "arithmetic")
      return true
    }
    if (this.at("${")) {
      this.bracketed("${", "}", "parameter")
      return true
    }
    if (NAME_START.test(next)) {
      this.i++
      while (this.i < src.length && /\w/.test(src[this.i]!)) this.i++
      return true
    }
    if (/[0-9@*#?$!-]/.test(next)) {
      this.i += 2
      return true
    }
    this.i++
    return false
  }

  private backquote(): void {
    const src = this.src
    const open = this.i
    this.i++
    for (;;) {
      if (this.i >= src.length) this.fail(open, "a ` backquote is never closed")
      const c = src[this.i]
      if (c === "`") break
      if (this.at("{}")) this.hazards.push({ offset: this.i, kind: "backquote" })
      this.i += c === "\\" ? 2 : 1
    }
    this.i++
  }

  /** `((…))` at `this.i`: to the `))` that closes it, counting parentheses and skipping quotes. */
  private arithmetic(opener: number): void {
    const src = this.src
    const open = this.i
    this.i += opener
    let depth = 0
    for (;;) {
      if (this.i >= src.length) this.fail(open, "a (( is never closed")
      const c = src[this.i]!
      if (this.at("{}")) this.hazards.push({ offset: this.i, kind: "arithmetic" })
      if (c === "(") depth++
      else if (c === ")") {
        if (depth === 0 && src[this.i + 1] === ")") {
          this.i += 2
          return
        }
        depth--
      } else if (c === "'" || c === '"') {
        this.skipQuoted("arithmetic")
        continue
      } else if (c === "\\") this.i++
      this.i++
    }
  }

  /** `${…}` or `$[…]`: to the closing bracket, nesting on `${`/`$[`, skipping quotes. */
  private bracketed(opener: string, closer: string, kind: HazardKind): void {
    const src = this.src
    const open = this.i
    this.i += opener.length
    let depth = 1
    for (;;) {
      if (this.i >= src.length) this.fail(open, `a ${opener} is never closed`)
      const c = src[this.i]!
      if (this.at("{}")) this.hazards.push({ offset: this.i, kind })
      if (this.at(opener)) {
        depth++
        this.i += opener.length
        continue
      }
      if (c === closer && --depth === 0) {
        this.i++
        return
      }
      if (c === "'" || c === '"') {
        this.skipQuoted(kind)
        continue
      }
      this.i += c === "\\" ? 2 : 1
    }
  }

  /** A quoted string inside `${…}` or `$((…))`, every `{}` in it a hazard. */
  private skipQuoted(kind: HazardKind): void {
    const src = this.src
    const quote = src[this.i]!
    const open = this.i
    this.i++
    for (;;) {
      if (this.i >= src.length) this.fail(open, `a ${quote} quote is never closed`)
      const c = src[this.i]
      if (c === quote) break
      if (this.at("{}")) this.hazards.push({ offset: this.i, kind })
      this.i += c === "\\" && quote === '"' ? 2 : 1
    }
    this.i++
  }
}

/**
 * Lex a program. Throws {@link ShellSyntaxError} for one that does not end where it should (an
 * unterminated quote, expansion or here-document).
 */
export const lex = (program: string): Lexed => {
  const lexer = new Lexer(program)
  lexer.list(false)
  return { commands: lexer.commands, hazards: lexer.hazards }
}
