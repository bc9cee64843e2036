/**
 * How deep a term (or its code) nests, noted for the deep ones by whoever walked it first (the
 * text reader, the compiler), so that the next walker can size its stack once: a stack grown a
 * push at a time leaves behind copies of itself that add up to twice its final size.
 */

/** From how many levels a nesting is worth noting. */
const DEEP = 65_536

const nestings = new WeakMap<object, number>()

/** Note that `node` nests `depth` levels deep (kept only when that is deep). */
export const noteNesting = (node: object, depth: number): void => {
  if (depth >= DEEP) nestings.set(node, depth)
}

/** How deep `node` nests, when it is deep and a walker noted it. */
export const nestingOf = (node: object): number | undefined => nestings.get(node)
