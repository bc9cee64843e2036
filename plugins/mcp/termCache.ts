/**
 * The inline terms `run` has already read. Parsing, analysing and compiling a term costs more than
 * running a small one, and a client often sends the same term again (a loop of calls, a retried
 * request): the second time, the term is taken from here, with its compiled code.
 *
 * @since 0.2.0
 * @module
 */

/**
 * Values read from JSON terms, by the term's JSON text. The oldest entry leaves first once
 * `capacity` are held; a term whose text is longer than `maxTextLength` is read every time, not
 * kept.
 */
export class TermCache<A> {
  private readonly entries = new Map<string, A>()

  constructor(
    private readonly capacity: number,
    private readonly maxTextLength: number
  ) {}

  /** How many terms are held. */
  get size(): number {
    return this.entries.size
  }

  /** The value read from `json` before, or the one `read` gives now (kept when `keep` says so). */
  get(json: unknown, read: () => A, keep: (value: A) => boolean): A {
    const key = textOf(json)
    if (key === undefined || key.length > this.maxTextLength) return read()
    const held = this.entries.get(key)
    if (held !== undefined) return held
    const value = read()
    if (keep(value)) {
      if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!)
      this.entries.set(key, value)
    }
    return value
  }
}

/** The JSON text of a term, or `undefined` when it has none (a `bigint`, a cycle). */
const textOf = (json: unknown): string | undefined => {
  try {
    return JSON.stringify(json)
  } catch {
    return undefined
  }
}
