/**
 * Structured output of an `llm` term (`output: {schema}`) on the scripted model: the JSON value it
 * answers, the schema sent as the request's response format (or as instructions), the repair of
 * an answer that does not match, the typed error when no attempt does, the budgets and bounds
 * that count the repairs, replay, `get` on the value, and `runtime.generateObject`.
 */
import { describe, expect, expectTypeOf, it } from "vitest"
import * as z from "zod"
import { Analysis, createRuntime, Errors, Replay, Scripted, Term } from "lambdagent"
import { recording } from "./fixtures/recordingModel.ts"

const Person = z.object({ name: z.string(), age: z.number().int() })
const extract = (options: Partial<Term.Output> = {}) => Term.llm({ system: "Extract the person.", output: { name: "person", schema: Person, ...options } })

describe("an llm term with an output schema", () => {
  it("answers the JSON value, with the schema as the request's response format", async () => {
    const { model, requests } = recording(['{"name":"Ada","age":36}'])
    const result = await createRuntime({ model }).run(extract(), "Ada Lovelace, 36 years old")
    // an object is its JSON text, which `get` takes apart
    expect(result.value).toBe('{"name":"Ada","age":36}')
    expect(requests).toHaveLength(1)
    expect(requests[0]!.responseFormat).toEqual({
      name: "person",
      schema: {
        type: "object",
        properties: { name: { type: "string" }, age: { type: "integer" } },
        required: ["name", "age"],
        additionalProperties: false
      },
      strict: true
    })
    // the model answers the format by itself: the system prompt is the term's
    expect(requests[0]!.messages).toEqual([
      { role: "system", content: "Extract the person." },
      { role: "user", content: "Ada Lovelace, 36 years old" }
    ])
  })

  it("sends the schema as instructions to a model without structured output", async () => {
    const { model, requests } = recording(['{"name":"Ada","age":36}'], { structuredOutput: false })
    await createRuntime({ model }).run(extract(), "Ada, 36")
    const system = requests[0]!.messages[0]!.content
    expect(system.startsWith("Extract the person.\n\n## Output\nAnswer with one JSON value")).toBe(true)
    expect(system).toContain('"required":["name","age"]')
  })

  it("reads the JSON out of a fenced block or prose around it", async () => {
    for (const answer of ['```json\n{"name":"Ada","age":36}\n```', 'Here it is: {"name":"Ada","age":36}. Anything else?']) {
      const result = await createRuntime({ model: Scripted.fixed(answer) }).run(extract(), "Ada")
      expect(result.value).toBe('{"name":"Ada","age":36}')
    }
  })

  it("gives arrays as lists and numbers with a fraction as their decimal text, as every answer", async () => {
    const schema = { type: "array", items: { type: "object", properties: { price: { type: "number" } }, required: ["price"] } }
    const term = Term.compose([
      Term.llm({ system: "Prices.", output: { schema } }),
      Term.lam("xs", Term.pair(Term.length(Term.var("xs")), Term.get(Term.head(Term.var("xs")), Term.lit("price"))))
    ])
    const result = await createRuntime({ model: Scripted.fixed('[{"price":1.5},{"price":2}]') }).run(term, "")
    expect(result.result).toEqual({ pair: [2, "1.5"] })
  })

  it("sends an answer that does not match back with what was wrong, and takes the repaired one", async () => {
    const { model, requests } = recording(['{"name":"Ada"}', '{"name":"Ada","age":36}'])
    const result = await createRuntime({ model }).run(extract(), "Ada, 36")
    expect(result.value).toBe('{"name":"Ada","age":36}')
    expect(result.stats.llmCalls).toBe(2)
    expect(requests[1]!.messages).toEqual([
      { role: "system", content: "Extract the person." },
      { role: "user", content: "Ada, 36" },
      { role: "assistant", content: '{"name":"Ada"}' },
      {
        role: "user",
        content: "Your answer does not match the required JSON Schema:\n$.age: missing (expected number)\nAnswer again with only the corrected JSON value."
      }
    ])
    expect(result.trace.map((e) => [e.kind, e.name])).toEqual([
      ["llm", "llm"],
      ["output", "invalid"],
      ["llm", "llm"]
    ])
    expect(result.trace[1]!.output).toBe("$.age: missing (expected number)")
  })

  it("fails with a ValidationError naming the violation when no attempt matches", async () => {
    const { model, requests } = recording(['{"name":"Ada","age":"old"}', "not JSON at all", '{"name":7,"age":36.5}'])
    const error = await createRuntime({ model })
      .run(extract(), "Ada")
      .then(
        () => undefined,
        (e: unknown) => e
      )
    expect(Errors.isLambdaError(error)).toBe(true)
    expect(error).toMatchObject({ _tag: "EvalError", kind: "ValidationError" })
    expect((error as Error).message).toBe(
      'the answer does not match the output schema "person" after 3 attempts: $.name: expected string, received number; $.age: expected int, received number'
    )
    expect(requests).toHaveLength(3)
    // each repair turn sees every earlier answer and its problem
    expect(requests[2]!.messages.slice(2).map((m) => m.role)).toEqual(["assistant", "user", "assistant", "user"])
    expect(requests[2]!.messages[5]!.content).toContain("the answer is not valid JSON")
  })

  it("makes as many attempts as retries allow, each counted by the budgets and the bounds", async () => {
    const once = extract({ retries: 0 })
    await expect(createRuntime({ model: Scripted.fixed("{}") }).run(once, "x")).rejects.toMatchObject({ kind: "ValidationError" })
    expect(Term.bounds(once).llmCalls).toBe(1)
    expect(Term.bounds(extract()).llmCalls).toBe(3)
    expect(Term.bounds(extract({ retries: 5 })).llmCalls).toBe(6)
    // the logical count takes each answer once, the request count every repair
    const worst = Analysis.worstCase(extract())
    expect([worst.logical.llmCalls, worst.requests.llmCalls]).toEqual([1, 3])
    // a repair is a call like any other: the budget stops it before it is made
    await expect(createRuntime({ model: Scripted.fixed("{}") }).run(extract(), "x", { budget: { llmCalls: 2 } })).rejects.toMatchObject({
      _tag: "BudgetExceeded",
      budget: "llmCalls"
    })
  })

  it("keeps no conversation: each application is one call on its input", async () => {
    const { model, requests } = recording(['{"name":"Ada","age":36}', '{"name":"Alan","age":41}'])
    const runtime = createRuntime({ model })
    await runtime.run(extract(), "Ada, 36")
    await runtime.run(extract(), "Alan, 41")
    expect(requests[1]!.messages).toHaveLength(2)
    expect(() => Term.parse({ llm: { system: "s", conversation: true, output: { schema: { type: "object" } } } })).toThrow(
      "$.llm.conversation: expected false or nothing: an llm with output keeps no conversation"
    )
  })

  it("refuses a schema zod cannot read, at its path", () => {
    expect(() => Term.parse({ llm: { system: "s", output: { schema: { type: "wat" } } } })).toThrow(
      "$.llm.output.schema: expected a JSON Schema (Unsupported type: wat), found an object"
    )
    expect(() => Term.parse({ llm: { system: "s", output: { schema: "person" } } })).toThrow("$.llm.output.schema: expected a JSON Schema (an object)")
    expect(() => Term.parse({ llm: { system: "s", output: { schema: {}, retries: -1 } } })).toThrow("$.llm.output.retries: expected an integer ≥ 0")
    expect(Term.pretty(extract())).toBe('LLM("Extract the person.") : JSON⟨person⟩')
  })

  it("replays a run with a repair from its recording", async () => {
    const entries: Array<Replay.Entry> = []
    const term = extract()
    const live = await createRuntime({ model: Scripted.sequence(['{"name":"Ada"}', '{"name":"Ada","age":36}']) }).run(term, "Ada, 36", {
      record: (entry) => entries.push(entry)
    })
    const recording = Replay.make({ term, answers: entries })
    // the recorded requests differ by their repair turns, so each answer finds its own
    expect(entries.map((e) => (e.request as { repair?: unknown }).repair === undefined)).toEqual([true, false])
    const replayed = await createRuntime({ model: Scripted.fixed("unused") }).run(term, "Ada, 36", { replay: { recording } })
    expect(replayed.value).toBe(live.value)
    expect(replayed.stats.llmCalls).toBe(2)
  })
})

describe("get", () => {
  const run = (left: Term.Term, key: Term.Term) => createRuntime().run(Term.get(left, key), null)
  it("reads a field of a JSON object text, by the oracle answers' rule", async () => {
    const text = Term.lit('{"city":"Paris","tags":["a","b"],"where":{"lat":48.85},"n":3}')
    expect((await run(text, Term.lit("city"))).value).toBe("Paris")
    expect((await run(text, Term.lit("tags"))).result).toEqual(["a", "b"])
    expect((await run(text, Term.lit("where"))).value).toBe('{"lat":48.85}')
    expect((await run(text, Term.lit("n"))).value).toBe(3)
    expect((await run(text, Term.lit("missing"))).value).toBe(null)
  })
  it("reads an element of a list or a JSON array text by its index, and a value of (key, value) pairs by its key", async () => {
    expect((await run(Term.list([Term.lit("a"), Term.lit("b")]), Term.lit(1))).value).toBe("b")
    expect((await run(Term.list([Term.lit("a")]), Term.lit(5))).value).toBe(null)
    expect((await run(Term.lit("[10,20]"), Term.lit(0))).value).toBe(10)
    const pairs = Term.list([Term.pair(Term.lit("a"), Term.lit(1)), Term.pair(Term.lit("b"), Term.lit(2))])
    expect((await run(pairs, Term.lit("b"))).value).toBe(2)
  })
  it("is a type error on what it cannot read", async () => {
    await expect(run(Term.lit("Paris"), Term.lit("city"))).rejects.toMatchObject({ kind: "TypeError", message: expect.stringContaining("not JSON") })
    await expect(run(Term.lit(3), Term.lit("city"))).rejects.toMatchObject({ kind: "TypeError" })
    await expect(run(Term.lit("{}"), Term.lit(true))).rejects.toMatchObject({ kind: "TypeError", message: expect.stringContaining("a key") })
    await expect(run(Term.list([Term.lit(1)]), Term.lit("a"))).rejects.toMatchObject({ kind: "TypeError", message: expect.stringContaining("pairs") })
  })
})

describe("runtime.generateObject", () => {
  it("resolves with the object, typed by the zod schema and parsed by it", async () => {
    const Event = z.object({ title: z.string(), day: z.string().transform((d) => d.toUpperCase()) })
    const { model, requests } = recording(['{"title":"Launch"}', '{"title":"Launch","day":"mon"}'])
    const runtime = createRuntime({ model })
    const generated = await runtime.generateObject({ schema: Event, prompt: "The launch is on Monday.", name: "event" })
    expectTypeOf(generated.object).toEqualTypeOf<{ title: string; day: string }>()
    expect(generated.object).toEqual({ title: "Launch", day: "MON" })
    expect(generated.stats.llmCalls).toBe(2)
    expect(requests[0]!.messages[0]!.content).toBe("Answer with the requested JSON value.")
    expect(requests[0]!.responseFormat?.name).toBe("event")
    await runtime.close()
  })

  it("takes a JSON Schema (the object is then unknown)", async () => {
    const runtime = createRuntime({ model: Scripted.fixed('{"ok":true,"ratio":0.25}') })
    const generated = await runtime.generateObject({ schema: { type: "object", properties: { ok: { type: "boolean" } } }, prompt: "?" })
    expectTypeOf(generated.object).toEqualTypeOf<unknown>()
    // numbers keep their fractions: the object is the answer's JSON, not a value of the language
    expect(generated.object).toEqual({ ok: true, ratio: 0.25 })
    await runtime.close()
  })

  it("rejects with a ValidationError for a check JSON Schema cannot carry", async () => {
    const Even = z.object({ n: z.number().refine((n) => n % 2 === 0, "must be even") })
    const runtime = createRuntime({ model: Scripted.fixed('{"n":3}') })
    await expect(runtime.generateObject({ schema: Even, prompt: "?" })).rejects.toMatchObject({
      _tag: "EvalError",
      kind: "ValidationError",
      message: "the answer does not pass the schema's own checks: $.n: must be even"
    })
    await runtime.close()
  })
})
