import { describe, expect, it } from "vitest"
import { jsdocExamples, runnableBlocks } from "./snippets.ts"

describe("jsdocExamples", () => {
  it("takes the ```ts blocks after @example tags, with the line of their first code line", () => {
    const source = [
      "/**",
      " * Adds.",
      " *",
      " * ```ts",
      " * notAnExample()",
      " * ```",
      " * @since 0.1.0",
      " * @example",
      " * ```ts",
      ' * import { Term } from "lambdagent"',
      " *   Term.lit(1)",
      " * ```",
      " */",
      "export const add = 1"
    ].join("\n")
    expect(jsdocExamples("src/Add.ts", source)).toEqual([
      { file: "src/Add.ts", line: 10, language: "ts", code: 'import { Term } from "lambdagent"\n  Term.lit(1)' }
    ])
  })

  it("ends an example at the next tag", () => {
    const source = ["/**", " * @example", " * @since 0.1.0", " * ```ts", " * x", " * ```", " */"].join("\n")
    expect(jsdocExamples("a.ts", source)).toEqual([])
  })
})

describe("runnableBlocks", () => {
  it("takes the fenced blocks whose info string has the word runnable", () => {
    const text = [
      "# T",
      "```sh runnable",
      "npx lambdagent eval 1  # 1",
      "```",
      "```sh",
      "npx lambdagent serve x",
      "```",
      "```ts runnable",
      "console.log(1) // 1",
      "```"
    ].join("\n")
    expect(runnableBlocks("docs/x.md", text)).toEqual([
      { file: "docs/x.md", line: 3, language: "sh", code: "npx lambdagent eval 1  # 1" },
      { file: "docs/x.md", line: 9, language: "ts", code: "console.log(1) // 1" }
    ])
  })

  it("does not read a fence inside a longer fence as a block", () => {
    const text = ["````md", "```sh runnable", "rm -rf /", "```", "````"].join("\n")
    expect(runnableBlocks("docs/x.md", text)).toEqual([])
  })
})
