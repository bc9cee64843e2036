import { describe, expect, it } from "vitest"
import { programCacheFile } from "./programCache.ts"

describe("a program's code cache file", () => {
  const stat = { size: 734_395, ino: 42, ctimeMs: 1_765_000_000_000.5 }
  const file = (changes: Partial<typeof stat> = {}, path = "/app/dist/cli/yaml-main.cjs", command = "lint", node = "v22.13.0") =>
    programCacheFile("/cache", path, command, { ...stat, ...changes }, node)

  it("is named by the program and the command, under the cache directory", () => {
    expect(file()).toMatch(/^\/cache\/lambdagent-programs\/yaml-main-lint-[0-9a-f]{8}\.bin$/)
    expect(file()).toBe(file())
    expect(file({}, "/app/dist/cli/mcp-main.cjs", "mcp")).toMatch(/\/mcp-main-mcp-[0-9a-f]{8}\.bin$/)
    expect(file({}, "/app/dist/cli/yaml-main.cjs", "../../x")).toMatch(/\/yaml-main-______x-[0-9a-f]{8}\.bin$/)
  })

  it("changes with every copy of the bundle and with the Node version", () => {
    const variants = [
      file(),
      file({ size: 734_396 }),
      file({ ino: 43 }),
      file({ ctimeMs: 1_765_000_000_001 }),
      file({}, "/other/dist/cli/yaml-main.cjs"),
      file({}, undefined, "lint", "v24.0.0")
    ]
    expect(new Set(variants).size).toBe(variants.length)
  })
})
