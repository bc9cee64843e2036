/**
 * Where a server keeps its paused runs (runs stopped at an `ask`, waiting for
 * `POST /runs/:id/resume`): in memory, or one file per run in a directory, so that they outlive
 * the process.
 *
 * @since 0.2.0
 * @module
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { CheckpointStore } from "lambdagent"

/**
 * A paused run as a server keeps it: its checkpoint and the session it ran in.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import type { PausedRun } from "./paused.ts"
 * const p: PausedRun = { checkpoint: {}, session: "alice" }
 * ```
 */
export interface PausedRun {
  readonly checkpoint: unknown
  readonly session?: string
}

/**
 * The paused runs of a server, by run id.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { memoryPausedRuns } from "./paused.ts"
 * const runs = memoryPausedRuns()
 * await runs.save("3f2a", { checkpoint: {} })
 * ```
 */
export interface PausedRuns {
  readonly save: (id: string, run: PausedRun) => Promise<void>
  /** The paused run of `id`, or `undefined` when there is none. */
  readonly load: (id: string) => Promise<PausedRun | undefined>
  readonly remove: (id: string) => Promise<void>
}

/**
 * A new run id: 128 random bits, in hex (only its holder can resume the run).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { newRunId } from "./paused.ts"
 * newRunId().length // 32
 * ```
 */
export const newRunId = (): string => randomBytes(16).toString("hex")

/** Ids this module made (hex), so that an id from a URL never names a path outside the directory. */
export const isRunId = (id: string): boolean => /^[0-9a-f]{32}$/.test(id)

/**
 * Paused runs in this process's memory: gone when it exits.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { memoryPausedRuns } from "./paused.ts"
 * const runs = memoryPausedRuns()
 * ```
 */
export const memoryPausedRuns = (): PausedRuns => {
  const runs = new Map<string, PausedRun>()
  return {
    save: async (id, run) => void runs.set(id, run),
    load: async (id) => runs.get(id),
    remove: async (id) => void runs.delete(id)
  }
}

/**
 * Paused runs as files `<id>.paused.json` in `directory` (created if missing), each written
 * atomically as checkpoint files are (`CheckpointStore.writeAtomically`: a temporary file,
 * `fsync`, `rename`, `fsync` of the directory): a crash never leaves a torn file.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { directoryPausedRuns } from "./paused.ts"
 * const runs = directoryPausedRuns("paused")
 * ```
 */
export const directoryPausedRuns = (directory: string): PausedRuns => {
  const fileOf = (id: string) => path.join(directory, `${id}.paused.json`)
  return {
    save: async (id, run) => {
      CheckpointStore.makeDirectory(directory)
      CheckpointStore.writeAtomically(directory, `${id}.paused.json`, JSON.stringify(run))
    },
    load: async (id) => {
      let text: string
      try {
        text = await fs.readFile(fileOf(id), "utf8")
      } catch (error) {
        if ((error as { code?: string }).code === "ENOENT") return undefined
        throw error
      }
      return JSON.parse(text) as PausedRun
    },
    remove: (id) => fs.rm(fileOf(id), { force: true })
  }
}
