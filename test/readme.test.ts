import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { repositoryRunnableBlocks } from "./docs/snippets.ts"

const root = fileURLToPath(new URL("..", import.meta.url))
const readme = readFileSync(`${root}/README.md`, "utf8")
const shellBlocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)

/** The README's `npx lambdagent …` commands, continuation lines joined, with the comment after each. */
const commands = shellBlocks.flatMap((block) =>
  block
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .filter((line) => line.includes("npx lambdagent"))
    .map((line) => {
      const hash = line.search(/\s#\s/)
      return { command: (hash < 0 ? line : line.slice(0, hash)).trim(), comment: hash < 0 ? "" : line.slice(hash).replace(/^\s*#\s*/, "") }
    })
)

/** Run a README command with the built CLI standing for `npx lambdagent`. */
const sh = (command: string) =>
  spawnSync("bash", ["-c", command.replaceAll("npx lambdagent", `"${process.execPath}" dist/cli/main.js`)], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" }
  })

describe("the README", () => {
  it("opens with the two commands of a fresh machine: install and run the calculator, then the tests", () => {
    expect(shellBlocks[0]).toBe('npm install && npm run lambdagent -- run examples/agents/calculator.yml "What is 19 + 23?"\nnpm test\n')
  })

  it("shows the first command's notice and result as the command prints them", () => {
    const r = sh('npx lambdagent run examples/agents/calculator.yml "What is 19 + 23?"')
    expect(r.status).toBe(0)
    expect(r.stdout).toBe("42\n")
    const notice = r.stderr.split("\n")[0]!
    expect(readme).toContain(`\n${notice}\n`)
  })

  it("marks runnable every command it shows that runs offline and stops by itself (test/docs.test.ts runs them)", () => {
    const offline = /^(echo .*\| )?npx lambdagent (compile|lint|eval|run examples\/agents\/chain)/
    const runnable = repositoryRunnableBlocks(root).filter((b) => b.file === "README.md" && b.language === "sh")
    const marked = runnable.flatMap((b) => b.code.replace(/\\\n\s*/g, "").split("\n")).filter((line) => offline.test(line))
    expect(marked.length).toBeGreaterThanOrEqual(7)
    expect(commands.filter(({ command }) => offline.test(command))).toEqual([])
  })
})
