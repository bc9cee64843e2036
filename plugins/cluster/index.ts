/**
 * Durable runs on a cluster (`lambdagent/cluster`): a run is a workflow execution of Effect's
 * workflow engine on sharded runners, with its state in PostgreSQL. Every call a run makes to a
 * model, a tool, memory or a person is an activity whose result is journaled, so a run whose
 * runner dies goes on on another without making a completed call again; a question to a person
 * waits as a durable deferred, not in a held process. Submitting the same run id twice gives one
 * run. See docs/cluster.md.
 *
 * Needs `@effect/sql-pg` and `@effect/platform-node-shared` (optional peer dependencies).
 *
 * @since 0.2.0
 * @module lambdagent/cluster
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as Schedule from "effect/Schedule"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import { type Budget, Errors, type LanguageModel, type MemoryStore, Providers, Scripted, type Term, Tools, type Trace } from "lambdagent"
import { engineLayer, pgLayer, type Role } from "./engine.ts"
import { ClusterError, redactPgUrl } from "./errors.ts"
import * as Runs from "./runs.ts"
import { askDeferred, RunWorkflow, runBody, validTerm } from "./workflow.ts"

export { ClusterError, redactPgUrl } from "./errors.ts"
export { failoverTimings, type Role } from "./engine.ts"
export type { RunOutcome, RunState, RunStatus } from "./runs.ts"
export { type HandoffOptions, handoff } from "./handoff.ts"

/**
 * The PostgreSQL URL used when neither the `pg` option nor `LAMBDAGENT_PG_URL` is set.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { defaultUrl } from "lambdagent/cluster"
 * defaultUrl // "postgres://postgres@127.0.0.1:5432/postgres"
 * ```
 */
export const defaultUrl = "postgres://postgres@127.0.0.1:5432/postgres"

/**
 * The prefix of the cluster's tables when no `prefix` option is given.
 *
 * @since 0.2.0
 * @category constants
 * @example
 * ```ts
 * import { defaultPrefix } from "lambdagent/cluster"
 * defaultPrefix // "lambdagent_cluster"
 * ```
 */
export const defaultPrefix = "lambdagent_cluster"

const PREFIX = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/

/**
 * How a process joins the cluster. `role`: `single` (default: one process runs every shard,
 * nothing but PostgreSQL needed), `runner` (serves its shards beside other runners, listening on
 * `host`:`port` for them), `client` (submits and asks, runs nothing). A runner answers runs with
 * `model` (default the offline `scripted:echo`; a run may name its own) and `tools`.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { ClusterOptions } from "lambdagent/cluster"
 * const o: ClusterOptions = { pg: "postgres://postgres@127.0.0.1:5432/test", role: "runner", port: 34431, shards: 64 }
 * ```
 */
export interface ClusterOptions {
  /** PostgreSQL URL; default `LAMBDAGENT_PG_URL`, else {@link defaultUrl}. */
  readonly pg?: string
  /** Prefix of the cluster's tables (one cluster per prefix); default {@link defaultPrefix}. */
  readonly prefix?: string
  readonly role?: Role
  /** Shards runs are spread over; every process of a cluster must use the same number. Default 64. */
  readonly shards?: number
  /** Address a runner listens on for the others; default `127.0.0.1`:34431. */
  readonly host?: string
  readonly port?: number
  /** The model of runs that name none: a model object or a spec. */
  readonly model?: LanguageModel.LanguageModelShape | string
  readonly tools?: ReadonlyArray<Tools.ToolDefinition>
  /**
   * The store of the runs' `memory` nodes. Give one every runner shares (`lambdagent/redis`, …):
   * a run that moves to another runner reads there what it wrote before.
   */
  readonly memory?: MemoryStore.MemoryStoreShape
  /** Settings of Effect's sharding over {@link failoverTimings} (lock expiry, poll intervals, …). */
  readonly sharding?: Partial<ShardingConfig.ShardingConfig["Service"]>
}

/**
 * Options of a submission: the run's id (default a random one; the same id twice is one run),
 * its default model as a spec, budget and trace level.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { SubmitOptions } from "lambdagent/cluster"
 * const o: SubmitOptions = { id: "invoice-42", budget: { llmCalls: 5 } }
 * ```
 */
export interface SubmitOptions {
  readonly id?: string
  readonly model?: string
  readonly budget?: Partial<Budget.Budget>
  readonly trace?: Trace.TraceLevel
}

/**
 * A submission's receipt: the run's id, and whether this submission created it (false: a run
 * with this id was submitted before, and that one run goes on).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { Submitted } from "lambdagent/cluster"
 * const s: Submitted = { id: "invoice-42", created: true }
 * ```
 */
export interface Submitted {
  readonly id: string
  readonly created: boolean
}

/**
 * Options of `result`: `wait` for the run to end (default false: its status now), at most
 * `timeoutMs` (default no limit; past it, `ClusterError` `Timeout`).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { ResultOptions } from "lambdagent/cluster"
 * const o: ResultOptions = { wait: true, timeoutMs: 60_000 }
 * ```
 */
export interface ResultOptions {
  readonly wait?: boolean
  readonly timeoutMs?: number
}

/**
 * The cluster as a service: submit runs and ask about them.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { ClusterShape } from "lambdagent/cluster"
 * const ids = (c: ClusterShape) => c.list().pipe((e) => e)
 * ```
 */
export interface ClusterShape {
  /** Check and store a run, and start its workflow. An invalid term is refused before anything is stored. */
  readonly submit: (term: Term.Term | Term.Json, input: unknown, options?: SubmitOptions) => Effect.Effect<Submitted, ClusterError | Errors.TermParseError>
  /** Where a run is; an unknown id fails with `NotFound`. */
  readonly status: (id: string) => Effect.Effect<Runs.RunStatus, ClusterError>
  /** The run's status, once it has ended when `wait` is set. */
  readonly result: (id: string, options?: ResultOptions) => Effect.Effect<Runs.RunStatus, ClusterError>
  /** Interrupt a run that has not ended; it ends `cancelled`. */
  readonly cancel: (id: string) => Effect.Effect<Runs.RunStatus, ClusterError>
  /** The most recently submitted runs, newest first (default 100). */
  readonly list: (options?: { readonly limit?: number }) => Effect.Effect<ReadonlyArray<Runs.RunStatus>, ClusterError>
  /** Answer the question a `waiting` run asks; the run goes on. */
  readonly answer: (id: string, answer: unknown) => Effect.Effect<void, ClusterError>
}

/**
 * The cluster service (see {@link layer}).
 *
 * @since 0.2.0
 * @category services
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Cluster } from "lambdagent/cluster"
 * const program = Effect.gen(function* () {
 *   const cluster = yield* Cluster
 *   return yield* cluster.list()
 * })
 * ```
 */
export class Cluster extends Context.Service<Cluster, ClusterShape>()("lambdagent/cluster/Cluster") {}

const randomId = () => `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`

const resolveModel = (model: ClusterOptions["model"]): LanguageModel.LanguageModelShape =>
  model === undefined ? Scripted.echo() : typeof model === "string" ? Providers.fromSpec(model) : model

const make = (runs: Runs.Runs, url: string): Effect.Effect<ClusterShape, never, WorkflowEngine.WorkflowEngine> =>
  Effect.map(Effect.context<WorkflowEngine.WorkflowEngine>(), (context) => {
    const unavailable = (error: SqlError) => new ClusterError({ reason: "Unavailable", message: `PostgreSQL at ${redactPgUrl(url)} failed: ${error.message}` })
    const sql = <A, E>(effect: Effect.Effect<A, E | SqlError>): Effect.Effect<A, Exclude<E, SqlError> | ClusterError> =>
      Effect.mapError(effect, (error) => (isSqlError(error) ? unavailable(error) : error)) as Effect.Effect<A, Exclude<E, SqlError> | ClusterError>
    const engine = <A, E>(effect: Effect.Effect<A, E, WorkflowEngine.WorkflowEngine>) => Effect.provideContext(effect, context)
    const status = (id: string) =>
      Effect.flatMap(sql(runs.get(id)), (found) =>
        found === undefined ? Effect.fail(new ClusterError({ reason: "NotFound", message: `no run with id ${JSON.stringify(id)}` })) : Effect.succeed(found)
      )
    const executionOf = (id: string) =>
      Effect.flatMap(sql(runs.payload(id)), (payload) => RunWorkflow.executionId(payload as typeof RunWorkflow.payloadSchema.Type))
    return {
      submit: (term, input, options = {}) =>
        Effect.gen(function* () {
          const checked = yield* Effect.try({
            try: () => ({ term: validTerm(term), input: JSON.parse(JSON.stringify(input ?? null)) }),
            catch: (error) =>
              Errors.isLambdaError(error) && error._tag === "TermParseError"
                ? error
                : new ClusterError({ reason: "Invalid", message: `the run cannot be submitted: ${error instanceof Error ? error.message : String(error)}` })
          })
          const id = options.id ?? randomId()
          if (id === "" || id.length > 200) return yield* new ClusterError({ reason: "Invalid", message: "a run id is 1 to 200 characters" })
          const payload = {
            id,
            term: checked.term,
            input: checked.input,
            settings: {
              ...(options.model !== undefined ? { model: options.model } : {}),
              ...(options.budget !== undefined ? { budget: options.budget as Record<string, number> } : {}),
              ...(options.trace !== undefined ? { trace: options.trace } : {})
            },
            submittedAt: Date.now()
          }
          const created = yield* sql(runs.insert(id, payload))
          // the stored payload starts the workflow, also when an earlier submission stopped before
          const stored = created ? payload : ((yield* sql(runs.payload(id))) as typeof payload)
          yield* engine(RunWorkflow.execute(stored, { discard: true }))
          return { id, created }
        }),
      status,
      result: (id, options = {}) => {
        if (options.wait !== true) return status(id)
        const ended = status(id).pipe(
          Effect.flatMap((s) => (Runs.isFinal(s.state) ? Effect.succeed(s) : Effect.fail("pending" as const))),
          Effect.retry({ while: (e) => e === "pending", schedule: Schedule.spaced(100) })
        ) as Effect.Effect<Runs.RunStatus, ClusterError>
        return options.timeoutMs === undefined
          ? ended
          : Effect.timeoutOrElse(ended, {
              duration: options.timeoutMs,
              orElse: () =>
                Effect.fail(new ClusterError({ reason: "Timeout", message: `run ${JSON.stringify(id)} did not end within ${options.timeoutMs} ms` }))
            })
      },
      cancel: (id) =>
        Effect.gen(function* () {
          const before = yield* status(id)
          if (Runs.isFinal(before.state)) return before
          const executionId = yield* executionOf(id)
          // at once, the call in flight too (the durable interrupt waits for the call to end);
          // a run has no compensations or child workflows that this would skip
          yield* engine(
            Effect.gen(function* () {
              const workflows = yield* WorkflowEngine.WorkflowEngine
              yield* workflows.interruptUnsafe(RunWorkflow, executionId)
            })
          )
          yield* sql(runs.finish(id, "cancelled", { error: { kind: "Cancelled", message: "the run was cancelled" } }))
          return yield* status(id)
        }),
      list: (options = {}) => sql(runs.list(options.limit ?? 100)),
      answer: (id, answer) =>
        Effect.gen(function* () {
          const current = yield* status(id)
          if (current.state !== "waiting" || current.question === undefined) {
            return yield* new ClusterError({ reason: "NotWaiting", message: `run ${JSON.stringify(id)} is ${current.state}, not waiting on an answer` })
          }
          const executionId = yield* executionOf(id)
          const deferred = askDeferred(current.question.key)
          const token = DurableDeferred.tokenFromExecutionId(deferred, { workflow: RunWorkflow, executionId })
          yield* engine(DurableDeferred.succeed(deferred, { token, value: JSON.parse(JSON.stringify(answer ?? null)) }))
        })
    }
  })

const isSqlError = (u: unknown): u is SqlError => typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "SqlError"

/**
 * The cluster service for one process (see {@link ClusterOptions}): it creates the tables it
 * needs (a table of another schema version fails with `SchemaVersion`), joins the engine, and as
 * a runner or `single` process runs the runs its shards hold. PostgreSQL unreachable fails with
 * `Unavailable`, naming the URL with its password hidden.
 *
 * @since 0.2.0
 * @category layers
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Cluster, layer } from "lambdagent/cluster"
 * const program = Effect.gen(function* () {
 *   const cluster = yield* Cluster
 *   const { id } = yield* cluster.submit({ llm: { system: "Repeat." } }, "hello")
 *   return yield* cluster.result(id, { wait: true })
 * }).pipe(Effect.provide(layer({ pg: "postgres://postgres@127.0.0.1:5432/test" })))
 * ```
 */
export const layer = (options: ClusterOptions = {}): Layer.Layer<Cluster, ClusterError> => {
  const url = options.pg ?? process.env.LAMBDAGENT_PG_URL ?? defaultUrl
  const prefix = options.prefix ?? defaultPrefix
  // the prefix names tables and indexes: plain identifiers only, short enough that PostgreSQL
  // (63 characters a name) keeps every name the engine derives from it whole
  if (!PREFIX.test(prefix)) {
    return Layer.effect(
      Cluster,
      Effect.fail(
        new ClusterError({
          reason: "Invalid",
          message: `the table prefix must be letters, digits and _ (starting with a letter or _, at most 40 characters), got ${JSON.stringify(prefix)}`
        })
      )
    )
  }
  const role = options.role ?? "single"
  const host = options.host ?? "127.0.0.1"
  const port = options.port ?? 34431
  const pg = pgLayer(url)
  const engine = engineLayer({
    url,
    prefix,
    role,
    shards: options.shards ?? 64,
    host,
    port,
    ...(options.sharding !== undefined ? { sharding: options.sharding } : {})
  })
  const service = Layer.unwrap(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const runs = yield* Effect.mapError(Runs.make(sql, prefix), (error) =>
        error instanceof ClusterError
          ? error
          : new ClusterError({ reason: "Unavailable", message: `PostgreSQL at ${redactPgUrl(url)} failed: ${error.message}` })
      )
      const cluster = Layer.effect(Cluster, make(runs, url))
      if (role === "client") return cluster
      const worker = RunWorkflow.toLayer(
        runBody({
          runs,
          runner: role === "single" ? "single" : `${host}:${port}`,
          model: resolveModel(options.model),
          ...(options.memory !== undefined ? { memory: options.memory } : {})
        })
      ).pipe(Layer.provide(Tools.layer(options.tools ?? [])))
      return Layer.merge(cluster, worker)
    })
  )
  // the engine's own log lines (a runner listening, lock storage unhealthy or recovered) go to
  // stderr: stdout is the host's (a command's result)
  return service.pipe(Layer.provide(engine), Layer.provide(pg), Layer.provide(Logger.layer([Logger.withConsoleError(Logger.formatSimple)])))
}

/**
 * The cluster from any JavaScript host, without Effect in its types: every method returns a
 * Promise; `close` leaves the cluster (a runner stops taking runs; its runs move to the others).
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { ClusterClient } from "lambdagent/cluster"
 * const waitFor = (client: ClusterClient, id: string) => client.result(id, { wait: true })
 * ```
 */
export interface ClusterClient {
  /** {@link ClusterShape.submit}. */
  readonly submit: (term: Term.Term | Term.Json, input: unknown, options?: SubmitOptions) => Promise<Submitted>
  /** {@link ClusterShape.status}. */
  readonly status: (id: string) => Promise<Runs.RunStatus>
  /** {@link ClusterShape.result}. */
  readonly result: (id: string, options?: ResultOptions) => Promise<Runs.RunStatus>
  /** {@link ClusterShape.cancel}. */
  readonly cancel: (id: string) => Promise<Runs.RunStatus>
  /** {@link ClusterShape.list}. */
  readonly list: (options?: { readonly limit?: number }) => Promise<ReadonlyArray<Runs.RunStatus>>
  /** {@link ClusterShape.answer}. */
  readonly answer: (id: string, answer: unknown) => Promise<void>
  /** Leave the cluster and release its connections. */
  readonly close: () => Promise<void>
}

/**
 * Join the cluster (see {@link layer}) and get a Promise client. Rejects with `ClusterError`
 * when PostgreSQL cannot be reached.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { connect } from "lambdagent/cluster"
 * const main = async () => {
 *   const cluster = await connect({ pg: "postgres://postgres@127.0.0.1:5432/test" })
 *   const { id } = await cluster.submit({ llm: { system: "Repeat." } }, "hello")
 *   console.log((await cluster.result(id, { wait: true })).outcome?.result)
 *   await cluster.close()
 * }
 * ```
 */
export const connect = async (options: ClusterOptions = {}): Promise<ClusterClient> => {
  const runtime = ManagedRuntime.make(layer(options))
  let cluster: ClusterShape
  try {
    cluster = await runtime.runPromise(
      Effect.gen(function* () {
        return yield* Cluster
      })
    )
  } catch (error) {
    await runtime.dispose()
    throw error
  }
  const run = <A>(effect: Effect.Effect<A, unknown>) => runtime.runPromise(effect)
  return {
    submit: (term, input, submitOptions) => run(cluster.submit(term, input, submitOptions)),
    status: (id) => run(cluster.status(id)),
    result: (id, resultOptions) => run(cluster.result(id, resultOptions)),
    cancel: (id) => run(cluster.cancel(id)),
    list: (listOptions) => run(cluster.list(listOptions)),
    answer: (id, answer) => run(cluster.answer(id, answer)),
    close: () => runtime.dispose()
  }
}

const withCluster = <A, E>(f: (cluster: ClusterShape) => Effect.Effect<A, E>): Effect.Effect<A, E, Cluster> =>
  Effect.gen(function* () {
    return yield* f(yield* Cluster)
  })

/**
 * Submit a run to the cluster of the context (see {@link ClusterShape.submit}).
 *
 * @since 0.2.0
 * @category running
 * @example
 * ```ts
 * import { submit } from "lambdagent/cluster"
 * const submitted = submit({ llm: { system: "Repeat." } }, "hello", { id: "greeting" })
 * ```
 */
export const submit = (term: Term.Term | Term.Json, input: unknown, options?: SubmitOptions) => withCluster((c) => c.submit(term, input, options))

/**
 * Where a run is (see {@link ClusterShape.status}).
 *
 * @since 0.2.0
 * @category running
 * @example
 * ```ts
 * import { status } from "lambdagent/cluster"
 * const where = status("greeting")
 * ```
 */
export const status = (id: string) => withCluster((c) => c.status(id))

/**
 * A run's status, once it has ended with `wait` (see {@link ClusterShape.result}).
 *
 * @since 0.2.0
 * @category running
 * @example
 * ```ts
 * import { result } from "lambdagent/cluster"
 * const ended = result("greeting", { wait: true, timeoutMs: 60_000 })
 * ```
 */
export const result = (id: string, options?: ResultOptions) => withCluster((c) => c.result(id, options))

/**
 * Cancel a run that has not ended (see {@link ClusterShape.cancel}).
 *
 * @since 0.2.0
 * @category running
 * @example
 * ```ts
 * import { cancel } from "lambdagent/cluster"
 * const cancelled = cancel("greeting")
 * ```
 */
export const cancel = (id: string) => withCluster((c) => c.cancel(id))

/**
 * The most recently submitted runs (see {@link ClusterShape.list}).
 *
 * @since 0.2.0
 * @category running
 * @example
 * ```ts
 * import { list } from "lambdagent/cluster"
 * const recent = list({ limit: 10 })
 * ```
 */
export const list = (options?: { readonly limit?: number }) => withCluster((c) => c.list(options))

/**
 * Answer the question a waiting run asks (see {@link ClusterShape.answer}).
 *
 * @since 0.2.0
 * @category running
 * @example
 * ```ts
 * import { answer } from "lambdagent/cluster"
 * const answered = answer("greeting", "yes")
 * ```
 */
export const answer = (id: string, text: unknown) => withCluster((c) => c.answer(id, text))
