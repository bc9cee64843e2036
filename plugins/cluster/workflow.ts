/**
 * A lambdagent run as a durable workflow: the payload is the term (JSON), the input and the run's
 * settings; the body drives the run with the one driver, and every call that reaches the model,
 * the tools, memory or a person is an activity of the workflow, keyed by the request's key. A
 * workflow executed again (its runner died, the run moved) gets the journaled answers back and
 * makes only the calls that never completed; the machine is deterministic given its answers, so
 * the run goes on where it was, with the trace and the budgets of the whole run.
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Activity from "effect/workflow/Activity"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import * as Workflow from "effect/workflow/Workflow"
import type * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import { Agent, Errors, LanguageModel, MemoryStore, Providers, Replay, Term, Value } from "lambdagent"
import type { Runs } from "./runs.ts"

/** The run's settings a submitter may give; everything else is the runner's. */
const Settings = Schema.Struct({
  /** The default model of the run, as a spec (`openai:gpt-4o-mini`); default the runner's. */
  model: Schema.optionalKey(Schema.String),
  budget: Schema.optionalKey(Schema.Record(Schema.String, Schema.Number)),
  trace: Schema.optionalKey(Schema.Literals(["off", "agent", "beta"]))
})

/** What a run is given: its id, term, input, settings and the time it was submitted. */
export const RunPayload = Schema.Struct({
  id: Schema.String,
  term: Schema.Json,
  input: Schema.Json,
  settings: Settings,
  submittedAt: Schema.Number
})

export type RunPayload = typeof RunPayload.Type

/** A failed run's error, as `Errors.toJson` gives it (its `kind` and `message`). */
export const RunFailure = Schema.Struct({ kind: Schema.String, message: Schema.String })

export type RunFailure = typeof RunFailure.Type

/** A finished run: the value's JSON, the whole run's trace, its counters. */
export const RunResult = Schema.Struct({
  result: Schema.Json,
  trace: Schema.Array(Schema.Json),
  stats: Schema.Struct({ steps: Schema.Number, llmCalls: Schema.Number, toolCalls: Schema.Number, tokens: Schema.Number })
})

/** The workflow of one run; its execution id follows from the run id, so a run id is one run. */
export const RunWorkflow = Workflow.make("lambdagent/run", {
  payload: RunPayload,
  idempotencyKey: (payload) => payload.id,
  success: RunResult,
  error: RunFailure
})

/** A journaled entry, as activities keep them (the recording format's entry). */
const EntryJson = Replay.EntrySchema

/** The deferred answer of an `ask` request, by its key. */
export const askDeferred = (key: string) => DurableDeferred.make(`ask/${key}`, { success: Schema.Json })

/** An error of any kind as `{kind, message}`: a term-language error as `Errors.toJson` says, another by its tag. */
export const failureOf = (error: unknown): RunFailure => {
  if (Errors.isLambdaError(error)) {
    const json = Errors.toJson(error)
    return { kind: json.kind, message: json.message }
  }
  if (Errors.isLambdagentError(error)) return { kind: error._tag, message: error.message }
  return { kind: "Unknown", message: error instanceof Error ? error.message : String(error) }
}

/** What runs the workflow needs beside the engine: the run table, and the model for runs that name none. */
export interface RunnerServices {
  readonly runs: Runs
  /** How this runner is named in the run table (`host:port`, or `single`). */
  readonly runner: string
  readonly model: LanguageModel.LanguageModelShape
  /** The memory store of `memory` nodes: one every runner shares (Redis, PostgreSQL…), so a run that moves finds what it wrote. */
  readonly memory?: MemoryStore.MemoryStoreShape
}

/**
 * The journal of one execution: each call an activity named by its request key (its result the
 * recording entry, its failure the error's `{kind, message}`); an `ask` waits on a durable
 * deferred that `answer` completes, the run marked `waiting` meanwhile.
 */
const journalOf =
  (context: Context.Context<WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance>, services: RunnerServices, id: string): Agent.Journal =>
  (key, request, call) => {
    const journaled: Effect.Effect<Replay.Entry, RunFailure, WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance> =
      request.kind === "ask"
        ? Effect.gen(function* () {
            yield* Effect.orDie(services.runs.waiting(id, { key, question: request.question }))
            const answer = yield* DurableDeferred.await(askDeferred(key))
            yield* Effect.orDie(services.runs.running(id, services.runner))
            return { key, kind: "ask" as const, request: Replay.requestOf(request), answer, tokens: 0, events: [] }
          })
        : Activity.make({
            name: `oracle/${key}`,
            success: EntryJson,
            error: RunFailure,
            execute: Effect.mapError(call, failureOf)
          })
    return journaled.pipe(
      Effect.mapError((failure) => new Errors.EvalError({ kind: "OracleError", message: `${failure.kind}: ${failure.message}`, steps: 0 })),
      Effect.provideContext(context)
    )
  }

/** The body of a run's workflow. */
export const runBody = (services: RunnerServices) => (payload: RunPayload) =>
  Effect.gen(function* () {
    const { runs } = services
    yield* Effect.orDie(runs.running(payload.id, services.runner))
    const context = yield* Effect.context<WorkflowEngine.WorkflowEngine | WorkflowEngine.WorkflowInstance>()
    const settings = payload.settings
    const ran = yield* Effect.try({
      // a model spec this runner cannot make (an unknown provider) fails the run, as a bad term would
      try: () => ({
        term: Term.parse(payload.term),
        model: settings.model === undefined ? services.model : Providers.fromSpec(settings.model)
      }),
      catch: (error) => new Errors.EvalError({ kind: "OracleError", message: error instanceof Error ? error.message : String(error), steps: 0 })
    }).pipe(
      Effect.flatMap(({ term, model }) =>
        Agent.run(term, payload.input, {
          runId: payload.id,
          journal: journalOf(context, services, payload.id),
          ...(settings.budget !== undefined ? { budget: settings.budget } : {}),
          ...(settings.trace !== undefined ? { trace: settings.trace } : {})
        }).pipe(Effect.provideService(LanguageModel.LanguageModel, model))
      ),
      (run) => (services.memory === undefined ? run : Effect.provideService(run, MemoryStore.MemoryStore, services.memory)),
      Effect.catch((error) =>
        Effect.gen(function* () {
          const failure = failureOf(error)
          yield* Effect.orDie(runs.finish(payload.id, "failed", { error: failure }))
          return yield* Effect.fail(failure)
        })
      )
    )
    const outcome = {
      result: JSON.parse(Value.toJsonText(ran.value)) as Schema.Json,
      trace: ran.trace as ReadonlyArray<unknown> as ReadonlyArray<Schema.Json>,
      stats: statsOf(ran.stats)
    }
    yield* Effect.orDie(runs.finish(payload.id, "done", { outcome }))
    return outcome
  })

const statsOf = (stats: Agent.Stats) => ({ steps: stats.steps, llmCalls: stats.llmCalls, toolCalls: stats.toolCalls, tokens: stats.tokens })

/** Check a submission before anything is stored: the term parses, the input is JSON. */
export const validTerm = (term: Term.Term | Term.Json): Term.Json => {
  const parsed = typeof term === "object" && term !== null && !Array.isArray(term) && "_tag" in term ? (term as Term.Term) : Term.parse(term)
  return Term.encode(parsed)
}
