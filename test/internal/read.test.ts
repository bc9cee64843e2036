import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Term } from "lambdagent"
import { formByKey } from "../../src/forms/index.ts"
import { NotRead, type ReadContext, readTerm } from "../../src/forms/read.ts"
import { agentTerms } from "../fixtures/agentTerms.ts"
import { reversedKeys } from "../fixtures/reversedKeys.ts"

const context: ReadContext = { parse: (json) => Term.parse(json), isFormKey: (key) => formByKey.has(key), tick: () => {}, every: 1 << 16 }

/** Read the text with the direct reader alone: a `NotRead` means it handed the text back. */
const direct = (text: string, using: ReadContext = context): Term.Term => readTerm(text, using)

/** What the general path gives: the JSON tree, then the term. */
const general = (text: string): Term.Term => Term.parse(Term.parseJsonText(text))

describe("the direct reader on agent forms", () => {
  it("reads every agent form itself, as the general parser does (property)", () => {
    fc.assert(
      fc.property(agentTerms({ conversations: true, memory: true }), fc.boolean(), (term, reverse) => {
        const text = Term.stringify(reverse ? reversedKeys(Term.encode(term)) : Term.encode(term))
        expect(direct(text)).toEqual(general(text))
      }),
      { numRuns: 500 }
    )
  })

  it("reads channels, ask and a group chat whose scheduler is an LLM agent (data holding a term)", () => {
    for (const text of [
      '{"channels":{"declare":[{"name":"c","capacity":0}],"agent":{"par":{"branches":[{"send":"c"},{"receive":"c"}],"merge":"tuple"}}}}',
      '{"compose":[{"ask":"Go on?"},{"tool":"t"}]}',
      '{"groupchat":{"agents":[{"name":"a","agent":{"llm":{"system":"a"}}}],"maxRounds":2,"scheduler":{"llm":{"llm":{"system":"pick"}}},"keywords":["done"]}}'
    ]) {
      expect(direct(text)).toEqual(general(text))
    }
  })

  it("hands the text back when a form keeps a term it read as data", () => {
    // a parser that builds its node without taking the term standing in its JSON
    const keepsData: ReadContext = { ...context, parse: () => Term.lit(0) }
    expect(() => direct('{"compose":[{"var":"x"}]}', keepsData)).toThrow(NotRead)
    expect(direct('{"compose":[1]}', keepsData)).toEqual(Term.lit(0))
  })

  it("reads a pipeline of pipelines nested 100,000 levels deep", () => {
    const n = 100_000
    let t = direct(`${'{"compose":['.repeat(n)}{"var":"f"}${',{"tool":"t"}]}'.repeat(n)}`)
    let depth = 0
    while (t._tag === "Compose" && t.stages.length === 2 && t.stages[1]!._tag === "Tool") {
      t = t.stages[0]!
      depth++
    }
    expect({ depth, innermost: t }).toEqual({ depth: n, innermost: Term.var("f") })
  })
})
