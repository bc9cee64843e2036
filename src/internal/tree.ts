/**
 * Iterative post-order traversal, so that no term, however deeply nested, can overflow the
 * JavaScript stack while being parsed, compiled, encoded or printed.
 */

interface Frame<N, R> {
  readonly node: N
  readonly kids: ReadonlyArray<N>
  // as long as the kids, filled in order: a node built from it keeps no spare capacity, which a
  // pushed-to array has (a first push makes room for 17)
  readonly results: Array<R>
  done: number
}

/**
 * Fold a tree bottom-up without recursion: `children` lists a node's children, `combine` builds
 * a node's result from its children's results (in order).
 */
export const foldTree = <N, R>(root: N, children: (node: N) => ReadonlyArray<N>, combine: (node: N, results: ReadonlyArray<R>) => R): R => {
  const rootKids = children(root)
  if (rootKids.length === 0) return combine(root, [])
  const frame = (node: N, kids: ReadonlyArray<N>): Frame<N, R> => ({ node, kids, results: new Array<R>(kids.length), done: 0 })
  const stack: Array<Frame<N, R>> = [frame(root, rootKids)]
  let result: R | undefined
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!
    if (top.done < top.kids.length) {
      const child = top.kids[top.done]!
      const kids = children(child)
      if (kids.length === 0) top.results[top.done++] = combine(child, [])
      else stack.push(frame(child, kids))
      continue
    }
    stack.pop()
    result = combine(top.node, top.results)
    if (stack.length > 0) {
      const parent = stack[stack.length - 1]!
      parent.results[parent.done++] = result
    }
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
