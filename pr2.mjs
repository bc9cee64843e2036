import { Effect, Layer } from "effect"
import { z } from "zod"
import { Agent, Evaluator, LanguageModel, Scripted, Term, Tools } from "./dist/index.js"
const add = Tools.define({ name: "add", description: "Add two numbers.", input: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => a + b })
const text = "{\"tool\":\"add\",\"args\":{\"a\":1,\"b\":2}}"
const react = Term.react({ think: Term.llm({ system: "Use tools." }), tools: ["add"], maxSteps: 20 })
// 1) machine only, oracles answered synchronously
let t = performance.now()
for (let i = 0; i < 2000; i++) { const ex = Evaluator.startApply(react, "start", { trace: "agent" }); let s = ex.next(); while (s._tag === "Suspended") s = ex.resume(s.request.kind === "llm" ? text : 3) }
console.log("machine only", ((performance.now() - t) / 2000 / 20 * 1000).toFixed(2), "µs/step")
// 2) Agent.run via Effect.runPromise
const layer = Layer.mergeAll(Layer.succeed(LanguageModel.LanguageModel, Scripted.fixed(text)), Tools.layer([add]))
const prog = Agent.run(react, "start").pipe(Effect.provide(layer))
for (let i = 0; i < 100; i++) await Effect.runPromise(prog)
t = performance.now()
for (let i = 0; i < 500; i++) await Effect.runPromise(prog)
console.log("Agent.run", ((performance.now() - t) / 500 / 20 * 1000).toFixed(2), "µs/step")
t = performance.now()
for (let i = 0; i < 500; i++) Effect.runSync(prog)
console.log("Agent.run sync", ((performance.now() - t) / 500 / 20 * 1000).toFixed(2), "µs/step")
