// The import graph of the packages' TypeScript sources, for the circle and package-face checks
// (packages/cli/test/importGraph.test.ts): which source file imports which, found by reading import and
// export-from statements (type-only ones included: a circle of types is still a circle to a reader).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?["']([^"']+)["']/g;

/** Every .ts file under `dir` (recursively), skipping generated code. */
export function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== "gen" && name !== "node_modules") out.push(...sourceFiles(path));
    } else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** The module specifiers a source text imports or re-exports. */
export function specifiers(text) {
  return [...text.matchAll(IMPORT)].map((m) => m[1]);
}

/**
 * Edges between the given files: `files` maps a path to its text. Relative specifiers ending in .js are
 * resolved to the .ts beside them; anything else is an edge to the package named (kept separately).
 */
export function importGraph(files) {
  const graph = new Map();
  const packages = new Map();
  for (const [path, text] of files) {
    const local = new Set();
    const external = new Set();
    for (const spec of specifiers(text)) {
      if (spec.startsWith(".")) {
        const target = resolve(dirname(path), spec.replace(/\.js$/, ".ts"));
        local.add(files.has(target) ? target : resolve(dirname(path), spec.replace(/\.js$/, "/index.ts")));
      } else external.add(spec);
    }
    graph.set(path, [...local].filter((t) => files.has(t)));
    packages.set(path, [...external]);
  }
  return { graph, packages };
}

/** Strongly connected components of more than one file (or a file importing itself): the circles. */
export function circles(graph) {
  let index = 0;
  const stack = [];
  const on = new Set();
  const idx = new Map();
  const low = new Map();
  const out = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** Reads every package's src/ under `packagesDir` into a path → text map. */
export function readPackages(packagesDir) {
  const files = new Map();
  for (const name of readdirSync(packagesDir)) {
    const src = resolve(packagesDir, name, "src");
    if (!existsSync(src)) continue;
    for (const path of sourceFiles(src)) files.set(path, readFileSync(path, "utf8"));
  }
  return files;
}

