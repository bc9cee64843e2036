/**
 * Iterative post-order traversal, so that no term, however deeply nested, can overflow the
 * JavaScript stack while being parsed, compiled, encoded or printed.
 */

interface Frame<N, R> {
  readonly node: N
  readonly kids: ReadonlyArray<N>
  readonly results: Array<R>
}

/**
 * Fold a tree bottom-up without recursion: `children` lists a node's children, `combine` builds
 * a node's result from its children's results (in order).
 */
export const foldTree = <N, R>(root: N, children: (node: N) => ReadonlyArray<N>, combine: (node: N, results: ReadonlyArray<R>) => R): R => {
  const rootKids = children(root)
  if (rootKids.length === 0) return combine(root, [])
  const stack: Array<Frame<N, R>> = [{ node: root, kids: rootKids, results: [] }]
  let result: R | undefined
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!
    if (top.results.length < top.kids.length) {
      const child = top.kids[top.results.length]!
      const kids = children(child)
      if (kids.length === 0) top.results.push(combine(child, []))
      else stack.push({ node: child, kids, results: [] })
      continue
    }
    stack.pop()
    result = combine(top.node, top.results)
    if (stack.length > 0) stack[stack.length - 1]!.results.push(result)
  }
  return result as R
}

/** Visit every node of a tree, pre-order, without recursion. */
export const forEachNode = <N>(root: N, children: (node: N) => ReadonlyArray<N>, visit: (node: N) => void): void => {
  const stack: Array<N> = [root]
  while (stack.length > 0) {
    const node = stack.pop()!
    visit(node)
    const kids = children(node)
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!)
  }
}
