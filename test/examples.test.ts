import { describe, expect, it, vi } from "vitest"
import * as a2a from "../examples/a2a.ts"
import * as approval from "../examples/approval.ts"
import * as chain from "../examples/chain.ts"
import * as channelsResume from "../examples/channels-resume.ts"
import * as checkpoint from "../examples/checkpoint.ts"
import * as guard from "../examples/guard.ts"
import * as memory from "../examples/memory.ts"
import * as offline from "../examples/offline.ts"
import * as parallel from "../examples/parallel.ts"
import * as providerPlugin from "../examples/provider-plugin.ts"
import * as reactTool from "../examples/react-tool.ts"
import * as replay from "../examples/replay.ts"
import * as router from "../examples/router.ts"
import * as simple from "../examples/simple.ts"
import * as storePlugin from "../examples/store-plugin.ts"
import * as structured from "../examples/structured.ts"

describe("examples run offline", () => {
  it("simple", async () => {
    expect(await simple.main()).toBe("Summary: Lambda terms make agents inspectable, co")
  })
  it("chain", async () => {
    expect(await chain.main()).toEqual({ result: "Write(Analyze(Extract(report)))", stages: ["extract", "analyze", "draft"] })
  })
  it("checkpoint and resume", async () => {
    expect(await checkpoint.main()).toEqual({
      result: "Write(Analyze(Extract(report)))",
      callsAfterResume: 1,
      recorded: 3,
      replayed: "Write(Analyze(Extract(report)))"
    })
  })
  it("channels: a pipeline resumed inside its scope, then replayed offline", async () => {
    const result = ["Draft(the topic)", "Review(Draft(the topic))", "Edit(Review(Draft(the topic)))"]
    expect(await channelsResume.main()).toEqual({ result, askedAfterResume: ["Edit."], replayed: result })
  })
  it("approval: a person in the loop", async () => {
    expect(await approval.main()).toEqual({
      question: "Approve this plan, or say what to change.",
      result: "Carry out the approved plan. → Approved, but add the Vatican.",
      calls: ["Draft a plan.", "Carry out the approved plan."]
    })
  })
  it("offline replay", async () => {
    expect(await replay.main()).toEqual({
      recorded: "The answer is 42.",
      replayed: "The answer is 42.",
      toolRunsInReplay: 0,
      divergence: "request 1: an LLM call (think)"
    })
  })
  it("router", async () => {
    expect(await router.main()).toEqual([
      "You are a programmer. → fix this function",
      "You are a mathematician. → what is 2 + 2",
      "You are a helpful assistant. → hello there"
    ])
  })
  it("parallel", async () => {
    expect(await parallel.main()).toEqual({ result: "<Synthesize>", mostCallsAtOnce: 2 })
  })
  it("react with a host tool", async () => {
    expect(await reactTool.main()).toEqual({ answer: "The answer is 42.", toolCalls: 1 })
  })
  it("structured output", async () => {
    expect(await structured.main()).toEqual({
      born: 1815,
      calls: 2,
      problem: "$.born: missing (expected number)",
      person: { name: "Alan Turing", born: 1912 }
    })
  })
  it("guard", async () => {
    expect(await guard.main()).toEqual({ result: '{"city":"Paris"}', attempts: 2 })
  })
  it("two agents over A2A", async () => {
    expect(await a2a.main()).toEqual({ answer: "Your plan: Day 1: Colosseum. Day 2: Vatican.", skills: ["Plan a trip"] })
  })
  it("memory", async () => {
    expect(await memory.main()).toEqual(["Your name is Ada.", "Your name is Ada.", "I don't know your name yet."])
  })
  it("a YAML agent whose provider has no key, on the offline model", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "")
    try {
      expect(await offline.main()).toEqual({
        value: "Lambda terms make agents inspectable.",
        notices: ["[anthropic: no ANTHROPIC_API_KEY is set; running on the offline model scripted:echo. For a real model: export ANTHROPIC_API_KEY=….]"]
      })
    } finally {
      vi.unstubAllEnvs()
    }
  })
  it("a plugin that adds a provider", async () => {
    expect(await providerPlugin.main()).toEqual({ value: "caesar: Uryyb, jbeyq", streamed: "caesar: nop" })
  })
  it("a plugin that adds a memory store", async () => {
    expect(await storePlugin.main()).toEqual({ replies: ["Nice to meet you.", "I remember you."], remembered: 2 })
  })
})
