/**
 * Tiny benchmark harness: median of several timed runs after a warm-up, printed as aligned tables.
 */
import type { ChildProcess } from "node:child_process"

export interface Measurement {
  readonly medianMs: number
  readonly minMs: number
  readonly runs: number
  /** The very first call, before any warm-up: the cold figure (the code's first run in this process). */
  readonly firstMs: number
}

/**
 * Median time of one call. Short calls are repeated within each sample (at least ~20 ms per
 * sample) so timer resolution and JIT warm-up do not dominate.
 */
export const measure = (fn: () => unknown, runs = 7, warmup = 2): Measurement => {
  const first = performance.now()
  fn()
  const firstMs = performance.now() - first
  for (let i = 1; i < warmup; i++) fn()
  let reps = 1
  for (;;) {
    const start = performance.now()
    for (let i = 0; i < reps; i++) fn()
    if (performance.now() - start >= 20 || reps >= 1 << 20) break
    reps *= 2
  }
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    for (let r = 0; r < reps; r++) fn()
    times.push((performance.now() - start) / reps)
  }
  times.sort((a, b) => a - b)
  return { medianMs: times[Math.floor(times.length / 2)]!, minMs: times[0]!, runs, firstMs }
}

export const measureAsync = async (fn: () => Promise<unknown>, runs = 7, warmup = 2): Promise<Measurement> => {
  const first = performance.now()
  await fn()
  const firstMs = performance.now() - first
  for (let i = 1; i < warmup; i++) await fn()
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    await fn()
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  return { medianMs: times[Math.floor(times.length / 2)]!, minMs: times[0]!, runs, firstMs }
}

export const table = (title: string, header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): void => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  console.log(`\n${title}`)
  console.log(line(header))
  console.log(widths.map((w) => "-".repeat(w)).join("  "))
  for (const row of rows) console.log(line(row))
}

export const fmt = (n: number, digits = 1): string => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })

/** Stop child processes (SIGTERM, then SIGKILL after 2 s) and wait until they have exited. */
export const stopChildren = async (children: Iterable<ChildProcess>): Promise<void> => {
  await Promise.all(
    [...children].map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined
      return new Promise<void>((resolve) => {
        const force = setTimeout(() => child.kill("SIGKILL"), 2_000)
        child.once("exit", () => {
          clearTimeout(force)
          resolve()
        })
        child.kill("SIGTERM")
      })
    })
  )
}
