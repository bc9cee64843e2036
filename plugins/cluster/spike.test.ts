import { PgClient } from "@effect/sql-pg"
import * as NodeCrypto from "@effect/platform-node-shared/NodeCrypto"
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import * as Sharding from "effect/cluster/Sharding"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as SqlMessageStorage from "effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "effect/cluster/SqlRunnerStorage"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Activity from "effect/workflow/Activity"
import * as Workflow from "effect/workflow/Workflow"
import { expect, test } from "vitest"

const Greet = Workflow.make("Greet", { payload: { id: Schema.String, name: Schema.String }, idempotencyKey: (p) => p.id, success: Schema.String })
let calls = 0
const GreetLive = Greet.toLayer((payload) =>
  Effect.gen(function* () {
    const a = yield* Activity.make({ name: "one", success: Schema.String, execute: Effect.sync(() => (calls++, `hello ${payload.name}`)) })
    return a
  })
)

test("spike", async () => {
  const prefix = `spike_${Date.now()}`
  const pg = PgClient.layer({ url: Redacted.make("postgres://postgres@127.0.0.1:5432/test") })
  const cluster = Sharding.layer.pipe(
    Layer.provideMerge(Runners.layerNoop),
    Layer.provideMerge(SqlMessageStorage.layerWith({ prefix })),
    Layer.provide([Layer.orDie(SqlRunnerStorage.layerWith({ prefix })), RunnerHealth.layerNoop]),
    Layer.provide(ShardingConfig.layer({ shardsPerGroup: 4 })),
    Layer.provide(NodeCrypto.layerDigest)
  )
  const layer = GreetLive.pipe(Layer.provideMerge(ClusterWorkflowEngine.layer), Layer.provide(cluster), Layer.provide(pg))
  const out = await Effect.runPromise(
    Effect.gen(function* () {
      const r1 = yield* Greet.execute({ id: "x1", name: "ann" })
      const r2 = yield* Greet.execute({ id: "x1", name: "ann" })
      return [r1, r2]
    }).pipe(Effect.provide(layer), Effect.scoped)
  )
  expect(out).toEqual(["hello ann", "hello ann"])
  expect(calls).toBe(1)
}, 60_000)
