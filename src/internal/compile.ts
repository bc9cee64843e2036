/**
 * Compiling a term for the machine: a bottom-up fold where each node's form builds its code from
 * its children's, with variables resolved against the scope the binders around them make.
 */
import { formOf } from "../forms/index.ts"
import type * as Term from "../Term.ts"
import type { Code, Scope } from "./code.ts"
import { foldTree } from "./tree.ts"

interface Node {
  readonly term: Term.Term
  readonly scope: Scope | undefined
}

const childNodes = (node: Node): ReadonlyArray<Node> => {
  const { scope, term } = node
  const form = formOf(term)
  const kids = form.compiled?.(term) ?? form.children(term)
  return kids.map((t, i) => {
    const name = form.binds?.(term, i)
    return { term: t, scope: name === undefined ? scope : { name, next: scope } }
  })
}

const build = (node: Node, kids: ReadonlyArray<Code>): Code => formOf(node.term).compile(node.term, kids, node.scope)

const topLevel = new WeakMap<Term.Term, Code>()

/** Compile a term whose free variables are looked up in `scope` (closed terms are cached). */
export const compile = (term: Term.Term, scope: Scope | undefined): Code => {
  if (scope !== undefined) return foldTree<Node, Code>({ term, scope }, childNodes, build)
  let code = topLevel.get(term)
  if (code === undefined) {
    code = foldTree<Node, Code>({ term, scope }, childNodes, build)
    topLevel.set(term, code)
  }
  return code
}
