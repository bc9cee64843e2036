import { copyFile, writeFile } from "node:fs/promises"
import type { Plugin } from "esbuild"
import { defineConfig } from "tsup"

/**
 * The library's entries: the core, the testing kits, and one entry per plugin. Plugins import the
 * core through the public `lambdagent` specifier, kept external so that every entry shares one
 * copy of the core at run time.
 */
export const entries = {
  index: "src/index.ts",
  "node-version": "src/NodeVersion.ts",
  "testing/index": "src/testing/index.ts",
  "plugins/redis/index": "plugins/redis/index.ts",
  "plugins/sqlite/index": "plugins/sqlite/index.ts",
  "plugins/rag/index": "plugins/rag/index.ts",
  "plugins/http/index": "plugins/http/index.ts",
  "plugins/yaml/index": "plugins/yaml/index.ts",
  "plugins/mcp/index": "plugins/mcp/index.ts",
  "plugins/a2a/index": "plugins/a2a/index.ts",
  "plugins/cluster/index": "plugins/cluster/index.ts"
}

/**
 * Modules that only a path taken later needs, which a bundle would otherwise evaluate at start-up:
 * `node:http2` (the Streamable HTTP server, loaded when `--http` serves; ~15 ms on its own), ajv
 * with its formats, which the MCP SDK imports to check elicitation answers and a server of pure
 * tools may never use, and `node:child_process` as commander imports it (to run a subcommand's own
 * executable, which lambdagent never asks of it; ~3 ms with `net` and `dgram` behind it). Each
 * import is replaced by a small module that requires the real one when first used, so it loads
 * with the code that needs it (commander's module, evaluated at start-up, gets an object that
 * requires the built-in when one of its members is first read).
 */
const deferredModules: Plugin = {
  name: "lambdagent-deferred-modules",
  setup(build) {
    const deferred = "deferred-module"
    const sdkAjvProvider = /@modelcontextprotocol[\\/]sdk[\\/].*[\\/]ajv-provider\.js$/
    build.onResolve({ filter: /^node:http2$/ }, (args) =>
      // the wrapper's own `require` is the built-in itself
      args.namespace === deferred ? { path: args.path, external: true } : { path: args.path, namespace: deferred }
    )
    build.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]commander[\\/]/.test(args.importer) ? { path: args.path, namespace: deferred, pluginData: { onFirstRead: true } } : undefined
    )
    build.onResolve({ filter: /^ajv(-formats)?$/ }, (args) =>
      sdkAjvProvider.test(args.importer) ? { path: args.path, namespace: deferred, pluginData: { resolveDir: args.resolveDir } } : undefined
    )
    build.onLoad({ filter: /.*/, namespace: deferred }, (args) => {
      const specifier = JSON.stringify(args.path)
      if (args.path === "node:http2") return { contents: `module.exports = require(${specifier})`, loader: "js" }
      if ((args.pluginData as { onFirstRead?: boolean } | undefined)?.onFirstRead === true) {
        return { contents: `module.exports = new Proxy({}, { get: (_, key) => require(${specifier})[key] })`, loader: "js" }
      }
      // ajv's default export is a class the SDK calls with `new`, ajv-formats' a plain function
      return {
        contents: `export default function deferred(...args) { const real = require(${specifier}).default; return new.target ? new real(...args) : real(...args) }`,
        loader: "js",
        resolveDir: (args.pluginData as { resolveDir: string }).resolveDir
      }
    })
  }
}

const common = {
  sourcemap: true,
  target: "node22",
  platform: "node",
  splitting: false,
  treeshake: true,
  // keep `node:` specifiers: `node:sqlite` exists only under its prefix (a bare "sqlite" would
  // resolve to an npm package)
  removeNodeProtocol: false
} as const

export default defineConfig([
  {
    ...common,
    entry: entries,
    // ESM only: Node ≥ 22.12 loads it from CommonJS too (`require(esm)`), so every host shares one
    // copy of the core, and the types describe exactly what runs
    format: ["esm"],
    dts: true,
    // the three builds run side by side: this one clears everything but the CLI's fixed file names
    clean: ["**/*", "!cli/**", "!cli-program.*"],
    external: ["lambdagent", /^lambdagent\//],
    // the `lambdagent/yaml/schema.json` export, beside the plugin it describes, and the word-vector
    // table of the offline embedder, which the RAG plugin reads from beside itself
    onSuccess: async () => {
      await copyFile("plugins/yaml/schema.json", "dist/plugins/yaml/schema.json")
      await copyFile("plugins/rag/word-vectors.bin", "dist/plugins/rag/word-vectors.bin")
    }
  },
  {
    // The launcher is CommonJS, with the Node version check bundled in: Node starts a CommonJS file
    // without its ESM loader (~5 ms of every command's start), and an old Node that cannot load the
    // package's ES modules still prints the one-line refusal. `dist/cli/package.json` says so; the
    // full program, an ES module that imports the package by name, lives outside that directory
    // (`dist/cli-program.js`), in the package's own scope.
    ...common,
    entry: { "cli/main": "plugins/cli/main.ts" },
    format: ["cjs"],
    outExtension: () => ({ js: ".js" }),
    shims: true,
    external: ["lambdagent", /^lambdagent\/(?!node-version$)/],
    noExternal: ["lambdagent/node-version"],
    onSuccess: async () => {
      await writeFile("dist/cli/package.json", `${JSON.stringify({ type: "commonjs" })}\n`)
    }
  },
  {
    ...common,
    entry: { "cli-program": "plugins/cli/program.ts" },
    format: ["esm"],
    external: ["lambdagent", /^lambdagent\//]
  },
  {
    // Self-contained on purpose, each in one minified file: the YAML plugin, and the MCP server of
    // pure tools, with the few core modules they use and their dependencies. A process runs one
    // program, which shares no objects with other entries, so its private copy of those modules is
    // the process's only one.
    ...common,
    entry: { "cli/yaml-main": "plugins/cli/yamlMain.ts", "cli/mcp-main": "plugins/cli/mcpMain.ts" },
    format: ["cjs"],
    minify: true,
    noExternal: [/.*/],
    esbuildPlugins: [deferredModules]
  }
])
