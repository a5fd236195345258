import { describe, expect, it } from "vitest";
import { byteOrder, canonicalize, canonicalJson } from "../../../src/util/json/canonical.js";

describe("canonicalJson", () => {
  it("sorts keys recursively and drops whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: "x" } })).toBe('{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it("follows JSON.stringify for undefined, non-finite numbers and toJSON", () => {
    expect(canonicalJson({ a: undefined, b: [undefined, NaN, Infinity], c: new Date(0) })).toBe(
      '{"b":[null,null,null],"c":"1970-01-01T00:00:00.000Z"}',
    );
    expect(canonicalJson(undefined)).toBe("null");
    expect(canonicalJson("é\n")).toBe(JSON.stringify("é\n"));
  });

  it("sorts keys in code point (UTF-8 byte) order, not UTF-16 order", () => {
    // U+FF5E (3 UTF-8 bytes, EF BD 9E) sorts before U+1F600 (4 bytes, F0 9F 98 80), though its
    // UTF-16 unit 0xFF5E is greater than the high surrogate 0xD83D.
    const emoji = "\u{1F600}";
    const wide = "\uFF5E";
    expect(canonicalJson({ [emoji]: 1, [wide]: 2 })).toBe(`{"${wide}":2,"${emoji}":1}`);
    const sorted = [emoji, wide, "a", "ab", "B", ""].sort(byteOrder);
    const byBytes = [emoji, wide, "a", "ab", "B", ""].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(sorted).toEqual(byBytes);
  });

  it("canonicalize gives objects that stringify identically whatever the input key order", () => {
    const one = canonicalize({ b: { y: 1, x: 2 }, a: [1, { d: 1, c: 2 }] });
    const two = canonicalize({ a: [1, { c: 2, d: 1 }], b: { x: 2, y: 1 } });
    expect(JSON.stringify(one)).toBe(JSON.stringify(two));
    expect(JSON.stringify(one)).toBe(canonicalJson(one));
  });
});
