import { describe, expect, it } from "vitest"
import { type CacheHost, compileCacheDirectories } from "./compileCache.ts"
import { plainVersionAnswer, VERSION, versionReport } from "./version.ts"

const linux: CacheHost = { env: {}, platform: "linux", home: "/home/ada", tmp: "/tmp", uid: 1000 }

describe("the compile cache's directory", () => {
  it("is the user's cache directory, then a directory of the user's own under the temporary one", () => {
    expect(compileCacheDirectories(linux)).toEqual([
      { path: "/home/ada/.cache/lambdagent/compile-cache", shared: false },
      { path: "/tmp/lambdagent-compile-cache-1000", shared: true }
    ])
    expect(compileCacheDirectories({ ...linux, env: { XDG_CACHE_HOME: "/var/cache/ada" } })[0]!.path).toBe("/var/cache/ada/lambdagent/compile-cache")
    // the XDG specification ignores a relative path
    expect(compileCacheDirectories({ ...linux, env: { XDG_CACHE_HOME: "cache" } })[0]!.path).toBe("/home/ada/.cache/lambdagent/compile-cache")
    expect(compileCacheDirectories({ ...linux, platform: "darwin", home: "/Users/ada" })[0]!.path).toBe("/Users/ada/Library/Caches/lambdagent/compile-cache")
  })

  it("falls back to the temporary directory alone without a home directory", () => {
    expect(compileCacheDirectories({ ...linux, home: "" })).toEqual([{ path: "/tmp/lambdagent-compile-cache-1000", shared: true }])
  })

  it("follows Node's own variables: NODE_COMPILE_CACHE names it, NODE_DISABLE_COMPILE_CACHE turns it off", () => {
    expect(compileCacheDirectories({ ...linux, env: { NODE_COMPILE_CACHE: "/srv/cache" } })).toEqual([{ path: "/srv/cache", shared: false }])
    expect(compileCacheDirectories({ ...linux, env: { NODE_DISABLE_COMPILE_CACHE: "1", NODE_COMPILE_CACHE: "/srv/cache" } })).toEqual([])
    // empty values count as unset
    expect(compileCacheDirectories({ ...linux, env: { NODE_DISABLE_COMPILE_CACHE: "", NODE_COMPILE_CACHE: "" } })).toHaveLength(2)
  })
})

describe("the launcher's own version answer", () => {
  it("answers the plain forms the way the programs do, and leaves every other command line to them", () => {
    expect(plainVersionAnswer(["node", "lambdagent", "version"])).toBe(`lambdagent ${VERSION}\nnode ${process.version}\n`)
    expect(plainVersionAnswer(["node", "lambdagent", "-v"])).toBe(`${VERSION}\n`)
    expect(plainVersionAnswer(["node", "lambdagent", "--version"])).toBe(`${VERSION}\n`)
    expect(plainVersionAnswer(["node", "lambdagent", "version", "--format", "json"])).toBeUndefined()
    expect(plainVersionAnswer(["node", "lambdagent", "lint", "version"])).toBeUndefined()
    expect(plainVersionAnswer(["node", "lambdagent"])).toBeUndefined()
    expect(JSON.parse(versionReport("json"))).toEqual({ lambdagent: VERSION, node: process.version })
  })
})
