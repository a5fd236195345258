// Byte-bounded text helpers shared by compaction, templates and the capability summary.
// Bounds in the contract are UTF-8 byte counts, so every clip works on bytes, never on
// UTF-16 code units, and never splits a code point.

const ELLIPSIS = "…"; // 3 bytes in UTF-8

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** Collapses every run of whitespace to one space and trims the ends. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/gu, " ").trim();
}

/**
 * Clips `text` to at most `max` UTF-8 bytes. When a cut is needed the result ends in "…"
 * (the text is cut to max-3 bytes first, at a code-point boundary), as the Go `clipUTF8` does.
 */
export function clipUtf8(text: string, max: number): { text: string; clipped: boolean } {
  if (utf8Bytes(text) <= max) return { text, clipped: false };
  if (max < 3) return { text: "", clipped: true };
  const budget = max - 3;
  let used = 0;
  let out = "";
  for (const ch of text) {
    const n = utf8Bytes(ch);
    if (used + n > budget) break;
    out += ch;
    used += n;
  }
  return { text: out + ELLIPSIS, clipped: true };
}

/** Truncates to at most `max` bytes at a code-point boundary, without an ellipsis. */
export function truncateUtf8(text: string, max: number): string {
  if (utf8Bytes(text) <= max) return text;
  let used = 0;
  let out = "";
  for (const ch of text) {
    const n = utf8Bytes(ch);
    if (used + n > max) break;
    out += ch;
    used += n;
  }
  return out;
}
