/**
 * The workflow engine a process joins: `ClusterWorkflowEngine` on sharding, with message and
 * runner storage in PostgreSQL (`@effect/sql-pg`). A `single` process runs every shard itself; a
 * `runner` serves its shards to the others over sockets (`SocketRunner`); a `client` only
 * submits and asks, and runs nothing.
 */
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import * as Sharding from "effect/cluster/Sharding"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as SocketRunner from "effect/cluster/SocketRunner"
import * as SqlMessageStorage from "effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "effect/cluster/SqlRunnerStorage"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import { ClusterError, redactPgUrl } from "./errors.ts"

/** How a process takes part: runs every shard alone, serves shards beside other runners, or runs nothing. */
export type Role = "single" | "runner" | "client"

/**
 * The engine's timings, tuned so that the runs of a runner that died move to another within a
 * few seconds (the defaults of Effect's cluster take up to a minute): shard locks are refreshed
 * every 2 s and expire after 6 s, assignments are refreshed every second, mailboxes are polled
 * every second, and runners check each other's health every 2 s. A runner that leaves gives its
 * runs 3 s to end their current call before they move (Effect's default is 15 s); a call cut
 * short there is made again where the run moves. The price is steady load on PostgreSQL: a few
 * small queries per runner per second.
 */
export const failoverTimings: Partial<ShardingConfig.ShardingConfig["Service"]> = {
  shardLockRefreshInterval: Duration.seconds(2),
  shardLockExpiration: Duration.seconds(6),
  refreshAssignmentsInterval: Duration.seconds(1),
  entityMessagePollInterval: Duration.seconds(1),
  runnerHealthCheckInterval: Duration.seconds(2),
  entityTerminationTimeout: Duration.seconds(3)
}

export interface EngineOptions {
  readonly url: string
  readonly prefix: string
  readonly role: Role
  readonly shards: number
  readonly host: string
  readonly port: number
  readonly sharding?: Partial<ShardingConfig.ShardingConfig["Service"]>
}

const missing = (name: string) => new ClusterError({ reason: "Unavailable", message: `lambdagent/cluster needs the package ${name}: npm install ${name}` })

/** The PostgreSQL client: `@effect/sql-pg`, loaded when a cluster is built; unreachable → `Unavailable` naming the URL (password hidden). */
export const pgLayer = (url: string): Layer.Layer<SqlClient.SqlClient, ClusterError> =>
  Layer.unwrap(
    Effect.map(Effect.tryPromise({ try: () => import("@effect/sql-pg"), catch: () => missing("@effect/sql-pg") }), ({ PgClient }) =>
      Layer.effectContext(
        Effect.gen(function* () {
          const context = yield* Layer.build(PgClient.layer({ url: Redacted.make(url), connectTimeout: Duration.seconds(5) }))
          // the client connects on first use: ask now, so that a wrong URL fails here in one line
          yield* Context.get(context, PgClient.PgClient)`SELECT 1`
          return context
        }).pipe(
          Effect.mapError((error) => new ClusterError({ reason: "Unavailable", message: `cannot reach PostgreSQL at ${redactPgUrl(url)}: ${causeOf(error)}` }))
        )
      )
    )
  )

/** The innermost reason of a connection failure (`ECONNREFUSED …`), else the error's message. */
const causeOf = (error: { readonly message: string; readonly cause?: unknown }): string => {
  let reason: unknown = error
  while (typeof reason === "object" && reason !== null && "cause" in reason && reason.cause !== undefined) reason = reason.cause
  return reason instanceof Error && reason !== error ? `${error.message} (${reason.message})` : error.message
}

const nodeSocket = Effect.tryPromise({
  try: () => Promise.all([import("@effect/platform-node-shared/NodeClusterSocket"), import("@effect/platform-node-shared/NodeCrypto")]),
  catch: () => missing("@effect/platform-node-shared")
})

/** Sharding, message storage and the workflow engine for `options.role`, over the SQL client. */
export const engineLayer = (options: EngineOptions): Layer.Layer<WorkflowEngine.WorkflowEngine | Sharding.Sharding, ClusterError, SqlClient.SqlClient> =>
  Layer.unwrap(
    Effect.map(nodeSocket, ([NodeClusterSocket, NodeCrypto]) => {
      const address = RunnerAddress.make(options.host, options.port)
      const config = ShardingConfig.layer({
        ...failoverTimings,
        shardsPerGroup: options.shards,
        runnerAddress: options.role === "client" ? Option.none() : Option.some(address),
        ...options.sharding
      })
      const messages = SqlMessageStorage.layerWith({ prefix: options.prefix })
      const runners = Layer.orDie(SqlRunnerStorage.layerWith({ prefix: options.prefix }))
      const protocol = NodeClusterSocket.layerClientProtocol.pipe(Layer.provide(RpcSerialization.layerNdjson))
      const sharding =
        options.role === "single"
          ? Sharding.layer.pipe(Layer.provideMerge(Runners.layerNoop), Layer.provide(RunnerHealth.layerNoop))
          : options.role === "runner"
            ? SocketRunner.layer.pipe(
                Layer.provide(RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc))),
                Layer.provide([
                  protocol,
                  RpcSerialization.layerNdjson,
                  Layer.effectContext(
                    Effect.mapError(
                      Layer.build(NodeClusterSocket.layerSocketServer),
                      (error) =>
                        new ClusterError({
                          reason: "Listen",
                          message: `cannot listen for the other runners on ${options.host}:${options.port}: ${causeOf(error)}`
                        })
                    )
                  )
                ])
              )
            : SocketRunner.layerClientOnly.pipe(Layer.provide(protocol))
      return ClusterWorkflowEngine.layer.pipe(
        Layer.provideMerge(sharding),
        Layer.provideMerge(messages),
        Layer.provide(runners),
        Layer.provide(config),
        Layer.provide(NodeCrypto.layerDigest)
      )
    })
  )
