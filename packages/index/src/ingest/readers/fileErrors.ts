import { DocumentReadError } from "../../errors.js";

/** Wraps a filesystem error as a DocumentReadError that names the file and its errno code. */
export function fileError(file: string, what: string, err: unknown): DocumentReadError {
  if (err instanceof DocumentReadError) return err;
  const code = (err as NodeJS.ErrnoException)?.code;
  const hint = code === "EACCES" || code === "EPERM" ? " (permission denied; check the file's permissions)" : code === "ENOENT" ? " (no such file or directory)" : "";
  return new DocumentReadError(file, `cannot ${what}: ${code ?? (err as Error)?.message ?? String(err)}${hint}`, { cause: err, ...(code ? { code } : {}) });
}
