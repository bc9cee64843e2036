/**
 * The injection corpus: every payload in every placement of `{}` a command can use, run by the real
 * shell. A canary file must never appear, and where the command echoes its input, the output must
 * be the input itself. The programs are also run by bash (another /bin/sh on other systems).
 */
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { ShellTool, Tools } from "lambdagent"

const dir = mkdtempSync(join(tmpdir(), "lambdagent-injection-"))
const canary = join(dir, "pwned")
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const payloads: ReadonlyArray<string> = [
  `; touch ${canary}`,
  `' ; touch ${canary} ; '`,
  `" ; touch ${canary} ; "`,
  `$(touch ${canary})`,
  `\`touch ${canary}\``,
  `&& touch ${canary}`,
  `|| touch ${canary}`,
  `| touch ${canary}`,
  `& touch ${canary}`,
  `x\ntouch ${canary}`,
  `x\r\ntouch ${canary}`,
  `'$(touch ${canary})'`,
  `"$(touch ${canary})"`,
  `'"$(touch ${canary})"'`,
  `\\'; touch ${canary}; echo \\'`,
  `\\\\'; touch ${canary} #`,
  `'\\''; touch ${canary}; '\\''`,
  `"'"'"$(touch ${canary})"'"'"`,
  `\${IFS}touch\${IFS}${canary}`,
  `;touch\${IFS}${canary}`,
  `$(IFS=_;c=touch_${canary};$c)`,
  `x > ${canary}`,
  `< /dev/null > ${canary}`,
  `'; cat > ${canary} <<EOF\nx\nEOF\n'`,
  `"; exec 3> ${canary}; "`,
  `$(( $(touch ${canary}) ))`,
  `\${x:-$(touch ${canary})}`,
  `\${x:=\`touch ${canary}\`}`,
  `a[$(touch ${canary})]`,
  `\\$(touch ${canary})`,
  `''$(touch ${canary})''`,
  `);touch ${canary};(`,
  `}; touch ${canary}; {`,
  `{}`,
  `$LAMBDAGENT_INPUT; touch ${canary}`,
  `"$LAMBDAGENT_INPUT"'$(touch ${canary})'`,
  `\\x27; touch ${canary}; \\x27`,
  `$'\\x27'; touch ${canary}`,
  `\uff1btouch ${canary}`,
  `\u2028touch ${canary}\u2029`,
  `\\\ntouch ${canary}`,
  `EOF\ntouch ${canary}\nEOF`,
  `$(printf 'touch %s' ${canary} | sh)`,
  `eval touch ${canary}`,
  `\ttouch\t${canary}`,
  `*`,
  `~`,
  `$HOME`,
  `-n`,
  `%s%n%x`,
  `#`,
  `touch ./pwned`,
  `$(touch ./pwned)`,
  `a'b"c\\d$e\`f`,
  `${"'".repeat(300)};touch ${canary};${'"'.repeat(300)}`,
  `${"x".repeat(20_000)}$(touch ${canary})`
]

/** A command template and what it prints for an input. */
const placements: ReadonlyArray<readonly [template: string, expected: (p: string) => string]> = [
  ["printf '%s' {}", (p) => p],
  ["printf '%s' '{}'", (p) => p],
  ["printf '%s' 'pre-{}-post'", (p) => `pre-${p}-post`],
  ["printf '%s' \"{}\"", (p) => p],
  ["printf '%s' \"pre-{}-post\"", (p) => `pre-${p}-post`],
  ["printf '%s' x{}'y'\"z\"", (p) => `x${p}yz`],
  ["printf '%s' \"$(printf '%s' {})\"", (p) => p],
  ["printf '%s' \"$(printf '%s' '{}')\"", (p) => p],
  ["out=$(printf '%s' \"{}\"); printf '%s' \"$out\"", (p) => p],
  ["printf '%s' {} | cat", (p) => p],
  ["true | printf '%s' \"{}\" | cat", (p) => p],
  ["printf '%s|%s' {} '{}'", (p) => `${p}|${p}`],
  ["v={}; printf '%s' \"$v\"", (p) => p],
  ['sh -c \'printf "%s" "$1"\' sh {}', (p) => p],
  ['f=$(mktemp -p .) && printf \'%s\' {} > "$f" && cat "$f"', (p) => p]
]

const call = (tool: Tools.ToolDefinition, input: string) => Effect.runPromise(Tools.call(tool, input))

/** Run `items` through `work`, `width` at a time. */
const inBatches = async <T>(items: ReadonlyArray<T>, width: number, work: (item: T, index: number) => Promise<void>) => {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map((item, j) => work(item, i + j)))
}

/** The corpus starts hundreds of real shells: seconds on a quiet machine, minutes on a loaded one. */
const corpusTimeout = 300_000

const bash = ["/bin/bash", "/usr/bin/bash"].find((p) => existsSync(p))

describe("shell tools never interpolate the input into the program", () => {
  it(
    `${payloads.length} payloads × ${placements.length} placements: the canary never appears and the output is the input`,
    async () => {
      expect(payloads.length).toBeGreaterThanOrEqual(40)
      const cases = placements.flatMap(([template, expected]) => payloads.map((payload) => ({ template, payload, expected: expected(payload) })))
      const tools = new Map(placements.map(([template]) => [template, ShellTool.make("echo", template, { cwd: dir })]))
      await inBatches(cases, 6, async ({ expected, payload, template }) => {
        const output = await call(tools.get(template)!, payload)
        expect(output, `${template} ← ${JSON.stringify(payload.slice(0, 80))}`).toBe(expected)
      })
      expect(existsSync(canary)).toBe(false)
      expect(existsSync(join(dir, "pwned"))).toBe(false)
    },
    corpusTimeout
  )

  it.skipIf(bash === undefined)(
    "bash runs the same programs with the same result",
    async () => {
      // One bash per placement: each payload runs in a subshell of it, with the input read from a file
      // into the variable exactly as the tool passes it, so the corpus costs 15 processes, not 840.
      const work = mkdtempSync(join(dir, "bash-"))
      payloads.forEach((payload, i) => writeFileSync(join(work, `in-${i}`), payload))
      await inBatches(placements, 3, async ([template, expected], p) => {
        const { program } = ShellTool.compileCommand(template)
        const script = payloads
          .map((_, i) => `( IFS= read -r -d '' ${ShellTool.inputVariable} < in-${i}; export ${ShellTool.inputVariable}; ${program}\n) > out-${p}-${i}`)
          .join("\n")
        await new Promise<void>((resolve, reject) =>
          execFile(bash!, ["-c", script], { cwd: work, maxBuffer: 1 << 20 }, (error) => (error !== null ? reject(error) : resolve()))
        )
        payloads.forEach((payload, i) => {
          const output = readFileSync(join(work, `out-${p}-${i}`), "utf8")
          expect(output.replace(/\n$/, ""), `${template} ← ${JSON.stringify(payload.slice(0, 80))}`).toBe(expected(payload))
        })
      })
      expect(existsSync(canary)).toBe(false)
      expect(existsSync(join(work, "pwned"))).toBe(false)
    },
    corpusTimeout
  )
})
