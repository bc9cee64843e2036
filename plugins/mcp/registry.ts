/**
 * The registry of evolved tools: every version of every tool, parsed and analysed once, persisted
 * through a {@link ToolRegistryStore} before any change becomes visible.
 *
 * @since 0.1.0
 * @module
 */
import { Term } from "lambdagent"
import { analyzeTerm, type TermAnalysis } from "./analysis.ts"
import { memoryRegistryStore, type StoredTool, type StoredVersion, type ToolRegistryStore } from "./store.ts"

/**
 * What an evolved tool may be called: 1 to 128 characters from `A–Z a–z 0–9 _ - .`, the MCP
 * specification's tool-name alphabet.
 *
 * @since 0.1.0
 * @category constants
 * @example
 * ```ts
 * import { TOOL_NAME_PATTERN } from "lambdagent/mcp"
 * TOOL_NAME_PATTERN.test("is_even") // true
 * TOOL_NAME_PATTERN.test("a b") // false
 * ```
 */
export const TOOL_NAME_PATTERN: RegExp = /^[A-Za-z0-9_.-]{1,128}$/

/**
 * One version of an evolved tool, with its parsed term and analysis. `term` is absent only when a
 * stored version can no longer be parsed; `problem` then says why (the version is kept, never
 * dropped, and running it reports the problem).
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { ToolVersion } from "lambdagent/mcp"
 * const describe = (v: ToolVersion) => `v${v.version}: ${v.description}`
 * ```
 */
export interface ToolVersion extends StoredVersion {
  readonly term?: Term.Term
  readonly analysis?: TermAnalysis
  readonly problem?: string
}

/**
 * An evolved tool: its name and versions, oldest first; `current` is the newest.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import type { RegisteredTool } from "lambdagent/mcp"
 * const latest = (t: RegisteredTool) => t.current.version
 * ```
 */
export interface RegisteredTool {
  readonly name: string
  readonly versions: ReadonlyArray<ToolVersion>
  readonly current: ToolVersion
}

const toVersion = (stored: StoredVersion): ToolVersion => {
  try {
    const term = Term.parse(stored.code)
    return { ...stored, term, analysis: analyzeTerm(term) }
  } catch (error) {
    return { ...stored, problem: `stored code does not parse: ${error instanceof Error ? error.message : String(error)}` }
  }
}

const byName = (a: { readonly name: string }, b: { readonly name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

const storedForm = (tools: ReadonlyMap<string, RegisteredTool>): ReadonlyArray<StoredTool> =>
  [...tools.values()].sort(byName).map((t) => ({
    name: t.name,
    versions: t.versions.map(({ code, createdAt, description, version }) => ({ version, description, code, createdAt }))
  }))

/**
 * The evolved tools of a server. Reads are synchronous snapshots; {@link ToolRegistry.add} saves
 * the new registry to the store first and only then makes the new version visible and notifies
 * subscribers, so a failed save changes nothing. Adds are serialised.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { Term } from "lambdagent"
 * import { ToolRegistry, memoryRegistryStore } from "lambdagent/mcp"
 * const registry = await ToolRegistry.open(memoryRegistryStore())
 * await registry.add("square", "Squares", Term.parse({ lam: "x", body: { mul: [{ var: "x" }, { var: "x" }] } }))
 * console.log(registry.get("square")?.current.version) // 1
 * ```
 */
export class ToolRegistry {
  private tools = new Map<string, RegisteredTool>()
  private listeners = new Set<() => void>()
  private codeCache: Map<string, Term.Term> | undefined
  private sortedNames: Array<string> | undefined
  private queue: Promise<unknown> = Promise.resolve()

  private constructor(
    /** Where the tools are persisted. */
    readonly store: ToolRegistryStore
  ) {}

  /**
   * Load a registry from a store (default: in memory). Fails with the store's error when the
   * stored data cannot be read.
   */
  static async open(store: ToolRegistryStore = memoryRegistryStore()): Promise<ToolRegistry> {
    const registry = new ToolRegistry(store)
    for (const stored of await store.load()) {
      const versions = [...stored.versions].sort((a, b) => a.version - b.version).map(toVersion)
      registry.tools.set(stored.name, { name: stored.name, versions, current: versions[versions.length - 1]! })
    }
    return registry
  }

  /** Number of tools. */
  get size(): number {
    return this.tools.size
  }

  /** A tool by name. */
  get(name: string): RegisteredTool | undefined {
    return this.tools.get(name)
  }

  /** A version of a tool (the current one when `version` is absent). */
  version(name: string, version?: number): ToolVersion | undefined {
    const tool = this.tools.get(name)
    if (tool === undefined) return undefined
    if (version === undefined) return tool.current
    // versions are numbered 1, 2, 3, …; a store edited by hand may have gaps
    const at = tool.versions[version - 1]
    return at?.version === version ? at : tool.versions.find((v) => v.version === version)
  }

  /** Every tool, sorted by name. */
  list(): ReadonlyArray<RegisteredTool> {
    if (this.sortedNames === undefined) this.sortedNames = [...this.tools.keys()].sort()
    return this.sortedNames.map((name) => this.tools.get(name)!)
  }

  /** The current code of every tool that parses: what `code_of` reads. */
  code(): ReadonlyMap<string, Term.Term> {
    if (this.codeCache === undefined) {
      const map = new Map<string, Term.Term>()
      for (const [name, tool] of this.tools) if (tool.current.term !== undefined) map.set(name, tool.current.term)
      this.codeCache = map
    }
    return this.codeCache
  }

  /** The code map with one tool pinned to one of its versions (for running an older version). */
  codeWith(name: string, term: Term.Term): ReadonlyMap<string, Term.Term> {
    const current = this.code()
    if (current.get(name) === term) return current
    const map = new Map(current)
    map.set(name, term)
    return map
  }

  /** The tools a tool's current version reads with `code_of`. */
  references(name: string): ReadonlyArray<string> {
    return [...(this.tools.get(name)?.current.analysis?.capabilities.codeOf ?? [])]
  }

  /** The registry as stored. */
  snapshot(): ReadonlyArray<StoredTool> {
    return storedForm(this.tools)
  }

  /**
   * Add a version of a tool (version 1 when the name is new). Saves to the store, then publishes
   * the change. Throws the store's error when the save fails, leaving the registry unchanged.
   */
  add(name: string, description: string, term: Term.Term): Promise<ToolVersion> {
    if (!TOOL_NAME_PATTERN.test(name)) return Promise.reject(new Error(`invalid tool name ${JSON.stringify(name)}`))
    const run = async (): Promise<ToolVersion> => {
      const existing = this.tools.get(name)
      const version: ToolVersion = {
        version: existing === undefined ? 1 : existing.versions[existing.versions.length - 1]!.version + 1,
        description,
        code: Term.encode(term),
        createdAt: new Date().toISOString(),
        term,
        analysis: analyzeTerm(term)
      }
      if (this.store.append !== undefined) {
        const { code, createdAt, description: text, version: number } = version
        await this.store.append(name, { version: number, description: text, code, createdAt })
      } else {
        const next = new Map(this.tools)
        next.set(name, { name, versions: [...(existing?.versions ?? []), version], current: version })
        await this.store.save(storedForm(next))
      }
      // saved: now change the registry, in place (an evolve costs the same however many tools there are)
      const versions = (existing?.versions ?? []) as Array<ToolVersion>
      versions.push(version)
      this.tools.set(name, { name, versions, current: version })
      if (existing === undefined) this.sortedNames = undefined
      this.codeCache?.set(name, term)
      for (const listener of this.listeners) {
        try {
          listener()
        } catch {
          // a listener's failure must not undo or hide a saved change
        }
      }
      return version
    }
    const result = this.queue.then(run, run)
    this.queue = result.catch(() => undefined)
    return result
  }

  /** Be told after every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }
}
