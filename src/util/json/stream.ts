// JSON.stringify, one piece at a time. A 200 MB tool result must be measured and stored without
// building a second 200 MB string: jsonPieces() yields the exact text JSON.stringify(value) would
// produce, in small pieces (long strings are escaped a slice at a time, never splitting a
// surrogate pair), and jsonByteLength() sums their UTF-8 sizes.

/** UTF-16 code units per slice of a long string. */
const SLICE = 64 * 1024;

type Json = unknown;

/** Yields the text of JSON.stringify(value) in pieces; joined, they are identical to it. */
export function* jsonPieces(value: Json): Generator<string> {
  const v = toJsonValue(value, "");
  if (v === undefined) return;
  yield* piecesOf(v);
}

function* piecesOf(v: Json): Generator<string> {
  if (typeof v === "string") {
    yield* stringPieces(v);
    return;
  }
  if (v === null || typeof v !== "object") {
    yield JSON.stringify(v);
    return;
  }
  if (Array.isArray(v)) {
    yield "[";
    for (let i = 0; i < v.length; i++) {
      if (i > 0) yield ",";
      const item = toJsonValue(v[i] as Json, String(i));
      // Arrays serialise unrepresentable items as null, like JSON.stringify.
      if (item === undefined) yield "null";
      else yield* piecesOf(item);
    }
    yield "]";
    return;
  }
  yield "{";
  let first = true;
  for (const key of Object.keys(v)) {
    const item = toJsonValue((v as Record<string, Json>)[key], key);
    if (item === undefined) continue;
    yield first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`;
    first = false;
    yield* piecesOf(item);
  }
  yield "}";
}

function* stringPieces(s: string): Generator<string> {
  if (s.length <= SLICE) {
    yield JSON.stringify(s);
    return;
  }
  yield '"';
  let pos = 0;
  while (pos < s.length) {
    let end = Math.min(s.length, pos + SLICE);
    const last = s.charCodeAt(end - 1);
    // Keep a surrogate pair together: split halves would each be escaped as lone surrogates.
    if (end < s.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    const quoted = JSON.stringify(s.slice(pos, end));
    yield quoted.slice(1, -1);
    pos = end;
  }
  yield '"';
}

/** Applies toJSON and drops what JSON.stringify drops (undefined, functions, symbols). */
function toJsonValue(v: Json, key: string): Json {
  if (v !== null && typeof v === "object" && typeof (v as { toJSON?: unknown }).toJSON === "function") {
    v = (v as { toJSON: (k: string) => Json }).toJSON(key);
  }
  if (v === undefined || typeof v === "function" || typeof v === "symbol") return undefined;
  if (typeof v === "bigint") throw new TypeError("Do not know how to serialize a BigInt");
  return v;
}

// The text of small values jsonByteLength() measured, until the value is collected. A result is
// measured for the response budget and telemetry and then sent: the lean HTTP transport takes
// the text from here instead of serialising the same object a second time.
const texts = new WeakMap<object, string>();

/** JSON.stringify(value) when jsonByteLength() already built it; values must not change after. */
export function jsonTextOf(value: object): string | undefined {
  return texts.get(value);
}

/** Byte length of JSON.stringify(value) as UTF-8, without building a huge string. */
export function jsonByteLength(value: Json): number {
  // The common case is small: one native stringify beats walking pieces through generators.
  if (!hasLongString(value, 0)) {
    const text = JSON.stringify(value) ?? "";
    // Kept for the transport that sends this value next (see jsonTextOf): measured once, serialised once.
    if (value !== null && typeof value === "object") texts.set(value, text);
    return Buffer.byteLength(text, "utf8");
  }
  let n = 0;
  for (const piece of jsonPieces(value)) n += Buffer.byteLength(piece, "utf8");
  return n;
}

/** Whether any string inside `v` is longer than one slice (then pieces are worth their cost). */
function hasLongString(v: Json, depth: number): boolean {
  if (typeof v === "string") return v.length > SLICE;
  if (v === null || typeof v !== "object" || depth > 64) return depth > 64;
  if (Array.isArray(v)) return v.some((x) => hasLongString(x as Json, depth + 1));
  for (const key of Object.keys(v)) if (hasLongString((v as Record<string, Json>)[key], depth + 1)) return true;
  return false;
}
