/**
 * Write `plugins/yaml/schema.json` from the zod schema (`npm run yaml:schema`). A test checks
 * that the committed file is what this script writes.
 *
 * @since 0.1.0
 * @module
 */
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { jsonSchema } from "./schema.ts"

/**
 * The text of `schema.json`: the JSON Schema, indented by two spaces, with a final newline.
 *
 * @since 0.1.0
 * @category schemas
 * @example
 * ```ts
 * import { schemaFileText } from "./generate-schema.ts"
 * JSON.parse(schemaFileText()).title // "lambdagent agent file"
 * ```
 */
export const schemaFileText = (): string => `${JSON.stringify(jsonSchema(), null, 2)}\n`

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = fileURLToPath(new URL("./schema.json", import.meta.url))
  writeFileSync(target, schemaFileText())
  console.log(`wrote ${target}`)
}
