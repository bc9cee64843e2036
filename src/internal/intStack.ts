/**
 * A stack of small non-negative integers kept in a typed array: half the bytes of an array of
 * numbers, and a grown copy leaves one buffer behind instead of a chain of them. The readers and
 * the compiler keep one entry per level of the term they walk, which for a term nested a million
 * levels deep is most of what they hold besides the term.
 */
export class IntStack {
  private data = new Uint32Array(64)
  length = 0

  push(value: number): void {
    if (this.length === this.data.length) {
      const longer = new Uint32Array(2 * this.data.length)
      longer.set(this.data)
      this.data = longer
    }
    this.data[this.length++] = value
  }

  pop(): void {
    this.length--
  }

  get(index: number): number {
    return this.data[index]!
  }

  set(index: number, value: number): void {
    this.data[index] = value
  }
}
