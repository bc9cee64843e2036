/**
 * `memory.customStore` as a module: `./my-store.js#MyStore` (a file relative to the config) or
 * `my-package#MyStore` (a package resolved from the config's directory). The export is a class
 * (constructed with the store options), a factory (called with them) or a store object; what it
 * gives must be a `MemoryStoreShape`. A name that is neither a path nor has a `#` stays the name a
 * `--plugin` registers.
 */
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { isAbsolute, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import * as Effect from "effect/Effect"
import type { MemoryStore, Plugin } from "lambdagent"
import { CliError, ExitCode } from "./io.ts"

/** Whether `customStore` names a module rather than a store a plugin registers. */
export const isStoreModule = (spec: string): boolean =>
  spec.includes("#") || spec.startsWith("./") || spec.startsWith("../") || isAbsolute(spec) || /\.[cm]?js$/.test(spec)

const METHODS = ["get", "put", "listRecent", "clear"] as const

const storeProblem = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null) return `it gave ${value === null ? "null" : typeof value}, not a store object`
  const missing = METHODS.filter((m) => typeof (value as Record<string, unknown>)[m] !== "function")
  return missing.length > 0 ? `the store it gave has no ${missing.join(", ")} method${missing.length > 1 ? "s" : ""}` : undefined
}

/** The store with its methods bound (a class instance keeps them on its prototype) and a name. */
const asStore = (store: MemoryStore.MemoryStoreShape, spec: string): MemoryStore.MemoryStoreShape => ({
  name: typeof store.name === "string" ? store.name : spec,
  get: store.get.bind(store),
  put: store.put.bind(store),
  ...(typeof store.putIfAbsent === "function" ? { putIfAbsent: store.putIfAbsent.bind(store) } : {}),
  listRecent: store.listRecent.bind(store),
  clear: store.clear.bind(store)
})

const isClass = (f: (...args: never) => unknown): boolean => /^class[\s{]/.test(Function.prototype.toString.call(f))

const fail = (spec: string, why: string, exitCode: number = ExitCode.usage, kind = "StoreModuleError"): CliError =>
  new CliError(`memory.customStore ${JSON.stringify(spec)}: ${why}`, exitCode, kind)

const locate = (path: string, spec: string, baseDir: string): string => {
  if (path.startsWith(".") || isAbsolute(path)) {
    const file = resolve(baseDir, path)
    if (!existsSync(file)) throw fail(spec, `no file ${file}`, ExitCode.notFound, "StoreModuleNotFound")
    return pathToFileURL(file).href
  }
  try {
    return pathToFileURL(createRequire(resolve(baseDir, "package.json")).resolve(path)).href
  } catch {
    throw fail(
      spec,
      `no package ${JSON.stringify(path)} is installed where the config is (install it, or give a path starting with ./)`,
      ExitCode.notFound,
      "StoreModuleNotFound"
    )
  }
}

/**
 * Load the module `spec` names and register its store under `spec`, as a plugin; refuses a module
 * that is missing, fails to load, lacks the export, or exports something that is not a store.
 */
export const loadStoreModule = async (spec: string, baseDir: string): Promise<Plugin.Plugin> => {
  const hash = spec.lastIndexOf("#")
  const path = hash === -1 ? spec : spec.slice(0, hash)
  const exportName = hash === -1 ? "default" : spec.slice(hash + 1)
  if (path === "" || exportName === "") throw fail(spec, "write MODULE#Export (e.g. ./my-store.js#MyStore), or a module whose default export is the store")
  let module: Record<string, unknown>
  try {
    module = await import(locate(path, spec, baseDir))
  } catch (error) {
    if (error instanceof CliError) throw error
    throw fail(spec, `the module failed to load: ${error instanceof Error ? error.message : String(error)}`, ExitCode.failed)
  }
  const exported = module[exportName]
  if (exported === undefined) {
    const names = Object.keys(module)
    throw fail(spec, `the module has no export ${JSON.stringify(exportName)} (exports: ${names.length > 0 ? names.join(", ") : "none"})`)
  }
  if (typeof exported !== "function") {
    const problem = storeProblem(exported)
    if (problem !== undefined) throw fail(spec, `the export ${exportName} is not a class, a factory or a store: ${problem}`)
  }
  const factory: Plugin.StoreFactory = (options) => {
    const made: unknown =
      typeof exported !== "function"
        ? exported
        : isClass(exported as (...args: never) => unknown)
          ? new (exported as new (o: unknown) => unknown)(options)
          : (exported as (o: unknown) => unknown)(options)
    if (Effect.isEffect(made)) return made as Effect.Effect<MemoryStore.MemoryStoreShape, unknown, never>
    return Effect.tryPromise({
      try: async () => {
        const store = await made
        const problem = storeProblem(store)
        if (problem !== undefined) throw new Error(`memory.customStore ${JSON.stringify(spec)}: ${problem}`)
        return asStore(store as MemoryStore.MemoryStoreShape, spec)
      },
      catch: (error) => error
    })
  }
  return { name: `customStore ${spec}`, stores: { [spec]: factory } }
}
