import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import * as lambdagent from "lambdagent"

const root = fileURLToPath(new URL("..", import.meta.url))

describe("package surface", () => {
  it("the root barrel exports every public core module", () => {
    const modules = readdirSync(`${root}/src`)
      .filter((f) => /^[A-Z]\w*\.ts$/.test(f))
      .map((f) => f.replace(/\.ts$/, ""))
    for (const name of modules) expect(Object.keys(lambdagent), name).toContain(name)
  })

  it("every export in package.json points at a built file", async () => {
    const pkg = JSON.parse(readFileSync(`${root}/package.json`, "utf8"))
    for (const [subpath, target] of Object.entries<Record<string, string> | string | null>(pkg.exports)) {
      if (target === null || typeof target === "string") continue
      const entry = target.default!
      const mod = await import(`${root}/${entry}`)
      expect(Object.keys(mod).length, subpath).toBeGreaterThan(0)
    }
  })
})
