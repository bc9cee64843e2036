import { defineConfig } from "tsup"

/**
 * The single list of build entries: the core, the CLI, the testing kits, and one entry per plugin.
 * Plugins import the core through the public `lambdagent` specifier, kept external so that
 * every entry shares one copy of the core at run time.
 */
export const entries = {
  index: "src/index.ts",
  "cli/main": "src/cli/main.ts",
  "testing/index": "src/testing/index.ts",
  "plugins/redis/index": "plugins/redis/index.ts",
  "plugins/sqlite/index": "plugins/sqlite/index.ts",
  "plugins/rag/index": "plugins/rag/index.ts",
  "plugins/http/index": "plugins/http/index.ts",
  "plugins/yaml/index": "plugins/yaml/index.ts",
  "plugins/mcp/index": "plugins/mcp/index.ts"
}

export default defineConfig({
  entry: entries,
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node22",
  platform: "node",
  splitting: false,
  treeshake: true,
  // keep `node:` specifiers: `node:sqlite` exists only under its prefix (a bare "sqlite" would
  // resolve to an npm package)
  removeNodeProtocol: false,
  external: ["lambdagent", /^lambdagent\//]
})
