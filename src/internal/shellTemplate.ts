/**
 * A shell tool's command template: where its `{}` placeholders may stand, and the program it runs.
 *
 * The input never becomes program text. Each `{}` is rewritten, by the quoting context the lexer
 * finds it in, into an expansion of the environment variable {@link INPUT_VARIABLE} (bare →
 * `"$V"`, inside `"…"` → `${V}`, inside `'…'` → `'"$V"'`, closing and reopening the quote). The
 * shell never parses an expanded value again, so no input can run a command. What remains are the
 * places where the command itself reads an argument as code; those are refused when the tool is
 * defined, with a message that says what to write instead: the program position, the code of an
 * interpreter (`sh -c`, `python -c`, `node -e`, `perl -e`, `awk`, `sed`, `eval`, …), a shell's
 * script, a here-document, arithmetic, `${…}`, backquotes, bash's variable-name positions, and an
 * argument of `find` that could become an action.
 */
import { type Hazard, type HazardKind, lex, ShellSyntaxError, type Token, type Word } from "./shellSyntax.ts"

/** The environment variable that carries the input to a command with placeholders. */
export const INPUT_VARIABLE = "LAMBDAGENT_INPUT"

/** Why a placement is refused: the offset of its `{}` and a message that says what to write instead. */
export interface Refusal {
  readonly offset: number
  readonly message: string
}

/** A checked template: the program to run, and how many placeholders it expands. */
export type Template = { readonly ok: true; readonly program: string; readonly placeholders: number } | { readonly ok: false; readonly refusal: Refusal }

const REPLACEMENT = {
  bare: `"$${INPUT_VARIABLE}"`,
  double: `\${${INPUT_VARIABLE}}`,
  single: `'"$${INPUT_VARIABLE}"'`
} as const

const STDIN_ADVICE = "or give the input on standard input (a command without {})"

const HAZARD_MESSAGE: Readonly<Record<HazardKind, string>> = {
  parameter: "{} is inside ${…}, whose text the shell reads as an expansion; write {} outside the braces",
  arithmetic:
    "{} is inside an arithmetic expression ($((…)), ((…)) or $[…]), which the shell evaluates (bash runs commands found in it); pass the input as an argument to a program that checks it, such as expr",
  backquote: "{} is inside `…` backquotes, whose text the shell reads again; use $(…) instead",
  heredoc: `{} is inside a here-document; pass the input as an argument, ${STDIN_ADVICE}`,
  "ansi-c": "the command uses $'…' quoting, which dash and bash read differently, so where {} stands is not certain; use '…' or \"…\" in a command with {}"
}

const COMMAND_POSITION = `{} is the program to run, so the input would choose the command; name the program in the command and pass the input as an argument, ${STDIN_ADVICE}`

// Words that open a compound command or a pipeline: the word after them is a command name.
const PREFIX_WORDS = new Set(["if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time", "fi", "done", "esac"])
// Compound commands whose own words are data (a loop's list, the subject of a case).
const DATA_COMPOUNDS = new Set(["for", "select", "case", "in"])

class Checker {
  readonly exempt = new Set<number>()
  refusal: Refusal | undefined

  constructor(readonly program: string) {}

  has(word: Word | undefined): word is Word {
    return word?.placeholders.some((p) => !this.exempt.has(p.offset)) === true
  }

  refuse(word: Word, message: string): void {
    if (this.refusal !== undefined) return
    const offset = word.placeholders.find((p) => !this.exempt.has(p.offset))?.offset ?? word.start
    this.refusal = { offset, message }
  }

  /** Refuse a word with a placeholder. */
  check(word: Word | undefined, message: string): void {
    if (this.has(word)) this.refuse(word, message)
  }

  raw(word: Word): string {
    return this.program.slice(word.start, word.end)
  }
}

/** A command's arguments, from the program word on. */
interface Invocation {
  readonly words: ReadonlyArray<Word>
  /** Index of the program word. */
  readonly at: number
  readonly name: string
  readonly c: Checker
}

const basename = (word: Word): string | undefined => word.literal?.replace(/^.*\//, "")

const isAssignment = (c: Checker, word: Word): boolean => /^[A-Za-z_]\w*=/.test(c.raw(word))

/**
 * Scan options from `from`: each `-x` (or `+x` when `plus`) word, and the value of those that take
 * one. `"data"` marks an option whose next word the program reads only as data (`awk -v x={}`),
 * `"inline"` one whose value, attached, is data (`awk -vx={}`). Returns the index of the first
 * operand. `onOption` sees each option first (to note it, or to exempt a `{}`).
 */
const scanOptions = (
  inv: Invocation,
  from: number,
  takesArgument: (option: string) => boolean | "data" | "inline",
  onOption: (option: string, k: number) => void = () => {},
  plus = false
): number => {
  const { c, words } = inv
  let k = from
  while (k < words.length) {
    const word = words[k]!
    const text = word.literal
    if (text === undefined || text === "-" || !(text.startsWith("-") || (plus && text.startsWith("+")))) break
    if (text === "--") return k + 1
    onOption(text, k)
    const argument = takesArgument(text)
    if (argument !== "inline") c.check(word, `{} is an option of ${inv.name}; options from the input could change what it does`)
    if (argument !== false && argument !== "inline") {
      k++
      if (argument !== "data") c.check(words[k], `{} is the value of the option ${text} of ${inv.name}`)
    }
    k++
  }
  return k
}

const code = (name: string, how: string) => `{} is in the code that ${name} runs, so the input would be run as a program; ${how}, ${STDIN_ADVICE}`
const scriptFile = (name: string) =>
  `{} names the script or module that ${name} runs, so the input would choose the code; name it in the command and pass the input after it`

const SHELL_HOW = "pass it as an argument instead: sh -c '… \"$1\" …' sh {}"

/** `sh`, `bash`, `dash`, `zsh`, …: the program of `-c`, or the script, is code; later words are `$0`, `$1`, …. */
const shell = (inv: Invocation): void => {
  let command = false
  let stdinScript = false
  const k = scanOptions(
    inv,
    inv.at + 1,
    (o) => /^[-+][a-zA-Z]*[oO]$/.test(o) || o === "--rcfile" || o === "--init-file",
    (o) => {
      if (/^-[a-zA-Z]*c/.test(o)) command = true
      if (/^-[a-zA-Z]*s/.test(o)) stdinScript = true
    },
    true
  )
  if (stdinScript && !command) return
  inv.c.check(inv.words[k], command ? code(inv.name, SHELL_HOW) : scriptFile(inv.name))
}

/**
 * An interpreter with code options (`-c`, `-e`, …) and module options: after one of the code
 * options, later words are the program's arguments; without one, the first operand is a script.
 */
const interpreter =
  (spec: {
    readonly code: ReadonlySet<string>
    readonly module?: ReadonlySet<string>
    readonly argument?: ReadonlySet<string>
    /** Single-letter options may be clustered (`-ne`), the last one taking the next word. */
    readonly clusters?: boolean
    /** Options are read after a code option too (`perl -e a -e b`). */
    readonly repeat?: boolean
    readonly how: string
  }) =>
  (inv: Invocation): void => {
    const { c, words } = inv
    let k = inv.at + 1
    let sawCode = false
    const optionOf = (word: string): string => (word.startsWith("--") ? word.replace(/=.*$/, "") : word)
    while (k < words.length) {
      const word = words[k]!
      const text = word.literal
      if (text === undefined || text === "-" || !text.startsWith("-")) break
      if (text === "--") {
        k++
        break
      }
      const letters = spec.clusters === true && /^-[a-zA-Z]{2,}/.test(text) ? text.slice(1) : undefined
      const options = letters !== undefined ? [...letters].map((l) => `-${l}`) : [optionOf(text)]
      const taking = options.findIndex((o) => spec.code.has(o) || spec.module?.has(o) === true || spec.argument?.has(o) === true)
      if (taking < 0) {
        c.check(word, `{} is an option of ${inv.name}; options from the input could change what it does`)
        k++
        continue
      }
      const option = options[taking]!
      // The value is attached (`-e'…'`, `--eval=…`, `-Mmod`) or is the next word.
      const attached = letters !== undefined ? letters.length > taking + 1 : text.startsWith("--") ? text.includes("=") : text.length > option.length
      const value = attached ? word : words[k + 1]
      if (spec.code.has(option)) {
        sawCode = true
        c.check(value, code(inv.name, spec.how))
      } else if (spec.module?.has(option) === true) c.check(value, scriptFile(inv.name))
      else c.check(value, `{} is the value of the option ${option} of ${inv.name}`)
      k += attached ? 1 : 2
      if (sawCode && spec.repeat !== true) return
    }
    if (!sawCode) c.check(words[k], scriptFile(inv.name))
  }

const set = (...items: Array<string>): ReadonlySet<string> => new Set(items)

const python = interpreter({
  code: set("-c"),
  module: set("-m"),
  argument: set("-W", "-X", "--check-hash-based-pycs"),
  clusters: true,
  how: "read it from sys.argv instead: python3 -c '… sys.argv[1] …' {}"
})
const node = interpreter({
  code: set("-e", "--eval", "-p", "--print"),
  module: set("-r", "--require", "--import", "--loader", "--experimental-loader"),
  argument: set("-C", "--conditions", "--input-type", "--env-file", "--title"),
  how: "read it from process.argv instead: node -e '… process.argv[1] …' {}"
})
const perl = interpreter({
  code: set("-e", "-E"),
  module: set("-M", "-m", "-I", "-x"),
  clusters: true,
  repeat: true,
  how: "read it from @ARGV instead: perl -e '… $ARGV[0] …' {}"
})
const ruby = interpreter({
  code: set("-e"),
  module: set("-r", "-I", "-x"),
  argument: set("-C", "-E"),
  clusters: true,
  repeat: true,
  how: "read it from ARGV instead: ruby -e '… ARGV[0] …' {}"
})
const php = interpreter({ code: set("-r", "-B", "-R", "-E"), module: set("-f", "-d", "-c"), how: "read it from $argv instead: php -r '… $argv[1] …' {}" })
const lua = interpreter({ code: set("-e"), module: set("-l"), how: "read it from arg instead: lua -e '… arg[1] …' {}" })
const rscript = interpreter({ code: set("-e"), how: "read it from commandArgs() instead" })
const osascript = interpreter({ code: set("-e"), argument: set("-l", "-s"), how: "pass it after the script and read it from argv" })
const tcl = interpreter({ code: set("-c"), how: "pass it after the script and read it from argv" })

/** `awk`: the program (the first operand without `-f`) and `--source`/`-e` are code; `-v x={}` is data. */
const awk = (inv: Invocation): void => {
  let programFile = false
  const how = "pass it as a variable instead: awk -v input={} '… input …'"
  const k = scanOptions(
    inv,
    inv.at + 1,
    (o) =>
      ["-F", "-v", "--assign", "--field-separator"].includes(o)
        ? "data"
        : /^-[vF].|^--(assign|field-separator)=/.test(o)
          ? "inline"
          : ["-f", "-e", "--source", "--file"].includes(o),
    (o, at) => {
      if (o === "-f" || o.startsWith("--file") || (/^-f./.test(o) && !o.startsWith("-F"))) programFile = true
      if (o === "-e" || o === "--source") {
        programFile = true
        inv.c.check(inv.words[at + 1], code(inv.name, how))
      }
      if (o.startsWith("--source=")) {
        programFile = true
        inv.c.check(inv.words[at], code(inv.name, how))
      }
    }
  )
  if (!programFile) inv.c.check(inv.words[k], code(inv.name, how))
}

/** `sed`: its script (an `-e` value, or the first operand) is code (GNU sed's `e` runs commands). */
const sed = (inv: Invocation): void => {
  let script = false
  const how = "sed cannot take data in its script: match with grep -F -e {} or awk -v input={} instead"
  const k = scanOptions(
    inv,
    inv.at + 1,
    (o) => ["-e", "-f", "--expression", "--file", "-l"].includes(o),
    (o, at) => {
      if (o === "-e" || o === "--expression") {
        script = true
        inv.c.check(inv.words[at + 1], code(inv.name, how))
      } else if (/^-e.|^--expression=/.test(o)) {
        script = true
        inv.c.check(inv.words[at], code(inv.name, how))
      } else if (o === "-f" || /^-f.|^--file/.test(o)) {
        script = true
        inv.c.check(o === "-f" || o === "--file" ? inv.words[at + 1] : inv.words[at], scriptFile(inv.name))
      }
    }
  )
  if (!script) inv.c.check(inv.words[k], code(inv.name, how))
}

const everyWord =
  (message: (name: string) => string) =>
  (inv: Invocation): void => {
    for (let k = inv.at + 1; k < inv.words.length; k++) inv.c.check(inv.words[k], message(inv.name))
  }

const firstOperand =
  (message: (name: string) => string) =>
  (inv: Invocation): void => {
    inv.c.check(inv.words[scanOptions(inv, inv.at + 1, () => false)], message(inv.name))
  }

const BASH_NAME = (name: string) =>
  `{} is where ${name} takes a variable name, and bash evaluates the subscripts of names such as a[$(…)]; pass the input as a value instead`

/** `declare`, `typeset`, `local`: names are evaluated, and `-i`/`-n`/`-a`/`-A` values are too. */
const declare = (inv: Invocation): void => {
  let evaluated = false
  const k = scanOptions(
    inv,
    inv.at + 1,
    () => false,
    (o) => {
      if (/^[-+][a-zA-Z]*[inaA]/.test(o)) evaluated = true
    },
    true
  )
  for (let j = k; j < inv.words.length; j++) {
    const word = inv.words[j]!
    const name = inv.c.raw(word).replace(/=.*$/s, "")
    if (evaluated || inv.c.has({ ...word, placeholders: word.placeholders.filter((p) => p.offset < word.start + name.length) })) {
      inv.c.check(word, BASH_NAME(inv.name))
    }
  }
}

/** `printf -v NAME`: the name is evaluated by bash. */
const printf = (inv: Invocation): void => {
  for (let k = inv.at + 1; k < inv.words.length; k++) {
    const text = inv.words[k]!.literal
    if (text === "-v") inv.c.check(inv.words[k + 1], BASH_NAME("printf -v"))
    if (text === "--" || text === undefined || !text.startsWith("-")) return
  }
}

/** `test`/`[`: the operand of `-v` is a variable name. */
const test = (inv: Invocation): void => {
  for (let k = inv.at + 1; k < inv.words.length; k++) {
    if (inv.words[k]!.literal === "-v") inv.c.check(inv.words[k + 1], BASH_NAME("test -v"))
  }
}

const FIND_ACTIONS = new Set(["-exec", "-execdir", "-ok", "-okdir"])
const FIND_VALUES = new Set([
  "-name",
  "-iname",
  "-path",
  "-ipath",
  "-wholename",
  "-iwholename",
  "-regex",
  "-iregex",
  "-lname",
  "-ilname",
  "-newer",
  "-anewer",
  "-cnewer",
  "-samefile",
  "-user",
  "-group",
  "-uid",
  "-gid",
  "-perm",
  "-type",
  "-xtype",
  "-size",
  "-mtime",
  "-atime",
  "-ctime",
  "-mmin",
  "-amin",
  "-cmin",
  "-links",
  "-inum",
  "-fstype",
  "-maxdepth",
  "-mindepth",
  "-used",
  "-context",
  "-fprint",
  "-fprint0",
  "-fls",
  "-printf",
  "-regextype"
])
const FIND_MESSAGE =
  "{} is where find reads a starting point or an expression, so an input such as -delete or -exec would become an action; put it after a test that takes a value (-name {}, -path {}), or give it on standard input"

/** `find`: `{}` inside `-exec … ;` is find's own; the command there is checked; values of tests are data. */
const find = (inv: Invocation): void => {
  const { c, words } = inv
  for (let k = inv.at + 1; k < words.length; k++) {
    const word = words[k]!
    const text = word.literal
    if (text !== undefined && FIND_ACTIONS.has(text)) {
      let end = k + 1
      while (end < words.length && words[end]!.literal !== ";" && words[end]!.literal !== "+") end++
      for (let j = k + 1; j < end; j++) for (const p of words[j]!.placeholders) c.exempt.add(p.offset)
      invocation(words.slice(0, end), k + 1, c)
      k = end
    } else if (text !== undefined && (FIND_VALUES.has(text) || text.startsWith("-newer"))) {
      k += text === "-fprintf" ? 2 : 1
    } else if (text === "-fprintf") {
      k += 2
    } else c.check(word, FIND_MESSAGE)
  }
}

/** A program that runs another one: the wrapped program is a command position again. */
const wrapper =
  (spec: {
    /** Options whose value is the next word. */
    readonly argument?: ReadonlySet<string>
    /** Options whose value is code for a shell. */
    readonly code?: ReadonlySet<string>
    /** Operands before the wrapped program (a duration, a directory, a lock file, …). */
    readonly operands?: number
    /** `NAME=value` words may come before the program (`env`). */
    readonly assignments?: boolean
  }) =>
  (inv: Invocation): void => {
    const { c, words } = inv
    let k = scanOptions(
      inv,
      inv.at + 1,
      (o) => spec.argument?.has(o) === true || spec.code?.has(o) === true,
      (o, at) => {
        if (spec.code?.has(o) === true) c.check(words[at + 1], code(inv.name, SHELL_HOW))
      }
    )
    if (spec.assignments === true) while (k < words.length && isAssignment(c, words[k]!)) k++
    for (let n = 0; n < (spec.operands ?? 0) && k < words.length; n++) k++
    invocation(words, k, c)
  }

/** `xargs`: runs a command with its input lines as arguments; with `-I {}`/`-i`, `{}` is xargs's own. */
const xargs = (inv: Invocation): void => {
  const { c, words } = inv
  let replace: string | undefined
  const exempt = (word: Word | undefined) => word?.placeholders.forEach((p) => c.exempt.add(p.offset))
  const k = scanOptions(
    inv,
    inv.at + 1,
    (o) => ["-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s"].includes(o),
    (o, at) => {
      if (o === "-I") replace = words[at + 1]?.literal
      else if (/^-I./.test(o)) replace = o.slice(2)
      else if (o === "-i" || o === "--replace") replace = "{}"
      else if (/^-i./.test(o)) replace = o.slice(2)
      else if (o.startsWith("--replace=")) replace = o.slice("--replace=".length)
      else return
      if (replace === "{}") exempt(o === "-I" ? words[at + 1] : words[at])
    }
  )
  if (replace === "{}") for (let j = k; j < words.length; j++) for (const p of words[j]!.placeholders) c.exempt.add(p.offset)
  invocation(words, k, c)
}

/** Programs that hand the value of an option (`-c`, `--command`) to a shell, wherever it stands. */
const codeAfter =
  (options: ReadonlySet<string>, then?: (inv: Invocation) => void) =>
  (inv: Invocation): void => {
    const { c, words } = inv
    for (let k = inv.at + 1; k < words.length; k++) {
      const text = words[k]!.literal ?? ""
      if (options.has(text)) c.check(words[k + 1], code(inv.name, SHELL_HOW))
      if ([...options].some((o) => o.startsWith("--") && text.startsWith(`${o}=`))) c.check(words[k], code(inv.name, SHELL_HOW))
    }
    then?.(inv)
  }

const ssh = (inv: Invocation): void => {
  const k = scanOptions(inv, inv.at + 1, (o) => /^-[bcDEeFIiJLlmOopQRSWw]$/.test(o))
  inv.c.check(inv.words[k], `{} is the host ssh connects to; name the host in the command`)
  for (let j = k + 1; j < inv.words.length; j++) {
    inv.c.check(inv.words[j], code(inv.name, "the remote shell reads its command as code: send the input on standard input"))
  }
}

const WRAPPERS = new Set([
  "env",
  "exec",
  "command",
  "builtin",
  "nohup",
  "setsid",
  "unbuffer",
  "caffeinate",
  "busybox",
  "sudo",
  "doas",
  "nice",
  "ionice",
  "stdbuf",
  "time",
  "strace",
  "ltrace",
  "timeout",
  "chroot",
  "taskset",
  "chrt",
  "flock",
  "xargs",
  "su",
  "runuser",
  "sg",
  "script"
])
const SHELLS = /^(sh|bash|dash|zsh|ksh|ksh93|mksh|ash|yash|posh|fish|rbash)$/
const RULES: ReadonlyArray<readonly [RegExp, (inv: Invocation) => void]> = [
  [SHELLS, shell],
  [/^(python|pypy)(\d+(\.\d+)*)?$/, python],
  [/^(node|nodejs|bun)$/, node],
  [/^perl(\d+(\.\d+)*)?$/, perl],
  [/^ruby(\d+(\.\d+)*)?$/, ruby],
  [/^php(\d+(\.\d+)*)?$/, php],
  [/^(lua|luajit)(\d+(\.\d+)*)?$/, lua],
  [/^(Rscript|R)$/, rscript],
  [/^osascript$/, osascript],
  [/^(tclsh|wish|expect)(\d+(\.\d+)*)?$/, tcl],
  [/^deno$/, everyWord((n) => `{} is an argument of ${n}, which takes code (deno eval) or a script; pass the input after the script`)],
  [/^(g|m|n|busybox-)?awk$/, awk],
  [/^g?sed$/, sed],
  [/^(eval|alias|let)$/, everyWord((n) => code(n, `${n} reads its arguments as code: pass the input to a program as an argument`))],
  [/^(trap)$/, firstOperand((n) => code(n, "trap runs its first argument as code"))],
  [/^(\.|source)$/, firstOperand(scriptFile)],
  [/^(watch|parallel)$/, everyWord((n) => code(n, `${n} runs its arguments through a shell`))],
  [/^(su|runuser|sg|script)$/, codeAfter(set("-c", "--command", "--session-command"))],
  [/^(read|unset|getopts|mapfile|readarray)$/, everyWord(BASH_NAME)],
  [/^(declare|typeset|local|export|readonly)$/, declare],
  [/^printf$/, printf],
  [/^(test|\[)$/, test],
  [/^\[\[$/, everyWord(() => "{} is inside [[ … ]], where bash may evaluate it as an arithmetic expression; use [ … ] or test")],
  [/^find$/, find],
  [/^xargs$/, xargs],
  [/^ssh$/, ssh],
  [/^(env)$/, wrapper({ argument: set("-u", "--unset", "-C", "--chdir"), code: set("-S", "--split-string"), assignments: true })],
  [/^(exec)$/, wrapper({ argument: set("-a") })],
  [
    /^(command|builtin|nohup|setsid|unbuffer|caffeinate|busybox|sudo|doas)$/,
    wrapper({ argument: set("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U") })
  ],
  [/^(nice)$/, wrapper({ argument: set("-n", "--adjustment") })],
  [/^(ionice)$/, wrapper({ argument: set("-c", "-n", "--class", "--classdata") })],
  [/^(stdbuf)$/, wrapper({ argument: set("-i", "-o", "-e") })],
  [/^(time)$/, wrapper({ argument: set("-f", "-o", "--format", "--output") })],
  [/^(strace|ltrace)$/, wrapper({ argument: set("-o", "-e", "-p", "-s", "-u", "-a", "-b", "-E", "-I", "-O", "-P", "-S", "-X") })],
  [/^(timeout)$/, wrapper({ argument: set("-s", "-k", "--signal", "--kill-after"), operands: 1 })],
  [/^(chroot|taskset|chrt)$/, wrapper({ argument: set("--userspec", "--groups"), operands: 1 })],
  [/^(flock)$/, codeAfter(set("-c", "--command"), wrapper({ argument: set("-w", "-E", "--timeout", "--conflict-exit-code"), operands: 1 }))]
]
const INTERPRETERS: ReadonlySet<(inv: Invocation) => void> = new Set([shell, python, node, perl, ruby, php, lua, rscript, osascript, tcl, awk, sed])

/** Check the command whose program is `words[at]`. */
const invocation = (words: ReadonlyArray<Word>, at: number, c: Checker): void => {
  const head = words[at]
  if (head === undefined) return
  if (c.has(head)) {
    c.refuse(head, COMMAND_POSITION)
    return
  }
  const name = basename(head)
  if (name === undefined) {
    // The program comes from an expansion: a {} right after a code option may be code.
    for (let k = at + 1; k < words.length; k++) {
      if (["-c", "-e", "-E", "--eval", "-p", "--print", "-r"].includes(words[k - 1]!.literal ?? "")) {
        c.check(words[k], "{} follows a code option of a program named by an expansion, so it may be run as code; name the program in the command")
      }
    }
    return
  }
  const rule = ruleOf(name)
  rule?.({ words, at, name, c })
  if (rule !== undefined && WRAPPERS.has(name)) {
    // Behind a wrapper whose options were not all recognised, an interpreter may still run code.
    for (let k = at + 1; k < words.length; k++) {
      const inner = basename(words[k]!)
      const innerRule = inner === undefined ? undefined : ruleOf(inner)
      if (innerRule !== undefined && INTERPRETERS.has(innerRule)) innerRule({ words, at: k, name: inner!, c })
    }
  }
}

const ruleOf = (name: string) => RULES.find(([pattern]) => pattern.test(name))?.[1]

/** Check one command: skip the words that open compound commands and assignments, then the program. */
const command = (tokens: ReadonlyArray<Token>, c: Checker): void => {
  const words: Array<Word> = []
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k]!
    if (token.type === "word") {
      words.push(token.word)
      continue
    }
    const target = tokens[k + 1]
    if (target?.type !== "word") continue
    if (/<<-?$/.test(token.op)) c.check(target.word, "{} is the end line of a here-document; name it in the command")
    k++
  }
  let at = 0
  while (at < words.length) {
    const word = words[at]!
    if (!word.quoted && word.literal !== undefined && PREFIX_WORDS.has(word.literal)) at++
    else if (isAssignment(c, word)) at++
    else break
  }
  const head = words[at]
  if (head === undefined || (!head.quoted && head.literal !== undefined && DATA_COMPOUNDS.has(head.literal))) return
  invocation(words, at, c)
}

const refusalOf = (hazard: Hazard): Refusal => ({ offset: hazard.offset, message: HAZARD_MESSAGE[hazard.kind] })

/**
 * Check a command template and build its program. A template without `{}` (outside comments, and
 * besides those of `find -exec` and `xargs -I {}`) runs as written with the input on stdin.
 */
export const compileTemplate = (template: string): Template => {
  if (!template.includes("{}")) return { ok: true, program: template, placeholders: 0 }
  let lexed: ReturnType<typeof lex>
  try {
    lexed = lex(template)
  } catch (error) {
    if (error instanceof ShellSyntaxError)
      return { ok: false, refusal: { offset: error.offset, message: `${error.message}, so where {} stands is not certain` } }
    throw error
  }
  const c = new Checker(template)
  for (const tokens of lexed.commands) command(tokens, c)
  const placeholders = lexed.commands
    .flatMap((tokens) => tokens.flatMap((t) => (t.type === "word" ? t.word.placeholders : [])))
    .filter((p) => !c.exempt.has(p.offset))
    .sort((a, b) => a.offset - b.offset)
  const hazard = lexed.hazards.find((h) => (h.kind === "ansi-c" ? placeholders.length > 0 : true))
  if (hazard !== undefined) return { ok: false, refusal: refusalOf(hazard) }
  if (c.refusal !== undefined) return { ok: false, refusal: c.refusal }
  let program = ""
  let last = 0
  for (const p of placeholders) {
    program += template.slice(last, p.offset) + REPLACEMENT[p.context]
    last = p.offset + 2
  }
  return { ok: true, program: program + template.slice(last), placeholders: placeholders.length }
}
