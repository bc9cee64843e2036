import { PgClient } from "@effect/sql-pg"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { createRuntime, Tools } from "lambdagent"
import { type ClusterClient, connect } from "lambdagent/cluster"
import { afterAll, afterEach, describe, expect, test } from "vitest"
import { dropTables, freshPrefix, testPgUrl } from "./test-support.ts"

const pg = testPgUrl

const open: Array<ClusterClient> = []
const join = async (options: Parameters<typeof connect>[0]) => {
  const client = await connect({ pg, ...options })
  open.push(client)
  return client
}
const leave = async (client: ClusterClient) => {
  open.splice(open.indexOf(client), 1)
  await client.close()
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()))
})
afterAll(() => dropTables())

const shout = Tools.define({ name: "shout", description: "Upper-case text.", run: (s: string) => s.toUpperCase() })

describe("cluster runs on PostgreSQL", () => {
  test("a run gives the result createRuntime gives, with the trace and counters of the run", async () => {
    const term = { compose: [{ llm: { system: "Repeat." } }, { tool: "shout" }] }
    const cluster = await join({ prefix: freshPrefix(), tools: [shout] })
    const { id, created } = await cluster.submit(term, "hello cluster")
    expect(created).toBe(true)
    const ended = await cluster.result(id, { wait: true })
    const runtime = createRuntime({ tools: [shout] })
    const local = await runtime.run(term, "hello cluster")
    await runtime.close()
    expect(ended.state).toBe("done")
    expect(ended.outcome?.result).toEqual(local.result)
    expect(ended.outcome?.stats).toMatchObject({ llmCalls: 1, toolCalls: 1, steps: local.stats.steps })
    expect(ended.outcome?.trace.map((e) => (e as { kind: string }).kind)).toEqual(local.trace.map((e) => e.kind))
    expect((await cluster.list()).map((s) => s.id)).toEqual([id])
  })

  test("submitting the same id twice gives one run, whose tool is called once", async () => {
    let calls = 0
    const counting = Tools.define({ name: "count", description: "Count calls.", run: (s: string) => `${s} #${++calls}` })
    const cluster = await join({ prefix: freshPrefix(), tools: [counting] })
    const first = await cluster.submit({ tool: "count" }, "x", { id: "same-run" })
    const second = await cluster.submit({ tool: "count" }, "x", { id: "same-run" })
    expect([first.created, second.created]).toEqual([true, false])
    const ended = await cluster.result("same-run", { wait: true })
    expect(ended.outcome?.result).toBe("x #1")
    expect(calls).toBe(1)
    expect(await cluster.list()).toHaveLength(1)
  })

  test("a table prefix that is not a plain identifier is refused before PostgreSQL is touched", async () => {
    for (const prefix of ["runs; DROP TABLE users", "x".repeat(41), "9lives", ""]) {
      await expect(connect({ pg, prefix })).rejects.toMatchObject({ _tag: "ClusterError", reason: "Invalid" })
    }
  })

  test("an invalid term is refused before anything is stored", async () => {
    const cluster = await join({ prefix: freshPrefix() })
    await expect(cluster.submit({ nonsense: 1 }, "x", { id: "bad" })).rejects.toMatchObject({ _tag: "TermParseError" })
    await expect(cluster.status("bad")).rejects.toMatchObject({ _tag: "ClusterError", reason: "NotFound" })
    expect(await cluster.list()).toEqual([])
  })

  test("a run executed again by another process makes no completed call again", async () => {
    const prefix = freshPrefix()
    const counted = { first: 0, second: 0 }
    let reached!: () => void
    const gateReached = new Promise<void>((resolve) => (reached = resolve))
    const firstProcess = await join({
      prefix,
      tools: [
        Tools.define({ name: "count", description: "Count.", run: (s: string) => `${s}+${++counted.first}` }),
        // the first process never finishes this call: it leaves the cluster in the middle of it
        Tools.define({ name: "gate", description: "Wait.", run: () => (reached(), new Promise<string>(() => {})) })
      ]
    })
    const term = { compose: [{ tool: "count" }, { tool: "gate" }] }
    const { id } = await firstProcess.submit(term, "in", { id: "moving-run" })
    await gateReached
    expect(counted.first).toBe(1)
    await leave(firstProcess)
    const secondProcess = await join({
      prefix,
      tools: [
        Tools.define({ name: "count", description: "Count.", run: (s: string) => `${s}+${++counted.second}` }),
        Tools.define({ name: "gate", description: "Pass.", run: (s: string) => `${s} passed` })
      ]
    })
    const ended = await secondProcess.result(id, { wait: true })
    expect(ended.state).toBe("done")
    expect(ended.outcome?.result).toBe("in+1 passed")
    expect(counted).toEqual({ first: 1, second: 0 })
    // one trace for the run: the count call made by the first process, the gate by the second
    expect(ended.outcome?.trace.filter((e) => (e as { kind: string }).kind === "tool")).toHaveLength(2)
  })

  test("budgets hold for the whole run: the calls made before it moved count after", async () => {
    const prefix = freshPrefix()
    let reached!: () => void
    const gateReached = new Promise<void>((resolve) => (reached = resolve))
    const count = Tools.define({ name: "count", description: "Count.", run: (s: string) => `${s}+` })
    const firstProcess = await join({
      prefix,
      tools: [count, Tools.define({ name: "gate", description: "Wait.", run: () => (reached(), new Promise<string>(() => {})) })]
    })
    // three tool calls on a budget of two: the second process makes only two of them itself
    const { id } = await firstProcess.submit({ compose: [{ tool: "count" }, { tool: "gate" }, { tool: "count" }] }, "in", { budget: { toolCalls: 2 } })
    await gateReached
    await leave(firstProcess)
    const secondProcess = await join({ prefix, tools: [count, Tools.define({ name: "gate", description: "Pass.", run: (s: string) => s })] })
    const ended = await secondProcess.result(id, { wait: true })
    expect(ended.state).toBe("failed")
    expect(ended.error?.kind).toBe("BudgetExceeded")
  })

  test("cancel interrupts a run in the middle of a call; it ends cancelled and makes no further call", async () => {
    let reached!: () => void
    const gateReached = new Promise<void>((resolve) => (reached = resolve))
    let interrupted!: () => void
    const gateInterrupted = new Promise<void>((resolve) => (interrupted = resolve))
    let after = 0
    const cluster = await join({
      prefix: freshPrefix(),
      tools: [
        Tools.define({
          name: "gate",
          description: "Wait until aborted.",
          run: (_: string, context) =>
            new Promise<string>(() => {
              context.signal?.addEventListener("abort", () => interrupted())
              reached()
            })
        }),
        Tools.define({ name: "after", description: "Count.", run: (s: string) => `${s} ${++after}` })
      ]
    })
    const { id } = await cluster.submit({ compose: [{ tool: "gate" }, { tool: "after" }] }, "x")
    await gateReached
    const cancelled = await cluster.cancel(id)
    expect(cancelled.state).toBe("cancelled")
    await gateInterrupted
    expect((await cluster.result(id, { wait: true })).state).toBe("cancelled")
    expect(after).toBe(0)
    // a run that has ended is left as it is
    expect((await cluster.cancel(id)).state).toBe("cancelled")
    await expect(cluster.cancel("no-such-run")).rejects.toMatchObject({ reason: "NotFound" })
  })

  test("result with a timeout gives up on a run that does not end", async () => {
    let reached!: () => void
    const gateReached = new Promise<void>((resolve) => (reached = resolve))
    const cluster = await join({
      prefix: freshPrefix(),
      tools: [Tools.define({ name: "gate", description: "Wait.", run: () => (reached(), new Promise<string>(() => {})) })]
    })
    const { id } = await cluster.submit({ tool: "gate" }, "x")
    await gateReached
    await expect(cluster.result(id, { wait: true, timeoutMs: 200 })).rejects.toMatchObject({ reason: "Timeout" })
    expect((await cluster.status(id)).state).toBe("running")
    await cluster.cancel(id)
  })

  test("a run naming a model this runner cannot make fails with the reason, and the runner goes on", async () => {
    const cluster = await join({ prefix: freshPrefix(), tools: [shout] })
    const { id } = await cluster.submit({ llm: { system: "Repeat." } }, "x", { model: "nosuchprovider:model" })
    const failed = await cluster.result(id, { wait: true })
    expect(failed.state).toBe("failed")
    expect(failed.error?.message).toContain("nosuchprovider")
    const next = await cluster.submit({ tool: "shout" }, "still here")
    expect((await cluster.result(next.id, { wait: true })).outcome?.result).toBe("STILL HERE")
  })

  test("tables of another schema version: the process refuses them", async () => {
    const prefix = freshPrefix()
    await leave(await join({ prefix }))
    await Effect.runPromise(
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        yield* sql`UPDATE ${sql(`${prefix}_meta`)} SET value = '999' WHERE key = 'schema_version'`
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(pg) })))
    )
    await expect(connect({ pg, prefix })).rejects.toMatchObject({
      _tag: "ClusterError",
      reason: "SchemaVersion",
      message: expect.stringContaining("version 999")
    })
  })

  test("a run waiting on a person is answered later, with no process held", async () => {
    const cluster = await join({ prefix: freshPrefix(), tools: [shout] })
    const { id } = await cluster.submit({ compose: [{ ask: "Which city?" }, { tool: "shout" }] }, "trip")
    let status = await cluster.status(id)
    while (status.state !== "waiting") {
      await new Promise((resolve) => setImmediate(resolve))
      status = await cluster.status(id)
    }
    expect(status.question?.question).toBe("Which city?")
    await cluster.answer(id, "paris")
    const ended = await cluster.result(id, { wait: true })
    expect(ended.outcome?.result).toBe("PARIS")
  })

  test("PostgreSQL unreachable: one clear error naming the URL without its password", async () => {
    await expect(connect({ pg: "postgres://app:s3cret@127.0.0.1:1/test", prefix: freshPrefix() })).rejects.toMatchObject({
      _tag: "ClusterError",
      reason: "Unavailable",
      message: expect.stringContaining("postgres://app:***@127.0.0.1:1/test")
    })
  })
})

describe("examples/cluster.ts", () => {
  test("runs: one run for two submissions, a question answered later, the tool called once", async () => {
    process.env.LAMBDAGENT_PG_URL ??= pg
    const { main } = await import("../../examples/cluster.ts")
    expect(await main(freshPrefix())).toEqual({
      created: [true, false],
      question: "Approve this plan, or say what to change.",
      result: "published: Approved: 3 days in Rome, with the Vatican",
      published: 1
    })
  })
})
