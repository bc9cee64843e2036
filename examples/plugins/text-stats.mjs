/**
 * A plugin written outside lambdagent: a tool of a kind of its own, and a command.
 *
 *   lambdagent --plugin examples/plugins/text-stats.mjs stats README.md
 *   lambdagent --plugin examples/plugins/text-stats.mjs tools examples/agents/react.yml
 *   LAMBDAGENT_PLUGINS=./examples/plugins/text-stats.mjs lambdagent run examples/agents/react.yml "How long is this?"
 *
 * It uses nothing a first-party plugin does not: the public `lambdagent` entry and `Plugin.Plugin`.
 */
import { readFile } from "node:fs/promises"
import { Tools } from "lambdagent"

/** Lines, words and characters of a text. */
const stats = (text) => {
  const trimmed = text.trim()
  return {
    lines: text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0),
    words: trimmed === "" ? 0 : trimmed.split(/\s+/).length,
    characters: [...text].length
  }
}

/** @type {import("lambdagent").Plugin.Plugin} */
export default {
  name: "text-stats",
  tools: [
    Tools.define({
      name: "text_stats",
      kind: "text-stats",
      description: "Count the lines, words and characters of a text.",
      source: "examples/plugins/text-stats.mjs",
      run: (text) => JSON.stringify(stats(text))
    })
  ],
  commands: [
    {
      name: "stats",
      description: "print the lines, words and characters of files",
      run: async (files) => {
        if (files.length === 0) {
          process.stderr.write("usage: lambdagent stats <file>…\n")
          return 2
        }
        for (const file of files) {
          const { characters, lines, words } = stats(await readFile(file, "utf8"))
          process.stdout.write(`${lines}\t${words}\t${characters}\t${file}\n`)
        }
        return 0
      }
    }
  ]
}
