/**
 * Compiling a term for the machine: a bottom-up pass where each node's form builds its code from
 * its children's, with variables resolved against the scope the binders around them make.
 *
 * The pass keeps, for each node on the path from the root to the node being compiled, only the
 * node and how many children are done (in two arrays, no object per node; the scopes binders open
 * and the child lists of wide nodes are kept apart, as they are few), so that compiling a term
 * nested a million levels deep costs little more than the code it makes.
 */
import { formOf } from "../forms/index.ts"
import type * as Term from "../Term.ts"
import type { Code, Scope } from "./code.ts"
import { IntStack } from "./intStack.ts"
import { nestingOf, noteNesting } from "./nesting.ts"

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
  // the path from the root; a deep term read from text comes with its depth, to size the path once
  const nesting = nestingOf(root)
  const terms: Array<Term.Term> = nesting === undefined ? [] : new Array(nesting + 1)
  terms[0] = root
  let top = 0
  // how many children of each node on the path are done
  const done = new IntStack()
  done.push(0)
  // the scopes that binders open along the path, with the depth of the child each covers: a
  // binder is rare next to the nodes, so the path holds no scope of its own per node
  const scopeDepths: Array<number> = []
  const scopes: Array<Scope> = []
  let scope = rootScope
  // the children of the nodes on the path that have many, with the depth of each such node
  const listDepths: Array<number> = []
  const lists: Array<ReadonlyArray<Term.Term>> = []
  // the code of the finished children of the nodes on the path, in order
  const codes: Array<Code> = []
  const literals = new Map<Term.Literal, Code>()
  let deepest = 0
  for (;;) {
    if (top > deepest) deepest = top
    const term = terms[top]!
    const listed = listDepths.length > 0 && listDepths[listDepths.length - 1] === top
    const kids = listed ? lists[lists.length - 1]! : childrenOf(term)
    const i = done.get(top)
    if (i < kids.length) {
      if (i === 0 && kids.length > RELIST_UP_TO) {
        listDepths.push(top)
        lists.push(kids)
      }
      const name = formOf(term).binds?.(term, i)
      if (name !== undefined) {
        scope = { name, next: scope }
        scopeDepths.push(top + 1)
        scopes.push(scope)
      }
      terms[++top] = kids[i]!
      done.push(0)
      continue
    }
    let code = term._tag === "Lit" ? literals.get(term.value) : undefined
    if (code === undefined) {
      code = formOf(term).compile(term, codes.splice(codes.length - kids.length), scope)
      if (term._tag === "Lit" && literals.size < SHARED_LITERALS) literals.set(term.value, code)
    }
    done.pop()
    if (listed) {
      listDepths.pop()
      lists.pop()
    }
    if (scopeDepths.length > 0 && scopeDepths[scopeDepths.length - 1] === top) {
      scopeDepths.pop()
      scopes.pop()
      scope = scopes.length > 0 ? scopes[scopes.length - 1] : rootScope
    }
    if (top === 0) {
      noteNesting(code, deepest)
      return code
    }
    top--
    codes.push(code)
    done.set(top, done.get(top) + 1)
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
