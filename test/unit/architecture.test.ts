// The shape of the house (docs/architecture.md), checked on every run: no import circles (type
// imports included, as madge counts them with the TypeScript settings), parts that import only
// parts below them, a call pipeline that never reaches back into the hub, no crowded folder, and
// an entry module with a header comment in every folder.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..", "..");
const MADGE = join(ROOT, "node_modules", "madge", "bin", "cli.js");

/**
 * The parts of src/, lowest first: a part may import only parts listed before it. Data flows one
 * way, config → downstream → catalog → gateway core → front doors → cli; a new part goes
 * above everything it needs and below everything that needs it.
 */
const LAYERS = ["util", "store", "config", "sandbox", "service", "telemetry", "downstream", "vault", "auth", "catalog", "guard", "gateway", "serve", "harness", "cli"] as const;

/** Imports forbidden inside one part, as [importer prefix, imported prefix, why]. */
const FORBIDDEN: [string, string, string][] = [
  ["gateway/call/", "gateway/hub.ts", "pipeline stages get narrow ports, never the hub"],
  ["gateway/call/", "gateway/session.ts", "the call path knows no session"],
  ["gateway/call/", "gateway/tools/", "management tools call the pipeline, not the reverse"],
  ["gateway/passthrough/", "gateway/call/", "the pass-through is below the call path"],
  ["gateway/passthrough/", "gateway/hub.ts", "the pass-through gets its dependencies, not the hub"],
  ["gateway/policy/", "gateway/", "policy is pure functions of config and catalogue"],
];

/** A folder of one file per CLI command grows with the commands; every other folder stays small. */
const MAX_FILES = 15;
const CROWDED_OK = new Set(["src/cli/commands"]);

/** madge's JSON answer; it exits 1 when it finds circles, which is an answer too. */
function madge(args: string[], cwd: string, dir: string): unknown {
  const run = spawnSync(process.execPath, [MADGE, "--json", "--extensions", "ts", "--ts-config", "tsconfig.json", ...args, dir], {
    cwd,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0 && run.status !== 1) throw new Error(`madge exited ${String(run.status)}: ${run.stderr}`);
  return JSON.parse(run.stdout) as unknown;
}

function partOf(file: string): string {
  const slash = file.indexOf("/");
  // Files at the root of src/ (version.ts) are leaves everyone may use, like util.
  return slash < 0 ? "util" : file.slice(0, slash);
}

function upwardImports(graph: Record<string, string[]>): string[] {
  const rank = new Map<string, number>(LAYERS.map((p, i) => [p, i]));
  const out: string[] = [];
  for (const [file, deps] of Object.entries(graph)) {
    const from = partOf(file);
    const rf = rank.get(from);
    if (rf === undefined) {
      out.push(`${file}: part "${from}" is not in LAYERS; place it there`);
      continue;
    }
    for (const dep of deps) {
      const to = partOf(dep);
      if (to === from) continue;
      const rt = rank.get(to);
      if (rt === undefined || rt >= rf) out.push(`${file} imports ${dep} (${from} may not import ${to})`);
    }
  }
  return out;
}

function forbiddenImports(graph: Record<string, string[]>): string[] {
  const out: string[] = [];
  for (const [file, deps] of Object.entries(graph)) {
    for (const dep of deps) {
      for (const [importer, imported, why] of FORBIDDEN) {
        if (file.startsWith(importer) && dep.startsWith(imported) && !dep.startsWith(importer)) out.push(`${file} imports ${dep}: ${why}`);
      }
    }
  }
  return out;
}

function folders(dir: string): string[] {
  const out = [dir];
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) out.push(...folders(join(dir, e.name)));
  return out;
}

const tsFiles = (dir: string) => readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith(".ts")).map((e) => e.name);

describe("the house", () => {
  const graph = madge([], ROOT, "src") as Record<string, string[]>;

  it("has no import circles, type imports included", () => {
    const circles = madge(["--circular"], ROOT, "src") as string[][];
    expect(circles.map((c) => c.join(" > "))).toEqual([]);
  });

  it("the circle check sees a circle made of type imports", () => {
    // The check above is only worth something if madge counts `import type` with these settings.
    const dir = mkdtempSync(join(tmpdir(), "mcphub-house-"));
    try {
      writeFileSync(join(dir, "tsconfig.json"), readFileSync(join(ROOT, "tsconfig.json")));
      writeFileSync(join(dir, "a.ts"), 'import type { B } from "./b.js";\nexport interface A { b?: B }\n');
      writeFileSync(join(dir, "b.ts"), 'import type { A } from "./a.js";\nexport interface B { a?: A }\n');
      const circles = madge(["--circular"], dir, ".") as string[][];
      expect(circles).toEqual([["a.ts", "b.ts"]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads the graph it checks (every part of src/ is in it)", () => {
    const parts = new Set(Object.keys(graph).map(partOf));
    for (const p of ["cli", "serve", "gateway", "guard", "catalog", "downstream", "vault", "config", "util"]) expect(parts).toContain(p);
    expect(graph["gateway/call/pipeline.ts"]).toContain("gateway/call/checks.ts");
  });

  it("parts import only parts below them (nothing below the front doors imports them; nothing imports the CLI)", () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it("the call pipeline and the pass-through never reach back up the core", () => {
    expect(forbiddenImports(graph)).toEqual([]);
  });

  it("the checks catch what they are for", () => {
    expect(upwardImports({ "catalog/x.ts": ["serve/http/listener.ts"], "gateway/hub.ts": ["cli/main.ts"], "serve/a.ts": ["gateway/hub.ts"] })).toEqual([
      "catalog/x.ts imports serve/http/listener.ts (catalog may not import serve)",
      "gateway/hub.ts imports cli/main.ts (gateway may not import cli)",
    ]);
    expect(forbiddenImports({ "gateway/call/locate.ts": ["gateway/hub.ts", "gateway/view.ts"], "gateway/policy/scope.ts": ["gateway/policy/pins.ts"] })).toEqual([
      "gateway/call/locate.ts imports gateway/hub.ts: pipeline stages get narrow ports, never the hub",
    ]);
  });

  it(`no folder holds more than ${MAX_FILES} modules at its own level`, () => {
    const crowded = folders(join(ROOT, "src"))
      .map((d) => ({ dir: d.slice(ROOT.length + 1), n: tsFiles(d).length }))
      .filter(({ dir, n }) => n > MAX_FILES && !CROWDED_OK.has(dir))
      .map(({ dir, n }) => `${dir}: ${n} files`);
    expect(crowded).toEqual([]);
  });

  it("every folder opens with a comment saying what it owns, in its entry module", () => {
    const missing: string[] = [];
    for (const d of folders(join(ROOT, "src")).slice(1)) {
      const rel = d.slice(ROOT.length + 1);
      // The CLI's entry is the program's main module (bin/mcphub.js runs it).
      const entry = rel === "src/cli" ? "main.ts" : "index.ts";
      let text: string;
      try {
        text = readFileSync(join(d, entry), "utf8");
      } catch {
        missing.push(`${rel}: no ${entry}`);
        continue;
      }
      if (!text.startsWith("// ")) missing.push(`${rel}/${entry}: does not open with a comment`);
    }
    expect(missing).toEqual([]);
  });
});
