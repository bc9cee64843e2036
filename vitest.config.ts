import { delimiter } from "node:path"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url))

// The heavy tools (Chroma, the MCP inspector and conformance suite) live in test/tools, installed
// by the global setup. `chromadb` resolves from there: for imports through the alias below, and
// for `require.resolve` (how the RAG plugin finds the `chroma` command) through NODE_PATH, which
// the test workers and the processes they start inherit.
const toolsModules = path("./test/tools/node_modules")
process.env.NODE_PATH = [toolsModules, process.env.NODE_PATH].filter((p) => p !== undefined && p !== "").join(delimiter)

export default defineConfig({
  resolve: {
    alias: [
      { find: /^lambdagent$/, replacement: path("./src/index.ts") },
      { find: /^lambdagent\/testing$/, replacement: path("./src/testing/index.ts") },
      { find: /^lambdagent\/node-version$/, replacement: path("./src/NodeVersion.ts") },
      { find: /^lambdagent\/(\w+)$/, replacement: path("./plugins/$1/index.ts") },
      { find: /^chromadb$/, replacement: `${toolsModules}/chromadb` }
    ]
  },
  test: {
    include: ["test/**/*.test.ts", "plugins/**/*.test.ts"],
    exclude: ["**/node_modules/**", "test/package/**"],
    globalSetup: ["test/tools/install.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
