import { InvalidDocumentError } from "../errors.js";
import type { DocumentInput } from "../types.js";

/** Rejects a malformed document before anything is embedded or written. */
export function validateDocument(doc: DocumentInput): void {
  if (typeof doc !== "object" || doc === null) throw new InvalidDocumentError("upsertDocument: expected a document object { id, text, title?, source?, license? }");
  if (typeof doc.id !== "string" || doc.id.trim().length === 0) {
    throw new InvalidDocumentError("upsertDocument: document id must be a non-empty string");
  }
  if (typeof doc.text !== "string") {
    throw new InvalidDocumentError(`upsertDocument: text of document "${doc.id}" must be a string, got ${typeof doc.text}`);
  }
  if (doc.text.trim().length === 0) {
    throw new InvalidDocumentError(
      `upsertDocument: document "${doc.id}" has no text (empty or whitespace only); nothing was stored — skip it or fix its source`,
    );
  }
  if (doc.ingestedAt !== undefined && (typeof doc.ingestedAt !== "string" || Number.isNaN(Date.parse(doc.ingestedAt)))) {
    throw new InvalidDocumentError(`upsertDocument: ingestedAt of document "${doc.id}" must be an ISO 8601 time when given`);
  }
  for (const field of ["title", "source", "license"] as const) {
    const value = doc[field];
    if (value !== undefined && typeof value !== "string") {
      throw new InvalidDocumentError(`upsertDocument: ${field} of document "${doc.id}" must be a string when given, got ${typeof value}`);
    }
  }
}
