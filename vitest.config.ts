import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: {
    alias: [
      { find: /^lambdagent$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) }
    ]
  },
  test: {
    include: ["test/**/*.test.ts", "plugins/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
