/**
 * A machine's object graph as plain JSON, and back.
 *
 * Everything a paused machine holds — frames, environments, closures, form states, the pending
 * request — is one acyclic graph of a few kinds of objects. It is written as a heap: a list of
 * nodes in post-order (every node after the nodes it points to), each slot a JSON primitive, a
 * tagged number or bigint, or the index of an earlier node. Shared objects (an environment many
 * closures captured, the tail of a list) are written once. Compiled code is not written: a code
 * reference is a compile unit (a term, by its content hash, compiled as the run compiled it) and
 * the node's position in it, so restoring compiles the same terms again and points at the same
 * places. Both directions are loops over explicit stacks, so depth is not bounded by the
 * JavaScript stack.
 */
import { createHash } from "node:crypto"
import * as Term from "../Term.ts"
import * as Value from "../Value.ts"
import { Code, Op, type Scope } from "./code.ts"
import { compile } from "./compile.ts"
import { Ctx, Env } from "./machine.ts"

/** A snapshot that cannot be written or read; `reason` is a short phrase for the error message. */
export class SnapshotFault {
  constructor(readonly reason: string) {}
}

const fault = (reason: string): never => {
  throw new SnapshotFault(reason)
}

/** A JSON value of a snapshot. */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** A compile unit: a closed term compiled at top level, or a quoted term `eval` compiled at a site. */
export interface UnitJson {
  readonly term: string
  /** The `eval` node that compiled it: unit and code index. */
  readonly site?: readonly [number, number]
}

/**
 * The encoded graph: terms by hash (all but the run's own term, which the checkpoint holds once),
 * compile units, the heap, and the slots of the roots.
 */
export interface GraphJson {
  readonly terms: { readonly [hash: string]: unknown }
  readonly units: ReadonlyArray<UnitJson>
  readonly heap: ReadonlyArray<unknown>
  readonly roots: ReadonlyArray<unknown>
}

const hashes = new WeakMap<Term.Term, string>()

/** The content hash of a term: SHA-256 of its canonical JSON text. */
export const termHash = (term: Term.Term): string => {
  let hash = hashes.get(term)
  if (hash === undefined) {
    hash = "sha256:" + createHash("sha256").update(Term.toJsonText(term)).digest("hex")
    hashes.set(term, hash)
  }
  return hash
}

interface Unit {
  readonly term: Term.Term
  readonly site: readonly [number, number] | undefined
  readonly codes: Array<Code>
}

/** Every code node of the compile units, numbered in one fixed traversal order. */
class CodeTable {
  readonly units: Array<Unit> = []
  readonly where = new Map<Code, readonly [number, number]>()
  readonly termWhere = new Map<Term.Term, readonly [number, number]>()

  /** Add a unit and number its nodes; `eval` sites' compiled terms become units of their own. */
  add(term: Term.Term, code: Code, site: readonly [number, number] | undefined): number {
    const pending: Array<{ term: Term.Term; code: Code; site: readonly [number, number] | undefined }> = [{ term, code, site }]
    const first = this.units.length
    while (pending.length > 0) {
      const next = pending.shift()!
      const unitIndex = this.units.length
      const codes = numbered(next.code)
      this.units.push({ term: next.term, site: next.site, codes })
      for (const [i, c] of codes.entries()) {
        const at = [unitIndex, i] as const
        if (!this.where.has(c)) this.where.set(c, at)
        if (!this.termWhere.has(c.term)) this.termWhere.set(c.term, at)
        if (c.op === Op.Eval) {
          for (const [quoted, compiled] of (c.x as EvalSlot).cache) pending.push({ term: quoted, code: compiled, site: at })
        }
      }
    }
    return first
  }
}

interface EvalSlot {
  readonly scope: Scope | undefined
  readonly cache: Map<Term.Term, Code>
}

const children = (c: Code): Array<Code> => {
  const kids: Array<Code> = []
  if (c.a !== undefined) kids.push(c.a)
  if (c.b !== undefined) kids.push(c.b)
  if (c.c !== undefined) kids.push(c.c)
  if (c.items !== undefined) kids.push(...c.items)
  return kids
}

/** The code nodes of a unit in the order {@link CodeTable.add} numbers them. */
const numbered = (root: Code): Array<Code> => {
  const seen = new Set<Code>()
  const codes: Array<Code> = []
  const stack: Array<Code> = [root]
  while (stack.length > 0) {
    const c = stack.pop()!
    if (seen.has(c)) continue
    seen.add(c)
    codes.push(c)
    const kids = children(c)
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!)
  }
  return codes
}

const OPEN = -1

const isPlainObject = (o: object): boolean => {
  const proto = Object.getPrototypeOf(o)
  return proto === Object.prototype || proto === null
}

const isTerm = (o: object): o is Term.Term => isPlainObject(o) && typeof (o as { _tag?: unknown })._tag === "string"

/** What an object points to, in the order its node lists them. */
const pointsTo = (o: object): ReadonlyArray<unknown> => {
  if (o instanceof Value.List) return [o.head, o.tail]
  if (o instanceof Value.Pair) return [o.fst, o.snd]
  if (o instanceof Value.Closure) return [o.code, o.env, o.ctx]
  if (o instanceof Value.Continuation) return [o.input]
  if (o instanceof Env) return [o.v, o.next]
  if (o instanceof Ctx) return [o.self]
  if (o instanceof Code) return o.op === Op.Const ? [o.x] : []
  if (o instanceof Value.Quoted) return []
  if (Array.isArray(o)) return o
  if (isPlainObject(o)) return isTerm(o) ? [] : Object.values(o)
  return []
}

/**
 * Encode the graph reachable from `roots`. `root` is the run's term, compiled as unit 0; `terms`
 * receives every other term the graph names, by hash.
 */
export const encodeGraph = (root: Term.Term, roots: ReadonlyArray<unknown>): GraphJson => {
  let codes: CodeTable | undefined
  const tableOf = (): CodeTable => {
    if (codes === undefined) {
      codes = new CodeTable()
      codes.add(root, compile(root, undefined), undefined)
    }
    return codes
  }
  const terms: Record<string, Json> = {}
  const rootHash = termHash(root)
  const termRef = (term: Term.Term): string => {
    const hash = termHash(term)
    if (hash !== rootHash && !(hash in terms)) terms[hash] = Term.encode(term) as Json
    return hash
  }
  const heap: Array<Json> = []
  /** Node index of each object written; `OPEN` while the objects it points to are being written. */
  const ids = new Map<object, number>()

  const slot = (v: unknown): Json => {
    switch (typeof v) {
      case "string":
      case "boolean":
        return v
      case "number":
        return ["#", v === 0 ? 0 : Number.isFinite(v) ? v : String(v)]
      case "bigint":
        return ["big", v.toString()]
      case "undefined":
        return ["undef"]
      case "object":
        if (v === null) return null
        if (v === Value.nil) return ["nil"]
        return ids.get(v)!
      default:
        return fault(`it holds a ${typeof v}`)
    }
  }

  const codeNode = (c: Code): Json => {
    const table = tableOf()
    let at = table.where.get(c)
    if (at === undefined && c.op === Op.Const) return ["const", slot(c.x)]
    if (at === undefined && compile(c.term, undefined) === c) {
      table.add(c.term, c, undefined)
      at = table.where.get(c)
    }
    if (at === undefined) return fault("it holds code compiled outside the run's terms")
    return ["code", at[0], at[1]]
  }

  const node = (o: object): Json => {
    if (o instanceof Value.List) return ["cons", slot(o.head), slot(o.tail)]
    if (o instanceof Value.Pair) return ["pair", slot(o.fst), slot(o.snd)]
    if (o instanceof Value.Quoted) return ["quote", termRef(o.term)]
    if (o instanceof Value.Closure) return ["closure", slot(o.code), slot(o.env), slot(o.ctx)]
    if (o instanceof Value.Continuation) return ["continuation", o.tool, slot(o.input), o.step]
    if (o instanceof Env) return ["env", slot(o.v), slot(o.next)]
    if (o instanceof Ctx) return ["ctx", slot(o.self), slot(o.toolName), o.step, o.evalDepth]
    if (o instanceof Code) return codeNode(o)
    if (Array.isArray(o)) return ["array", o.map(slot)]
    if (isPlainObject(o)) {
      if (isTerm(o)) {
        const at = tableOf().termWhere.get(o)
        return at !== undefined ? ["term", at[0], at[1]] : ["termText", termRef(o)]
      }
      const fields: Record<string, Json> = {}
      for (const [k, v] of Object.entries(o)) fields[k] = slot(v)
      return ["object", fields]
    }
    return fault(`it holds a ${(o as { constructor?: { name?: string } }).constructor?.name ?? "foreign"} object`)
  }

  for (const start of roots) {
    if (typeof start !== "object" || start === null || start === Value.nil) continue
    const stack: Array<object> = [start]
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!
      const id = ids.get(top)
      if (id === undefined) {
        ids.set(top, OPEN)
        const kids = pointsTo(top)
        for (let i = 0; i < kids.length; i++) {
          const kid = kids[i]
          if (typeof kid !== "object" || kid === null || kid === Value.nil) continue
          const seen = ids.get(kid)
          if (seen === OPEN) fault("its state refers to itself")
          if (seen === undefined) stack.push(kid)
        }
        continue
      }
      stack.pop()
      if (id !== OPEN) continue
      heap.push(node(top))
      ids.set(top, heap.length - 1)
    }
  }
  const units: Array<UnitJson> = (codes?.units ?? []).map((u) => ({ term: termRef(u.term), ...(u.site !== undefined ? { site: u.site } : {}) }))
  return { terms, units, heap, roots: roots.map(slot) }
}

/**
 * Decode a graph {@link encodeGraph} wrote: the roots' values. `root` is the run's term (already
 * checked against unit 0's hash); terms are parsed once each. Throws {@link SnapshotFault} on
 * anything malformed.
 */
export const decodeGraph = (root: Term.Term, graph: GraphJson): Array<unknown> => {
  const parsed = new Map<string, Term.Term>()
  const termOf = (hash: unknown): Term.Term => {
    let term = typeof hash === "string" ? parsed.get(hash) : undefined
    if (term === undefined) {
      if (typeof hash !== "string" || !Object.hasOwn(graph.terms, hash)) return fault(`it names a term ${String(hash)} it does not hold`)
      term = Term.parse(graph.terms[hash])
      if (termHash(term) !== hash) fault(`the term stored as ${hash} has another hash`)
      parsed.set(hash, term)
    }
    return term
  }
  if (graph.units.length > 0 && graph.units[0]!.term !== termHash(root)) fault("its first compile unit is not the run's term")
  parsed.set(termHash(root), root)
  const units: Array<Array<Code>> = []
  for (const [i, unit] of graph.units.entries()) {
    const term = i === 0 ? root : termOf(unit.term)
    if (unit.site === undefined) {
      units.push(numbered(compile(term, undefined)))
      continue
    }
    const [u, c] = unit.site
    const siteCode = units[u]?.[c]
    if (siteCode === undefined || siteCode.op !== Op.Eval) return fault(`compile unit ${i} names no eval site`)
    const slot = siteCode.x as EvalSlot
    let compiled = slot.cache.get(term)
    if (compiled === undefined) {
      compiled = compile(term, slot.scope)
      slot.cache.set(term, compiled)
    }
    units.push(numbered(compiled))
  }

  const objects: Array<unknown> = []
  const value = (s: Json): unknown => {
    if (s === null || typeof s === "string" || typeof s === "boolean") return s
    if (typeof s === "number") {
      if (!Number.isInteger(s) || s < 0 || s >= objects.length) return fault(`it refers to node ${s}, which is not before it`)
      return objects[s]
    }
    if (!Array.isArray(s)) return fault("it has a malformed slot")
    switch (s[0]) {
      case "#":
        return typeof s[1] === "number" ? s[1] : typeof s[1] === "string" ? Number(s[1]) : fault("it has a malformed number")
      case "big":
        return typeof s[1] === "string" && /^-?\d+$/.test(s[1]) ? BigInt(s[1]) : fault("it has a malformed integer")
      case "undef":
        return undefined
      case "nil":
        return Value.nil
      default:
        return fault(`it has an unknown slot ${JSON.stringify(s[0])}`)
    }
  }
  const envOf = (s: Json): Env | undefined => {
    const v = value(s)
    return v === undefined || v instanceof Env ? v : fault("an environment points to something else")
  }
  const ctxOf = (s: Json): Ctx => {
    const v = value(s)
    return v instanceof Ctx ? v : fault("a context slot holds something else")
  }
  const val = (s: Json): Value.Value => value(s) as Value.Value
  const int = (n: unknown): number => (typeof n === "number" && Number.isSafeInteger(n) ? n : fault("it has a malformed count"))
  const str = (t: unknown): string => (typeof t === "string" ? t : fault("it has a malformed name"))

  for (const n of graph.heap) {
    if (!Array.isArray(n)) fault("its heap has a malformed node")
    const a = n as ReadonlyArray<Json>
    let o: unknown
    switch (a[0]) {
      case "cons": {
        const tail = value(a[2]!)
        if (!(tail instanceof Value.List)) fault("a list's tail is not a list")
        o = new Value.List(val(a[1]!), tail as Value.List, (tail as Value.List).length + 1)
        break
      }
      case "pair":
        o = new Value.Pair(val(a[1]!), val(a[2]!))
        break
      case "quote":
        o = new Value.Quoted(termOf(a[1]))
        break
      case "closure": {
        const code = value(a[1]!)
        if (!(code instanceof Code)) fault("a closure's code is not code")
        o = new Value.Closure((code as Code).term, code, envOf(a[2]!), ctxOf(a[3]!))
        break
      }
      case "continuation":
        o = new Value.Continuation(str(a[1]), val(a[2]!), int(a[3]))
        break
      case "env":
        o = new Env(val(a[1]!), envOf(a[2]!))
        break
      case "ctx": {
        const tool = value(a[2]!)
        if (tool !== undefined && typeof tool !== "string") fault("a context's tool name is not a string")
        o = new Ctx(value(a[1]!) as Value.Value | undefined, tool as string | undefined, int(a[3]), int(a[4]))
        break
      }
      case "code":
        o = units[int(a[1])]?.[int(a[2])] ?? fault("it points at code its terms do not have")
        break
      case "const":
        o = new Code(Op.Const, Term.lit(null), undefined, undefined, undefined, val(a[1]!), undefined)
        break
      case "term":
        o = units[int(a[1])]?.[int(a[2])]?.term ?? fault("it points at a term node its terms do not have")
        break
      case "termText":
        o = termOf(a[1])
        break
      case "array":
        if (!Array.isArray(a[1])) fault("it has a malformed array")
        o = (a[1] as ReadonlyArray<Json>).map(value)
        break
      case "object": {
        const fields = a[1]
        if (typeof fields !== "object" || fields === null || Array.isArray(fields)) return fault("it has a malformed object")
        const out: Record<string, unknown> = {}
        for (const [k, v] of Object.entries(fields)) out[k] = value(v as Json)
        o = out
        break
      }
      default:
        fault(`its heap has an unknown node ${JSON.stringify(a[0])}`)
    }
    objects.push(o)
  }
  return graph.roots.map((r) => value(r as Json))
}

/** Whether a decoded value is one of the machine's own: for checking a restored state's registers. */
export const isEnv = (v: unknown): v is Env | undefined => v === undefined || v instanceof Env
export const isCtx = (v: unknown): v is Ctx => v instanceof Ctx
export const isCode = (v: unknown): v is Code => v instanceof Code
