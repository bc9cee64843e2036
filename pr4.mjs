import { Evaluator, Term } from "./dist/index.js"
const text = "{\"tool\":\"add\",\"args\":{\"a\":1,\"b\":2}}"
const react = Term.react({ think: Term.llm({ system: "Use tools." }), tools: ["add"], maxSteps: 20 })
let t = performance.now()
for (let i = 0; i < 20000; i++) { const ex = Evaluator.startApply(react, "start", { trace: "agent" }); let s = ex.next(); while (s._tag === "Suspended") s = ex.resume(s.request.kind === "llm" ? text : 3) }
console.log("machine only", ((performance.now() - t) / 20000 / 20 * 1000).toFixed(2), "µs/step")
