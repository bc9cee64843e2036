import * as fs from "node:fs/promises"
import * as path from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { chunkSource, ingest, scanSource } from "./ingest.ts"
import { isRagError, type RagError, type RagErrorReason } from "./RagError.ts"
import { fileModesUnavailable, ignoresFileModes } from "../../test/fixtures/fileModes.ts"
import { repoRoot, runScript, tempDir, writeTree } from "./test/helpers.ts"

if (fileModesUnavailable !== undefined) console.warn(`[ingest tests] skipping the unreadable file test: ${fileModesUnavailable}`)

const rejectsWith = async (p: Promise<unknown>, reason: RagErrorReason): Promise<RagError> => {
  try {
    await p
  } catch (e) {
    assert.isTrue(isRagError(e), `expected a RagError, got ${String(e)}`)
    const error = e as RagError
    assert.strictEqual(error.reason, reason, error.message)
    return error
  }
  return assert.fail(`expected a ${reason} rejection`)
}

describe("ingest", () => {
  let dir: string
  let cleanup: () => Promise<void>
  beforeEach(async () => {
    ;({ cleanup, dir } = await tempDir())
  })
  afterEach(() => cleanup())

  it("recurses into directories, reads txt/md/json and skips the rest with a note", async () => {
    await writeTree(dir, {
      "kb/a.md": "# A\n\nAlpha text.",
      "kb/sub/b.txt": "Bravo text.",
      "kb/sub/deeper/c.json": JSON.stringify({ charlie: "text" }),
      "kb/logo.png": "not text",
      "kb/.hidden.md": "# secret",
      "kb/node_modules/x.md": "# dependency"
    })
    const result = await ingest("kb", { baseDir: dir })
    assert.deepStrictEqual(result.files, ["kb/a.md", "kb/sub/b.txt", "kb/sub/deeper/c.json"])
    assert.deepStrictEqual(
      result.chunks.map((c) => c.text),
      ["# A\n\nAlpha text.", "Bravo text.", "charlie: text"]
    )
    assert.deepStrictEqual(
      result.chunks.map((c) => c.metadata.format),
      ["markdown", "text", "json"]
    )
    assert.deepStrictEqual(result.skipped.map((s) => `${s.path}: ${s.reason}`).sort(), [
      "kb/.hidden.md: hidden entry",
      "kb/logo.png: unsupported file type .png",
      "kb/node_modules: node_modules is not ingested"
    ])
  })

  it("fails clearly for a missing source and for an explicit unsupported file", async () => {
    const missing = await rejectsWith(ingest("nope/none", { baseDir: dir }), "SourceNotFound")
    assert.include(missing.message, "no such file or directory: nope/none")
    await writeTree(dir, { "pic.png": "x" })
    const unsupported = await rejectsWith(ingest("pic.png", { baseDir: dir }), "InvalidSource")
    assert.include(unsupported.message, "unsupported file type .png")
    const url = await rejectsWith(ingest("https://example.com/kb", { baseDir: dir }), "InvalidSource")
    assert.include(url.message, "fetch https://example.com/kb into a directory first")
  })

  it("caps file size with a clear error, or skips the file when asked", async () => {
    await writeTree(dir, { "big/huge.txt": "word ".repeat(3000), "big/small.txt": "tiny file" })
    const error = await rejectsWith(ingest("big", { baseDir: dir, maxFileBytes: 10_000 }), "FileTooLarge")
    assert.strictEqual(error.message, "big/huge.txt is 15000 bytes, above the limit of 10000 bytes (raise maxFileBytes or split the file)")
    const skipped = await ingest("big", { baseDir: dir, maxFileBytes: 10_000, onFileError: "skip" })
    assert.deepStrictEqual(skipped.files, ["big/small.txt"])
    assert.deepStrictEqual(
      skipped.chunks.map((c) => c.text),
      ["tiny file"]
    )
    assert.strictEqual(skipped.skipped[0]?.path, "big/huge.txt")
  })

  it("reports invalid JSON inside a directory", async () => {
    await writeTree(dir, { "j/ok.json": "[1,2]", "j/broken.json": '{"a":' })
    const error = await rejectsWith(ingest("j", { baseDir: dir }), "InvalidSource")
    assert.include(error.message, "j/broken.json is not valid JSON")
  })

  it("streams chunks file by file and fingerprints the source", async () => {
    await writeTree(dir, { "s/one.txt": "first", "s/two.txt": "second" })
    const { chunks, scan } = await chunkSource("s", { baseDir: dir })
    const seen: Array<string> = []
    for await (const c of chunks) seen.push(c.id)
    assert.deepStrictEqual(seen, ["s/one.txt#0", "s/two.txt#0"])
    const again = await scanSource("s", { baseDir: dir })
    assert.strictEqual(again.fingerprint, scan.fingerprint)
    await fs.writeFile(path.join(dir, "s/two.txt"), "second, now longer")
    assert.notStrictEqual((await scanSource("s", { baseDir: dir })).fingerprint, scan.fingerprint)
  })

  it("does not loop on a symbolic link cycle", async () => {
    await writeTree(dir, { "loop/a.txt": "alpha" })
    await fs.symlink(path.join(dir, "loop"), path.join(dir, "loop", "again"))
    const result = await ingest("loop", { baseDir: dir })
    assert.deepStrictEqual(result.files, ["loop/a.txt"])
    assert.include(
      result.skipped.map((s) => s.reason),
      "directory already visited (link cycle)"
    )
  })

  it.skipIf(fileModesUnavailable !== undefined)("reports an unreadable (chmod 000) file and directory as SourceUnreadable", async () => {
    await writeTree(dir, { "locked/secret.md": "# Secret\n\nhidden", "locked/open.txt": "visible", "closed/x.txt": "x" })
    await fs.chmod(path.join(dir, "locked/secret.md"), 0o000)
    await fs.chmod(path.join(dir, "closed"), 0o000)
    if (!ignoresFileModes()) {
      const file = await rejectsWith(ingest("locked", { baseDir: dir }), "SourceUnreadable")
      assert.include(file.message, "permission denied: cannot read locked/secret.md")
      const folder = await rejectsWith(ingest("closed", { baseDir: dir }), "SourceUnreadable")
      assert.include(folder.message, "permission denied: cannot list closed")
      const skipped = await ingest("locked", { baseDir: dir, onFileError: "skip" })
      assert.deepStrictEqual(skipped.files, ["locked/open.txt"])
      return
    }
    // root reads anything: run the same checks in a child process that obeys file modes.
    const ingestUrl = new URL("./ingest.ts", import.meta.url).href
    const script = `
      import { ingest } from ${JSON.stringify(ingestUrl)}
      const out = []
      for (const [src, opts] of [["locked", {}], ["closed", {}], ["locked", { onFileError: "skip" }]]) {
        try {
          const r = await ingest(src, { baseDir: ${JSON.stringify(dir)}, ...opts })
          out.push({ ok: r.files })
        } catch (e) {
          out.push({ reason: e.reason, message: e.message })
        }
      }
      console.log(JSON.stringify(out))
    `
    const run = await runScript(script, { obeyFileModes: true, cwd: repoRoot })
    assert.strictEqual(run.code, 0, run.stderr)
    const [file, folder, skipped] = JSON.parse(run.stdout.trim().split("\n").pop()!) as Array<{
      reason?: string
      message?: string
      ok?: Array<string>
    }>
    assert.strictEqual(file?.reason, "SourceUnreadable")
    assert.include(file?.message, "permission denied: cannot read locked/secret.md")
    assert.strictEqual(folder?.reason, "SourceUnreadable")
    assert.include(folder?.message, "permission denied: cannot list closed")
    assert.deepStrictEqual(skipped?.ok, ["locked/open.txt"])
  })
})
