import * as Term from "./src/Term.ts"
const n = 1_000_000
const text = `{"app":{"func":${'{"compose":['.repeat(n)}{"lam":"x","body":{"add":[{"var":"x"},1]}}${"]}".repeat(n)},"arg":1}}`
text.charCodeAt(text.length - 1)
;(globalThis as any).gc()
const h0 = process.memoryUsage()
const t = Term.parseText(text)
const h1 = process.memoryUsage()
;(globalThis as any).gc()
const h2 = process.memoryUsage()
console.log(
  "heapUsed before",
  h0.heapUsed / 1e6,
  "after read",
  h1.heapUsed / 1e6,
  "after gc",
  h2.heapUsed / 1e6,
  "rss",
  h0.rss / 1e6,
  h1.rss / 1e6,
  h2.rss / 1e6,
  typeof t
)
