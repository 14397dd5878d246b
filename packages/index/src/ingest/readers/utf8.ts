import { DocumentReadError } from "../../errors.js";

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Decodes UTF-8 strictly; invalid bytes are an error naming the file and the byte offset of the first bad
 * sequence (`baseOffset` is where `bytes` starts in the file). A leading BOM is dropped.
 */
export function decodeUtf8(bytes: Uint8Array, file: string, baseOffset = 0): string {
  try {
    const text = decoder.decode(bytes);
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } catch (err) {
    const at = baseOffset + firstInvalidUtf8(bytes);
    throw new DocumentReadError(file, `invalid UTF-8 at byte offset ${at}; convert the file to UTF-8 (e.g. iconv -t UTF-8)`, { cause: err });
  }
}

/** Offset of the first byte that does not start a valid UTF-8 sequence (bytes.length if all are valid). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    let n: number;
    let min: number;
    if (b < 0x80) [n, min] = [0, 0];
    else if (b >= 0xc2 && b <= 0xdf) [n, min] = [1, 0x80];
    else if (b >= 0xe0 && b <= 0xef) [n, min] = [2, 0x800];
    else if (b >= 0xf0 && b <= 0xf4) [n, min] = [3, 0x10000];
    else return i;
    let cp = n === 0 ? b : b & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += n + 1;
  }
  return bytes.length;
}
