/**
 * The memory a large term takes to read, compile and run, against the size of its JSON text:
 * measured in a child process (its resident set's high-water mark), one term per process.
 */
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const tsx = fileURLToPath(new URL("../node_modules/tsx/dist/esm/index.mjs", import.meta.url))
const worker = fileURLToPath(new URL("./fixtures/termMemory.ts", import.meta.url))

interface Measured {
  readonly textBytes: number
  readonly peakGrowth: number
  readonly value?: unknown
}

const measure = (shape: "deep" | "wide", n: number, phase: "read" | "compile" | "run"): Promise<Measured & { readonly ratio: number }> =>
  new Promise((resolve, reject) =>
    execFile(process.execPath, ["--expose-gc", "--import", tsx, worker, shape, String(n), phase], { maxBuffer: 64 * 2 ** 20 }, (error, stdout, stderr) => {
      if (error !== null) return reject(new Error(`${error.message}\n${stderr}`))
      const measured = JSON.parse(stdout) as Measured
      resolve({ ...measured, ratio: measured.peakGrowth / measured.textBytes })
    })
  )

// the high-water mark is read and reset through /proc
describe.skipIf(!existsSync("/proc/self/clear_refs"))("memory for a large term, as a multiple of its JSON text", () => {
  it("reading a term nested a million levels deep takes at most 20 times its text", async () => {
    const { textBytes, ratio } = await measure("deep", 1_000_000, "read")
    expect(textBytes).toBe(12_000_001)
    expect(ratio).toBeLessThanOrEqual(20)
  })

  it("reading a list of 300,000 additions takes at most 20 times its text, and so do compiling and running it", async () => {
    for (const phase of ["read", "compile", "run"] as const) {
      const { ratio, value } = await measure("wide", 300_000, phase)
      expect({ phase, within: ratio <= 20 }).toEqual({ phase, within: true })
      if (phase === "run") expect((value as ReadonlyArray<number>).slice(-2)).toEqual([299_999, 300_000])
    }
  })

  it("compiling the million-level term adds its code and little else; running it adds the machine's frames", async () => {
    // measured: reading 12×, with the code 23×, running it 36× (each frame of the machine is a few words)
    const compiled = await measure("deep", 1_000_000, "compile")
    expect(compiled.ratio).toBeLessThanOrEqual(26)
    const run = await measure("deep", 1_000_000, "run")
    expect(run.value).toBe(1_000_001)
    expect(run.ratio).toBeLessThanOrEqual(40)
  })
})
