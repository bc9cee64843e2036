/**
 * `tsx test/tools/install.ts` (`npm run test:tools`): install the heavy development tools when
 * they are missing or stale. Also the global setup of the test suite (vitest.config.ts).
 */
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { ensureTools } from "./index.ts"

export default ensureTools

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) ensureTools()
