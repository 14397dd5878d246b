import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { DocumentReadError } from "../../errors.js";
import { fileError } from "./fileErrors.js";
import { documentId } from "./readText.js";
import type { ReadDocument, SourceFile } from "./types.js";

interface TextItemLike {
  str?: string;
  hasEOL?: boolean;
}

/**
 * A PDF as one document: the text layer of every page (pdfjs-dist), pages joined by blank lines. A PDF
 * without a text layer (scanned images) is an error: OCR it first.
 */
export async function* readPdf(file: SourceFile): AsyncGenerator<ReadDocument> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file.path);
  } catch (err) {
    throw fileError(file.path, "read it", err);
  }
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  let pdf;
  try {
    pdf = await pdfjs.getDocument({ data: new Uint8Array(bytes), verbosity: 0, isEvalSupported: false, disableFontFace: true, useSystemFonts: false })
      .promise;
  } catch (err) {
    throw new DocumentReadError(file.path, `not a readable PDF (${(err as Error).message})`, { cause: err });
  }
  try {
    const pages: string[] = [];
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      const text = (content.items as TextItemLike[]).map((item) => (item.str ?? "") + (item.hasEOL ? "\n" : "")).join("");
      pages.push(text.trim());
      page.cleanup();
    }
    const text = pages.filter((p) => p !== "").join("\n\n");
    if (text.trim() === "") {
      throw new DocumentReadError(file.path, `no text layer in ${pdf.numPages} page(s) (a scanned or image-only PDF?); run OCR on it first`);
    }
    const info = (await pdf.getMetadata().catch(() => undefined))?.info as { Title?: unknown } | undefined;
    const title = typeof info?.Title === "string" && info.Title.trim() !== "" ? info.Title.trim() : basename(file.path);
    yield { document: { id: documentId(file), text, title, source: file.path }, file: file.path, bytesRead: file.size, fileSize: file.size };
  } finally {
    await pdf.destroy();
  }
}
