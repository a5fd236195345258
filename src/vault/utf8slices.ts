// Encodes a JS string to UTF-8 a slice at a time, so storing a 200 MB result never materialises a
// second full-size buffer. A slice never ends between the two halves of a surrogate pair (the high
// half is carried into the next slice); otherwise each half would become U+FFFD and the round trip
// would not be byte-exact.

/** UTF-16 code units per slice; the scratch buffer holds 3 bytes per unit (the UTF-8 worst case). */
const SLICE_UNITS = 16 * 1024;

/** Calls `sink` with consecutive UTF-8 byte ranges of `text`. The bytes are only valid until
 *  `sink` resolves (the scratch buffer is reused). */
export async function encodeUtf8InSlices(text: string, sink: (bytes: Uint8Array) => Promise<void>): Promise<number> {
  const encoder = new TextEncoder();
  const scratch = new Uint8Array(SLICE_UNITS * 3);
  let position = 0;
  let total = 0;
  while (position < text.length) {
    let end = Math.min(text.length, position + SLICE_UNITS);
    if (end < text.length) {
      const last = text.charCodeAt(end - 1);
      if (last >= 0xd800 && last <= 0xdbff) end -= 1; // carry the high surrogate
    }
    const { read, written } = encoder.encodeInto(text.slice(position, end), scratch);
    if (read !== end - position) throw new Error("internal error: UTF-8 scratch buffer too small");
    position = end;
    total += written;
    await sink(scratch.subarray(0, written));
  }
  return total;
}
