/**
 * Shared fixtures for the rag plugin tests.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert } from "vitest"
import type { Chunk } from "../chunk.ts"
import { obeyingFileModes } from "../../../test/fixtures/fileModes.ts"
import { isRagError, type RagErrorReason } from "../RagError.ts"

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
export const examplesDir = path.join(repoRoot, "examples", "rag")

/** A fresh temporary directory, removed by the returned function. */
export const tempDir = async (prefix = "rag-test-"): Promise<{ dir: string; cleanup: () => Promise<void> }> => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix))
  return {
    dir,
    cleanup: async () => {
      await fs.chmod(dir, 0o755).catch(() => undefined)
      await fs.rm(dir, { recursive: true, force: true })
    }
  }
}

/** Write files (path → content) under dir, creating folders. */
export const writeTree = async (dir: string, files: Record<string, string>): Promise<void> => {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(dir, rel)
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, content)
  }
}

export const chunk = (source: string, index: number, text: string): Chunk => ({
  id: `${source}#${index}`,
  text,
  metadata: { source, format: "text", index, start: 0, end: text.length }
})

/**
 * Run a TypeScript snippet in a child Node process (through tsx); with `obeyFileModes`, one that
 * root's file-mode override does not apply to (see test/fixtures/fileModes.ts).
 * Resolves with its exit code and output; kills it after `timeoutMs`.
 */
export const runScript = (
  code: string,
  options: { readonly obeyFileModes?: boolean; readonly cwd?: string; readonly timeoutMs?: number } = {}
): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const node: [string, Array<string>] = [process.execPath, ["--import", "tsx", "--input-type=module", "-e", code]]
    const [command, args] = options.obeyFileModes === true ? obeyingFileModes(...node) : node
    const child = spawn(command, args, {
      cwd: options.cwd ?? repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, HOME: os.tmpdir() }
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30_000)
    child.on("error", (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** recall@k of an index over the labelled questions in examples/rag/questions.json. */
export const recallAt = async (query: (q: string) => Promise<ReadonlyArray<{ chunk: Chunk }>>): Promise<{ recall: number; misses: Array<string> }> => {
  const questions = JSON.parse(await fs.readFile(path.join(examplesDir, "questions.json"), "utf8")) as Array<{
    question: string
    source: string
  }>
  let found = 0
  const misses: Array<string> = []
  for (const q of questions) {
    const hits = await query(q.question)
    if (hits.some((h) => path.basename(h.chunk.metadata.source) === q.source)) found++
    else misses.push(`${q.question} → ${hits.map((h) => path.basename(h.chunk.metadata.source)).join(", ")}`)
  }
  return { recall: found / questions.length, misses }
}

/** Awaits `p`, which must reject with a RagError of `reason`; returns its message. */
export const expectReason = async (p: Promise<unknown>, reason: RagErrorReason): Promise<string> => {
  try {
    await p
  } catch (e) {
    assert.isTrue(isRagError(e), String(e))
    if (isRagError(e)) {
      assert.strictEqual(e.reason, reason, e.message)
      return e.message
    }
  }
  return assert.fail(`expected ${reason}`)
}
