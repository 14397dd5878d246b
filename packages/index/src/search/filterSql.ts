import type { SearchFilters } from "../types.js";

/**
 * The document/source filter as one SQL condition on chunk alias `c`, with JSON-array parameters so one
 * prepared statement serves every filter combination (NULL = no filter; an empty array matches nothing).
 */
export const FILTER_SQL = `
  (@docIds IS NULL OR c.doc_id IN (SELECT value FROM json_each(@docIds)))
  AND (@sources IS NULL OR c.doc_id IN (SELECT id FROM documents WHERE source IN (SELECT value FROM json_each(@sources))))`;

export function filterParams(filters: SearchFilters): { docIds: string | null; sources: string | null } {
  return {
    docIds: filters.docIds ? JSON.stringify(filters.docIds) : null,
    sources: filters.sources ? JSON.stringify(filters.sources) : null,
  };
}

export function hasFilters(filters: SearchFilters): boolean {
  return filters.docIds !== undefined || filters.sources !== undefined;
}
