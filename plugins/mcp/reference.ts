/**
 * The language reference the server teaches with: the `help` tool's categories, the
 * `lambda://reference` resource and the `lambda-tutor` prompt all come from these texts.
 *
 * @since 0.1.0
 * @module
 */

const sections = {
  lambda: `## Functions (lambda)

| form | JSON |
|---|---|
| variable | {"var": "x"} |
| function of one argument | {"lam": "x", "body": <term>} |
| application | {"app": {"func": <term>, "arg": <term>}} |

Functions take one argument; curry for more: {"lam": "a", "body": {"lam": "b", "body": {"add": [{"var": "a"}, {"var": "b"}]}}}.
Apply a curried function twice: {"app": {"func": {"app": {"func": F, "arg": 1}}, "arg": 2}}.
A function value encodes as {"closure": {"lam": …, "body": …}}.
Example: {"app": {"func": {"lam": "x", "body": {"mul": [{"var": "x"}, {"var": "x"}]}}, "arg": 7}} → 49
`,
  arithmetic: `## Arithmetic

{"add": [a, b]}, {"sub": [a, b]}, {"mul": [a, b]}, {"div": [a, b]}, {"mod": [a, b]}
Integers are 64-bit; leaving that range is an Overflow error (never a silent wrap).
div and mod round toward negative infinity: -7 div 2 = -4, -7 mod 2 = 1, 7 mod -2 = -1.
Division or mod by zero is a DivisionByZero error. Number literals must be integers.
Example: {"mod": [{"add": [10, 7]}, 5]} → 2
`,
  comparison: `## Comparison

{"eq": [a, b]} compares any two first-order values structurally (numbers, strings, booleans, null, lists, pairs).
{"lt": [a, b]}, {"gt": [a, b]}, {"lte": [a, b]}, {"gte": [a, b]} compare two integers or two strings.
Example: {"eq": [[1, 2], [1, 2]]} → true; {"lt": ["apple", "banana"]} → true
`,
  logic: `## Logic

{"and": [a, b]} and {"or": [a, b]} take booleans and short-circuit (b is evaluated only when needed).
{"not": a} negates a boolean. Non-booleans are a TypeError.
Example: {"and": [false, {"div": [1, 0]}]} → false
`,
  control: `## Control

{"if": {"cond": c, "then": t, "else": e}}: c must be a boolean; only the branch taken is evaluated.
{"continue": {"input": x}}: inside a named tool, stop and ask the caller to run the tool again with x
  (see the "tools" category: the result is a continuation you send back).
{"self": true}: inside a named tool, the tool itself as a function (direct recursion).
Example: {"lam": "n", "body": {"if": {"cond": {"lte": [{"var": "n"}, 1]}, "then": 1,
  "else": {"mul": [{"var": "n"}, {"app": {"func": {"self": true}, "arg": {"sub": [{"var": "n"}, 1]}}}]}}}} (factorial)
`,
  lists: `## Lists

[a, b, c] is a list literal (its elements are terms). {"nil": true} is the empty list.
{"cons": {"head": h, "tail": t}} prepends h to the list t.
{"head": l}, {"tail": l} (errors on []), {"isEmpty": l}, {"length": l} (also counts a string's characters).
{"concat": [l1, l2]} joins two lists (or two strings).
{"fold": [f, init, list]} is a left fold: f receives ONE argument, a pair (accumulator, item), and returns the new accumulator.
Example (sum): {"fold": [{"lam": "p", "body": {"add": [{"fst": {"var": "p"}}, {"snd": {"var": "p"}}]}}, 0, [1, 2, 3]]} → 6
Building a list with cons in a fold reverses it: map via fold over [1, 2, 3] gives [f(3), f(2), f(1)].
`,
  pairs: `## Pairs

{"pair": [a, b]} builds a pair; {"fst": p} and {"snd": p} take it apart. A pair encodes as {"pair": [a, b]},
so a pair result can be sent back as an input unchanged.
Example: {"snd": {"pair": [1, "two"]}} → "two"
`,
  strings: `## Strings

String literals are JSON strings. {"concat": ["ab", "cd"]} → "abcd". {"length": "héllo"} → 5 (code points).
{"eq": [s1, s2]} compares strings; {"lt": [s1, s2]} orders them.
Note: a string input that is JSON text is parsed (see the "tools" category, input normalisation).
`,
  meta: `## Code as data (meta)

{"quote": t}: t as data, unevaluated; encodes as {"quote": t}.
{"eval": q}: evaluate quoted code q in the current scope (user variables stay visible, the tool context is cleared).
  eval nests at most 100 deep.
{"code_of": "name"}: the source of a registered tool, quoted; {"code_of": "self"} is the running tool's source.
Calling another tool: {"app": {"func": {"eval": {"code_of": "other"}}, "arg": x}}. A tool reached this way runs in its
caller's tool context (self, continue refer to the caller). code_of names are resolved when the code runs, so a tool
may refer to a tool that is evolved later.
Example (mutual recursion): is_even = {"lam": "n", "body": {"if": {"cond": {"eq": [{"var": "n"}, 0]}, "then": true,
  "else": {"app": {"func": {"eval": {"code_of": "is_odd"}}, "arg": {"sub": [{"var": "n"}, 1]}}}}}}, and is_odd likewise.
`,
  tools: `## The server's tools

evolve {name, description, code}: register a tool (code is a term, or JSON text of a term). The term is checked first:
  parse errors (with the JSON path), free variables and disallowed capabilities are errors; code_of references to tools
  that do not exist yet are warnings. The result reports the forms and capabilities used, the size, whether the tool
  can recurse, and the version. Evolving an existing name adds a new version; older versions stay available.
run {code, input, step?, fuel?, version?}: code is a tool name or a term (JSON text of a term is accepted). If the
  code is a function it is applied to the input; otherwise its value is returned. version picks an older version.
list: every evolved tool with its versions and capabilities.
help {category}: this help.
Every evolved tool is also a tool of its own: call it with {input, step?, fuel?}.

Results: the text is the value's JSON; structuredContent is {"value": …, "steps": n}. Errors come back with isError
true and {"kind", "message", "path"?}.

Continuations: a tool that evaluates {"continue": {"input": x}} returns
  {"type": "continuation", "tool": "factorial", "next_input": x, "step": 1, "message": "…"}.
  Send next_input back as input with the same step: run {"code": "factorial", "input": x, "step": 1} (or call the tool
  directly with {"input": x, "step": 1}); the next continuation says step 2, and so on, until a value comes back.

Fuel: every reduction costs one step; fuel sets the step budget of one call (up to the server's maximum). A term
  that runs out returns a BudgetExceeded error. Time per call is also limited.

Input normalisation: a string input that is JSON text is parsed ("42" → 42, "[1,2]" → [1, 2]); integer strings with
  leading zeros, hex (0x1F) or octal (0o17) become integers; "true", "false", "null" (any case) become those literals;
  fractions round half to even. The result is read as a term, so an input can carry code ("{\\"add\\":[1,2]}" → 3).
`,
  agents: `## Agent forms (gated)

{"llm": {...}}, {"tool": "name"}, {"memory": {...}}, {"par": {...}}, {"react": {...}} call models, host tools, memory
and parallel branches. This server runs pure computation by default: terms using them are rejected unless the
server was started with those capabilities allowed. {"compose": [f, g]}, {"loop": …}, {"route": …} and
{"guard": …} combine functions and are allowed when what they combine is.
`,
  examples: `## Worked examples

square: evolve {"name": "square", "description": "Squares a number",
  "code": {"lam": "x", "body": {"mul": [{"var": "x"}, {"var": "x"}]}}}; run {"code": "square", "input": 7} → 49.

factorial with an accumulator and continue (input is the pair [n, acc]):
  {"lam": "n_acc", "body": {"if": {"cond": {"lte": [{"fst": {"var": "n_acc"}}, 1]}, "then": {"snd": {"var": "n_acc"}},
   "else": {"continue": {"input": {"pair": [{"sub": [{"fst": {"var": "n_acc"}}, 1]},
                                            {"mul": [{"fst": {"var": "n_acc"}}, {"snd": {"var": "n_acc"}}]}]}}}}}}
  run {"code": "factorial", "input": {"pair": [5, 1]}} → continuation next_input {"pair": [4, 5]}, step 1;
  run again with that input and "step": 1 → {"pair": [3, 20]}, step 2; … → 120.

map via fold (curried: f, then the list):
  {"lam": "f", "body": {"lam": "list", "body": {"fold": [{"lam": "acc_item", "body": {"cons": {
    "head": {"app": {"func": {"var": "f"}, "arg": {"snd": {"var": "acc_item"}}}}, "tail": {"fst": {"var": "acc_item"}}}}},
    {"nil": true}, {"var": "list"}]}}}}
  run {"code": {"app": {"func": {"app": {"func": {"eval": {"code_of": "map"}}, "arg": {"lam": "x", "body": {"mul": [{"var": "x"}, 2]}}}}, "arg": [1, 2, 3]}}, "input": null} → [6, 4, 2]
`
} as const

/**
 * The `help` categories.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { HelpCategory } from "lambdagent/mcp"
 * const c: HelpCategory = "lists"
 * ```
 */
export type HelpCategory = keyof typeof sections

/**
 * Every `help` category, in the order the overview lists them.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { HELP_CATEGORIES } from "lambdagent/mcp"
 * HELP_CATEGORIES.includes("meta") // true
 * ```
 */
export const HELP_CATEGORIES: ReadonlyArray<HelpCategory> = Object.keys(sections) as Array<HelpCategory>

const overview = `# The JSON lambda calculus

Terms are JSON. Literals: integers, strings, true/false, null; arrays are list literals. Every other term is an object
with exactly one form key (plus "body" beside "lam"): {"var": "x"}, {"lam": "x", "body": …}, {"app": {"func": …, "arg": …}},
{"add": [a, b]}, {"if": {"cond": …, "then": …, "else": …}}, {"fold": [f, init, list]}, {"quote": t}, {"eval": q},
{"code_of": "tool"}, {"self": true}, {"continue": {"input": x}}, …

Values come back as JSON in the same syntax where one exists: lists as arrays, pairs as {"pair": [a, b]}, quoted code
as {"quote": t}, so results can be fed back as inputs.

Workflow: evolve a tool, run it (or call it directly), list what exists. help {"category": …} explains one area:
${HELP_CATEGORIES.join(", ")}.
`

/**
 * The help text for a category (case-insensitive), or the overview for anything else.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { helpText } from "lambdagent/mcp"
 * helpText("Lists").startsWith("## Lists") // true
 * helpText(undefined).startsWith("# The JSON lambda calculus") // true
 * ```
 */
export const helpText = (category: unknown): string => {
  if (typeof category === "string") {
    const key = category.trim().toLowerCase()
    if (Object.hasOwn(sections, key)) return sections[key as HelpCategory]
  }
  return overview
}

/**
 * The whole language reference as Markdown: the overview and every category (the
 * `lambda://reference` resource).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { languageReference } from "lambdagent/mcp"
 * languageReference().includes("## Pairs") // true
 * ```
 */
export const languageReference = (): string => [overview, ...HELP_CATEGORIES.map((c) => sections[c])].join("\n")

/**
 * The `lambda-tutor` prompt: teaches a model the language and the server's tools, then states the
 * goal (when there is one).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { tutorPrompt } from "lambdagent/mcp"
 * tutorPrompt("a tool that sums a list").includes("sums a list") // true
 * ```
 */
export const tutorPrompt = (goal?: string): string =>
  [
    "You are working with an MCP server that runs a small JSON lambda calculus. You build tools by writing terms and",
    "registering them with the evolve tool; run executes them. Read this reference carefully: every term is JSON, functions",
    "take exactly one argument, fold passes one pair (accumulator, item), and recursion over large inputs uses continue",
    "with an accumulator (each continue is one round trip: send next_input back with its step).",
    "",
    languageReference(),
    "",
    "How to work: write the term, evolve it, then run it on small inputs and check the results before relying on it.",
    "When a result has isError, read kind, message and path: the path points at the node to fix.",
    ...(goal !== undefined && goal.trim() !== "" ? ["", `Your goal: ${goal.trim()}`] : [])
  ].join("\n")
