import { describe, expect, it } from "vitest";
import { jsonByteLength, jsonPieces } from "../../../src/util/json/stream.js";

const SLICE = 64 * 1024;

function check(value: unknown): void {
  const expected = JSON.stringify(value);
  expect([...jsonPieces(value)].join("")).toBe(expected);
  expect(jsonByteLength(value)).toBe(Buffer.byteLength(expected ?? "", "utf8"));
}

describe("jsonPieces / jsonByteLength", () => {
  it("match JSON.stringify on small values of every kind", () => {
    check({ a: 1, b: "x\n\"y\"", c: [1, "two", null, true, { d: -0.5e-7 }], e: undefined, f: () => 1 });
    check([undefined, () => 1, Symbol("s")]);
    check({ toJSON: () => ({ replaced: true }) });
    check({ date: new Date(0) });
    check("plain");
    check(null);
  });

  it("match on long strings, with escapes and surrogate pairs across slice boundaries", () => {
    const emoji = "😀"; // two UTF-16 units
    const long = "a".repeat(SLICE - 1) + emoji + "\u0000\t\"\\" + "é".repeat(SLICE) + emoji.repeat(SLICE / 2 + 3);
    check({ content: [{ type: "text", text: long }] });
    // A lone surrogate is escaped by JSON.stringify; the pieces must agree.
    check({ text: "b".repeat(SLICE - 1) + "\ud83d" + "c".repeat(SLICE) });
    check({ text: "x".repeat(3 * SLICE + 7) });
  });

  it("yields pieces no longer than about one slice for a huge string", () => {
    const pieces = [...jsonPieces({ text: "y".repeat(10 * SLICE) })];
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThanOrEqual(SLICE + 2);
  });
});
