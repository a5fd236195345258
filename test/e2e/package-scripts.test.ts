// Issue 24, item 9: `npm ci` on a fresh clone prints no install-script advisory a newcomer cannot
// act on. npm (11.16+) reads the package.json `allowScripts` field; every dependency with an
// install script (esbuild's postinstall checks its platform binary) is reviewed there. This asks
// npm itself which install scripts are not covered, the same check `npm ci` warns from.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

const probe = spawnSync("npm", ["help", "approve-scripts"], { cwd: ROOT, encoding: "utf8" });
const HAS_POLICY = probe.status === 0 && /approve-scripts/.test(probe.stdout);
if (!HAS_POLICY) console.warn(`skipping the install-script check: this npm (${spawnSync("npm", ["--version"], { encoding: "utf8" }).stdout.trim()}) has no allowScripts policy (npm 11.16+)`);

describe("install scripts", () => {
  it("every dependency with an install script is reviewed in package.json allowScripts", () => {
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript)
      .map(([path]) => path.replace(/^.*node_modules\//, ""));
    const allowed = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};
    for (const name of withScripts) expect(Object.keys(allowed).some((k) => k === name || k.startsWith(`${name}@`)), `${name} has an install script`).toBe(true);
  });

  it.runIf(HAS_POLICY)("npm reports no unreviewed install scripts", () => {
    const r = spawnSync("npm", ["approve-scripts", "--allow-scripts-pending"], { cwd: ROOT, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(`${r.stdout}${r.stderr}`).toContain("No packages with unreviewed install scripts.");
  });
});
