// Bundles the compiled CLI (dist/, from tsc) into dist/bundle/mcphub.js, which bin/mcphub.js runs.
// Why: a harness starts one `mcphub mcp serve` per session and the first answer is wanted at once;
// loading one file instead of ~100 ES modules (resolution, reads, compiles) cuts the start-up CPU
// by about 40% (docs/benchmarks.md, lazy start). dist/ itself stays as tsc wrote it.
//
// Code that finds a file next to its own module keeps working: the bundle sits two levels below
// the package root like every dist/<part>/ module, and each `*-worker.js` module is bundled
// beside it under the same name (workers are started by URL relative to import.meta.url).
import { readdirSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { build } from "esbuild";

const root = join(import.meta.dirname, "..");
const dist = join(root, "dist");

function workers(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory() && e.name !== "bundle") out.push(...workers(p));
    else if (e.isFile() && e.name.endsWith("-worker.js")) out.push(p);
  }
  return out;
}

const entryPoints = { mcphub: join(dist, "cli", "main.js") };
for (const w of workers(dist)) {
  const name = basename(w, ".js");
  if (entryPoints[name]) throw new Error(`two worker modules are named ${name}: ${relative(root, entryPoints[name])} and ${relative(root, w)}`);
  entryPoints[name] = w;
}

await build({
  entryPoints,
  outdir: join(dist, "bundle"),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Prefer a package's ES module build: some main builds are UMD wrappers whose require() calls
  // a bundler cannot follow (jsonc-parser).
  mainFields: ["module", "main"],
  minify: true,
  keepNames: true,
  // Optional native module: loaded at run time when installed, never bundled.
  external: ["@napi-rs/keyring"],
  // CommonJS dependencies bundled into an ES module still call require() for node built-ins.
  banner: { js: "import { createRequire as __mcphubRequire } from 'node:module'; const require = __mcphubRequire(import.meta.url);" },
  logLevel: "warning",
});
