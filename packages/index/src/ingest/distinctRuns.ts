/**
 * Items cut into consecutive runs in which no id repeats, in order: the items of a run can be written (or
 * sent) together, and a later version of an id still comes after the earlier one.
 */
export function distinctRuns<T>(items: readonly T[], idOf: (item: T) => string): T[][] {
  const runs: T[][] = [];
  let ids = new Set<string>();
  for (const item of items) {
    const id = idOf(item);
    if (runs.length === 0 || ids.has(id)) {
      runs.push([]);
      ids = new Set();
    }
    ids.add(id);
    runs.at(-1)!.push(item);
  }
  return runs;
}
