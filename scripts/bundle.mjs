// Bundles the compiled CLI (dist/, from tsc) into dist/bundle/mcphub.cjs, which bin/mcphub.js runs.
// Why: a harness starts one `mcphub mcp serve` per session and the first answer is wanted at once;
// loading one file instead of ~100 ES modules (resolution, reads, compiles) cuts the start-up CPU
// by about 40% (docs/benchmarks.md, lazy start). dist/ itself stays as tsc wrote it.
//
// The CLI bundle is CommonJS so the launcher can run it as a vm.Script with V8's code cache
// (bin/mcphub.js): Node 20 has no code cache for ES modules, and compiling 1.6 MB of JavaScript
// is a third of a warm start. `import.meta.url` becomes the bundle file's URL, so code that finds
// a file next to its own module keeps working: the bundle sits two levels below the package root
// like every dist/<part>/ module, and each `*-worker.js` module is bundled beside it under the
// same name as an ES module (workers are started by URL relative to import.meta.url).
import { readdirSync, rmSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { build } from "esbuild";

const root = join(import.meta.dirname, "..");
const dist = join(root, "dist");
const outdir = join(dist, "bundle");

function workers(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory() && e.name !== "bundle") out.push(...workers(p));
    else if (e.isFile() && e.name.endsWith("-worker.js")) out.push(p);
  }
  return out;
}

const workerEntries = {};
for (const w of workers(dist)) {
  const name = basename(w, ".js");
  if (name === "mcphub" || workerEntries[name]) throw new Error(`two bundled modules are named ${name}: ${relative(root, w)} and another`);
  workerEntries[name] = w;
}

const common = {
  outdir,
  bundle: true,
  platform: "node",
  target: "node20",
  // Prefer a package's ES module build: some main builds are UMD wrappers whose require() calls
  // a bundler cannot follow (jsonc-parser).
  mainFields: ["module", "main"],
  minify: true,
  // No keepNames: it wraps every named function and class in a defineProperty call where it is
  // made (esbuild's __name), so closures made per call cost the stdio path ~5 µs a call (CPU
  // per call 0.85-0.92x without it, bench/proxy.ts --base). Nothing reads a bundled function's
  // or class's own name: our errors set `name` explicitly, and the libraries that take an error's
  // name from constructor.name (commander, the SDK's OAuth errors, jose) are told apart by
  // instanceof or by code.
  keepNames: false,
  // Optional native module: loaded at run time when installed, never bundled.
  external: ["@napi-rs/keyring", "pg-native"],
  logLevel: "warning",
};

rmSync(outdir, { recursive: true, force: true });
await Promise.all([
  build({
    ...common,
    entryPoints: { mcphub: join(dist, "cli", "main.js") },
    format: "cjs",
    outExtension: { ".js": ".cjs" },
    define: { "import.meta.url": "__mcphubBundleUrl", "import.meta.dirname": "__dirname", "import.meta.filename": "__filename" },
    banner: { js: "var __mcphubBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
    // The bundle runs as a vm.Script, where a dynamic import() goes through Node 20's experimental
    // loader hook and prints an ExperimentalWarning on stderr. What is left of import() after
    // bundling is of node built-ins (the OTLP exporter loads http/https so): require them instead.
    supported: { "dynamic-import": false },
  }),
  build({
    ...common,
    entryPoints: workerEntries,
    format: "esm",
    // CommonJS dependencies bundled into an ES module still call require() for node built-ins.
    banner: { js: "import { createRequire as __mcphubRequire } from 'node:module'; const require = __mcphubRequire(import.meta.url);" },
  }),
]);
