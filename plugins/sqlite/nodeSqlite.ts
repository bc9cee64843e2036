/**
 * Node's built-in `node:sqlite`, loaded when the first store opens rather than when
 * `lambdagent/sqlite` is imported, and without the notice Node prints on stderr the first time the
 * module loads ("ExperimentalWarning: SQLite is an experimental feature…"): the store is tested
 * on it and supported, so the notice would only alarm the users of every host that imports this
 * plugin. Every other warning is emitted as usual.
 */
import { createRequire } from "node:module"

type NodeSqlite = typeof import("node:sqlite")

let loaded: NodeSqlite | undefined

const isSqliteNotice = (warning: string | Error, rest: ReadonlyArray<unknown>): boolean => {
  const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: unknown } | undefined)?.type
  const name = typeof warning === "string" ? type : warning.name
  const message = typeof warning === "string" ? warning : warning.message
  return name === "ExperimentalWarning" && message.includes("SQLite")
}

/** The `node:sqlite` module, loaded on the first call. */
export const nodeSqlite = (): NodeSqlite => {
  if (loaded !== undefined) return loaded
  const emitWarning = process.emitWarning
  process.emitWarning = ((warning: string | Error, ...rest: Array<unknown>) => {
    if (!isSqliteNotice(warning, rest)) (emitWarning as (...args: Array<unknown>) => void).call(process, warning, ...rest)
  }) as typeof process.emitWarning
  try {
    loaded = createRequire(import.meta.url)("node:sqlite") as NodeSqlite
  } finally {
    process.emitWarning = emitWarning
  }
  return loaded
}
