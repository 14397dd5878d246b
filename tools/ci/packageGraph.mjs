// The workspace packages as the layout checks see them (packages/cli/test/packageLayout.test.ts): each
// package's name, the @attr-rag packages it declares as dependencies and those its sources import, its lines of
// source, and its README. "No upward import" is two facts: every import is declared, and the declared
// dependencies have no circle (a package that imports one above it closes a circle).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sourceFiles, specifiers } from "./importGraph.mjs";

/** Source files counted as a package's lines: src/ (generated code left out) and its stand-alone scripts. */
function countedFiles(dir) {
  const files = existsSync(join(dir, "src")) ? sourceFiles(join(dir, "src")) : [];
  for (const extra of ["scripts", "render"]) {
    const d = join(dir, extra);
    if (existsSync(d)) files.push(...readdirSync(d).filter((n) => n.endsWith(".mjs")).map((n) => join(d, n)));
  }
  return files;
}

const DYNAMIC_IMPORT = /\bimport\(\s*["']([^"']+)["']\s*\)/g;
/** Static imports and re-exports, and `import("…")` of a literal name (a script may load a package late). */
const imports = (text) => [...specifiers(text), ...[...text.matchAll(DYNAMIC_IMPORT)].map((m) => m[1])];

const lineCount = (text) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

/** Every workspace package under `packagesDir`. */
export function readWorkspace(packagesDir) {
  const out = [];
  for (const name of readdirSync(packagesDir).sort()) {
    const dir = join(packagesDir, name);
    if (!existsSync(join(dir, "package.json"))) continue;
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const files = countedFiles(dir);
    const texts = files.map((f) => readFileSync(f, "utf8"));
    const imported = new Set(texts.flatMap(imports).filter((s) => s.startsWith("@attr-rag/")).map((s) => s.split("/").slice(0, 2).join("/")));
    imported.delete(pkg.name);
    out.push({
      dir: name,
      name: pkg.name,
      declared: Object.keys(pkg.dependencies ?? {}).filter((d) => d.startsWith("@attr-rag/")).sort(),
      imported: [...imported].sort(),
      lines: texts.reduce((n, t) => n + lineCount(t), 0),
      readme: existsSync(join(dir, "README.md")) ? readFileSync(join(dir, "README.md"), "utf8") : null,
    });
  }
  return out;
}

/** Imports a package's sources make of workspace packages it does not declare (`known`: the workspace's names). */
export function undeclaredImports(packages, known) {
  return packages.flatMap((p) => p.imported.filter((i) => known.has(i) && !p.declared.includes(i)).map((i) => `${p.name} imports ${i} without declaring it`));
}

/** The declared dependency graph between workspace packages (name → names). */
export function dependencyGraph(packages) {
  const names = new Set(packages.map((p) => p.name));
  return new Map(packages.map((p) => [p.name, p.declared.filter((d) => names.has(d))]));
}
