/**
 * The code the documentation shows: the `@example` blocks of the JSDoc comments in `src/` and
 * `plugins/`, and the Markdown code blocks of the README and `docs/` marked runnable (a fence
 * whose info string carries the word `runnable`: ```` ```sh runnable ````). TypeScript snippets
 * are type-checked together: each becomes a module of its own in one generated project that uses
 * the repository's `node_modules` and compiler options (so `lambdagent`, `effect`, `zod`… resolve
 * as in the sources), and one TypeScript program checks them all; errors are reported at the
 * snippet's line in its source file.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import ts from "typescript"

/** A piece of code shown in the documentation. */
export interface Snippet {
  /** The file it is in, relative to the repository root. */
  readonly file: string
  /** The 1-based line of its first code line in that file. */
  readonly line: number
  /** The fence's language (`ts`, `sh`, …). */
  readonly language: string
  readonly code: string
}

const commentPattern = /\/\*\*[\s\S]*?\*\//g

/** The ```ts blocks that follow an `@example` tag in the JSDoc comments of `text`. */
export const jsdocExamples = (file: string, text: string): ReadonlyArray<Snippet> => {
  const examples: Array<Snippet> = []
  for (const comment of text.matchAll(commentPattern)) {
    const firstLine = text.slice(0, comment.index).split("\n").length
    const lines = comment[0].split("\n").map((line) => line.replace(/^\s*\*( |$)/, ""))
    let inExample = false
    let code: Array<string> | undefined
    let start = 0
    lines.forEach((line, i) => {
      if (code !== undefined) {
        if (line.trim() === "```") {
          examples.push({ file, line: start, language: "ts", code: code.join("\n") })
          code = undefined
        } else code.push(line)
      } else if (/^\s*@example\b/.test(line)) inExample = true
      else if (/^\s*@\w/.test(line)) inExample = false
      else if (inExample && /^\s*```(ts|typescript)\s*$/.test(line)) {
        code = []
        start = firstLine + i + 1
      }
    })
  }
  return examples
}

/** The code blocks of a Markdown text whose fence's info string includes the word `runnable`. */
export const runnableBlocks = (file: string, text: string): ReadonlyArray<Snippet> => {
  const blocks: Array<Snippet> = []
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(`{3,})(\S*)(.*)$/.exec(lines[i]!)
    if (fence === null) continue
    const end = lines.findIndex((line, j) => j > i && line.startsWith(fence[1]!) && line.trim() === fence[1])
    if (end < 0) break
    if (fence[3]!.split(/\s+/).includes("runnable")) {
      blocks.push({ file, line: i + 2, language: fence[2]!, code: lines.slice(i + 1, end).join("\n") })
    }
    i = end
  }
  return blocks
}

const files = (dir: string, extension: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(extension) && !e.name.endsWith(".d.ts"))
    .map((e) => join(e.parentPath, e.name))
    .filter((path) => !path.includes("/node_modules/"))
    .sort()

/** Every JSDoc example of the repository's `src/` and `plugins/`. */
export const repositoryExamples = (root: string): ReadonlyArray<Snippet> =>
  ["src", "plugins"].flatMap((dir) => files(join(root, dir), ".ts")).flatMap((path) => jsdocExamples(relative(root, path), readFileSync(path, "utf8")))

/** Every runnable block of the README and the guides in `docs/`. */
export const repositoryRunnableBlocks = (root: string): ReadonlyArray<Snippet> =>
  [join(root, "README.md"), ...files(join(root, "docs"), ".md").filter((path) => !path.includes("/docs/api/"))].flatMap((path) =>
    runnableBlocks(relative(root, path), readFileSync(path, "utf8"))
  )

/** A type error in a snippet, at its place in the source file. */
export interface SnippetError {
  readonly file: string
  readonly line: number
  readonly message: string
}

/** A generated project of snippets (see {@link writeProject}). */
export interface SnippetProject {
  readonly dir: string
  /** The module of each snippet, in order. */
  readonly paths: ReadonlyArray<string>
  readonly remove: () => void
}

/**
 * Write `snippets` as modules `snippet<i>.ts` of an ES module project in a temporary directory
 * whose `tsconfig.json` extends the repository's (so `lambdagent` maps to the sources, for tsc
 * and tsx alike) and whose `node_modules` is the repository's.
 */
export const writeProject = (root: string, snippets: ReadonlyArray<Snippet>): SnippetProject => {
  const dir = mkdtempSync(join(tmpdir(), "lambdagent-snippets-"))
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir")
  writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true, type: "module" }))
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: join(root, "tsconfig.json"), include: ["*.ts"] }))
  const paths = snippets.map((snippet, i) => {
    const path = join(dir, `snippet${i}.ts`)
    // a relative import means the snippet's own module (an internal module's example imports it so)
    const from = dirname(join(root, snippet.file))
    const code = snippet.code.replace(
      /(from\s+|import\s*\(\s*)"(\.{1,2}\/[^"]+)"/g,
      (_, head: string, spec: string) => `${head}${JSON.stringify(relative(dir, join(from, spec)))}`
    )
    // `export {}` keeps every snippet a module of its own, whatever it imports
    writeFileSync(path, `${code}\nexport {}\n`)
    return path
  })
  return { dir, paths, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Type-check the TypeScript `snippets` in one program, each as its own module, under the
 * repository's compiler options (in a project of {@link writeProject}, removed afterwards).
 */
export const typeCheck = (root: string, snippets: ReadonlyArray<Snippet>): ReadonlyArray<SnippetError> => {
  const project = writeProject(root, snippets)
  try {
    const generated = new Map(project.paths.map((path, i) => [path, snippets[i]!]))
    const config = ts.getParsedCommandLineOfConfigFile(
      join(project.dir, "tsconfig.json"),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => {
          throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
        }
      }
    )!
    const program = ts.createProgram({ rootNames: config.fileNames, options: config.options })
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const message = ts.flattenDiagnosticMessageText(d.messageText, "\n")
      if (d.file === undefined || d.start === undefined) return { file: "(program)", line: 0, message }
      const { line } = d.file.getLineAndCharacterOfPosition(d.start)
      const snippet = generated.get(d.file.fileName)
      if (snippet === undefined) return { file: relative(root, d.file.fileName), line: line + 1, message }
      return { file: snippet.file, line: snippet.line + line, message }
    })
  } finally {
    project.remove()
  }
}
