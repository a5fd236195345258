// Canonical JSON: object keys sorted recursively, no whitespace. Used wherever bytes must not depend
// on the order in which a downstream happened to emit keys: measuring tool definitions for the
// schema budget, fingerprinting advertised tools, and keeping tools/list byte-identical across
// restarts so a harness's prompt cache survives.

/**
 * Orders strings by Unicode code point, which is the same as UTF-8 byte order (JS's default `<`
 * compares UTF-16 code units, which differs for astral characters). Every "sorted" list in the
 * catalogue uses this so sorting never depends on the runtime's string representation.
 */
export function byteOrder(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++; // skip the low surrogate of a pair that matched
  }
  // One is a prefix of the other (they are not equal): the shorter sorts first.
  return a.length < b.length ? -1 : 1;
}

/**
 * Serializes a JSON-compatible value with object keys in byte order at every depth and no
 * whitespace. Follows JSON.stringify for everything else: `undefined` and functions are dropped
 * from objects and become `null` in arrays, non-finite numbers become `null`, `toJSON` is honoured.
 */
export function canonicalJson(value: unknown): string {
  return serialize(value) ?? "null";
}

function serialize(value: unknown): string | undefined {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : "null";
    case "bigint":
      throw new TypeError("canonicalJson: BigInt values have no JSON form");
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (Array.isArray(value)) {
    return `[${value.map((v) => serialize(v) ?? "null").join(",")}]`;
  }
  const obj = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(obj).sort(byteOrder)) {
    const v = serialize(obj[key]);
    if (v !== undefined) parts.push(`${JSON.stringify(key)}:${v}`);
  }
  return `{${parts.join(",")}}`;
}

/**
 * A deep copy whose objects have their keys inserted in byte order, so that `JSON.stringify` of the
 * copy is the same on every run whatever order the input arrived in. (JS enumerates integer-like
 * keys first, so the stringified copy can differ from `canonicalJson` in key order for such keys,
 * but never in content or byte length.)
 */
export function canonicalize<T>(value: T): T {
  return JSON.parse(canonicalJson(value)) as T;
}
