/**
 * A set of rowids as one bit each, the bits grown up to the highest rowid added: 125 KB at a million rowids,
 * where a Set of numbers takes tens of bytes per entry.
 */
export class RowBits {
  #words = new Uint32Array(0);
  #size = 0;

  /** How many rowids are in the set. */
  get size(): number {
    return this.#size;
  }

  /** Bytes the bits take. */
  get bytes(): number {
    return this.#words.byteLength;
  }

  add(rowid: number): void {
    const w = rowid >>> 5;
    if (w >= this.#words.length) {
      const grown = new Uint32Array(Math.max(w + 1, Math.ceil(this.#words.length * 1.5)));
      grown.set(this.#words);
      this.#words = grown;
    }
    const bit = 1 << (rowid & 31);
    if ((this.#words[w]! & bit) !== 0) return;
    this.#words[w] = this.#words[w]! | bit;
    this.#size++;
  }

  has(rowid: number): boolean {
    const w = rowid >>> 5;
    return w < this.#words.length && (this.#words[w]! & (1 << (rowid & 31))) !== 0;
  }
}
