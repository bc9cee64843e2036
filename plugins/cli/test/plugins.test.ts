import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "./helpers.ts"

const plugin = "examples/plugins/text-stats.mjs"
const storePlugin = "test/fixtures/notesStorePlugin.mjs"
const dir = mkdtempSync(join(tmpdir(), "lambdagent-plugins-"))
const write = (name: string, text: string) => {
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}

describe("plugins written outside lambdagent", () => {
  it("add a command (--plugin): it gets the arguments after its name and its exit code is the command's", async () => {
    const file = write("poem.txt", "one two\nthree four five\n")
    const r = await runCli(["--plugin", plugin, "stats", file])
    expect(r).toMatchObject({ code: 0, stderr: "" })
    expect(r.stdout).toBe(`2\t5\t24\t${file}\n`)
    expect((await runCli(["--plugin", plugin, "stats"])).code).toBe(2)
    const help = await runCli(["--plugin", plugin, "--help"])
    expect(help.stdout.replace(/\s+/g, " ")).toContain("stats [args...] print the lines, words and characters of files (plugin text-stats)")
  })

  it("are found through $LAMBDAGENT_PLUGINS too", async () => {
    const r = await runCli(["stats", write("one.txt", "x\n")], { env: { LAMBDAGENT_PLUGINS: `./${plugin}` } })
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^1\t1\t2\t/)
  })

  it("add a tool of a kind of their own, listed by `tools` and called by a ReAct agent", async () => {
    const listed = await runCli(["tools", "examples/agents/react.yml", "--plugin", plugin, "--format", "json"])
    const tools = JSON.parse(listed.stdout) as { tools: Array<{ name: string; kind: string }> }
    expect(tools.tools.find((t) => t.name === "text_stats")).toMatchObject({ kind: "text-stats" })
    const script = JSON.stringify(['{"tool":"text_stats","args":"a b c"}', '{"tool":"terminate","args":"three words"}'])
    const agent = write("counter.yml", "type: react\nsystemPrompt: Count.\nreact: {maxSteps: 3}\nmcp:\n  localTools: [terminate]\n")
    const run = await runCli(["run", agent, "count", "--plugin", plugin, "--model", `scripted:sequence:${script}`, "--format", "json"])
    expect(run.code, run.stderr).toBe(0)
    const out = JSON.parse(run.stdout)
    expect(out.result).toBe("three words")
    expect(out.trace.find((e: { kind: string }) => e.kind === "tool")).toMatchObject({ name: "text_stats", output: '{"lines":1,"words":3,"characters":5}' })
  })

  it("add a memory store, which a config selects by the name the plugin registers", async () => {
    const agent = write(
      "remembers.yml",
      "type: simple\nsystemPrompt: Chat.\nmemory: {enabled: true, strategy: custom, customStore: notes, size: 5, ttl: 0, scope: user}\n"
    )
    const env = { NOTES_STORE_FILE: join(dir, "notes.json") }
    const run = (input: string) => runCli(["run", agent, input, "--plugin", storePlugin, "--model", "scripted:echo", "--format", "json"], { env })
    const first = await run("my name is Ada")
    expect(first.code, first.stderr).toBe(0)
    const written = JSON.parse(readFileSync(env.NOTES_STORE_FILE, "utf8")) as Record<string, Array<{ value: string }>>
    expect(JSON.parse(written["user:default"]![0]!.value)).toEqual({ input: "my name is Ada", output: "my name is Ada" })
    // a second process reads, through the plugin's store, what the first one wrote
    const second = await run("what is my name?")
    expect(second.code, second.stderr).toBe(0)
    const reads = (JSON.parse(second.stdout).trace as Array<{ kind: string; name: string; output: string }>).filter(
      (e) => e.kind === "memory" && e.name === "read"
    )
    expect(reads).toEqual([expect.objectContaining({ output: "1 entry from user:default" })])
    const unloaded = await runCli(["run", agent, "hi", "--model", "scripted:echo"], { env })
    expect(unloaded.code).toBe(2)
    expect(unloaded.stderr).toMatch(
      /^error: UnknownStore: memory store "notes" \(memory.customStore\) is not registered by any loaded plugin; load the plugin that registers it with --plugin MODULE/m
    )
  })

  it("load a memory store from the module memory.customStore names (class or factory), relative to the config", async () => {
    const module = relative(dir, resolve(storePlugin))
    const env = { NOTES_STORE_FILE: join(dir, "module-notes.json") }
    for (const [file, spec] of [
      ["class.yml", `${module}#NotesStore`],
      ["factory.yml", `${resolve(storePlugin)}#makeNotesStore`]
    ] as const) {
      const agent = write(
        file,
        `type: simple\nsystemPrompt: Chat.\nmemory: {enabled: true, strategy: custom, customStore: "${spec}", size: 5, ttl: 0, scope: user}\n`
      )
      const run = await runCli(["run", agent, `hello from ${file}`, "--model", "scripted:echo"], { env })
      expect(run.code, run.stderr).toBe(0)
      const written = JSON.parse(readFileSync(env.NOTES_STORE_FILE, "utf8")) as Record<string, Array<{ value: string }>>
      expect(JSON.parse(written["user:default"]![0]!.value)).toMatchObject({ input: `hello from ${file}` })
    }
  })

  it("refuse a customStore module that is missing, lacks the export or exports no store, never substituting another store", async () => {
    const config = (spec: string) =>
      write("bad-store.yml", `type: simple\nsystemPrompt: Chat.\nmemory: {enabled: true, strategy: custom, customStore: "${spec}"}\n`)
    const missing = await runCli(["run", config("./no-such-store.js#Store"), "hi", "--model", "scripted:echo"])
    expect(missing.code).toBe(4)
    expect(missing.stderr).toMatch(/^error: StoreModuleNotFound: memory.customStore "\.\/no-such-store\.js#Store": no file /m)
    const noExport = await runCli(["run", config(`${resolve(storePlugin)}#Nothing`), "hi", "--model", "scripted:echo"])
    expect(noExport.code).toBe(2)
    expect(noExport.stderr).toContain('has no export "Nothing" (exports: NotesStore, default, makeNotesStore, notAStore)')
    const notStore = await runCli(["run", config(`${resolve(storePlugin)}#notAStore`), "hi", "--model", "scripted:echo"])
    expect(notStore.code).toBe(2)
    expect(notStore.stderr).toContain("the store it gave has no put, listRecent, clear methods")
    const noPackage = await runCli(["run", config("no-such-store-package#Store"), "hi", "--model", "scripted:echo"])
    expect(noPackage.code).toBe(4)
    expect(noPackage.stderr).toContain('no package "no-such-store-package" is installed where the config is')
  })

  it("a plugin that is missing, or does not export a plugin, is refused with a clear line", async () => {
    const missing = await runCli(["--plugin", "./nowhere.mjs", "version"])
    expect(missing.code).toBe(4)
    expect(missing.stderr).toMatch(/^error: PluginNotFound: plugin not found: \.\/nowhere\.mjs/)
    const wrong = await runCli(["--plugin", write("wrong.mjs", "export default 42\n"), "version"])
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain("must export a plugin ({ name, … }) or a list of them")
    const clash = await runCli([
      "--plugin",
      write("clash.mjs", "export default { name: 'clash', commands: [{ name: 'run', description: 'x', run: async () => 0 }] }\n"),
      "version"
    ])
    expect(clash.code).toBe(2)
    expect(clash.stderr).toContain("the command \"run\" is lambdagent's own or another plugin's")
  })
})
