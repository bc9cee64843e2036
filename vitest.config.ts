import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url))

export default defineConfig({
  resolve: {
    alias: [
      { find: /^lambdagent$/, replacement: path("./src/index.ts") },
      { find: /^lambdagent\/testing$/, replacement: path("./src/testing/index.ts") },
      { find: /^lambdagent\/(\w+)$/, replacement: path("./plugins/$1/index.ts") }
    ]
  },
  test: {
    include: ["test/**/*.test.ts", "plugins/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
