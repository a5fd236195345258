// Issue 24, item 9: `npm start` builds only when something changed (scripts/build.mjs --if-stale),
// and a changed, added or removed source always rebuilds. Run against a small project laid out
// like this one (tsc + scripts/bundle.mjs), so the test never rebuilds the dist/ other tests run.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

const BUILD = join(ROOT, "scripts", "build.mjs");
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcphub-build-"));
  mkdirSync(join(dir, "src", "cli"), { recursive: true });
  mkdirSync(join(dir, "scripts"));
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", outDir: "dist", rootDir: "src", strict: true, types: [] }, include: ["src/**/*.ts"] }));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "x", type: "module" }));
  writeFileSync(join(dir, "src", "cli", "main.ts"), 'export const answer: string = "one";\n');
  // Stands in for the real bundler: the "bundle" is main.js copied.
  writeFileSync(
    join(dir, "scripts", "bundle.mjs"),
    'import { cpSync, mkdirSync } from "node:fs";\nmkdirSync("dist/bundle", { recursive: true });\ncpSync("dist/cli/main.js", "dist/bundle/mcphub.cjs");\n',
  );
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const build = (...args: string[]) => spawnSync(process.execPath, [BUILD, "--root", dir, ...args], { encoding: "utf8" });
const bundle = () => readFileSync(join(dir, "dist", "bundle", "mcphub.cjs"), "utf8");

describe("scripts/build.mjs --if-stale", () => {
  it("builds the first time, skips when nothing changed, rebuilds on any change to the sources", () => {
    const first = build("--if-stale");
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toContain("building dist/ (dist/cli/main.js is missing)");
    expect(bundle()).toContain('"one"');
    const mtime = statSync(join(dir, "dist", "bundle", "mcphub.cjs")).mtimeMs;

    const again = build("--if-stale");
    expect(again.status).toBe(0);
    expect(again.stderr).toContain("dist/ is up to date with the sources; not rebuilding");
    expect(statSync(join(dir, "dist", "bundle", "mcphub.cjs")).mtimeMs).toBe(mtime);

    // An edit, even one that keeps the file's size and timestamp, is a change.
    const main = join(dir, "src", "cli", "main.ts");
    const { mtime: old } = statSync(main);
    writeFileSync(main, 'export const answer: string = "two";\n');
    spawnSync("touch", ["-d", old.toISOString(), main]);
    const edited = build("--if-stale");
    expect(edited.stderr).toContain("building dist/ (sources changed since the last build)");
    expect(bundle()).toContain('"two"');

    // A new file and a removed one count too (--check says so without building).
    expect(build("--check").status).toBe(0);
    writeFileSync(join(dir, "src", "extra.ts"), "export const x = 1;\n");
    expect(build("--check")).toMatchObject({ status: 1, stderr: expect.stringContaining("needs a build (sources changed since the last build)") });
    rmSync(join(dir, "src", "extra.ts"));
    expect(build("--check").status).toBe(0);
    rmSync(join(dir, "src", "cli", "main.ts"));
    expect(build("--check").status).toBe(1);
    writeFileSync(main, 'export const answer: string = "two";\n');
    expect(build("--check").status).toBe(0);

    // Missing outputs need a build too.
    rmSync(join(dir, "dist", "bundle"), { recursive: true });
    expect(build("--check").stderr).toContain("dist/bundle/mcphub.cjs is missing");
  }, 180_000);

  it("a failed build records nothing, so the next start tries again", () => {
    writeFileSync(join(dir, "src", "cli", "main.ts"), "export const answer: string = 1;\n");
    const r = build("--if-stale");
    expect(r.status).not.toBe(0);
    writeFileSync(join(dir, "src", "cli", "main.ts"), 'export const answer: string = "ok";\n');
    const fixed = build("--if-stale");
    expect(fixed.status).toBe(0);
    expect(fixed.stderr).toContain("building dist/");
  }, 180_000);

  it("npm start uses it, and npm run build always builds", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toMatch(/^node scripts\/build\.mjs --if-stale && /);
    expect(pkg.scripts.build).toBe("node scripts/build.mjs");
  });
});
