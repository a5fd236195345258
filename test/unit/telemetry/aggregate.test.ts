import { describe, expect, it } from "vitest";
import { nthSmallest } from "../../../src/telemetry/aggregate.js";

describe("nthSmallest", () => {
  it("returns the same value as sorting, for every rank, sizes and duplicate patterns", () => {
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const shapes: ((n: number) => number[])[] = [
      (n) => Array.from({ length: n }, () => Math.floor(rand() * 1_000_000)),
      (n) => Array.from({ length: n }, () => Math.floor(rand() * 3)), // heavy duplicates
      (n) => Array.from({ length: n }, (_, i) => i), // ascending
      (n) => Array.from({ length: n }, (_, i) => n - i), // descending
      (n) => Array.from({ length: n }, () => 7), // all equal
      (n) => Array.from({ length: n }, () => rand() * 100), // fractions
    ];
    for (const n of [1, 2, 3, 17, 100, 1001]) {
      for (const shape of shapes) {
        const values = shape(n);
        const sorted = Float64Array.from(values).sort();
        for (const k of n <= 100 ? Array.from({ length: n }, (_, i) => i) : [0, 1, n >> 1, Math.ceil(0.99 * n) - 1, n - 1]) {
          expect(nthSmallest(Float64Array.from(values), k)).toBe(sorted[k]);
        }
      }
    }
  });

  it("refuses a rank outside the array", () => {
    expect(() => nthSmallest(new Float64Array(3), 3)).toThrow(RangeError);
    expect(() => nthSmallest(new Float64Array(0), 0)).toThrow(RangeError);
  });
});
