import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Term } from "lambdagent"
import { describe, expect, it } from "vitest"
import { compileConfig, fromConfig, loadConfig } from "./compile.ts"
import { ConfigError, formatFieldPath, isYamlError, SchemaError, type SemanticError, type YamlError } from "./errors.ts"
import { maxNesting, parseSource } from "./source.ts"

const failure = (f: () => unknown): YamlError => {
  try {
    f()
  } catch (e) {
    if (isYamlError(e)) return e
    throw e
  }
  throw new Error("expected an error")
}

const schemaFailure = (yaml: string): SchemaError => {
  const e = failure(() => fromConfig({ text: yaml, file: "agent.yml" }))
  expect(e).toBeInstanceOf(SchemaError)
  return e as SchemaError
}

describe("malformed YAML", () => {
  it("reports a syntax error with its line and column", () => {
    const e = failure(() => fromConfig({ text: "type: simple\nmodel: [gpt, 4\nsystemPrompt: hi\n", file: "bad.yml" }))
    expect(e).toBeInstanceOf(ConfigError)
    const c = e as ConfigError
    expect(c.reason).toBe("Syntax")
    expect([c.file, c.line, c.column]).toEqual(["bad.yml", 3, 1])
    expect(c.message).toMatch(/^bad\.yml:3:1: /)
  })

  it("rejects duplicate keys at the second one", () => {
    const e = failure(() => fromConfig("type: simple\nsystemPrompt: a\nsystemPrompt: b\n")) as ConfigError
    expect([e.reason, e.line, e.column]).toEqual(["Syntax", 3, 1])
    expect(e.message).toMatch(/unique/)
  })

  it("rejects tabs used for indentation, several documents and unknown tags", () => {
    expect((failure(() => fromConfig("type: simple\nmodel:\n\tname: x\n")) as ConfigError).line).toBe(3)
    expect(failure(() => fromConfig("type: simple\n---\ntype: react\n")).message).toMatch(/multiple documents/)
    const tag = failure(() => fromConfig("type: simple\nsystemPrompt: !!python/object/apply:os.system ['ls']\n")) as ConfigError
    expect([tag.reason, tag.line]).toEqual(["Syntax", 2])
    expect(tag.message).toMatch(/Unresolved tag/)
  })

  it("refuses alias bombs", () => {
    const rows = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for (const [name, prev] of [
      ["b", "a"],
      ["c", "b"],
      ["d", "c"],
      ["e", "d"],
      ["f", "e"],
      ["g", "f"]
    ]) {
      rows.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(", ")}]`)
    }
    const e = failure(() => fromConfig(`${rows.join("\n")}\ntype: simple\n`)) as ConfigError
    expect(e).toBeInstanceOf(ConfigError)
    expect(e.message).toMatch(/alias/i)
  })

  it("reports a missing file as NotFound", () => {
    const e = failure(() => loadConfig("no/such/agent.yml")) as ConfigError
    expect([e.reason, e.file]).toEqual(["NotFound", "no/such/agent.yml"])
  })
})

describe("huge and deeply nested YAML", () => {
  it("does not crash on 100 000 nested brackets: a clear error with a position", () => {
    const e = failure(() => fromConfig(`type: simple\nsystemPrompt: ${"[".repeat(100_000)}${"]".repeat(100_000)}\n`)) as ConfigError
    expect(e).toBeInstanceOf(ConfigError)
    expect(e.reason).toBe("TooDeep")
    expect(e.line).toBe(2)
  })

  it("refuses nesting deeper than maxNesting even when the parser copes", () => {
    const deep = `${"[".repeat(maxNesting + 5)}${"]".repeat(maxNesting + 5)}`
    const e = failure(() => parseSource(`a: ${deep}\n`))
    expect((e as ConfigError).reason).toBe("TooDeep")
  })

  it("compiles routers nested 40 levels deep", () => {
    let agent: Record<string, unknown> = { type: "simple", systemPrompt: "leaf" }
    for (let i = 0; i < 40; i++) agent = { type: "router", router: { classifier: { prompt: `level ${i}` }, routes: { down: agent }, default: "stop" } }
    let term = compileConfig(agent).term
    let depth = 0
    while (term._tag === "Route") {
      term = term.routes[0]![1]
      depth++
    }
    expect(depth).toBe(40)
    expect(term).toMatchObject({ _tag: "Llm", system: "leaf" })
  })

  it("compiles a router with 5000 routes", () => {
    const routes = Array.from({ length: 5000 }, (_, i) => `    r${i}: answer ${i}`).join("\n")
    const term = fromConfig(`type: router\nrouter:\n  classifier:\n    prompt: pick\n  routes:\n${routes}\n`) as Term.Of<"Route">
    expect(term.routes).toHaveLength(5000)
    expect(term.routes[4999]![0]).toBe("r4999")
  })

  it("refuses text larger than 1 MiB, a 10 MB file before reading it", () => {
    const e = failure(() => parseSource(`a: "${"x".repeat(1024 * 1024)}"`)) as ConfigError
    expect(e.reason).toBe("TooLarge")
    expect(e.message).toContain("larger than 1048576 bytes (1 MiB)")
    expect(e.message).toContain("subAgents.<name>.config")
    expect(parseSource(`a: "${"x".repeat(1024 * 1024 - 10)}"`).value).toEqual({ a: "x".repeat(1024 * 1024 - 10) })
    const dir = mkdtempSync(join(tmpdir(), "lambdagent-yaml-"))
    const big = join(dir, "big.yml")
    writeFileSync(big, `type: simple\nsystemPrompt: "${"x".repeat(10_000_000)}"\n`)
    const file = failure(() => loadConfig(big)) as ConfigError
    expect([file.reason, file.file]).toEqual(["TooLarge", big])
  })

  it("compiles a router with 8,000 routes (duplicate keys are found in one pass; bench yaml times 32,000)", () => {
    const n = 8_000
    const categories = Array.from({ length: n }, (_, i) => `c${i}`).join(", ")
    const routes = Array.from({ length: n }, (_, i) => `    c${i}: Answer ${i}.`).join("\n")
    const text = `type: router\nrouter:\n  classifier:\n    prompt: pick\n    categories: [${categories}]\n  routes:\n${routes}\n  default: Sorry.\n`
    const term = fromConfig(text) as Term.Of<"Route">
    expect(term.routes).toHaveLength(n)
    expect(term.routes[n - 1]![0]).toBe(`c${n - 1}`)
    const duplicate = failure(() => fromConfig(`${text}    c5: again\n`.replace("  default: Sorry.\n", ""))) as ConfigError
    expect([duplicate.reason, duplicate.line, duplicate.column]).toEqual(["Syntax", n + 7, 5])
  })

  it("gives nesting too deep and alias cycles their line and column", () => {
    const deep = failure(() => parseSource(`a: 1\nb:\n  c: ${"[".repeat(maxNesting + 5)}${"]".repeat(maxNesting + 5)}\n`)) as ConfigError
    expect([deep.reason, deep.line]).toEqual(["TooDeep", 3])
    expect(deep.column).toBeGreaterThan(5)
    expect(deep.message).toMatch(/^3:\d+: the YAML nests deeper than 200 levels/)
    const cycle = failure(() => parseSource("type: simple\nmodel: &m\n  name: x\n  again: *m\n")) as ConfigError
    expect([cycle.reason, cycle.line, cycle.column]).toEqual(["Cycle", 4, 10])
    expect(cycle.message).toContain("the alias *m refers to the node that contains it, a cycle")
    expect(cycle.message).not.toContain("deeper")
    const list = failure(() => fromConfig("type: simple\nhooks: &h [1, *h]\n")) as ConfigError
    expect(list.reason).toBe("Cycle")
    // an alias to a sibling is no cycle
    expect(parseSource("a: &x {k: 1}\nb: *x\n").value).toEqual({ a: { k: 1 }, b: { k: 1 } })
  })
})

describe("schema errors", () => {
  it("name the unknown key, its position and the nearest valid key", () => {
    const e = schemaFailure("type: simple\nsystemPromt: Hi\n")
    expect([e.field, e.line, e.column, e.suggestion, e.actual]).toEqual(["systemPromt", 2, 1, "systemPrompt", "systemPromt"])
    expect(e.expected).toMatch(/^one of type, agentId, name, description, systemPrompt/)
    expect(e.message).toBe('agent.yml:2:1: systemPromt: unknown key "systemPromt" (did you mean "systemPrompt"?)')
  })

  it("suggest keys at every depth", () => {
    const e = schemaFailure(
      [
        "type: router",
        "model:",
        "  temprature: 0.2",
        "router:",
        "  classifier:",
        "    prompt: which?",
        "  routes:",
        "    code:",
        "      type: react",
        "      systemPrompt: Code.",
        "      react:",
        "        maxStep: 5",
        ""
      ].join("\n")
    )
    expect(e.issues.map((i) => [i.field, i.line, i.column, i.suggestion])).toEqual([
      ["model.temprature", 3, 3, "temperature"],
      ["router.routes.code.react.maxStep", 12, 9, "maxSteps"]
    ])
  })

  it("explain top-level-only keys; the reference's hooks are not an error (lint L051 reports them)", () => {
    const e = schemaFailure("type: parallel\nparallel:\n  agents:\n    - systemPrompt: a\n      runtime: {maxSteps: 3}\nhooks: {before: x}\n")
    expect(e.issues.map((i) => i.message)).toEqual(['"runtime" is only allowed at the top level of the file'])
    expect(e.issues.map((i) => formatFieldPath(i.path))).toEqual(["parallel.agents[0].runtime"])
  })

  it("check the sharedMemory block like the others: typos, enums, URLs, the top level only", () => {
    const e = schemaFailure(
      [
        "type: parallel",
        "parallel:",
        "  agents:",
        "    - systemPrompt: a",
        "      sharedMemory: {}",
        "sharedMemory:",
        "  strategy: reddis",
        "  apendOnly: true",
        "  url: http://cache:6379",
        "  size: 0",
        ""
      ].join("\n")
    )
    expect(e.issues.map((i) => [i.field, i.line, i.column, i.message])).toEqual([
      ["parallel.agents[0].sharedMemory", 5, 7, '"sharedMemory" is only allowed at the top level of the file'],
      ["sharedMemory.strategy", 7, 13, 'expected one of local, redis, sqlite, custom, got the string "reddis" (did you mean "redis"?)'],
      ["sharedMemory.apendOnly", 8, 3, 'unknown key "apendOnly" (did you mean "appendOnly"?)'],
      ["sharedMemory.url", 9, 8, 'expected a redis:// or rediss:// URL, got the string "http://cache:6379"'],
      ["sharedMemory.size", 10, 9, "expected a number ≥ 1, got the number 0"]
    ])
  })

  it("say what type was expected and what was found", () => {
    const e = schemaFailure('type: simple\nsystemPrompt: Hi\nmodel:\n  temperature: hot\nreact:\n  maxSteps: 1.5\nmemory:\n  enabled: yes\n  size: "10"\n')
    expect(e.issues.map((i) => [i.field, i.line, i.column, i.expected, i.actual, i.suggestion])).toEqual([
      ["model.temperature", 4, 16, "a number", 'the string "hot"', undefined],
      ["react.maxSteps", 6, 13, "an integer", "the number 1.5", undefined],
      ["memory.enabled", 8, 12, "true or false", 'the string "yes"', "true"],
      ["memory.size", 9, 9, "a number", 'the string "10"', "10"]
    ])
  })

  it("give ranges, enums with the nearest value, URLs and missing fields", () => {
    expect(schemaFailure("type: simple\nsystemPrompt: x\nmodel: {temperature: 3}\n").issues[0]).toMatchObject({
      field: "model.temperature",
      expected: "a number ≤ 2",
      actual: "the number 3"
    })
    const type = schemaFailure("type: reactt\n")
    expect([type.expected, type.suggestion, type.line, type.column]).toEqual([
      "one of simple, react, chain, router, parallel, groupchat, handoff, skill",
      "react",
      1,
      7
    ])
    expect(schemaFailure("type: hooks\n").message).toMatch(/hooks are registered in code/)
    expect(schemaFailure("type: simple\nsystemPrompt: x\nmodel: {baseUrl: not a url}\n").expected).toBe("a URL (https://…)")
    const missing = schemaFailure("type: router\nrouter:\n  routes: {a: A}\n")
    expect([missing.field, missing.expected, missing.actual, missing.line]).toEqual(["router.classifier", "a mapping", "missing", 2])
    expect(schemaFailure("systemPrompt: Hi\n").message).toMatch(/missing required field "type"/)
  })

  it("report a route that is neither a sub-agent nor an answer", () => {
    const e = schemaFailure("type: router\nrouter:\n  classifier: {prompt: p}\n  routes:\n    a: 42\n")
    expect([e.field, e.expected, e.actual, e.line, e.column]).toEqual(["router.routes.a", "a string or a mapping", "the number 42", 5, 8])
  })

  it("report an empty file and a file that is not a mapping", () => {
    expect(schemaFailure("").message).toMatch(/the file is empty/)
    expect(schemaFailure("# only a comment\n").message).toMatch(/the file is empty/)
    expect(schemaFailure("- type: simple\n").actual).toBe("a list of 1 item")
  })

  it("check what the schema alone cannot", () => {
    expect(schemaFailure("type: chain\n").message).toMatch(/type chain needs a chain: block/)
    expect(schemaFailure("type: chain\nchain:\n  steps:\n    - prompt: a\n      tool: b\n").issues[0]).toMatchObject({ field: "chain.steps[0].tool", line: 5 })
    expect(schemaFailure("type: chain\nchain:\n  steps:\n    - name: nothing\n").message).toMatch(
      /needs a prompt \(an LLM step\), a tool \(a tool step\) or an ask/
    )
    expect(schemaFailure("type: chain\nchain:\n  steps:\n    - prompt: a\n      ask: b\n").issues[0]).toMatchObject({ field: "chain.steps[0].ask", line: 5 })
    expect(schemaFailure("type: simple\nsystemPrompt: x\nguard: {retry: 2}\n").message).toMatch(/a guard needs a validator or maxOutputLength/)
    expect(schemaFailure("type: simple\nsystemPrompt: x\nmcpServers:\n  - {name: s, transport: http}\n").message).toMatch(/transport http needs a url/)
    expect(
      schemaFailure("type: simple\nsystemPrompt: x\nmcpServers:\n  - {name: s, transport: stdio, command: a}\n  - {name: s, transport: stdio, command: b}\n")
        .message
    ).toMatch(/a second server named "s"/)
    const provider = schemaFailure("type: simple\nsystemPrompt: x\nmodel:\n  provider: anthropc\n")
    expect([provider.field, provider.suggestion, provider.line, provider.column]).toEqual(["model.provider", "anthropic", 4, 13])
  })

  it("locate validator problems inside the expression", () => {
    const plain = schemaFailure("type: simple\nsystemPrompt: x\nguard:\n  validator: len(x) > 0 and y\n")
    expect([plain.field, plain.line, plain.column]).toEqual(["guard.validator", 4, 29])
    expect(plain.message).toMatch(/unknown name y: the output is x/)
    const quoted = schemaFailure("type: simple\nsystemPrompt: x\nguard:\n  validator: \"__import__('os')\"\n")
    expect([quoted.line, quoted.column]).toEqual([4, 15])
    const block = schemaFailure("type: simple\nsystemPrompt: x\nguard:\n  validator: >\n    len(x) > 0 and x.foo()\n")
    expect([block.line, block.column]).toEqual([5, 22])
  })

  it("report every problem at once, in file order", () => {
    const e = schemaFailure("type: simple\nsystemPromt: a\nmodel:\n  nme: b\n  temperature: x\n")
    expect(e.issues.map((i) => i.line)).toEqual([2, 4, 5])
    expect(e.message.split("\n")).toHaveLength(3)
  })
})

describe("error values", () => {
  it("are tagged and carry structured fields", () => {
    const schema = failure(() => fromConfig("type: simple\nsystemPromt: Hi\n"))
    expect(schema._tag).toBe("SchemaError")
    const semantic = failure(() => fromConfig("type: react\nsystemPrompt: x\nreact: {maxSteps: 0}\n")) as SemanticError
    expect([semantic._tag, semantic.rule, semantic.field, semantic.expected, semantic.actual]).toEqual([
      "SemanticError",
      "L003",
      "react.maxSteps",
      "maxSteps ≥ 1",
      "0"
    ])
    expect(isYamlError(new Error("x"))).toBe(false)
  })

  it("name the file in messages when the file is read from disk", () => {
    const dir = mkdtempSync(join(tmpdir(), "lambdagent-yaml-"))
    const file = join(dir, "typo.yml")
    writeFileSync(file, "type: simple\nsystemPrompt: x\nmodel:\n  temprature: 1\n")
    const e = failure(() => loadConfig(file)) as SchemaError
    expect(e.file).toBe(file)
    expect(e.message).toBe(`${file}:4:3: model.temprature: unknown key "temprature" (did you mean "temperature"?)`)
  })
})
