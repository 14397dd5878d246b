import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { docFiles, REPO_ROOT } from "../../bench/render/readme-tables.mjs";
import { anchors, links } from "../../../tools/docs/markdownLinks.mjs";

const read = (file: string) => readFileSync(join(REPO_ROOT, file), "utf8");

/** Every relative link of `file` that does not lead to an existing file, folder or heading. */
function brokenLinks(file: string, text: string, readOther: (path: string) => string): string[] {
  const broken: string[] = [];
  for (const { target, number } of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [path, anchor] = target.split("#") as [string, string | undefined];
    const resolved = path === "" ? join(REPO_ROOT, file) : join(REPO_ROOT, dirname(file), decodeURI(path));
    const where = `${file}:${number} → ${target}`;
    if (!resolved.startsWith(REPO_ROOT) || !existsSync(resolved)) {
      broken.push(`${where} (no such file)`);
      continue;
    }
    if (anchor === undefined) continue;
    if (statSync(resolved).isDirectory() || !resolved.endsWith(".md")) {
      broken.push(`${where} (an anchor into something that is not a Markdown file)`);
      continue;
    }
    const targetText = path === "" ? text : readOther(relative(REPO_ROOT, resolved));
    if (!anchors(targetText).has(anchor)) broken.push(`${where} (no heading makes #${anchor})`);
  }
  return broken;
}

describe("README and docs/", () => {
  it("docs - every relative link in README.md and docs/*.md leads to a file, folder or heading that exists", () => {
    const files = docFiles();
    expect(files.length).toBeGreaterThan(10);
    expect(files.flatMap((f) => brokenLinks(f, read(f), read))).toEqual([]);
  });

  it("docs - a broken file link and a broken anchor are both caught", () => {
    const text = "# Title\n\nSee [x](nope.md), [y](#no-such-heading), [z](#title) and [w](docs/asking.md#configuration).\n\n```\n[not a link](in-a-code-block.md)\n```\n";
    expect(brokenLinks("README.md", text, read)).toEqual([
      "README.md:3 → nope.md (no such file)",
      "README.md:3 → #no-such-heading (no heading makes #no-such-heading)",
    ]);
  });

  it("docs - every pointer in the code's text (help, errors, comments) to a page of docs/ or a README section names a page and heading that exist", () => {
    const headings = (file: string) => new Set([...read(file).matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((m) => m[1]!));
    const sources = readdirSync(join(REPO_ROOT, "packages"), { recursive: true, encoding: "utf8" })
      .filter((f) => /\/src\/.*\.ts$/.test(f) && !f.includes("/gen/") && !f.includes("node_modules"))
      .map((f) => `packages/${f}`);
    expect(sources.length).toBeGreaterThan(100);
    const broken: string[] = [];
    let pointers = 0;
    for (const file of sources) {
      const text = read(file).replace(/\\"/g, '"');
      for (const m of text.matchAll(/docs\/([\w-]+\.md)(?:, "([^"]+)")?/g)) {
        pointers++;
        const page = `docs/${m[1]}`;
        if (!existsSync(join(REPO_ROOT, page))) broken.push(`${file}: ${m[0]} (no such page)`);
        else if (m[2] !== undefined && !headings(page).has(m[2])) broken.push(`${file}: ${m[0]} (no such heading)`);
      }
      for (const m of text.matchAll(/README(?:'s|, | \()"?([A-Z][\w ,'-]*)"?/g)) {
        pointers++;
        if (!headings("README.md").has(m[1]!.trim())) broken.push(`${file}: ${m[0]} (README.md has no such heading)`);
      }
    }
    expect(pointers).toBeGreaterThan(5);
    expect(broken).toEqual([]);
  });

  it("docs - the README is a front door: at most 300 lines, with the two set-up commands and a map of docs/", () => {
    const readme = read("README.md");
    expect(readme.split("\n").length).toBeLessThanOrEqual(300);
    expect(readme).toContain("npm ci && npm run build && npm run demo");
    expect(readme).toContain("npm ci && npm test");
    for (const page of docFiles().filter((f) => f.startsWith("docs/"))) expect(readme, page).toContain(`](${page})`);
  });
});
