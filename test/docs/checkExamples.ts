/**
 * `npm run check:examples`: type-check every JSDoc `@example` of `src/` and `plugins/` and every
 * runnable TypeScript block of the README and `docs/`, in one program; prints each error at its
 * line in the source and exits with 1 when there is any.
 */
import { fileURLToPath } from "node:url"
import { repositoryExamples, repositoryRunnableBlocks, typeCheck } from "./snippets.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))
const examples = repositoryExamples(root)
const blocks = repositoryRunnableBlocks(root).filter((b) => b.language === "ts")
const errors = typeCheck(root, [...examples, ...blocks])
for (const { file, line, message } of errors) console.error(`${file}:${line}: ${message}`)
console.log(
  `${examples.length} JSDoc examples and ${blocks.length} runnable TypeScript blocks type-checked: ${errors.length === 0 ? "no errors" : `${errors.length} errors`}`
)
process.exitCode = errors.length === 0 ? 0 : 1
