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

const allTests = ["test/**/*.test.ts", "plugins/**/*.test.ts"]
const excluded = ["**/node_modules/**", "test/package/**"]

// `npm run test:unit` runs in-process tests only; `npm run test:e2e` the files that start child
// processes (the CLI, servers, tools, workers), listen on sockets or talk to Redis, PostgreSQL or
// Chroma. A new test file that does any of these belongs in this list.
const endToEnd = [
  "plugins/cli/test/**/*.test.ts",
  "plugins/http/**/*.test.ts",
  "plugins/a2a/{client,server}.test.ts",
  "plugins/mcp/{cli,client,conformance,containment,http,http-security,inspector,lifecycle,oracle,ownSignalFetch,protocol,server}.test.ts",
  "plugins/rag/{ChromaIndex,Embeddings,commands,index}.test.ts",
  "plugins/redis/**/*.test.ts",
  "plugins/sqlite/**/*.test.ts",
  "plugins/cluster/**/*.test.ts",
  "test/providers/{openai,anthropic,claudeCode,nativeTools,structuredOutput,ollama}.test.ts",
  "test/{NodeVersion,Sandbox,SharedMemory,ShellTool,ShellTool.injection,Telemetry,TermMemory,readme,docs,examples}.test.ts"
]

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
    globalSetup: ["test/tools/install.ts"],
    // one test file per core (vitest runs on one core fewer by default): most end-to-end files
    // wait on child processes and sockets, and on a 2-core machine that default is a single worker
    maxWorkers: "100%",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: "unit", include: allTests, exclude: [...excluded, ...endToEnd] } },
      { extends: true, test: { name: "e2e", include: endToEnd, exclude: excluded } }
    ]
  }
})
