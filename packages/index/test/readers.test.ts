import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DocumentReadError } from "../src/errors.js";
import { readDocuments } from "../src/ingest/readers/readDocuments.js";
import type { ReadDocument, SkippedInput } from "../src/ingest/readers/types.js";
import { firstInvalidUtf8 } from "../src/ingest/readers/utf8.js";
import { minimalPdf } from "./helpers/minimalPdf.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "attr-rag-readers-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function readAll(paths: string[], maxFileBytes?: number) {
  const docs: ReadDocument[] = [];
  const skipped: SkippedInput[] = [];
  const errors: { error: Error; file: string }[] = [];
  for await (const d of readDocuments(paths, {
    onSkip: (s) => skipped.push(s),
    onError: (error, file) => errors.push({ error, file }),
    ...(maxFileBytes ? { maxFileBytes } : {}),
  })) {
    docs.push(d);
  }
  return { docs, skipped, errors };
}

describe("readDocuments", () => {
  it("readers - jsonl corpus lines become documents with all SPEC fields, lazily and in order", async () => {
    const file = join(dir, "corpus.jsonl");
    writeFileSync(
      file,
      [
        JSON.stringify({ id: "a", title: "A", text: "alpha text", source: "s1", license: "CC0" }),
        "",
        JSON.stringify({ id: "b", text: "beta text" }),
        JSON.stringify({ id: "empty", text: "   " }),
      ].join("\n"),
    );
    const { docs, skipped, errors } = await readAll([file]);
    expect(errors).toEqual([]);
    expect(docs.map((d) => d.document)).toEqual([
      { id: "a", title: "A", text: "alpha text", source: "s1", license: "CC0" },
      { id: "b", text: "beta text", title: undefined, source: undefined, license: undefined },
    ]);
    expect(docs[1]!.bytesRead).toBeLessThanOrEqual(docs[1]!.fileSize);
    expect(docs[0]!.bytesRead).toBeLessThan(docs[1]!.bytesRead);
    expect(skipped).toEqual([{ file, id: "empty", reason: 'line 4: document "empty" has no text' }]);
  });

  it("readers - bad JSON and missing fields name the file and line; earlier documents were still read", async () => {
    const file = join(dir, "bad.jsonl");
    writeFileSync(file, `${JSON.stringify({ id: "ok", text: "fine" })}\n{"id": "x", "text": \n`);
    const { docs, errors } = await readAll([file]);
    expect(docs.map((d) => d.document.id)).toEqual(["ok"]);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.error).toBeInstanceOf(DocumentReadError);
    expect(errors[0]!.error.message).toMatch(/bad\.jsonl: line 2: not valid JSON/);
    const missing = join(dir, "missing.jsonl");
    writeFileSync(missing, `${JSON.stringify({ title: "no id", text: "t" })}\n`);
    await expect(readAll([missing]).then((r) => r.errors[0]!.error.message)).resolves.toMatch(/missing\.jsonl: line 1: field "id" is missing/);
    // Without onError the first failure is thrown.
    await expect(async () => {
      for await (const _ of readDocuments([file])) void _;
    }).rejects.toThrow(/line 2: not valid JSON/);
  });

  it("readers - txt and md files: id relative to the folder, title from the first heading or the file name", async () => {
    mkdirSync(join(dir, "notes", "deep"), { recursive: true });
    writeFileSync(join(dir, "notes", "plain.txt"), "Just some text.\nSecond line.");
    writeFileSync(join(dir, "notes", "deep", "guide.md"), "Intro line\n\n## Distillation guide ##\n\nHeat gently.");
    writeFileSync(join(dir, "notes", "bare.md"), "no heading here");
    writeFileSync(join(dir, "notes", ".hidden.txt"), "secret");
    writeFileSync(join(dir, "notes", "image.png"), "not text");
    writeFileSync(join(dir, "notes", "blank.txt"), "  \n\n ");
    const { docs, skipped, errors } = await readAll([join(dir, "notes")]);
    expect(errors).toEqual([]);
    expect(docs.map((d) => [d.document.id, d.document.title])).toEqual([
      ["bare.md", "bare.md"],
      ["deep/guide.md", "Distillation guide"],
      ["plain.txt", "plain.txt"],
    ]);
    expect(docs[2]!.document.source).toBe(join(dir, "notes", "plain.txt"));
    expect(docs[2]!.document.text).toBe("Just some text.\nSecond line.");
    expect(skipped.map((s) => s.reason)).toEqual([
      "hidden",
      "empty document (no text)",
      'unsupported file type ".png" (supported: .jsonl, .txt, .md, .markdown, .pdf)',
    ]);
    // A file given directly: its id is its file name.
    const single = await readAll([join(dir, "notes", "plain.txt")]);
    expect(single.docs[0]!.document.id).toBe("plain.txt");
  });

  it("readers - invalid UTF-8 names the file and the byte offset", async () => {
    const txt = join(dir, "latin1.txt");
    writeFileSync(txt, Buffer.concat([Buffer.from("caf"), Buffer.from([0xe9]), Buffer.from(" au lait")]));
    const jsonl = join(dir, "latin1.jsonl");
    const line1 = `${JSON.stringify({ id: "a", text: "ok" })}\n`;
    writeFileSync(jsonl, Buffer.concat([Buffer.from(line1), Buffer.from('{"id":"b","text":"caf'), Buffer.from([0xe9, 0x22, 0x7d, 0x0a])]));
    const { docs, errors } = await readAll([txt, jsonl]);
    expect(docs.map((d) => d.document.id)).toEqual(["a"]);
    expect(errors.map((e) => e.error.message)).toEqual([
      `${txt}: invalid UTF-8 at byte offset 3; convert the file to UTF-8 (e.g. iconv -t UTF-8)`,
      `${jsonl}: invalid UTF-8 at byte offset ${Buffer.byteLength(line1) + 21}; convert the file to UTF-8 (e.g. iconv -t UTF-8)`,
    ]);
    expect(firstInvalidUtf8(Buffer.from("héllo ✓ 😀"))).toBe(Buffer.byteLength("héllo ✓ 😀"));
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xed, 0xa0, 0x80]))).toBe(1); // a UTF-16 surrogate
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xc0, 0x80]))).toBe(1); // overlong
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xe2, 0x82]))).toBe(1); // truncated
  });

  it("readers - files over the size limit are refused before reading; missing files give the errno code", async () => {
    const big = join(dir, "big.txt");
    writeFileSync(big, "x".repeat(2048));
    const { docs, errors } = await readAll([big, join(dir, "nope.txt")], 1024);
    expect(docs).toEqual([]);
    expect(errors[0]!.error.message).toMatch(/big\.txt: file is 2048 bytes, over the 1024 bytes limit per file; split it/);
    expect((errors[0]!.error as DocumentReadError).code).toBe("EFBIG");
    expect(errors[1]!.error.message).toMatch(/nope\.txt: cannot read it: ENOENT/);
    expect((errors[1]!.error as DocumentReadError).code).toBe("ENOENT");
    symlinkSync(join(dir, "gone.txt"), join(dir, "dangling.txt"));
    mkdirSync(join(dir, "sub"));
    symlinkSync(join(dir, "gone.txt"), join(dir, "sub", "dangling.txt"));
    const inFolder = await readAll([join(dir, "sub")]);
    expect((inFolder.errors[0]!.error as DocumentReadError).code).toBe("ENOENT");
  });

  it("readers - a 201 MB file is refused by the default 200 MB limit without being read", async () => {
    const huge = join(dir, "huge.jsonl");
    writeFileSync(huge, "");
    truncateSync(huge, 201 * 1024 * 1024); // sparse: no disk space used
    const started = Date.now();
    const { docs, errors } = await readAll([huge]);
    expect(docs).toEqual([]);
    expect(errors[0]!.error.message).toBe(
      `${huge}: file is 201.0 MB, over the 200.0 MB limit per file; split it (e.g. into several JSONL files) and ingest the parts`,
    );
    expect(Date.now() - started).toBeLessThan(1000);
  });

  // Root reads any file whatever its mode, so the error cannot happen there.
  const asRoot = process.getuid?.() === 0;
  it.skipIf(asRoot)(`readers - an unreadable file is an error with EACCES${asRoot ? " (skipped: running as root, which can read any file)" : ""}`, async () => {
    const file = join(dir, "locked.txt");
    writeFileSync(file, "secret");
    chmodSync(file, 0o000);
    const { errors } = await readAll([file]);
    expect((errors[0]!.error as DocumentReadError).code).toBe("EACCES");
  });

  it("readers - pdf: the text layer of every page becomes one document; a PDF without text is a clear error", async () => {
    writeFileSync(join(dir, "paper.pdf"), minimalPdf(["Titration of acetic acid", "with sodium hydroxide (0.1 M)."]));
    writeFileSync(join(dir, "scan.pdf"), minimalPdf([]));
    writeFileSync(join(dir, "broken.pdf"), "%PDF-1.4\nthis is not really a pdf");
    const { docs, errors } = await readAll([dir]);
    expect(docs).toHaveLength(1);
    expect(docs[0]!.document.id).toBe("paper.pdf");
    expect(docs[0]!.document.title).toBe("paper.pdf");
    expect(docs[0]!.document.text).toMatch(/Titration of acetic acid\s+with sodium hydroxide \(0\.1 M\)\./);
    const messages = errors.map((e) => e.error.message);
    expect(messages.some((m) => /broken\.pdf: /.test(m))).toBe(true);
    expect(messages.some((m) => /scan\.pdf: no text layer in 1 page\(s\)/.test(m))).toBe(true);
  });
});
