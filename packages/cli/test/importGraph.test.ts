import { readFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../bench/render/readme-tables.mjs";
import { circles, importGraph, readPackages } from "../../../tools/ci/importGraph.mjs";

const PACKAGES = join(REPO_ROOT, "packages");
const files = readPackages(PACKAGES);
const { graph, packages } = importGraph(files);
const rel = (p: string) => relative(PACKAGES, p);
const packageOf = (p: string) => rel(p).split(sep)[0]!;

describe("the import graph of packages/*/src", () => {
  it("imports - no circles between source files (type-only imports count)", () => {
    expect(files.size).toBeGreaterThan(300);
    expect(circles(graph).map((c) => c.map(rel))).toEqual([]);
  });

  it("imports - a deliberately added circle is caught, through a type-only import too", () => {
    const dir = resolve("/virtual/pkg/src");
    const virtual = new Map([
      [join(dir, "facade.ts"), 'import { run } from "./op.js";\nexport const x = run;\n'],
      [join(dir, "op.ts"), 'import type { Facade } from "./facade.js";\nexport function run(f: Facade) {}\n'],
      [join(dir, "leaf.ts"), "export type Leaf = number;\n"],
      [join(dir, "user.ts"), 'export { x } from "./facade.js";\nimport type { Leaf } from "./leaf.js";\n'],
    ]);
    const found = circles(importGraph(virtual).graph).map((c) => c.map((p) => relative(dir, p)));
    expect(found).toEqual([["facade.ts", "op.ts"]]);
  });

  it("imports - packages meet only at their faces: by name (or an exported subpath), never by path", () => {
    const exportsOf = new Map<string, Set<string>>();
    const workspaces = [...new Set([...files.keys()].map(packageOf))].map((name) => join(PACKAGES, name)).concat(join(REPO_ROOT, "native"));
    for (const dir of workspaces) {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string; exports?: Record<string, unknown> };
      exportsOf.set(pkg.name, new Set(Object.keys(pkg.exports ?? { ".": {} }).map((k) => (k === "." ? pkg.name : `${pkg.name}/${k.slice(2)}`))));
    }
    const wrong: string[] = [];
    for (const [file, specs] of packages) {
      for (const spec of specs.filter((s) => s.startsWith("@attr-rag/"))) {
        const name = spec.split("/").slice(0, 2).join("/");
        if (!exportsOf.get(name)?.has(spec)) wrong.push(`${rel(file)} imports ${spec}`);
      }
    }
    for (const [file, targets] of graph) for (const t of targets) if (packageOf(t) !== packageOf(file)) wrong.push(`${rel(file)} reaches into ${rel(t)}`);
    expect(wrong).toEqual([]);
  });
});
