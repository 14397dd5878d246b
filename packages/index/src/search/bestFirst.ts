/**
 * FTS5's (rowid, rank) rows in the order `ORDER BY rank, rowid` gives (rank is bm25(): lower is better), as
 * { rowid, partial = −rank }, produced lazily from a binary heap: the caller usually stops after a few hundred
 * rows, so heapifying (linear) and popping those beats sorting them all, in SQLite or here.
 */
export function bestFirst(rows: readonly (readonly [number, number])[]): Generator<{ rowid: number; partial: number }> {
  const n = rows.length;
  const rank = new Float64Array(n);
  const rowid = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    rowid[i] = rows[i]![0];
    rank[i] = rows[i]![1];
  }
  return bestFirstOf(rowid, rank);
}

/** The same over parallel arrays (rank = −score), as a caller that scored the rows itself has them. */
export function* bestFirstOf(rowid: Float64Array, rank: Float64Array): Generator<{ rowid: number; partial: number }> {
  const n = rowid.length;
  const before = (a: number, b: number) => rank[a]! < rank[b]! || (rank[a] === rank[b] && rowid[a]! < rowid[b]!);
  const heap = new Uint32Array(n);
  for (let i = 0; i < n; i++) heap[i] = i;
  const siftDown = (start: number, size: number) => {
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) return;
      const r = l + 1;
      const child = r < size && before(heap[r]!, heap[l]!) ? r : l;
      if (!before(heap[child]!, heap[i]!)) return;
      [heap[i], heap[child]] = [heap[child]!, heap[i]!];
      i = child;
    }
  };
  for (let i = (n >> 1) - 1; i >= 0; i--) siftDown(i, n);
  for (let size = n; size > 0; size--) {
    const top = heap[0]!;
    yield { rowid: rowid[top]!, partial: -rank[top]! };
    heap[0] = heap[size - 1]!;
    siftDown(0, size - 1);
  }
}
