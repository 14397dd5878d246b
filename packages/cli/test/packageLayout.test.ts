// The house's rooms (docs/layout.md): how big each package may grow, that packages depend one way only, and
// that every package says in its README what it is, what it may import and where it is entered.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../bench/render/readme-tables.mjs";
import { circles } from "../../../tools/ci/importGraph.mjs";
import { dependencyGraph, readWorkspace, undeclaredImports, type WorkspacePackage } from "../../../tools/ci/packageGraph.mjs";

const packages = readWorkspace(join(REPO_ROOT, "packages"));
const byName = new Map(packages.map((p) => [p.name, p]));
const total = packages.reduce((n, p) => n + p.lines, 0);

describe("the packages", () => {
  it("layout - the command line and the gateway stay small, and no package holds more than a fifth of the lines", () => {
    expect(packages.map((p) => p.name)).toEqual(expect.arrayContaining(["@attr-rag/bench", "@attr-rag/eval", "@attr-rag/batch"]));
    expect(byName.get("@attr-rag/cli")!.lines).toBeLessThanOrEqual(4_500);
    expect(byName.get("@attr-rag/gateway")!.lines).toBeLessThanOrEqual(5_500);
    const over = packages.filter((p) => p.lines > 0.2 * total).map((p) => `${p.name}: ${p.lines} of ${total} lines`);
    expect(over).toEqual([]);
  });

  it("layout - every import of a workspace package is declared, nothing declared goes unused, and the declared graph has no circle", () => {
    const known = new Set([...byName.keys(), "@attr-rag/native"]);
    expect(undeclaredImports(packages, known)).toEqual([]);
    expect(packages.flatMap((p) => p.declared.filter((d) => !p.imported.includes(d)).map((d) => `${p.name} declares ${d} but never imports it`))).toEqual([]);
    expect(circles(dependencyGraph(packages))).toEqual([]);
  });

  it("layout - an upward import is caught: undeclared, or declared and closing a circle", () => {
    const pkg = (name: string, declared: string[], imported: string[]): WorkspacePackage => ({ dir: name, name, declared, imported, lines: 1, readme: null });
    const low = pkg("@attr-rag/low", [], ["@attr-rag/high"]);
    const high = pkg("@attr-rag/high", ["@attr-rag/low"], ["@attr-rag/low"]);
    expect(undeclaredImports([low, high], new Set(["@attr-rag/low", "@attr-rag/high"]))).toEqual(["@attr-rag/low imports @attr-rag/high without declaring it"]);
    const declared = { ...low, declared: ["@attr-rag/high"] };
    expect(circles(dependencyGraph([declared, high]))).toEqual([["@attr-rag/high", "@attr-rag/low"]]);
  });

  it("layout - every package's README says what it is, what it may import (exactly its dependencies) and its entry points", () => {
    const wrong: string[] = [];
    for (const p of packages) {
      if (p.readme === null) {
        wrong.push(`packages/${p.dir}/README.md is missing`);
        continue;
      }
      if (!p.readme.startsWith(`# ${p.name}\n`)) wrong.push(`packages/${p.dir}/README.md must start with "# ${p.name}"`);
      const line = /^May import: (.*)$/m.exec(p.readme)?.[1];
      const listed = line === undefined ? null : line === "nothing of ours." ? [] : [...line.matchAll(/`(@attr-rag\/[\w-]+)`/g)].map((m) => m[1]!).sort();
      if (JSON.stringify(listed) !== JSON.stringify(p.declared)) wrong.push(`packages/${p.dir}/README.md: "May import:" lists ${JSON.stringify(listed)}, package.json declares ${JSON.stringify(p.declared)}`);
      if (!/^Entry points?: /m.test(p.readme)) wrong.push(`packages/${p.dir}/README.md has no "Entry points:" line`);
    }
    expect(wrong).toEqual([]);
  });
});
