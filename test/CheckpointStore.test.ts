/**
 * The directory store as a `CheckpointStore.Location`: the checks every location passes.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CheckpointStore } from "lambdagent"
import { checkpointLocationConformance } from "./fixtures/checkpointLocations.ts"

checkpointLocationConformance("directory", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-ckdir-"))
  return { location: CheckpointStore.directoryLocation(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) }
})
