// Issue 25, item 8: the CLI bundle is built without esbuild's keepNames. With it, every named
// function and class is passed through a helper that calls Object.defineProperty(fn, "name") where
// it is made, and the call path makes several closures per call (~5 µs a call, docs/benchmarks.md,
// round four). The helper's shape is fixed by esbuild: `(fn, name) => defineProperty(fn, "name",
// { value: name, configurable: true })`, minified.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

const KEEP_NAMES_HELPER = /=\([\w$]+,[\w$]+\)=>[\w$]+\([\w$]+,"name",\{value:[\w$]+,configurable:!0\}\)/;

describe("the CLI bundle", () => {
  it("names no function at run time (built without keepNames)", () => {
    const bundle = readFileSync(join(ROOT, "dist", "bundle", "mcphub.cjs"), "utf8");
    expect(bundle.length).toBeGreaterThan(100_000);
    expect(KEEP_NAMES_HELPER.test(bundle)).toBe(false);
    // The pattern is the one esbuild emits with keepNames (so the check can fail).
    expect(KEEP_NAMES_HELPER.test('var a=(t,e)=>Wg(t,"name",{value:e,configurable:!0});')).toBe(true);
  });
});
