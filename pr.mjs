import { z } from "zod"
import { createRuntime, Scripted, Term, Tools } from "./dist/index.js"
const add = Tools.define({ name: "add", description: "Add two numbers.", input: z.object({ a: z.number(), b: z.number() }), run: ({ a, b }) => a + b })
const runtime = createRuntime({ model: Scripted.fixed("{\"tool\":\"add\",\"args\":{\"a\":1,\"b\":2}}"), tools: [add], trace: "agent" })
const react = Term.react({ think: Term.llm({ system: "Use tools." }), tools: ["add"], maxSteps: 20 })
for (let i = 0; i < 50; i++) await runtime.run(react, "start")
const t = performance.now()
for (let i = 0; i < 300; i++) await runtime.run(react, "start")
console.log(((performance.now() - t) / 300 / 20 * 1000).toFixed(1), "µs/step")
await runtime.close()
