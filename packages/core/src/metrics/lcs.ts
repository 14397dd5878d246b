// Longest common subsequence over token-id sequences, for ROUGE-L and ROUGE-Lsum.
// rouge-score builds the full (n+1)x(m+1) table in both cases. That is fine for sentences but
// not for two 20k-token answers (400M cells), so:
//   - lcsLength keeps only one row: O(n*m) time, O(min(n, m)) memory;
//   - lcsReferenceIndices must return the *same* LCS rouge-score's backtrack picks (ROUGE-Lsum
//     counts which reference tokens it hits, and different LCSs of equal length hit different
//     tokens). It stores every k-th row as a checkpoint (k ~ sqrt(n)) and recomputes one block
//     of k rows at a time while walking back, so a huge "sentence" costs O(m*sqrt(n)) memory
//     and about twice the time of the plain table, with an identical path.

/** Token sequences are compared as integer ids (see `TokenIds` in rouge.ts). */
export type IdSequence = ArrayLike<number>;

/** Length of the longest common subsequence of `a` and `b`. */
export function lcsLength(a: IdSequence, b: IdSequence): number {
  // Iterate over the longer sequence so the row has the length of the shorter one.
  const [outer, inner] = a.length >= b.length ? [a, b] : [b, a];
  const row = new Int32Array(inner.length + 1);
  for (let i = 0; i < outer.length; i++) {
    const token = outer[i];
    let diagonal = 0; // row[j - 1] of the previous outer row
    for (let j = 1; j <= inner.length; j++) {
      const above = row[j]!;
      row[j] = token === inner[j - 1] ? diagonal + 1 : Math.max(above, row[j - 1]!);
      diagonal = above;
    }
  }
  return row[inner.length]!;
}

/** Tables up to this many cells are kept whole; above it the checkpointed walk kicks in. */
const FULL_TABLE_CELLS = 1 << 20;

/** Fills row `i` (1-based) of the LCS table from row `i - 1`. */
function fillRow(previous: Int32Array, current: Int32Array, token: number, can: IdSequence): void {
  current[0] = 0;
  for (let j = 1; j <= can.length; j++) {
    current[j] =
      token === can[j - 1] ? previous[j - 1]! + 1 : Math.max(previous[j]!, current[j - 1]!);
  }
}

/**
 * Indices into `ref` (ascending) of the LCS that rouge-score's `_backtrack_norec` reads out of
 * the table: from the bottom-right corner, take a match when the tokens are equal, otherwise
 * move left only if the cell to the left is strictly greater than the cell above, else move up.
 *
 * @param blockRows rows per recomputed block; tests use it to force the checkpointed path.
 */
export function lcsReferenceIndices(ref: IdSequence, can: IdSequence, blockRows?: number): number[] {
  const n = ref.length;
  const m = can.length;
  if (n === 0 || m === 0) return [];
  const block =
    blockRows ?? ((n + 1) * (m + 1) <= FULL_TABLE_CELLS ? n : Math.max(1, Math.ceil(Math.sqrt(n))));

  // Checkpoint c holds table row c * block. The walk starts in the block holding row n, so
  // rows after that block's first row are never needed as checkpoints.
  const checkpoints: Int32Array[] = [new Int32Array(m + 1)];
  const lastCheckpointRow = Math.floor((n - 1) / block) * block;
  let previous = new Int32Array(m + 1);
  let current = new Int32Array(m + 1);
  for (let i = 1; i <= lastCheckpointRow; i++) {
    fillRow(previous, current, ref[i - 1]!, can);
    if (i % block === 0) checkpoints.push(current.slice());
    [previous, current] = [current, previous];
  }

  // rows[r] = table row (start + r) for the block currently being walked.
  const rows: Int32Array[] = Array.from({ length: block + 1 }, () => new Int32Array(m + 1));
  const picked: number[] = [];
  let i = n;
  let j = m;
  while (i > 0 && j > 0) {
    const start = Math.floor((i - 1) / block) * block;
    rows[0]!.set(checkpoints[start / block]!);
    for (let r = 1; r <= i - start; r++) fillRow(rows[r - 1]!, rows[r]!, ref[start + r - 1]!, can);
    while (i > start && j > 0) {
      if (ref[i - 1] === can[j - 1]) {
        picked.push(i - 1);
        i--;
        j--;
      } else if (rows[i - start]![j - 1]! > rows[i - 1 - start]![j]!) {
        j--;
      } else {
        i--;
      }
    }
  }
  return picked.reverse();
}
