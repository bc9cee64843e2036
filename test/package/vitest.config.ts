import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

/**
 * The package test (`npm run test:package`, run by .ci/run): slow, since it builds and packs a
 * release candidate and installs it with npm, so `npm test` leaves it out.
 */
export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    include: ["test/package/**/*.test.ts"],
    globalSetup: ["test/tools/install.ts"],
    // the first host installs the tarball and typechecks against it: 84 s alone on a 2-core
    // machine, over 120 s with another test run beside it
    testTimeout: 360_000,
    hookTimeout: 600_000
  }
})
