import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { repositoryRunnableBlocks, type Snippet, writeProject } from "./docs/snippets.ts"

const root = fileURLToPath(new URL("..", import.meta.url))
const blocks = repositoryRunnableBlocks(root)
const shellBlocks = blocks.filter((b) => b.language === "sh")
const tsBlocks = blocks.filter((b) => b.language === "ts")
const where = (b: Snippet) => `${b.file}:${b.line}`

/**
 * `lambdagent` (and `npx lambdagent`) as the repository's built CLI, on the Node running the
 * tests; both reach the command through the environment, not through the block's text.
 */
const prelude = [
  'lambdagent() { "$LAMBDAGENT_NODE" "$LAMBDAGENT_CLI" "$@"; }',
  'npx() { if [ "$1" = lambdagent ]; then shift; lambdagent "$@"; else command npx "$@"; fi; }'
].join("\n")

/** A block's commands: continuation lines joined, each with the comment after it. */
const commandsOf = (block: Snippet) =>
  block.code
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.trim().startsWith("#"))
    .map((line) => {
      const hash = line.search(/\s#\s/)
      return { command: (hash < 0 ? line : line.slice(0, hash)).trim(), comment: hash < 0 ? "" : line.slice(hash).replace(/^\s*#\s*/, "") }
    })

/**
 * What a comment promises: `exit N` an exit status (else 0), and its leading number, or its JSON
 * up to an ellipsis, text the output contains.
 */
const promised = (comment: string) => ({
  status: Number(/\bexit (\d+)\b/.exec(comment)?.[1] ?? 0),
  output: /^(-?\d+)\b/.exec(comment)?.[1] ?? (comment.startsWith("{") ? comment.split("…")[0]!.split(/,? exit \d/)[0] : undefined)
})

const env = { ...process.env, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", NO_COLOR: "1" }

describe("the runnable blocks of the README and docs/", () => {
  it("are marked in the README and the guides", () => {
    expect([...new Set(blocks.map((b) => b.file))]).toEqual(
      expect.arrayContaining([
        "README.md",
        "docs/cli.md",
        "docs/evaluator.md",
        "docs/lint.md",
        "docs/memory.md",
        "docs/multi-agent.md",
        "docs/providers.md",
        "docs/security.md",
        "docs/yaml.md"
      ])
    )
    expect(
      blocks.every((b) => b.language === "sh" || b.language === "ts"),
      "a runnable block is sh or ts"
    ).toBe(true)
  })

  describe.each(shellBlocks.map((b) => [where(b), b] as const))("%s", (_, block) => {
    it.each(commandsOf(block).map((c) => [c.command, c] as const))("%s", (_command, { command, comment }) => {
      const r = spawnSync("bash", ["-e", "-o", "pipefail", "-c", `${prelude}\n${command}`], {
        cwd: root,
        encoding: "utf8",
        env: { ...env, LAMBDAGENT_NODE: process.execPath, LAMBDAGENT_CLI: join(root, "dist/cli/main.js") }
      })
      const expected = promised(comment)
      expect({ status: r.status, stderr: r.status === expected.status ? "" : r.stderr.slice(0, 400) }).toEqual({ status: expected.status, stderr: "" })
      if (expected.output !== undefined) expect(r.stdout + r.stderr).toContain(expected.output)
    })
  })

  describe("TypeScript blocks", () => {
    // `npm run check:examples` type-checks them, with the JSDoc examples in one program
    const project = writeProject(root, tsBlocks)
    afterAll(project.remove)
    it.each(tsBlocks.map((b, i) => [where(b), b, project.paths[i]!] as const))("%s runs and prints what its comments say", (_, block, path) => {
      const r = spawnSync(process.execPath, [join(root, "node_modules/tsx/dist/cli.mjs"), "--tsconfig", join(project.dir, "tsconfig.json"), path], {
        cwd: root,
        encoding: "utf8",
        env
      })
      expect({ status: r.status, stderr: r.status === 0 ? "" : r.stderr.slice(0, 600) }).toEqual({ status: 0, stderr: "" })
      // `console.log(…) // 49`: the output has the comment's text, up to an ellipsis or a parenthesis
      // (a string's quotes are not printed); a `// stderr: …` line is a line of stderr
      const printed = [...block.code.matchAll(/console\.log\(.*?\)[ \t]*\/\/[ \t]*(.+)$/gm)].map((m) =>
        m[1]!
          .split(/…| \(/)[0]!
          .trim()
          .replace(/^"(.*)"$/, "$1")
      )
      for (const text of printed) expect(r.stdout).toContain(text)
      for (const [, line] of block.code.matchAll(/^\/\/ stderr: (.+)$/gm)) expect(r.stderr.split("\n")).toContain(line)
    })
  })
})
