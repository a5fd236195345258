// Every error class under src/ names itself. A span's status is its error's class (errorClassOf:
// never the message, which may quote an argument), and a class that sets no name reads "Error",
// as does every class in a minified build that would take the constructor's name.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { errorClassOf } from "../../../src/telemetry/index.js";
import { BadRequest } from "../../../src/gateway/tools/context.js";

const SRC = resolve(import.meta.dirname, "..", "..", "..", "src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/** Error classes that do not set `name` to their own name (as `override name = "X"` or `this.name = "X"`). */
function unnamedErrors(files: { path: string; text: string }[]): string[] {
  const out: string[] = [];
  for (const { path, text } of files) {
    for (const m of text.matchAll(/class (\w+) extends (\w*Error)\b/g)) {
      if (!text.includes(`name = "${m[1]}"`)) out.push(`${path.slice(SRC.length + 1)}: ${m[1]}`);
    }
  }
  return out;
}

describe("error class names", () => {
  it("every error class under src/ sets its own name", () => {
    const files = sources(SRC).map((path) => ({ path, text: readFileSync(path, "utf8") }));
    expect(files.filter((f) => /extends \w*Error\b/.test(f.text)).length).toBeGreaterThan(20);
    expect(unnamedErrors(files)).toEqual([]);
  });

  it("the check finds a class that does not", () => {
    const text = 'export class QuietError extends Error {}\nexport class LoudError extends Error {\n  override name = "LoudError";\n}\n';
    expect(unnamedErrors([{ path: join(SRC, "x.ts"), text }])).toEqual(["x.ts: QuietError"]);
  });

  it("a span's status is the class's name", () => {
    expect(errorClassOf(new BadRequest("missing query"))).toBe("BadRequest");
    expect(errorClassOf("a string")).toBe("error");
  });
});
