// The include graph of the native addon's C++ units, for the circle check (packages/cli/test/includeGraph.test.ts).
// A unit is a .cpp with its .h, taken as one node: the pair is one idea, so a .cpp including its own header is
// no dependency, but X.cpp including Y.h while Y.cpp includes X.h is a circle between two ideas, even though the
// compiler accepts it. Only quoted includes of headers in the same directory count (system and llama.cpp
// headers are not ours to order).
import { readdirSync, readFileSync } from "node:fs";
import { basename, extname, join } from "node:path";

const INCLUDE = /^\s*#\s*include\s+"([^"]+)"/gm;
const UNIT_FILE = /\.(?:cpp|h)$/;

/** The unit a file belongs to: its base name without extension (X.cpp and X.h are both "X"). */
export function unitOf(path) {
  return basename(path, extname(path));
}

/** The headers a C++ text includes with quotes, as written. */
export function includes(text) {
  return [...text.matchAll(INCLUDE)].map((m) => m[1]);
}

/**
 * Unit → units it includes, from `files` (a path → text map of .cpp and .h files in one directory). An include
 * of a header that is not among the files is not an edge; neither is a unit including itself.
 */
export function includeGraph(files) {
  const headers = new Set([...files.keys()].filter((p) => p.endsWith(".h")).map((p) => basename(p)));
  const graph = new Map();
  for (const [path, text] of files) {
    const from = unitOf(path);
    const edges = graph.get(from) ?? new Set();
    for (const header of includes(text)) {
      if (headers.has(header) && unitOf(header) !== from) edges.add(unitOf(header));
    }
    graph.set(from, edges);
  }
  return new Map([...graph].map(([unit, edges]) => [unit, [...edges].sort()]));
}

/** Reads the .cpp and .h files directly under `dir` into a path → text map. */
export function readUnits(dir) {
  const files = new Map();
  for (const name of readdirSync(dir).sort()) {
    if (UNIT_FILE.test(name)) files.set(join(dir, name), readFileSync(join(dir, name), "utf8"));
  }
  return files;
}
