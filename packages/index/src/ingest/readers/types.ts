import type { DocumentInput } from "../../types.js";

/** One document read from a source file, with how far into that file reading has got (for progress). */
export interface ReadDocument {
  readonly document: DocumentInput;
  readonly file: string;
  /** Bytes of `file` consumed through this document. */
  readonly bytesRead: number;
  readonly fileSize: number;
}

/** A file (or a document in one) that was deliberately not read: hidden, unsupported, or empty. */
export interface SkippedInput {
  readonly file: string;
  /** The document id when one document of a multi-document file was skipped. */
  readonly id?: string;
  readonly reason: string;
}

export interface ReadOptions {
  /** Called for every skipped file or document; skips are not errors. */
  readonly onSkip?: (skip: SkippedInput) => void;
  /**
   * Called when a file fails (DocumentReadError); reading continues with the next file. Without it the
   * generator throws the first error.
   */
  readonly onError?: (error: Error, file: string) => void;
  /** Files larger than this are refused before reading. Default 200 MB. */
  readonly maxFileBytes?: number;
}

/** A file to read, with the root its document ids are relative to. */
export interface SourceFile {
  readonly path: string;
  readonly root: string;
  readonly size: number;
  readonly kind: SourceKind;
}

export type SourceKind = "jsonl" | "text" | "markdown" | "pdf";
