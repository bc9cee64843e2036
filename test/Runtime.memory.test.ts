import { describe, expect, it } from "vitest"
import { createRuntime, Term } from "lambdagent"

describe("Runtime.memory", () => {
  it("lists a session's memory entries newest first and clears them, leaving other namespaces alone", async () => {
    const runtime = createRuntime()
    const agent = Term.memory({ agent: Term.llm({ system: "m", conversation: false }), size: 5, ttl: 0, scope: "session" })
    const global = Term.memory({ agent: Term.llm({ system: "g", conversation: false }), size: 5, ttl: 0, scope: "global" })
    await runtime.run(agent, "first", { session: "alice" })
    await runtime.run(agent, "second", { session: "alice" })
    await runtime.run(agent, "other", { session: "bob" })
    await runtime.run(global, "shared")
    const alice = runtime.memory("alice")
    expect(alice.namespace).toBe("session:alice")
    const entries = await alice.list()
    expect(entries.map((e) => JSON.parse(e.value).input)).toEqual(["second", "first"])
    expect(await alice.list(1)).toHaveLength(1)
    expect((await runtime.memory({ kind: "global" }).list()).map((e) => JSON.parse(e.value).input)).toEqual(["shared"])
    expect(runtime.memory().namespace).toBe("session:default")
    await alice.clear()
    expect(await alice.list()).toEqual([])
    expect(await runtime.memory("bob").list()).toHaveLength(1)
    await runtime.close()
  })
})
