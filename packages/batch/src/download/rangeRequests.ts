// The conditional and range request headers of a download, read as RFC 9110 says (sections 13.1.2, 13.1.5,
// 14.1.2, 14.2): what a client may send is answered, and what it must not rely on is ignored, never refused.

/** The bytes [start, end] of a representation of `total` bytes. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

const RANGE_SPEC = /^(\d*)-(\d*)$/;

/**
 * The one range a `Range` header asks for; undefined when it is to be ignored (absent, syntactically invalid,
 * another unit than bytes, or several ranges: a server may always answer those with the whole representation,
 * 200); "unsatisfiable" only for a well-formed header none of whose ranges overlaps the representation (416).
 */
export function parseRange(header: string | undefined, total: number): ByteRange | "unsatisfiable" | undefined {
  if (header === undefined) return undefined;
  const eq = header.indexOf("=");
  if (eq < 0 || header.slice(0, eq).trim().toLowerCase() !== "bytes") return undefined;
  const specs: (ByteRange | "unsatisfiable")[] = [];
  for (const part of header.slice(eq + 1).split(",")) {
    const spec = part.trim();
    if (spec === "") continue; // an empty list element (RFC 9110 5.6.1)
    const m = RANGE_SPEC.exec(spec);
    if (m === null || (m[1] === "" && m[2] === "")) return undefined;
    if (m[1] === "") {
      // A suffix: the last N bytes. Of an empty file that is nothing a Content-Range could name: served whole.
      const suffix = Number(m[2]);
      if (suffix === 0) specs.push("unsatisfiable");
      else if (total === 0) return undefined;
      else specs.push({ start: Math.max(0, total - suffix), end: total - 1 });
      continue;
    }
    const start = Number(m[1]);
    if (m[2] !== "" && Number(m[2]) < start) return undefined; // last before first: an invalid header, ignored
    specs.push(start >= total ? "unsatisfiable" : { start, end: m[2] === "" ? total - 1 : Math.min(Number(m[2]), total - 1) });
  }
  if (specs.length === 0) return undefined;
  const satisfiable = specs.filter((s): s is ByteRange => s !== "unsatisfiable");
  if (satisfiable.length === 0) return "unsatisfiable";
  // Several ranges would need a multipart answer; the whole file serves them too.
  return specs.length === 1 ? satisfiable[0] : undefined;
}

/**
 * Whether `If-None-Match` matches the representation's strong `etag`: `*` matches any existing one, a list
 * matches when one of its tags does by weak comparison (W/"x" equals "x").
 */
export function noneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === "*") return true;
  const opaque = etag.replace(/^W\//, "");
  for (const m of header.matchAll(/(?:W\/)?("[^"]*")/g)) if (m[1] === opaque) return true;
  return false;
}

/**
 * Whether `If-Range` lets the `Range` stand: only a strong ETag equal to the representation's (a weak one or a
 * date never does, RFC 9110 13.1.5; this file has no Last-Modified), else the whole file is sent.
 */
export function ifRangeHolds(header: string | string[] | undefined, etag: string): boolean {
  return header === undefined || (typeof header === "string" && header.trim() === etag);
}
