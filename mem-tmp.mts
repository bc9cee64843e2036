import { Evaluator, Term } from "/work/wt-deep/src/index.ts"
const depth = Number(process.argv[2] ?? 1_000_000)
const shape = process.argv[3] ?? "add"
const text = shape === "add" ? '{"add":['.repeat(depth) + "1" + ",1]}".repeat(depth) : "[".repeat(depth) + "1" + "]".repeat(depth)
const bytes = Buffer.byteLength(text)
globalThis.gc?.()
const base = process.memoryUsage()
const baseRss = process.resourceUsage().maxRSS * 1024
const t0 = performance.now()
const term = Term.parseText(text)
const t1 = performance.now()
const afterParse = process.memoryUsage()
const peakParse = process.resourceUsage().maxRSS * 1024
const value = Evaluator.evaluate(term, { budget: { depth: depth * 4, steps: depth * 10, memory: 2 ** 31 } })
const t2 = performance.now()
const peak = process.resourceUsage().maxRSS * 1024
const mb = (n: number) => (n / 2 ** 20).toFixed(1)
console.log(JSON.stringify({ depth, shape, textMB: mb(bytes), parseMs: (t1 - t0).toFixed(0), evalMs: (t2 - t1).toFixed(0), heapAfterParseMB: mb(afterParse.heapUsed - base.heapUsed), peakRssParseMB: mb(peakParse - baseRss), peakRssMB: mb(peak - baseRss), ratio: ((peak - baseRss) / bytes).toFixed(1), value: typeof value === "number" ? value : "list" }))
