// Byte-bounded text helpers shared by search compaction, the capability summary, the lazy-mode
// instructions and receipt previews. Bounds in the contracts are UTF-8 byte counts, so every clip
// works on bytes, never on UTF-16 code units, and never splits a code point.

const ELLIPSIS = "…"; // 3 bytes in UTF-8

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** Collapses every run of whitespace to one space and trims the ends. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/gu, " ").trim();
}

/** UTF-16 length of the longest prefix of `text` that fits in `max` UTF-8 bytes. */
function prefixWithin(text: string, max: number): number {
  let used = 0;
  let end = 0;
  for (const ch of text) {
    const n = utf8Bytes(ch);
    if (used + n > max) break;
    used += n;
    end += ch.length;
  }
  return end;
}

/**
 * Clips `text` to at most `max` UTF-8 bytes. When a cut is needed the result ends in "…"
 * (the text is cut to max-3 bytes first, at a code-point boundary), as the Go `clipUTF8` does.
 * A result that differs from `text` was clipped.
 */
export function clipUtf8(text: string, max: number): string {
  if (utf8Bytes(text) <= max) return text;
  if (max < 3) return "";
  return text.slice(0, prefixWithin(text, max - 3)) + ELLIPSIS;
}

/** Truncates to at most `max` bytes at a code-point boundary, without an ellipsis. */
export function truncateUtf8(text: string, max: number): string {
  if (utf8Bytes(text) <= max) return text;
  return text.slice(0, prefixWithin(text, max));
}
