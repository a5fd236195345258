// Character arithmetic on JS strings for the text view. Positions are Unicode code points; JS
// strings index UTF-16 units, so these helpers convert, with a fast path for the common case of a
// string without surrogates (checked by one native regex scan).

const SURROGATE = /[\uD800-\uDFFF]/;

/** Number of code points in s (a lone surrogate counts as one). */
export function codePoints(s: string): number {
  if (!SURROGATE.test(s)) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  return n;
}

/** UTF-16 index where code point number `n` starts (s.length when n is the count or beyond). */
export function indexOfCodePoint(s: string, n: number): number {
  if (n <= 0) return 0;
  if (!SURROGATE.test(s)) return Math.min(n, s.length);
  let i = 0;
  for (let k = 0; k < n && i < s.length; k++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff ? 2 : 1;
  }
  return i;
}

/** Newlines in s[from, to). */
export function countNewlines(s: string, from = 0, to = s.length): number {
  let n = 0;
  for (let i = s.indexOf("\n", from); i >= 0 && i < to; i = s.indexOf("\n", i + 1)) n++;
  return n;
}

/** The longest prefix of a well-formed string that fits in `maxBytes` UTF-8 bytes. */
export function utf8Prefix(s: string, maxBytes: number): string {
  if (s.length <= maxBytes / 3 || Buffer.byteLength(s, "utf8") <= maxBytes) return s;
  const bytes = Buffer.from(s.slice(0, maxBytes), "utf8");
  let end = Math.min(maxBytes, bytes.length);
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.toString("utf8", 0, end);
}
