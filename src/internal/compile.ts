/**
 * Compiling a term for the machine: a bottom-up pass where each node's form builds its code from
 * its children's, with variables resolved against the scope the binders around them make.
 *
 * The pass keeps, for each node on the path from the root to the node being compiled, only the
 * node, its scope and how many children are done (in three arrays, no object per node), so that
 * compiling a term nested a million levels deep costs little more than the code it makes.
 */
import { formOf } from "../forms/index.ts"
import type * as Term from "../Term.ts"
import type { Code, Scope } from "./code.ts"

const childrenOf = (term: Term.Term): ReadonlyArray<Term.Term> => {
  const form = formOf(term)
  return form.compiled?.(term) ?? form.children(term)
}

/**
 * How many distinct literals one compilation shares the code of: a literal's code is the same
 * wherever it stands (it never fails, so no error names its place), and terms repeat a few
 * literals many times.
 */
const SHARED_LITERALS = 1024

/** Nodes with more children than this keep their list while they compile (listing them again costs as many). */
const RELIST_UP_TO = 3

const compileTree = (root: Term.Term, rootScope: Scope | undefined): Code => {
  const terms: Array<Term.Term> = [root]
  const scopes: Array<Scope | undefined> = [rootScope]
  const done: Array<number> = [0]
  const lists: Array<ReadonlyArray<Term.Term> | undefined> = [undefined]
  // the code of the finished children of the nodes on the path, in order
  const codes: Array<Code> = []
  const literals = new Map<Term.Literal, Code>()
  for (;;) {
    const top = terms.length - 1
    const term = terms[top]!
    const kids = lists[top] ?? childrenOf(term)
    const i = done[top]!
    if (i < kids.length) {
      if (i === 0 && kids.length > RELIST_UP_TO) lists[top] = kids
      const name = formOf(term).binds?.(term, i)
      const scope = scopes[top]
      terms.push(kids[i]!)
      scopes.push(name === undefined ? scope : { name, next: scope })
      done.push(0)
      lists.push(undefined)
      continue
    }
    let code = term._tag === "Lit" ? literals.get(term.value) : undefined
    if (code === undefined) {
      code = formOf(term).compile(term, codes.splice(codes.length - kids.length), scopes[top])
      if (term._tag === "Lit" && literals.size < SHARED_LITERALS) literals.set(term.value, code)
    }
    terms.pop()
    scopes.pop()
    done.pop()
    lists.pop()
    if (top === 0) return code
    codes.push(code)
    done[top - 1]!++
  }
}

const topLevel = new WeakMap<Term.Term, Code>()

/** Compile a term whose free variables are looked up in `scope` (closed terms are cached). */
export const compile = (term: Term.Term, scope: Scope | undefined): Code => {
  if (scope !== undefined) return compileTree(term, scope)
  let code = topLevel.get(term)
  if (code === undefined) {
    code = compileTree(term, undefined)
    topLevel.set(term, code)
  }
  return code
}
