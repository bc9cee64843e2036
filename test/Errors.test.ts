import * as Schema from "effect/Schema"
import { Errors, Evaluator, LanguageModel, MemoryStore, SharedMemory, Term, Tools, TraceSink } from "lambdagent"
import { A2AClientError, RunStopped } from "lambdagent/a2a"
import { HttpFailure, ListenError, RunAborted } from "lambdagent/http"
import { McpClientError, ProtocolError, RegistryStoreError } from "lambdagent/mcp"
import { RagError } from "lambdagent/rag"
import { ConfigError, fromConfig, SchemaError, ValidatorSyntaxError } from "lambdagent/yaml"
import { describe, expect, it } from "vitest"

/** An error caught from running `f`. */
const caught = (f: () => unknown): unknown => {
  try {
    f()
  } catch (error) {
    return error
  }
  throw new Error("expected an error")
}

describe("errors", () => {
  const samples: ReadonlyArray<readonly [string, Schema.Codec<any, any>, Error]> = [
    ["TermParseError", Errors.TermParseError, caught(() => Term.parse({ var: 1 })) as Error],
    ["EvalError", Errors.EvalError, caught(() => Evaluator.evaluate(Term.div(Term.lit(1), Term.lit(0)))) as Error],
    [
      "BudgetExceeded",
      Errors.BudgetExceeded,
      caught(() =>
        Evaluator.evaluate(
          Term.parse({
            app: {
              func: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } },
              arg: { lam: "x", body: { app: { func: { var: "x" }, arg: { var: "x" } } } }
            }
          }),
          { budget: { steps: 100 } }
        )
      ) as Error
    ],
    [
      "ProviderError",
      LanguageModel.ProviderError,
      new LanguageModel.ProviderError({ provider: "openai", reason: "RateLimited", message: "slow down", status: 429, retryAfter: 2 })
    ],
    ["ToolError", Tools.ToolError, new Tools.ToolError({ tool: "add", reason: "InvalidInput", message: "a: expected number" })],
    ["MemoryError", MemoryStore.MemoryError, new MemoryStore.MemoryError({ store: "redis", operation: "put", message: "connection refused" })],
    ["SharedMemoryError", SharedMemory.SharedMemoryError, new SharedMemory.SharedMemoryError({ reason: "AppendOnly", key: "k", message: "k is bound" })],
    ["TraceFileError", TraceSink.TraceFileError, new TraceSink.TraceFileError({ path: "/nope/t.jsonl", message: "ENOENT" })],
    ["ConfigError", ConfigError, caught(() => fromConfig("type: simple\nmodel: [unclosed\n")) as Error],
    ["SchemaError", SchemaError, caught(() => fromConfig("type: simple\nsystemPromt: Hi\n")) as Error],
    ["ValidatorSyntaxError", ValidatorSyntaxError, new ValidatorSyntaxError({ message: "unterminated string", offset: 3 })],
    ["ProtocolError", ProtocolError, new ProtocolError({ code: -32602, message: "Unknown tool: x" })],
    ["McpClientError", McpClientError, new McpClientError({ server: "s", message: "gone" })],
    ["RegistryStoreError", RegistryStoreError, new RegistryStoreError({ store: "file", operation: "save", message: "EACCES" })],
    [
      "RagError",
      RagError,
      new RagError({
        reason: "SourceNotFound",
        message: "no such file: docs/a.md",
        path: "docs/a.md",
        cause: Object.assign(new Error("ENOENT"), { code: "ENOENT" })
      })
    ],
    ["A2AClientError", A2AClientError, new A2AClientError({ agent: "planner", reason: "HttpStatus", status: 503, message: "the endpoint answered HTTP 503" })],
    ["RunStopped", RunStopped, new RunStopped({ reason: "Timeout", message: "the run took longer than 120 s" })],
    [
      "ListenError",
      ListenError,
      new ListenError({ message: "cannot listen on 127.0.0.1:8080: the address is already in use", cause: new Error("listen EADDRINUSE") })
    ],
    [
      "HttpFailure",
      HttpFailure,
      new HttpFailure({ status: 503, kind: "Overloaded", message: "retry later", details: { limit: 2 }, headers: { "Retry-After": "1" } })
    ],
    ["RunAborted", RunAborted, new RunAborted({ reason: "ClientClosed", message: "the client went away" })]
  ]

  it.each(samples)("%s is a lambdagent error that survives JSON", (tag, schema, error) => {
    expect(error).toBeInstanceOf(Error)
    expect((error as unknown as { _tag: string })._tag).toBe(tag)
    expect(Errors.isLambdagentError(error)).toBe(true)
    const json = JSON.parse(JSON.stringify(Schema.encodeUnknownSync(schema)(error)))
    const decoded = Schema.decodeUnknownSync(schema)(json)
    expect(decoded).toBeInstanceOf(schema as unknown as abstract new (...args: Array<never>) => unknown)
    expect(decoded.message).toBe(error.message)
    expect(Errors.isLambdagentError(decoded)).toBe(true)
    expect(JSON.parse(JSON.stringify(Schema.encodeUnknownSync(schema)(decoded)))).toEqual(json)
  })

  it("a decoded error keeps its fields and its cause's message", () => {
    const failure = Schema.decodeUnknownSync(HttpFailure)(
      JSON.parse(
        JSON.stringify(
          Schema.encodeUnknownSync(HttpFailure)(new HttpFailure({ status: 413, kind: "PayloadTooLarge", message: "too big", details: { limit: 10 } }))
        )
      )
    )
    expect(failure.body()).toEqual({ error: { kind: "PayloadTooLarge", message: "too big", limit: 10 } })
    expect(failure.status).toBe(413)
    const rag = Schema.decodeUnknownSync(RagError)(
      JSON.parse(JSON.stringify(Schema.encodeUnknownSync(RagError)(new RagError({ reason: "Timeout", message: "slow", cause: new Error("socket hang up") }))))
    )
    expect(rag).toMatchObject({ _tag: "RagError", reason: "Timeout", message: "slow" })
    expect((rag.cause as Error).message).toBe("socket hang up")
  })

  it("a budget error carries its partial trace across the encoding", () => {
    const error = caught(() =>
      Evaluator.evaluate(Term.parse({ fold: [{ lam: "p", body: { fst: { var: "p" } } }, 0, [1, 2, 3]] }), { budget: { steps: 5 }, trace: "beta" })
    ) as Errors.BudgetExceeded
    expect(error.trace?.length).toBeGreaterThan(0)
    const decoded = Schema.decodeUnknownSync(Errors.BudgetExceeded)(JSON.parse(JSON.stringify(Schema.encodeUnknownSync(Errors.BudgetExceeded)(error))))
    expect(decoded.trace).toEqual(error.trace)
    expect(decoded).toMatchObject({ budget: "steps", limit: 5 })
  })

  it("other values are not lambdagent errors", () => {
    for (const value of [new Error("x"), { _tag: "EvalError", message: "forged" }, null, "EvalError", 42]) {
      expect(Errors.isLambdagentError(value)).toBe(false)
    }
  })
})
